// strata-bench's reply scanner (each reply's end, error, hits and misses, with partial
// input and garbage) and request writer (the exact RESP bytes of each request kind).
#include "tools/strata-bench/reply_scanner.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "tools/strata-bench/byte_buffer.h"
#include "tools/strata-bench/request_writer.h"

namespace strata::bench {
namespace {

struct Scan {
  ScanResult result;
  size_t consumed = 0;
  ReplyInfo info;
  size_t need = 0;
};

Scan ScanOne(const std::string& s) {
  Scan r;
  r.result = ScanReply(s.data(), s.size(), &r.consumed, &r.info, &r.need);
  return r;
}

TEST(StrataBenchReplyScanner, ClassifiesEachReplyType) {
  Scan s = ScanOne("+OK\r\n");
  ASSERT_EQ(s.result, ScanResult::kComplete);
  EXPECT_EQ(s.consumed, 5u);
  EXPECT_FALSE(s.info.error);
  EXPECT_EQ(s.info.hits + s.info.misses, 0u);

  const std::string err = "-ERR wrong\r\n+OK\r\n";  // error_text points into it
  s = ScanOne(err);
  ASSERT_EQ(s.result, ScanResult::kComplete);
  EXPECT_EQ(s.consumed, 12u);
  EXPECT_TRUE(s.info.error);
  EXPECT_EQ(s.info.error_text, "ERR wrong");

  s = ScanOne("$5\r\nhello\r\n");
  ASSERT_EQ(s.result, ScanResult::kComplete);
  EXPECT_EQ(s.consumed, 11u);
  EXPECT_EQ(s.info.hits, 1u);
  EXPECT_EQ(s.info.misses, 0u);

  s = ScanOne("$0\r\n\r\n");
  ASSERT_EQ(s.result, ScanResult::kComplete);
  EXPECT_EQ(s.info.hits, 1u);  // an empty value is still a hit

  s = ScanOne("$-1\r\n");
  ASSERT_EQ(s.result, ScanResult::kComplete);
  EXPECT_EQ(s.consumed, 5u);
  EXPECT_EQ(s.info.misses, 1u);

  s = ScanOne(":42\r\n");
  ASSERT_EQ(s.result, ScanResult::kComplete);
  EXPECT_EQ(s.consumed, 5u);

  // MGET: hits and misses per element.
  s = ScanOne("*4\r\n$1\r\na\r\n$-1\r\n$2\r\nbb\r\n$-1\r\n");
  ASSERT_EQ(s.result, ScanResult::kComplete);
  EXPECT_EQ(s.info.hits, 2u);
  EXPECT_EQ(s.info.misses, 2u);

  s = ScanOne("*0\r\n");
  ASSERT_EQ(s.result, ScanResult::kComplete);
  EXPECT_EQ(s.consumed, 4u);

  s = ScanOne("*-1\r\n");
  ASSERT_EQ(s.result, ScanResult::kComplete);
  EXPECT_EQ(s.info.misses, 1u);

  // Nested arrays end where the outer one ends; deeper elements are not hits.
  s = ScanOne("*2\r\n*2\r\n$1\r\nx\r\n:1\r\n$1\r\ny\r\n+extra\r\n");
  ASSERT_EQ(s.result, ScanResult::kComplete);
  EXPECT_EQ(s.consumed, 26u);
  EXPECT_EQ(s.info.hits, 1u);
}

TEST(StrataBenchReplyScanner, Resp3Types) {
  for (const char* one_c : {"_\r\n", ",3.14\r\n", "#t\r\n", "(12345678901234567890\r\n",
                            "=7\r\ntxt:abc\r\n", "%1\r\n+k\r\n:1\r\n", "~2\r\n:1\r\n:2\r\n",
                            ">2\r\n+a\r\n+b\r\n", "|1\r\n+key\r\n+val\r\n$1\r\nv\r\n"}) {
    const std::string one = one_c;
    const Scan s = ScanOne(one + "+next\r\n");
    ASSERT_EQ(s.result, ScanResult::kComplete) << one;
    EXPECT_EQ(s.consumed, one.size()) << one;
  }
  const std::string blob = "!9\r\nERR oops!\r\n";
  Scan s = ScanOne(blob);
  ASSERT_EQ(s.result, ScanResult::kComplete);
  EXPECT_TRUE(s.info.error);
  EXPECT_EQ(s.info.error_text, "ERR oops!");
  EXPECT_EQ(ScanOne("_\r\n").info.misses, 1u);
}

TEST(StrataBenchReplyScanner, EveryPrefixNeedsMoreAndNeverMisreads) {
  const std::string full = "*3\r\n$5\r\nhello\r\n$-1\r\n*1\r\n:7\r\n";
  for (size_t n = 0; n < full.size(); ++n) {
    const Scan s = ScanOne(full.substr(0, n));
    EXPECT_EQ(s.result, ScanResult::kNeedMore) << n;
  }
  EXPECT_EQ(ScanOne(full).result, ScanResult::kComplete);
  EXPECT_EQ(ScanOne(full).consumed, full.size());
}

TEST(StrataBenchReplyScanner, BulkHeaderSaysHowMuchIsNeeded) {
  const Scan s = ScanOne("$1000\r\nabc");
  ASSERT_EQ(s.result, ScanResult::kNeedMore);
  EXPECT_EQ(s.need, 7u + 1000u + 2u);
}

TEST(StrataBenchReplyScanner, MalformedInput) {
  for (const char* bad_c : {"?what\r\n", "$abc\r\n", "$-2\r\n", "*x\r\n", "*-2\r\n", "$3\r\nabcXY",
                            "+OK\rX", "$99999999999999999999999\r\n", "%-1\r\n", "=-1\r\n"}) {
    const std::string bad = bad_c;
    EXPECT_EQ(ScanOne(bad).result, ScanResult::kMalformed) << bad;
  }
  // A header line longer than kMaxLine without CRLF is garbage, not a wait forever.
  EXPECT_EQ(ScanOne("+" + std::string(kMaxLine + 10, 'a')).result, ScanResult::kMalformed);
  EXPECT_EQ(ScanOne("+" + std::string(100, 'a')).result, ScanResult::kNeedMore);
  // Nesting deeper than kMaxDepth.
  std::string deep;
  for (int i = 0; i <= kMaxDepth; ++i) deep += "*1\r\n";
  EXPECT_EQ(ScanOne(deep + ":1\r\n").result, ScanResult::kMalformed);
}

std::string Written(RequestKind kind, std::initializer_list<uint64_t> keys, uint32_t ttl,
                    const RequestWriter& w) {
  ByteBuffer b(8);  // small on purpose: Write grows it
  const std::vector<uint64_t> k(keys);
  const size_t n = w.Write(kind, k.data(), static_cast<uint32_t>(k.size()), ttl, &b);
  EXPECT_EQ(n, b.readable());
  EXPECT_LE(n, w.MaxSize(kind, static_cast<uint32_t>(k.size())));
  return std::string(b.read_ptr(), b.readable());
}

TEST(StrataBenchRequestWriter, ExactRespBytes) {
  const RequestWriter w("memtier-", "xyz");
  EXPECT_EQ(Written(RequestKind::kGet, {42}, 0, w), "*2\r\n$3\r\nGET\r\n$10\r\nmemtier-42\r\n");
  EXPECT_EQ(Written(RequestKind::kSet, {0}, 0, w),
            "*3\r\n$3\r\nSET\r\n$9\r\nmemtier-0\r\n$3\r\nxyz\r\n");
  EXPECT_EQ(Written(RequestKind::kSet, {7}, 300, w),
            "*5\r\n$3\r\nSET\r\n$9\r\nmemtier-7\r\n$3\r\nxyz\r\n$2\r\nEX\r\n$3\r\n300\r\n");
  EXPECT_EQ(Written(RequestKind::kMGet, {1, 22}, 0, w),
            "*3\r\n$4\r\nMGET\r\n$9\r\nmemtier-1\r\n$10\r\nmemtier-22\r\n");
  EXPECT_EQ(Written(RequestKind::kMSet, {1, 2}, 0, w),
            "*5\r\n$4\r\nMSET\r\n$9\r\nmemtier-1\r\n$3\r\nxyz\r\n$9\r\nmemtier-2\r\n$3\r\nxyz\r\n");
  const RequestWriter empty("", "");
  EXPECT_EQ(Written(RequestKind::kSet, {18446744073709551615ull}, 0, empty),
            "*3\r\n$3\r\nSET\r\n$20\r\n18446744073709551615\r\n$0\r\n\r\n");
}

TEST(StrataBenchRequestWriter, ValuePrefixOfAGivenLength) {
  const RequestWriter w("k", "abcdef");
  ByteBuffer b(8);
  const uint64_t key = 1;
  w.Write(RequestKind::kSet, &key, 1, 0, &b, 3);
  EXPECT_EQ(std::string(b.read_ptr(), b.readable()),
            "*3\r\n$3\r\nSET\r\n$2\r\nk1\r\n$3\r\nabc\r\n");
  b.Consume(b.readable());
  w.Write(RequestKind::kSet, &key, 1, 0, &b, 0);
  EXPECT_EQ(std::string(b.read_ptr(), b.readable()), "*3\r\n$3\r\nSET\r\n$2\r\nk1\r\n$0\r\n\r\n");
  b.Consume(b.readable());
  w.Write(RequestKind::kSet, &key, 1, 0, &b, 100);  // clamped to the value's size
  EXPECT_EQ(std::string(b.read_ptr(), b.readable()),
            "*3\r\n$3\r\nSET\r\n$2\r\nk1\r\n$6\r\nabcdef\r\n");
}

TEST(StrataBenchByteBuffer, CompactsThenGrowsKeepingUnreadBytes) {
  ByteBuffer b(16);
  std::memcpy(b.write_ptr(), "0123456789", 10);
  b.Commit(10);
  b.Consume(8);
  b.Ensure(12);  // fits after moving "89" to the front
  EXPECT_EQ(b.capacity(), 16u);
  EXPECT_EQ(std::string(b.read_ptr(), b.readable()), "89");
  b.Ensure(100);  // must grow
  EXPECT_GE(b.writable(), 100u);
  EXPECT_EQ(std::string(b.read_ptr(), b.readable()), "89");
  b.Consume(2);
  EXPECT_EQ(b.readable(), 0u);
  EXPECT_EQ(b.writable(), b.capacity());
}

}  // namespace
}  // namespace strata::bench
