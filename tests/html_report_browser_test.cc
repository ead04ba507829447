// Renders the HTML report of a real simulated run in headless Chromium (the
// Debian package `chromium`, which .ci/setup installs) and checks what a user
// would see: the DOM holds every chart, and the screenshot is a picture, not
// a blank page. Skips, saying why, where chromium is not installed.
//
// A second test renders the study report (viz/study_report.h) the same way.
//
// The screenshot is left at $CLUSTERSIM_BINARY_DIR/viz/report_browser_test.png;
// docs/report.png is a copy of it (refresh with
// `cp build/viz/report_browser_test.png docs/report.png`).
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <zlib.h>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "models/kernel_model.h"
#include "scenarios/input/loader.h"
#include "scenarios/input/resolve.h"
#include "scenarios/run/runner.h"
#include "sim/atomic_file.h"
#include "sim/engine.h"
#include "sim/simulator.h"
#include "strategies/placement.h"
#include "strategies/step_builder.h"
#include "strategies/step_describer.h"
#include "topology/analytic_network.h"
#include "topology/cluster.h"
#include "viz/html_report.h"
#include "viz/study_report.h"

namespace clustersim::viz {
namespace {

// GPT 22B on 16 A100s: tensor parallel 4, four 1F1B pipeline stages, eight
// micro-batches: warm-up and cool-down bubbles to see.
constexpr std::string_view kScenario = R"pb(
  name: "gpt-22b-a100-tp4-pp4 <demo>"
  description: "GPT 22B, 16x A100 80GB, tp 4, pp 4, 1F1B, 8 micro-batches"
  cluster { gpu: "a100-sxm4-80gb" num_gpus: 16 }
  model { preset: "gpt-22b" }
  parallelism { tensor_model_parallel_size: 4 pipeline_model_parallel_size: 4 }
  training {
    micro_batch_size: 1
    global_batch_size: 8
    precision: "bf16"
    recompute_granularity: "selective"
  }
)pb";

std::string BinaryDir() {
  const char* d = std::getenv("CLUSTERSIM_BINARY_DIR");
  return d ? d : ".";
}

// The first of `names` found on PATH, or "".
std::string FindProgram(const std::vector<std::string>& names) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return "";
  std::stringstream dirs(path);
  std::vector<std::string> parts;
  for (std::string d; std::getline(dirs, d, ':');) parts.push_back(d);
  for (const std::string& name : names) {
    for (const std::string& d : parts) {
      const std::filesystem::path p = std::filesystem::path(d) / name;
      if (std::filesystem::exists(p)) return p.string();
    }
  }
  return "";
}

// Runs `command`, returning its stdout and setting *status to its exit status.
std::string Capture(const std::string& command, int* status) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) {
    *status = -1;
    return out;
  }
  std::array<char, 4096> buf;
  while (size_t n = std::fread(buf.data(), 1, buf.size(), pipe)) out.append(buf.data(), n);
  *status = ::pclose(pipe);
  return out;
}

// An 8-bit RGB or RGBA PNG, decoded enough to look at its pixels.
struct Image {
  int width = 0;
  int height = 0;
  int channels = 0;
  std::vector<uint8_t> pixels;  // rows of width * channels bytes
};

uint32_t BigEndian32(const std::string& s, size_t at) {
  return (static_cast<uint32_t>(static_cast<uint8_t>(s[at])) << 24) |
         (static_cast<uint32_t>(static_cast<uint8_t>(s[at + 1])) << 16) |
         (static_cast<uint32_t>(static_cast<uint8_t>(s[at + 2])) << 8) |
         static_cast<uint32_t>(static_cast<uint8_t>(s[at + 3]));
}

// Decodes a non-interlaced 8-bit RGB/RGBA PNG (what Chromium writes); false
// with a message in *error otherwise.
bool DecodePng(const std::string& png, Image* image, std::string* error) {
  if (png.size() < 8 || png.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0) {
    *error = "not a PNG";
    return false;
  }
  std::string idat;
  for (size_t at = 8; at + 12 <= png.size();) {
    const uint32_t len = BigEndian32(png, at);
    const std::string type = png.substr(at + 4, 4);
    if (type == "IHDR") {
      image->width = static_cast<int>(BigEndian32(png, at + 8));
      image->height = static_cast<int>(BigEndian32(png, at + 12));
      const int depth = static_cast<uint8_t>(png[at + 16]);
      const int color = static_cast<uint8_t>(png[at + 17]);
      const int interlace = static_cast<uint8_t>(png[at + 20]);
      if (depth != 8 || (color != 2 && color != 6) || interlace != 0) {
        *error = absl::StrCat("unsupported PNG: depth ", depth, ", colour type ", color);
        return false;
      }
      image->channels = color == 2 ? 3 : 4;
    } else if (type == "IDAT") {
      idat += png.substr(at + 8, len);
    }
    at += 12 + len;
  }
  const size_t stride = static_cast<size_t>(image->width) * image->channels;
  std::vector<uint8_t> raw((stride + 1) * image->height);
  uLongf raw_size = raw.size();
  if (uncompress(raw.data(), &raw_size, reinterpret_cast<const Bytef*>(idat.data()),
                 idat.size()) != Z_OK ||
      raw_size != raw.size()) {
    *error = "IDAT does not inflate to the image size";
    return false;
  }
  image->pixels.assign(stride * image->height, 0);
  const int bpp = image->channels;
  for (int y = 0; y < image->height; ++y) {
    const uint8_t filter = raw[y * (stride + 1)];
    const uint8_t* in = &raw[y * (stride + 1) + 1];
    uint8_t* out = &image->pixels[y * stride];
    const uint8_t* up = y > 0 ? &image->pixels[(y - 1) * stride] : nullptr;
    for (size_t x = 0; x < stride; ++x) {
      const int a = x >= static_cast<size_t>(bpp) ? out[x - bpp] : 0;
      const int b = up ? up[x] : 0;
      const int c = (up && x >= static_cast<size_t>(bpp)) ? up[x - bpp] : 0;
      int pred = 0;
      switch (filter) {
        case 0: pred = 0; break;
        case 1: pred = a; break;
        case 2: pred = b; break;
        case 3: pred = (a + b) / 2; break;
        case 4: {
          const int p = a + b - c;
          const int pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
          pred = (pa <= pb && pa <= pc) ? a : (pb <= pc ? b : c);
          break;
        }
        default: *error = absl::StrCat("bad filter ", filter, " on row ", y); return false;
      }
      out[x] = static_cast<uint8_t>(in[x] + pred);
    }
  }
  return true;
}

TEST(HtmlReportBrowserTest, ChromiumShowsEveryChartOfARealRun) {
  const std::string chromium = FindProgram({"chromium", "chromium-browser"});
  if (chromium.empty()) {
    GTEST_SKIP() << "chromium is not installed (apt-get install chromium); .ci/setup installs "
                    "it so that this test runs in CI";
  }
  absl::StatusOr<config::Scenario> scenario = scenarios::ParseScenarioText(kScenario, "test");
  ASSERT_TRUE(scenario.ok()) << scenario.status();
  absl::StatusOr<scenarios::ResolvedScenario> resolved = scenarios::Resolve(*scenario);
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  const std::string dir = BinaryDir() + "/viz";
  std::filesystem::create_directories(dir);
  const std::string html = dir + "/report_browser_test.html";
  const std::string png = dir + "/report_browser_test.png";
  std::filesystem::remove(png);
  absl::StatusOr<scenarios::RunOutput> out =
      scenarios::RunScenarioWithReport(*resolved, {.report = true});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_TRUE(sim::WriteFileAtomically(html, out->report_html).ok());

  // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
  const std::string flags = absl::StrCat(
      "timeout 90 '", chromium, "' --headless --no-sandbox --disable-gpu --hide-scrollbars ",
      "--user-data-dir='", dir, "/chromium-profile' ");
  int status = 0;
  const std::string dom =
      Capture(absl::StrCat(flags, "--dump-dom 'file://", html, "' 2>/dev/null"), &status);
  ASSERT_EQ(status, 0) << "chromium --dump-dom failed";
  for (const char* id :
       {"pipeline", "breakdown", "memory", "memory-curve", "numbers", "scenario"}) {
    EXPECT_NE(dom.find(absl::StrCat("id=\"", id, "\"")), std::string::npos) << id;
  }
  // The browser parsed the SVG blocks: per-micro-batch labels of all stages.
  EXPECT_NE(dom.find(">stage 3</text>"), std::string::npos);
  EXPECT_NE(dom.find(">F7</text>"), std::string::npos);
  EXPECT_NE(dom.find("&lt;demo&gt;"), std::string::npos);  // the name, escaped
  // One memory bar per stage, and the curves of the first and last stage.
  EXPECT_NE(dom.find(">stage 3</text>"), std::string::npos);
  EXPECT_NE(dom.find("first stage: node0/gpu0"), std::string::npos);
  EXPECT_NE(dom.find("last stage: node1/gpu4"), std::string::npos);

  Capture(absl::StrCat(flags, "--screenshot='", png, "' --window-size=1400,1800 'file://", html,
                       "' >/dev/null 2>&1"),
          &status);
  ASSERT_EQ(status, 0) << "chromium --screenshot failed";
  std::ifstream in(png, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  ASSERT_GT(bytes.str().size(), 50'000u) << "a screenshot this small is a blank page";
  Image image;
  std::string error;
  ASSERT_TRUE(DecodePng(bytes.str(), &image, &error)) << error;
  EXPECT_EQ(image.width, 1400);
  EXPECT_EQ(image.height, 1800);
  // A page of charts has many colours; count distinct RGB values on a grid.
  std::set<uint32_t> colors;
  int non_white = 0, samples = 0;
  for (int y = 0; y < image.height; y += 3) {
    for (int x = 0; x < image.width; x += 3) {
      const uint8_t* p = &image.pixels[(static_cast<size_t>(y) * image.width + x) * image.channels];
      colors.insert((uint32_t{p[0]} << 16) | (uint32_t{p[1]} << 8) | p[2]);
      non_white += (p[0] < 240 || p[1] < 240 || p[2] < 240) ? 1 : 0;
      ++samples;
    }
  }
  EXPECT_GT(colors.size(), 30u);
  EXPECT_GT(non_white, samples / 10) << "less than 10% of the page is drawn";
}

TEST(HtmlReportBrowserTest, ChromiumShowsTheStudyTableAndScatter) {
  const std::string chromium = FindProgram({"chromium", "chromium-browser"});
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed (apt-get install chromium)";
  const auto row = [](std::string label, double days, double dollars, bool fits) {
    return StudyRow{.label = std::move(label), .step_time_s = days / 10, .tokens_per_s = 1e6 / days,
                    .mfu = 0.45, .memory_gib = 60, .fits = fits, .dollars = dollars,
                    .time_to_train_s = days * 86400};
  };
  const std::vector<StudyRow> rows = {row("tp8 pp4", 10, 9e6, true), row("tp4 pp8", 12, 6e6, true),
                                      row("tp2 pp16", 15, 7e6, true),
                                      row("tp1 pp32", 9, 5e6, false)};
  const std::string dir = BinaryDir() + "/viz";
  std::filesystem::create_directories(dir);
  const std::string html = dir + "/study_browser_test.html";
  ASSERT_TRUE(sim::WriteFileAtomically(html, RenderStudyReport(rows, {})).ok());
  int status = 0;
  const std::string dom = Capture(
      absl::StrCat("timeout 90 '", chromium, "' --headless --no-sandbox --disable-gpu ",
                   "--user-data-dir='", dir, "/chromium-profile' --dump-dom 'file://", html,
                   "' 2>/dev/null"),
      &status);
  ASSERT_EQ(status, 0) << "chromium --dump-dom failed";
  EXPECT_NE(dom.find("id=\"study-table\""), std::string::npos);
  EXPECT_NE(dom.find("id=\"study-scatter\""), std::string::npos);
  EXPECT_NE(dom.find("<path class=\"front\""), std::string::npos);
  EXPECT_NE(dom.find("<tr class=\"front\"><td class=\"label\">tp4 pp8</td>"), std::string::npos);
}

}  // namespace
}  // namespace clustersim::viz
