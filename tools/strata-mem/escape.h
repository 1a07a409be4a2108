// Escaping and number formatting for the output formats (text, CSV, JSON, HTML).
//
// Key names are binary-safe byte strings; each format gets them in a form it can hold:
//   text  valid UTF-8 passes through; control bytes, DEL and bytes that are not valid
//         UTF-8 as \xHH, backslash as \\ (close to how redis-cli prints them)
//   CSV   RFC 4180 quoting when a field holds , " CR LF or leading/trailing spaces
//   JSON  valid UTF-8 passes through; control bytes as \u00XX; a byte that is not part
//         of valid UTF-8 becomes \u00XX too (read as Latin-1), so the output is always
//         valid JSON
//   HTML  & < > " ' as entities, after the text escaping
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace strata::mem {

std::string TextEscape(std::string_view s);
// TextEscape, cut to at most max_chars characters with "..." at the end when longer.
std::string TextEscapeTruncated(std::string_view s, size_t max_chars);
std::string CsvField(std::string_view s);
// A JSON string literal, quotes included.
std::string JsonString(std::string_view s);
std::string HtmlEscape(std::string_view s);

// 1536 -> "1.5 KiB"; below 1024 "N B".
std::string HumanBytes(double bytes);
// Fixed-point with `decimals` digits; NaN and infinities print as 0.
std::string FormatFixed(double v, int decimals);

}  // namespace strata::mem
