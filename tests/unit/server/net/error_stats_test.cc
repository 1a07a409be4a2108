#include "server/net/error_stats.h"

#include <gtest/gtest.h>

#include <string>

#include "server/net/reply_builder.h"

namespace strata {
namespace {

TEST(ErrorStatsTest, CodeIsTheFirstWordWithin32Bytes) {
  EXPECT_EQ(ErrorStats::CodeOf("WRONGTYPE Operation against a key"), "WRONGTYPE");
  EXPECT_EQ(ErrorStats::CodeOf("ERR syntax error"), "ERR");
  EXPECT_EQ(ErrorStats::CodeOf("NOSPACE"), "ERR");
  EXPECT_EQ(ErrorStats::CodeOf(""), "ERR");
  EXPECT_EQ(ErrorStats::CodeOf(" leading space"), "ERR");
  // With its '-', the reply "-<30 bytes> tail" has its space at byte 32: found.
  std::string code30(30, 'C');
  EXPECT_EQ(ErrorStats::CodeOf(code30 + " tail"), code30);
  std::string code31(31, 'C');
  EXPECT_EQ(ErrorStats::CodeOf(code31 + " tail"), "ERR");  // the space is byte 33
}

TEST(ErrorStatsTest, CountsByCodeAndInTotal) {
  ErrorStats s;
  s.Count("ERR one");
  s.Count("ERR two");
  s.Count("WRONGTYPE x");
  EXPECT_EQ(s.total, 3u);
  EXPECT_EQ(s.by_code.size(), 2u);
  EXPECT_EQ(s.by_code["ERR"], 2u);
  EXPECT_EQ(s.by_code["WRONGTYPE"], 1u);
  ErrorStats sum;
  sum.Add(s);
  sum.Add(s);
  EXPECT_EQ(sum.total, 6u);
  EXPECT_EQ(sum.by_code["ERR"], 4u);
  EXPECT_FALSE(sum.codes_disabled);
}

TEST(ErrorStatsTest, DistinctCodesAreBounded) {
  static int hooked = 0;
  ErrorStats::SetCodesDisabledHook([] { hooked++; });
  ErrorStats s;
  for (size_t i = 0; i < ErrorStats::kMaxCodes; i++) s.Count("C" + std::to_string(i) + " x");
  EXPECT_EQ(s.by_code.size(), ErrorStats::kMaxCodes);
  EXPECT_EQ(hooked, 0);
  s.Count("C0 again");  // a known code still counts as itself
  EXPECT_EQ(s.by_code["C0"], 2u);
  s.Count("NEW x");  // one code too many: the table is emptied
  EXPECT_TRUE(s.codes_disabled);
  EXPECT_EQ(hooked, 1);
  s.Count("C1 x");
  s.Count("OTHER x");
  ASSERT_EQ(s.by_code.size(), 1u);
  EXPECT_EQ(s.by_code[std::string(ErrorStats::kDisabledCode)], 3u);
  EXPECT_EQ(s.total, ErrorStats::kMaxCodes + 4);
  EXPECT_EQ(hooked, 1);
  ErrorStats::SetCodesDisabledHook(nullptr);
}

TEST(ErrorStatsTest, ReplyBuilderCountsIntoTheThreadsStats) {
  std::string out;
  ReplyBuilder rb(&out, 2);
  rb.Error("ERR before any stats");  // no stats on this thread: written, not counted
  ErrorStats s;
  ErrorStats::SetForThisThread(&s);
  rb.Error("WRONGTYPE counted");
  rb.ErrorUncounted("WRONGTYPE passed on");
  ErrorStats::SetForThisThread(nullptr);
  rb.Error("ERR after");
  EXPECT_EQ(s.total, 1u);
  EXPECT_EQ(s.by_code["WRONGTYPE"], 1u);
  EXPECT_EQ(out,
            "-ERR before any stats\r\n-WRONGTYPE counted\r\n-WRONGTYPE passed on\r\n"
            "-ERR after\r\n");
}

}  // namespace
}  // namespace strata
