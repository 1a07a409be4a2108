// The body of the RESP parser fuzz target, shared by the libFuzzer entry point
// (resp_parser_fuzz.cc, built with clang and -DSTRATA_FUZZ=ON) and by a randomized unit
// test that runs in every CI build. Checks: no crash, no read outside the input, and
// the parser's promises (consumed <= size, arguments inside the consumed range, an
// error always has a "Protocol error" text).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "server/net/resp_parser.h"

namespace strata {

inline void FuzzRespParser(const uint8_t* data, size_t size) {
  // Copy into an exact-size heap buffer so ASan sees any overread.
  std::vector<char> buf(data, data + size);
  RespParser parser;
  RespLimits limits;
  limits.bulk_len_max = 1 << 20;
  std::vector<std::string_view> args;
  size_t pos = 0;
  for (int guard = 0; guard < 100000 && pos < size; guard++) {
    size_t consumed = 0;
    auto r = parser.Parse(buf.data() + pos, size - pos, limits, &consumed, &args);
    if (r == RespParser::Result::kNeedMore) break;
    if (r == RespParser::Result::kError) {
      if (parser.error().rfind("Protocol error", 0) != 0) std::abort();
      break;
    }
    if (consumed == 0 || consumed > size - pos) std::abort();
    for (std::string_view a : args) {
      // Multibulk arguments point into the consumed bytes; inline ones into parser storage.
      bool inside =
          a.data() >= buf.data() + pos && a.data() + a.size() <= buf.data() + pos + consumed;
      if (!inside && buf[pos] == '*') std::abort();
    }
    pos += consumed;
  }
}

}  // namespace strata
