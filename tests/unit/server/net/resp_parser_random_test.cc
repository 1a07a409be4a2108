// Randomized robustness test for the RESP parser: mutations of valid requests and
// random bytes go through the same checks as the libFuzzer target, including parsing
// each input whole and in reads of a random size and comparing the two.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "tests/fuzz/resp_parser_fuzz_body.h"

namespace strata {
namespace {

TEST(RespParserRandomTest, MutatedRequestsNeverBreakTheParser) {
  const std::string seeds[] = {
      "*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n",
      "*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n*1\r\n$4\r\nPING\r\n",
      "SET k \"a b\\x41\" 'c\\'d'\r\nPING\r\n",
      "*-1\r\n*0\r\n$5\r\nhello\r\n",
  };
  std::mt19937_64 rng(12345);
  const char alphabet[] = "*$\r\n0123456789-+:\"'\\ xabc";
  for (int iter = 0; iter < 200000; iter++) {
    std::string s = seeds[iter % 4];
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !s.empty(); e++) {
      size_t at = rng() % s.size();
      switch (rng() % 4) {
        case 0:
          s[at] = alphabet[rng() % (sizeof(alphabet) - 1)];
          break;
        case 1:
          s.insert(at, 1, alphabet[rng() % (sizeof(alphabet) - 1)]);
          break;
        case 2:
          s.erase(at, 1);
          break;
        default:
          s.resize(at);
          break;
      }
    }
    // The first byte is the fuzz target's control byte (read size, authenticated).
    s.insert(s.begin(), static_cast<char>(rng()));
    FuzzRespParser(reinterpret_cast<const uint8_t*>(s.data()), s.size());
  }
  for (int iter = 0; iter < 20000; iter++) {
    std::string s(rng() % 64, '\0');
    for (char& c : s) c = static_cast<char>(rng());
    FuzzRespParser(reinterpret_cast<const uint8_t*>(s.data()), s.size());
  }
  SUCCEED();
}

}  // namespace
}  // namespace strata
