#include "viz/html_text.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace clustersim::viz {

std::string HtmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

std::string FixedNumber(double v, int decimals) {
  if (!std::isfinite(v)) return "n/a";
  std::string s = absl::StrFormat("%.*f", decimals, v);
  // "-0.00" reads as a sign error; print it as zero.
  if (s[0] == '-' && s.find_first_not_of("-0.") == std::string::npos) s.erase(0, 1);
  return s;
}

std::string HumanSeconds(double seconds) {
  const double a = std::fabs(seconds);
  if (a < 1e-3) return absl::StrCat(FixedNumber(seconds * 1e6, 0), " us");
  if (a < 1.0) return absl::StrCat(FixedNumber(seconds * 1e3, 2), " ms");
  return absl::StrCat(FixedNumber(seconds, 3), " s");
}

}  // namespace clustersim::viz
