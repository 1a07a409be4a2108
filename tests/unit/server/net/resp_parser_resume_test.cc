// The parser resuming a request that arrives over many reads: it continues where it
// stopped (the buffer may move between calls), and it applies Redis's limits before
// authentication.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "server/net/resp_parser.h"

namespace strata {
namespace {

using R = RespParser::Result;

std::string Multibulk(const std::vector<std::string>& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const std::string& a : args) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return out;
}

// Feeds `stream` to one parser as a connection would: the bytes received so far, from
// the current request's start, copied to a fresh buffer on every call (so views and
// pointers from an earlier call are useless). Returns every request parsed.
std::vector<std::vector<std::string>> Feed(const std::string& stream, size_t step,
                                           RespLimits limits = {}) {
  RespParser p;
  std::vector<std::vector<std::string>> requests;
  size_t start = 0;  // current request's start in stream
  size_t received = 0;
  while (received < stream.size()) {
    received = std::min(stream.size(), received + step);
    for (;;) {
      std::string buffer = stream.substr(start, received - start);
      std::vector<std::string_view> args;
      size_t consumed = 0;
      R r = p.Parse(buffer.data(), buffer.size(), limits, &consumed, &args);
      if (r == R::kNeedMore) break;
      EXPECT_EQ(r, R::kOk) << p.error();
      if (r != R::kOk) return requests;
      requests.emplace_back(args.begin(), args.end());
      start += consumed;
      if (start == received) break;
    }
  }
  return requests;
}

TEST(RespParserResumeTest, ARequestSplitAtEveryByteParsesTheSame) {
  std::vector<std::string> args = {"SET", "key", std::string("a\0b\r\n", 5), ""};
  std::string full = Multibulk(args);
  for (size_t cut = 1; cut < full.size(); cut++) {
    RespParser p;
    std::vector<std::string_view> got;
    size_t consumed = 0;
    std::string first = full.substr(0, cut);
    ASSERT_EQ(p.Parse(first.data(), first.size(), {}, &consumed, &got), R::kNeedMore) << cut;
    std::string moved = full;  // the whole request, at another address
    ASSERT_EQ(p.Parse(moved.data(), moved.size(), {}, &consumed, &got), R::kOk) << cut;
    EXPECT_EQ(consumed, full.size());
    EXPECT_EQ(std::vector<std::string>(got.begin(), got.end()), args) << cut;
  }
}

TEST(RespParserResumeTest, PipelinedRequestsFedInSmallPieces) {
  std::vector<std::vector<std::string>> want = {
      {"PING"}, {"SET", "k", "hello"}, {"MGET", "a", "b", "c", "d"}, {"ECHO", ""}};
  std::string stream;
  for (const auto& r : want) stream += Multibulk(r);
  for (size_t step : {1, 2, 3, 7, 16, 1000}) EXPECT_EQ(Feed(stream, step), want) << step;
}

TEST(RespParserResumeTest, ManyArgumentsOverManyReads) {
  std::vector<std::string> args = {"RPUSH", "list"};
  for (int i = 0; i < 100000; i++) args.push_back("element:" + std::to_string(i));
  std::string stream = Multibulk(args) + Multibulk({"PING"});
  auto got = Feed(stream, 4099);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], args);
  EXPECT_EQ(got[1], std::vector<std::string>{"PING"});
}

TEST(RespParserResumeTest, AnErrorClearsWhatWasKept) {
  RespParser p;
  std::vector<std::string_view> got;
  size_t consumed = 0;
  std::string part = "*3\r\n$3\r\nSET\r\n";
  ASSERT_EQ(p.Parse(part.data(), part.size(), {}, &consumed, &got), R::kNeedMore);
  std::string bad = part + "x";
  ASSERT_EQ(p.Parse(bad.data(), bad.size(), {}, &consumed, &got), R::kError);
  EXPECT_EQ(p.error(), "Protocol error: expected '$', got 'x'");
  std::string next = Multibulk({"PING"});
  ASSERT_EQ(p.Parse(next.data(), next.size(), {}, &consumed, &got), R::kOk);
  EXPECT_EQ(std::vector<std::string>(got.begin(), got.end()), std::vector<std::string>{"PING"});
}

TEST(RespParserResumeTest, UnauthenticatedLimitsAsRedis) {
  RespLimits unauth;
  unauth.unauthenticated = true;
  auto parse = [](const std::string& in, const RespLimits& limits, std::string* err) {
    RespParser p;
    std::vector<std::string_view> got;
    size_t consumed = 0;
    R r = p.Parse(in.data(), in.size(), limits, &consumed, &got);
    *err = p.error();
    return r;
  };
  std::string err;
  std::vector<std::string> ten(10, "x");
  std::vector<std::string> eleven(11, "x");
  EXPECT_EQ(parse(Multibulk(ten), unauth, &err), R::kOk);
  // Refused from the header alone, before any argument arrives.
  EXPECT_EQ(parse("*11\r\n", unauth, &err), R::kError);
  EXPECT_EQ(err, "Protocol error: unauthenticated multibulk length");
  EXPECT_EQ(parse(Multibulk(eleven), {}, &err), R::kOk);
  EXPECT_EQ(parse(Multibulk({"AUTH", std::string(16384, 'p')}), unauth, &err), R::kOk);
  EXPECT_EQ(parse("*2\r\n$4\r\nAUTH\r\n$16385\r\n", unauth, &err), R::kError);
  EXPECT_EQ(err, "Protocol error: unauthenticated bulk length");
  EXPECT_EQ(parse("*2\r\n$4\r\nAUTH\r\n$16385\r\n", {}, &err), R::kNeedMore);
}

}  // namespace
}  // namespace strata
