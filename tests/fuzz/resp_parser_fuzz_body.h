// The body of the RESP parser fuzz target, shared by the libFuzzer entry point
// (resp_parser_fuzz.cc, built with clang and -DSTRATA_FUZZ=ON) and by a randomized unit
// test that runs in every CI build. Checks: no crash, no read outside the input, and
// the parser's promises (consumed <= size, arguments inside the consumed range, an
// error always has a "Protocol error" text).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "server/net/resp_parser.h"

namespace strata {

// What one pass over an input yields: the requests parsed, then how it stopped.
struct RespFuzzOutcome {
  std::vector<std::vector<std::string>> requests;
  bool error = false;
  std::string error_text;
  size_t unread = 0;  // bytes left over (an incomplete request)
  bool operator==(const RespFuzzOutcome&) const = default;
};

// Parses all of data at once. Checks the parser's promises along the way.
inline RespFuzzOutcome RespFuzzWhole(const std::vector<char>& buf, const RespLimits& limits) {
  RespFuzzOutcome out;
  RespParser parser;
  std::vector<std::string_view> args;
  size_t pos = 0, size = buf.size();
  for (int guard = 0; guard < 100000 && pos < size; guard++) {
    size_t consumed = 0;
    auto r = parser.Parse(buf.data() + pos, size - pos, limits, &consumed, &args);
    if (r == RespParser::Result::kNeedMore) break;
    if (r == RespParser::Result::kError) {
      if (parser.error().rfind("Protocol error", 0) != 0) std::abort();
      out.error = true;
      out.error_text = parser.error();
      return out;
    }
    if (consumed == 0 || consumed > size - pos) std::abort();
    for (std::string_view a : args) {
      // Multibulk arguments point into the consumed bytes; inline ones into parser storage.
      bool inside =
          a.data() >= buf.data() + pos && a.data() + a.size() <= buf.data() + pos + consumed;
      if (!inside && buf[pos] == '*') std::abort();
    }
    if (!args.empty()) out.requests.emplace_back(args.begin(), args.end());
    pos += consumed;
  }
  out.unread = size - pos;
  return out;
}

// Parses the same bytes as they would arrive in reads of `step` bytes: each call sees
// the current request's bytes in a fresh buffer (so nothing from an earlier call may be
// pointed into), as a connection whose buffer moves would hand them over.
inline RespFuzzOutcome RespFuzzInSteps(const std::vector<char>& buf, const RespLimits& limits,
                                       size_t step) {
  RespFuzzOutcome out;
  RespParser parser;
  std::vector<std::string_view> args;
  size_t start = 0, received = 0, size = buf.size();
  int guard = 0;
  while (received < size && guard < 100000) {
    received = std::min(size, received + step);
    while (start < received && guard++ < 100000) {
      std::vector<char> fresh(buf.begin() + static_cast<std::ptrdiff_t>(start),
                              buf.begin() + static_cast<std::ptrdiff_t>(received));
      size_t consumed = 0;
      auto r = parser.Parse(fresh.data(), fresh.size(), limits, &consumed, &args);
      if (r == RespParser::Result::kNeedMore) break;
      if (r == RespParser::Result::kError) {
        out.error = true;
        out.error_text = parser.error();
        return out;
      }
      if (!args.empty()) out.requests.emplace_back(args.begin(), args.end());
      start += consumed;
    }
  }
  out.unread = size - start;
  return out;
}

// The fuzz target: the first byte chooses the read size and whether the client has
// authenticated; the rest is the input. Parsing it whole and parsing it in reads must
// give the same requests and stop the same way (the parser resumes requests across
// reads), and the parser keeps its promises (see RespFuzzWhole).
inline void FuzzRespParser(const uint8_t* data, size_t size) {
  if (size == 0) return;
  uint8_t control = data[0];
  RespLimits limits;
  limits.bulk_len_max = 1 << 20;
  limits.unauthenticated = control & 1;
  size_t step = 1 + (control >> 1);  // 1 to 128 bytes per read
  // Copy into an exact-size heap buffer so ASan sees any overread.
  std::vector<char> buf(data + 1, data + size);
  RespFuzzOutcome whole = RespFuzzWhole(buf, limits);
  // Errors that depend on how much is buffered (a line too long before its end arrives)
  // may show at another moment in reads: only error-free inputs are compared exactly.
  if (whole.error) return;
  RespFuzzOutcome steps = RespFuzzInSteps(buf, limits, step);
  if (!(steps == whole)) std::abort();
}

}  // namespace strata
