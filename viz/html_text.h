// File: viz/html_text.h
//
// Text helpers for the HTML/SVG outputs: escaping (every piece of text that
// comes from input, such as scenario or model names, goes through HtmlEscape
// so that a name like "<script>" renders as text) and locale-free number
// formatting, so the same inputs always give the same bytes.
//
// Example:
//   std::string cell = HtmlEscape(scenario.name());   // "a&lt;b" for "a<b"
//   std::string x = FixedNumber(12.3456, 2);          // "12.35"
#ifndef CLUSTERSIM_VIZ_HTML_TEXT_H_
#define CLUSTERSIM_VIZ_HTML_TEXT_H_

#include <string>
#include <string_view>

namespace clustersim::viz {

// Replaces & < > " ' by character references; safe in element text and in
// quoted attribute values.
std::string HtmlEscape(std::string_view text);

// `v` with `decimals` digits after the point ("%.*f"); non-finite values
// print as "n/a" and -0 prints as 0.
std::string FixedNumber(double v, int decimals);

// The CSS every report page starts with: body, headings, subtitles.
inline constexpr std::string_view kPageBaseCss = R"css(
body { font-family: sans-serif; margin: 16px 20px; color: #222; max-width: 1380px; }
h1 { font-size: 22px; margin: 0 0 4px 0; }
h2 { font-size: 17px; margin: 22px 0 6px 0; border-bottom: 1px solid #ddd; }
p.sub { margin: 2px 0; color: #555; }
)css";

// A duration in seconds with a unit that suits it: "812 us", "12.35 ms", "1.420 s".
std::string HumanSeconds(double seconds);

}  // namespace clustersim::viz

#endif  // CLUSTERSIM_VIZ_HTML_TEXT_H_
