#include "server/net/resp_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace strata {
namespace {

using R = RespParser::Result;

R ParseAll(const std::string& in, std::vector<std::string>* out, std::string* err = nullptr,
           RespLimits limits = {}) {
  RespParser p;
  std::vector<std::string_view> args;
  size_t consumed = 0;
  R r = p.Parse(in.data(), in.size(), limits, &consumed, &args);
  out->assign(args.begin(), args.end());
  if (err) *err = p.error();
  return r;
}

TEST(RespParserTest, Multibulk) {
  std::vector<std::string> a;
  ASSERT_EQ(ParseAll("*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n", &a), R::kOk);
  EXPECT_EQ(a, (std::vector<std::string>{"GET", "key"}));
}

TEST(RespParserTest, IncompleteNeedsMoreAtEveryCut) {
  std::string full = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nhello\r\n";
  for (size_t cut = 0; cut < full.size(); cut++) {
    std::vector<std::string> a;
    EXPECT_EQ(ParseAll(full.substr(0, cut), &a), R::kNeedMore) << cut;
  }
}

TEST(RespParserTest, BinarySafe) {
  std::string v("a\0b\r\nc", 6);
  std::string in = "*2\r\n$4\r\nECHO\r\n$6\r\n" + v + "\r\n";
  std::vector<std::string> a;
  ASSERT_EQ(ParseAll(in, &a), R::kOk);
  EXPECT_EQ(a[1], v);
}

TEST(RespParserTest, Inline) {
  std::vector<std::string> a;
  ASSERT_EQ(ParseAll("SET k \"hello world\"\r\n", &a), R::kOk);
  EXPECT_EQ(a, (std::vector<std::string>{"SET", "k", "hello world"}));
  ASSERT_EQ(ParseAll("PING\n", &a), R::kOk);
  EXPECT_EQ(a, (std::vector<std::string>{"PING"}));
  ASSERT_EQ(ParseAll("ECHO 'it\\'s' \"\\x41\\n\"\r\n", &a), R::kOk);
  EXPECT_EQ(a, (std::vector<std::string>{"ECHO", "it's", "A\n"}));
}

TEST(RespParserTest, ProtocolErrors) {
  std::vector<std::string> a;
  std::string err;
  EXPECT_EQ(ParseAll("*1\r\n$x\r\n", &a, &err), R::kError);
  EXPECT_EQ(err, "Protocol error: invalid bulk length");
  EXPECT_EQ(ParseAll("*abc\r\n", &a, &err), R::kError);
  EXPECT_EQ(err, "Protocol error: invalid multibulk length");
  EXPECT_EQ(ParseAll("*1\r\n+foo\r\n", &a, &err), R::kError);
  EXPECT_EQ(err, "Protocol error: expected '$', got '+'");
  EXPECT_EQ(ParseAll("SET \"a b\r\n", &a, &err), R::kError);
  EXPECT_EQ(err, "Protocol error: unbalanced quotes in request");
  EXPECT_EQ(ParseAll("*1\r\n$-1\r\n", &a, &err), R::kError);
  EXPECT_EQ(err, "Protocol error: invalid bulk length");
}

TEST(RespParserTest, Limits) {
  RespLimits limits;
  limits.bulk_len_max = 10;
  std::vector<std::string> a;
  std::string err;
  EXPECT_EQ(ParseAll("*1\r\n$11\r\n", &a, &err, limits), R::kError);
  EXPECT_EQ(err, "Protocol error: invalid bulk length");
  std::string big(70 * 1024, 'a');
  EXPECT_EQ(ParseAll(big, &a, &err), R::kError);
  EXPECT_EQ(err, "Protocol error: too big inline request");
}

TEST(RespParserTest, NeededForLargeBulk) {
  RespParser p;
  std::string in = "*2\r\n$3\r\nSET\r\n$100000\r\nabc";
  std::vector<std::string_view> args;
  size_t consumed = 0;
  EXPECT_EQ(p.Parse(in.data(), in.size(), {}, &consumed, &args), R::kNeedMore);
  EXPECT_EQ(p.needed(), in.size() - 3 + 100000 + 2);
}

TEST(RespParserTest, LengthLinesOfEveryWidth) {
  // One to three digits take a shortcut, longer ones the loop: all must agree.
  for (size_t n : {0, 1, 9, 10, 11, 42, 99, 100, 101, 999, 1000, 12345}) {
    std::string in = "*1\r\n$" + std::to_string(n) + "\r\n" + std::string(n, 'v') + "\r\n";
    std::vector<std::string> a;
    ASSERT_EQ(ParseAll(in, &a), R::kOk) << n;
    ASSERT_EQ(a.size(), 1u);
    EXPECT_EQ(a[0].size(), n);
  }
  std::vector<std::string> a;
  ASSERT_EQ(ParseAll("*12\r\n$1\r\nx\r\n", &a), R::kNeedMore);
  std::string err;
  EXPECT_EQ(ParseAll("*1\r\n$05\r\nhello\r\n", &a, &err), R::kError);
  EXPECT_EQ(err, "Protocol error: invalid bulk length");
  EXPECT_EQ(ParseAll("*01\r\n$1\r\nx\r\n", &a, &err), R::kError);
  EXPECT_EQ(err, "Protocol error: invalid multibulk length");
  EXPECT_EQ(ParseAll("*1\r\n$1\rx\r\nx\r\n", &a, &err), R::kError);
  EXPECT_EQ(err, "Protocol error: invalid bulk length");
  EXPECT_EQ(ParseAll("*1\r\n$12\rx" + std::string(12, 'v') + "\r\n", &a, &err), R::kError);
  EXPECT_EQ(err, "Protocol error: invalid bulk length");
  EXPECT_EQ(ParseAll("*1\r\n$123\rx" + std::string(123, 'v') + "\r\n", &a, &err), R::kError);
  EXPECT_EQ(err, "Protocol error: invalid bulk length");
  EXPECT_EQ(ParseAll("*1\r\n$012\r\n" + std::string(12, 'v') + "\r\n", &a, &err), R::kError);
  EXPECT_EQ(err, "Protocol error: invalid bulk length");
  EXPECT_EQ(ParseAll("*1\r\n$1x3\r\n" + std::string(13, 'v') + "\r\n", &a, &err), R::kError);
  EXPECT_EQ(err, "Protocol error: invalid bulk length");
  // A length line cut after its CR or its digits waits for more.
  EXPECT_EQ(ParseAll("*1\r\n$12\r", &a), R::kNeedMore);
  EXPECT_EQ(ParseAll("*1\r\n$123\r", &a), R::kNeedMore);
  EXPECT_EQ(ParseAll("*1\r\n$123", &a), R::kNeedMore);
  EXPECT_EQ(ParseAll("*1\r\n$1", &a), R::kNeedMore);
}

TEST(RespParserTest, EmptyMultibulkIsSkipped) {
  RespParser p;
  std::string in = "*0\r\n";
  std::vector<std::string_view> args;
  size_t consumed = 0;
  EXPECT_EQ(p.Parse(in.data(), in.size(), {}, &consumed, &args), R::kOk);
  EXPECT_TRUE(args.empty());
  EXPECT_EQ(consumed, in.size());
}

// canonical(): the request's bytes are the RESP encoding of its arguments (up to the two
// bytes after each bulk), so the replication feed may copy them.
TEST(RespParserTest, CanonicalOnlyForAMultibulkInItsOwnEncoding) {
  auto encode = [](const std::vector<std::string>& args) {
    std::string out = "*" + std::to_string(args.size()) + "\r\n";
    for (const std::string& a : args) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
    return out;
  };
  std::string big(1234, 'v');
  for (const std::string& in :
       {encode({"SET", "k", "v"}), encode({"set", "key:000000012345", big}), encode({"PING"}),
        encode({"SET", "", ""}), encode(std::vector<std::string>(12, "x"))}) {
    RespParser p;
    std::vector<std::string_view> args;
    size_t consumed = 0;
    ASSERT_EQ(p.Parse(in.data(), in.size(), RespLimits{}, &consumed, &args), R::kOk);
    EXPECT_TRUE(p.canonical()) << in.substr(0, 40);
    EXPECT_EQ(consumed, in.size());
  }
  // Inline requests are not; a multibulk after an inline one is again.
  RespParser p;
  std::vector<std::string_view> args;
  size_t consumed = 0;
  std::string in = "SET k v\r\n";
  ASSERT_EQ(p.Parse(in.data(), in.size(), RespLimits{}, &consumed, &args), R::kOk);
  EXPECT_FALSE(p.canonical());
  in = encode({"GET", "k"});
  ASSERT_EQ(p.Parse(in.data(), in.size(), RespLimits{}, &consumed, &args), R::kOk);
  EXPECT_TRUE(p.canonical());
  // Whenever the parser says canonical, the bytes are the encoding, also for a request
  // that arrives cut anywhere (resumed).
  std::string full = encode({"SET", "key", std::string(300, 'x'), "PX", "100"});
  for (size_t cut = 1; cut < full.size(); cut++) {
    RespParser q;
    std::string buf = full.substr(0, cut);
    ASSERT_EQ(q.Parse(buf.data(), buf.size(), RespLimits{}, &consumed, &args), R::kNeedMore);
    buf = full;
    ASSERT_EQ(q.Parse(buf.data(), buf.size(), RespLimits{}, &consumed, &args), R::kOk) << cut;
    std::vector<std::string> got(args.begin(), args.end());
    if (q.canonical()) {
      EXPECT_EQ(encode(got), full.substr(0, consumed)) << cut;
    }
  }
}

}  // namespace
}  // namespace strata
