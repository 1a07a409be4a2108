#include "server/net/resp_peek.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "server/net/resp_parser.h"

namespace strata {
namespace {

std::string Cmd(const std::vector<std::string>& args) {
  std::string s = "*" + std::to_string(args.size()) + "\r\n";
  for (const std::string& a : args) s += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return s;
}

std::vector<std::string> Peek(const std::string& in, size_t max = 16) {
  std::vector<std::string_view> out(max);
  size_t n = PeekSecondArgs(in.data(), in.size(), max, out.data());
  return std::vector<std::string>(out.begin(), out.begin() + static_cast<ptrdiff_t>(n));
}

TEST(RespPeekTest, SecondArgumentOfEachRequest) {
  std::string in =
      Cmd({"GET", "a"}) + Cmd({"SET", "bb", "v"}) + Cmd({"PING"}) + Cmd({"HSET", "h", "f", "v"});
  EXPECT_EQ(Peek(in), (std::vector<std::string>{"a", "bb", "", "h"}));
}

TEST(RespPeekTest, StopsAtMax) {
  std::string in;
  for (int i = 0; i < 10; i++) in += Cmd({"GET", "k" + std::to_string(i)});
  EXPECT_EQ(Peek(in, 3), (std::vector<std::string>{"k0", "k1", "k2"}));
}

TEST(RespPeekTest, StopsBeforeAnIncompleteRequestAtEveryCut) {
  std::string first = Cmd({"GET", "first"});
  std::string second = Cmd({"SET", "second", "value"});
  for (size_t cut = 0; cut < second.size(); cut++) {
    EXPECT_EQ(Peek(first + second.substr(0, cut)), (std::vector<std::string>{"first"})) << cut;
  }
  EXPECT_EQ(Peek(first + second), (std::vector<std::string>{"first", "second"}));
}

TEST(RespPeekTest, StopsAtWhatIsNotCanonicalMultibulk) {
  std::string first = Cmd({"GET", "a"});
  for (std::string bad : {"GET b\r\n", "*-1\r\n", "*2\r\n$-1\r\n",
                          "*+2\r\n$3\r\nGET\r\n$1\r\nb\r\n", "*2\r\n$3\r\nGET\r\n:1\r\n",
                          "*2\r\n$3 \r\nGET\r\n$1\r\nb\r\n", "*2\r\n$1234567890\r\n", "*2x\r\n"}) {
    EXPECT_EQ(Peek(first + bad + first), (std::vector<std::string>{"a"})) << bad;
  }
}

// Length lines of every size, with the buffer ending at every point after them: the
// fast path (room for the longest line) and the careful one agree, ten digits or more
// and leading zeros end the look, and nothing past the buffer is read (ASan build).
TEST(RespPeekTest, LengthLinesOfEverySizeAtTheBufferEnd) {
  std::string first = Cmd({"GET", "a"});
  for (size_t digits = 1; digits <= 14; digits++) {
    for (char lead : {'1', '0'}) {
      std::string line = std::string(1, lead) + std::string(digits - 1, '0');
      for (std::string tail : {std::string("\r\n"), std::string("\r"), std::string(""),
                               std::string("\r\nGET\r\n$1\r\nb\r\n")}) {
        std::string req = "*2\r\n$" + line + tail;
        // Each cut its own allocation, so that a read past the end is one past it.
        for (size_t cut = 0; cut <= req.size(); cut++) {
          std::string in = first + req.substr(0, cut);
          auto buf = std::make_unique<char[]>(in.size());
          std::memcpy(buf.get(), in.data(), in.size());
          std::string_view out[4];
          size_t n = PeekSecondArgs(buf.get(), in.size(), 4, out);
          ASSERT_EQ(n, 1u) << digits << " " << lead << " " << cut;
          EXPECT_EQ(out[0], "a");
        }
      }
    }
  }
  // A short line with a leading zero ends the look too; the same without it does not.
  EXPECT_EQ(Peek(first + "*2\r\n$03\r\nGET\r\n$1\r\nb\r\n"), (std::vector<std::string>{"a"}));
  EXPECT_EQ(Peek(first + "*2\r\n$3\r\nGET\r\n$1\r\nb\r\n" + std::string(20, 'x')),
            (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(Peek(first + "*2\r\n$3\r\nGET\r\n$0\r\n\r\n"), (std::vector<std::string>{"a", ""}));
  // One, two, three and four digits, each with and without eight bytes after it.
  for (size_t n : {7, 10, 99, 100, 999, 1000, 12345}) {
    std::string key(n, 'k');
    std::string set = Cmd({"SET", key, std::string(n, 'v')});
    EXPECT_EQ(Peek(set + first), (std::vector<std::string>{key, "a"})) << n;
    EXPECT_EQ(Peek(first + set), (std::vector<std::string>{"a", key})) << n;
  }
  EXPECT_EQ(Peek(first + "*2\r\n$3\r\nGET\r\n$010\r\n0123456789\r\n" + first),
            (std::vector<std::string>{"a"}));
}

TEST(RespPeekTest, ManyArgumentsEndTheLook) {
  std::vector<std::string> args = {"MSET"};
  for (size_t i = 0; i < kPeekArgsMax; i++) args.push_back("x");
  std::string in = Cmd({"GET", "a"}) + Cmd(args) + Cmd({"GET", "b"});
  EXPECT_EQ(Peek(in), (std::vector<std::string>{"a"}));
  args.pop_back();
  in = Cmd({"GET", "a"}) + Cmd(args) + Cmd({"GET", "b"});
  EXPECT_EQ(Peek(in), (std::vector<std::string>{"a", "x", "b"}));
}

TEST(RespPeekTest, EmptyMultibulkAndBinaryKeys) {
  std::string key("k\r\n\0$*", 6);
  std::string in = "*0\r\n" + Cmd({"GET", key}) + Cmd({"GET", ""});
  EXPECT_EQ(Peek(in), (std::vector<std::string>{"", key, ""}));
}

// Whatever the bytes, a request the peek looks at is one the parser takes whole, with
// the same second argument and the same size.
TEST(RespPeekTest, AgreesWithTheParserOnRandomInput) {
  std::mt19937_64 rng(7);
  const std::string alphabet = "*$\r\n0123-9x";
  for (int round = 0; round < 20000; round++) {
    std::string in;
    int parts = static_cast<int>(rng() % 4);
    for (int p = 0; p < parts; p++) {
      if (rng() % 3 == 0) {
        size_t n = rng() % 12;
        for (size_t i = 0; i < n; i++) in += alphabet[rng() % alphabet.size()];
      } else {
        std::vector<std::string> args(rng() % 4);
        for (std::string& a : args) {
          size_t n = rng() % 8 == 0 ? rng() % 1200 : rng() % 5;
          a = std::string(n, 'a' + static_cast<char>(rng() % 26));
        }
        std::string c = Cmd(args);
        in += c.substr(0, rng() % 4 == 0 ? rng() % (c.size() + 1) : c.size());
      }
    }
    std::vector<std::string_view> peeked(8);
    size_t n = PeekSecondArgs(in.data(), in.size(), peeked.size(), peeked.data());
    RespParser parser;
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
      std::vector<std::string_view> args;
      size_t consumed = 0;
      ASSERT_EQ(parser.Parse(in.data() + at, in.size() - at, RespLimits{}, &consumed, &args),
                RespParser::Result::kOk)
          << round << ": " << in;
      EXPECT_EQ(args.size() >= 2 ? args[1] : std::string_view(), peeked[i]) << round;
      if (args.size() >= 2) {
        EXPECT_EQ(args[1].data(), peeked[i].data()) << round;
      }
      at += consumed;
    }
  }
}

}  // namespace
}  // namespace strata
