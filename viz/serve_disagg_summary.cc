#include "viz/serve_disagg_summary.h"

#include <algorithm>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "viz/html_text.h"

namespace clustersim::viz {
namespace {

std::string Line(std::string_view name, const std::string& value) {
  std::string padded(name);
  padded.resize(std::max<size_t>(padded.size() + 1, 28), ' ');
  return absl::StrCat("  ", padded, value, "\n");
}

std::string Latency(const config::LatencyStats& s) {
  return absl::StrCat(FixedNumber(s.p50(), 2), " / ", FixedNumber(s.p90(), 2), " / ",
                      FixedNumber(s.p99(), 2), " ms");
}

std::string Pool(const config::DisaggPoolResult& p) {
  const config::ServeMemory& m = p.memory();
  return absl::StrCat(p.instances(), " x tp ", p.tensor_parallel(), " pp ", p.pipeline_parallel(),
                      " on ", p.gpu(), " (GPUs ", p.gpu_indices(), "); KV ",
                      FixedNumber(m.kv_cache_gib(), 2), " GiB, ", m.kv_blocks(),
                      " blocks per GPU; busy ", FixedNumber(100 * p.busy_fraction(), 1), "%, MFU ",
                      FixedNumber(100 * p.model_flops_utilisation(), 1), "%, mean batch ",
                      FixedNumber(p.mean_batch_size(), 1), ", ", p.iterations(), " iterations");
}

std::string Goodput(const config::DisaggGoodput& g) {
  if (g.status() == "found" || g.status() == "capacity") {
    return absl::StrCat(FixedNumber(g.max_request_rate_per_s(), 3), " req/s, ",
                        FixedNumber(g.per_gpu(), 3), " per GPU (", g.status(), "; ", g.detail(),
                        ")");
  }
  return absl::StrCat(g.status(), ": ", g.detail());
}

std::string SearchTable(const config::DisaggServeResult& d) {
  std::string out = absl::StrCat("\nratio search: ", d.search_detail(), "\n");
  absl::StrAppend(&out, absl::StrFormat("  %-4s %-22s %5s %14s %14s  %s\n", "rank", "deployment",
                                        "GPUs", "goodput req/s", "per GPU", "status"));
  int rank = 0;
  for (const config::DisaggCandidate& c : d.search()) {
    const std::string shape =
        c.decode_instances() == 0
            ? absl::StrCat("colocated ", c.prefill_instances(), "x tp", c.prefill_tp())
            : absl::StrCat(c.prefill_instances(), "P tp", c.prefill_tp(), " : ",
                           c.decode_instances(), "D tp", c.decode_tp());
    std::string status = c.status();
    if (c.attainment_at_rate() > 0) {
      absl::StrAppend(&status,
                      absl::StrFormat(", %.1f%% at the rate", 100 * c.attainment_at_rate()));
    }
    absl::StrAppend(
        &out, absl::StrFormat("  %-4d %-22s %5d %14.3f %14.4f  %s\n", ++rank, shape, c.num_gpus(),
                              c.goodput_per_s(), c.goodput_per_gpu(), status));
  }
  return out;
}

}  // namespace

std::string FormatDisaggSummary(const config::ServeResult& r) {
  const config::DisaggServeResult& d = r.disaggregated();
  const config::DisaggKvTransfer& t = d.kv_transfer();
  std::string out = absl::StrCat(
      "clustersim serve: ", r.name(), " (disaggregated prefill/decode)\n",
      Line("deployment", absl::StrCat(r.model(), " on ", r.num_gpus(), " x ", r.gpu(), ", routing ",
                                      d.routing())),
      Line("prefill pool", Pool(d.prefill())), Line("decode pool", Pool(d.decode())),
      Line("formats",
           absl::StrCat("weights ", r.weight_dtype(), ", KV cache ", r.kv_cache_dtype())),
      Line("workload",
           absl::StrCat(
               r.workload(), ", ", r.num_requests(), " requests",
               r.offered_request_rate_per_s() > 0
                   ? absl::StrCat(" at ", FixedNumber(r.offered_request_rate_per_s(), 3), " req/s")
                   : "")),
      Line("KV transfer",
           absl::StrCat(t.transfers(), " transfers, ", FixedNumber(t.total_gib(), 2), " GiB (",
                        FixedNumber(t.mean_mib_per_request(), 1), " MiB each), ",
                        t.layerwise() ? "layer-wise" : "after the prefill", ", ", t.path())),
      Line("KV transfer time p50/p90/p99", Latency(t.time_ms())),
      Line("KV wait p50/p90/p99", Latency(t.wait_ms())),
      Line("TTFT p50/p90/p99", Latency(r.ttft_ms())),
      Line("TPOT p50/p90/p99", Latency(r.tpot_ms())),
      Line("end-to-end p50/p90/p99", Latency(r.e2e_ms())),
      Line("output tokens/s",
           absl::StrCat(FixedNumber(r.output_tokens_per_s(), 1), " (",
                        FixedNumber(r.output_tokens_per_s_per_gpu(), 1), " per GPU)")),
      Line("GPU busy / MFU", absl::StrCat(FixedNumber(100 * r.gpu_busy_fraction(), 1), "% / ",
                                          FixedNumber(100 * r.model_flops_utilisation(), 1), "%")),
      Line("decode swaps", absl::StrCat(r.preemptions(), " (sequences swapped out for KV blocks)")),
      Line("capacity",
           absl::StrCat(FixedNumber(r.capacity_requests_per_s(), 3), " req/s, ",
                        FixedNumber(r.capacity_output_tokens_per_s(), 1), " output tokens/s")),
      Line("saturation", r.saturation()),
      Line("SLO attainment", absl::StrCat(FixedNumber(100 * d.goodput().attainment_at_offered(), 1),
                                          "% of requests at the offered load")),
      Line("goodput", Goodput(d.goodput())),
      Line("$ / million output tokens",
           r.cost().usd_per_hour() > 0
               ? absl::StrCat(FixedNumber(r.cost().usd_per_million_output_tokens(), 3), " (",
                              FixedNumber(r.cost().usd_per_hour(), 2), " $/hour, ",
                              r.cost().price_source(), ")")
               : "n/a: no catalog price; set --usd-per-gpu-hour (pricing.usd_per_gpu_hour)"));
  if (d.search_size() > 0) absl::StrAppend(&out, SearchTable(d));
  return out;
}

}  // namespace clustersim::viz
