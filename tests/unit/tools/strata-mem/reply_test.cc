#include "tools/strata-mem/reply.h"

#include <gtest/gtest.h>

#include <string>

namespace strata::mem {
namespace {

using Result = ReplyParser::Result;

Result ParseAll(std::string_view in, Reply* out, size_t* consumed, ReplyParser* p = nullptr) {
  ReplyParser local;
  if (p == nullptr) p = &local;
  return p->Parse(in, consumed, out);
}

TEST(ReplyParserTest, ScalarTypes) {
  Reply r;
  size_t n = 0;
  ASSERT_EQ(ParseAll("+OK\r\n", &r, &n), Result::kOk);
  EXPECT_EQ(r.type, Reply::Type::kStatus);
  EXPECT_EQ(r.str, "OK");
  EXPECT_EQ(n, 5u);

  ASSERT_EQ(ParseAll("-ERR unknown command 'HSET'\r\n", &r, &n), Result::kOk);
  EXPECT_TRUE(r.is_error());
  EXPECT_EQ(r.str, "ERR unknown command 'HSET'");

  ASSERT_EQ(ParseAll(":-42\r\n", &r, &n), Result::kOk);
  EXPECT_EQ(r.type, Reply::Type::kInteger);
  EXPECT_EQ(r.integer, -42);

  ASSERT_EQ(ParseAll("$5\r\nhe\r\no\r\n", &r, &n), Result::kOk);
  EXPECT_EQ(r.type, Reply::Type::kBulk);
  EXPECT_EQ(r.str, "he\r\no");
  EXPECT_EQ(n, 11u);

  ASSERT_EQ(ParseAll("$0\r\n\r\n", &r, &n), Result::kOk);
  EXPECT_EQ(r.str, "");

  ASSERT_EQ(ParseAll("$-1\r\n", &r, &n), Result::kOk);
  EXPECT_TRUE(r.is_nil());
  ASSERT_EQ(ParseAll("*-1\r\n", &r, &n), Result::kOk);
  EXPECT_TRUE(r.is_nil());
}

TEST(ReplyParserTest, NestedArrayAndTrailingData) {
  std::string in = "*2\r\n$1\r\n0\r\n*3\r\n$1\r\na\r\n$2\r\nbb\r\n:7\r\n+NEXT\r\n";
  Reply r;
  size_t n = 0;
  ASSERT_EQ(ParseAll(in, &r, &n), Result::kOk);
  ASSERT_EQ(r.type, Reply::Type::kArray);
  ASSERT_EQ(r.elements.size(), 2u);
  EXPECT_EQ(r.elements[0].str, "0");
  ASSERT_EQ(r.elements[1].elements.size(), 3u);
  EXPECT_EQ(r.elements[1].elements[1].str, "bb");
  EXPECT_EQ(r.elements[1].elements[2].integer, 7);
  EXPECT_EQ(in.substr(n), "+NEXT\r\n");
  ASSERT_EQ(ParseAll("*0\r\n", &r, &n), Result::kOk);
  EXPECT_EQ(r.type, Reply::Type::kArray);
  EXPECT_TRUE(r.elements.empty());
}

TEST(ReplyParserTest, EveryPrefixNeedsMore) {
  std::string in = "*3\r\n$3\r\nfoo\r\n:12\r\n*2\r\n+a\r\n$-1\r\n";
  for (size_t len = 0; len < in.size(); len++) {
    Reply r;
    size_t n = 0;
    EXPECT_EQ(ParseAll(in.substr(0, len), &r, &n), Result::kNeedMore) << "prefix " << len;
  }
  Reply r;
  size_t n = 0;
  EXPECT_EQ(ParseAll(in, &r, &n), Result::kOk);
  EXPECT_EQ(n, in.size());
}

TEST(ReplyParserTest, NeededReportsBulkSize) {
  ReplyParser p;
  Reply r;
  size_t n = 0;
  ASSERT_EQ(p.Parse("$100\r\nabc", &n, &r), Result::kNeedMore);
  EXPECT_EQ(p.needed(), 6u + 100 + 2);
  ASSERT_EQ(p.Parse("+OK\r\n", &n, &r), Result::kOk);
  EXPECT_EQ(p.needed(), 0u);
}

TEST(ReplyParserTest, Malformed) {
  for (const char* bad : {"?what\r\n", ":12a\r\n", ":\r\n", "$abc\r\n", "$-2\r\n", "*-5\r\n",
                          "$3\r\nfooXY", "*x\r\n", ":99999999999999999999\r\n"}) {
    Reply r;
    size_t n = 0;
    ReplyParser p;
    EXPECT_EQ(p.Parse(bad, &n, &r), Result::kError) << bad;
    EXPECT_FALSE(p.error().empty()) << bad;
  }
}

TEST(ReplyParserTest, Limits) {
  ReplyLimits limits;
  limits.bulk_len_max = 10;
  limits.array_len_max = 3;
  limits.depth_max = 2;
  limits.line_len_max = 16;
  Reply r;
  size_t n = 0;
  {
    ReplyParser p(limits);
    EXPECT_EQ(p.Parse("$11\r\n", &n, &r), Result::kError);
    EXPECT_NE(p.error().find("exceeds"), std::string::npos);
  }
  {
    ReplyParser p(limits);
    EXPECT_EQ(p.Parse("*4\r\n", &n, &r), Result::kError);
  }
  {
    ReplyParser p(limits);
    EXPECT_EQ(p.Parse("*1\r\n*1\r\n*1\r\n:1\r\n", &n, &r), Result::kError);
    EXPECT_NE(p.error().find("nested"), std::string::npos);
  }
  {
    ReplyParser p(limits);
    EXPECT_EQ(p.Parse("+this line is far too long", &n, &r), Result::kError);
  }
  {
    // A huge declared array with no data waits; it does not allocate up front.
    ReplyParser p;
    EXPECT_EQ(p.Parse("*60000000\r\n", &n, &r), Result::kNeedMore);
  }
}

TEST(ReplyParserTest, IntegerHelper) {
  int64_t v = 0;
  EXPECT_TRUE(ParseReplyInteger("9223372036854775807", &v));
  EXPECT_EQ(v, INT64_MAX);
  EXPECT_TRUE(ParseReplyInteger("-9223372036854775808", &v));
  EXPECT_EQ(v, INT64_MIN);
  EXPECT_FALSE(ParseReplyInteger("9223372036854775808", &v));
  EXPECT_FALSE(ParseReplyInteger("-", &v));
  EXPECT_FALSE(ParseReplyInteger("+1", &v));
  EXPECT_FALSE(ParseReplyInteger("", &v));
}

// Mutated replies and random bytes: the parser answers kOk, kNeedMore or kError, never
// reads past the input, and a kOk never consumes more than it was given.
TEST(ReplyParserTest, RandomInputNeverCrashes) {
  const std::string seeds[] = {
      "*2\r\n$1\r\n0\r\n*3\r\n$1\r\na\r\n$2\r\nbb\r\n:7\r\n",
      "$5\r\nhello\r\n",
      "-ERR x\r\n",
      "*1\r\n*1\r\n*-1\r\n",
  };
  const char alphabet[] = "*$:+-\r\n0123456789-abc";
  uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<size_t>(state >> 33);
  };
  for (int i = 0; i < 20000; i++) {
    std::string in = seeds[next() % 4];
    int edits = 1 + static_cast<int>(next() % 4);
    for (int e = 0; e < edits; e++) {
      size_t pos = next() % (in.size() + 1);
      char c = alphabet[next() % (sizeof(alphabet) - 1)];
      switch (next() % 3) {
        case 0:
          if (pos < in.size()) in[pos] = c;
          break;
        case 1:
          in.insert(in.begin() + static_cast<ptrdiff_t>(pos), c);
          break;
        default:
          if (pos < in.size()) in.erase(pos, 1);
      }
    }
    ReplyLimits limits;
    limits.depth_max = 4;
    ReplyParser p(limits);
    Reply r;
    size_t n = 0;
    ReplyParser::Result res = p.Parse(in, &n, &r);
    if (res == ReplyParser::Result::kOk) {
      ASSERT_LE(n, in.size());
      ASSERT_GT(n, 0u);
    }
  }
}

TEST(ReplyTest, Describe) {
  Reply r;
  r.type = Reply::Type::kError;
  r.str = "ERR x";
  EXPECT_EQ(r.Describe(), "error 'ERR x'");
  r.type = Reply::Type::kArray;
  r.elements.resize(2);
  EXPECT_EQ(r.Describe(), "array of 2");
}

}  // namespace
}  // namespace strata::mem
