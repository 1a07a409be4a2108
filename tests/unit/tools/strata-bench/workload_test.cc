#include "tools/strata-bench/workload.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace strata::bench {
namespace {

TEST(KeyRangeTest, MemtierDefaults) {
  KeyRange r;
  EXPECT_EQ(r.min, 0u);
  EXPECT_EQ(r.max, 10000000u);
}

TEST(ParseKeyPatternTest, AcceptsEachPairing) {
  KeyPattern set, get;
  std::string error;
  ASSERT_TRUE(ParseKeyPattern("R:R", &set, &get, &error));
  EXPECT_EQ(set, KeyPattern::kRandom);
  EXPECT_EQ(get, KeyPattern::kRandom);
  ASSERT_TRUE(ParseKeyPattern("S:S", &set, &get, &error));
  EXPECT_EQ(set, KeyPattern::kSequential);
  ASSERT_TRUE(ParseKeyPattern("G:G", &set, &get, &error));
  EXPECT_EQ(get, KeyPattern::kGaussian);
  ASSERT_TRUE(ParseKeyPattern("P:P", &set, &get, &error));
  EXPECT_EQ(set, KeyPattern::kParallel);
  ASSERT_TRUE(ParseKeyPattern("S:R", &set, &get, &error));
  EXPECT_EQ(set, KeyPattern::kSequential);
  EXPECT_EQ(get, KeyPattern::kRandom);
}

TEST(ParseKeyPatternTest, RejectsJunkNamingIt) {
  KeyPattern set, get;
  for (const char* bad : {"", "R", "R:", ":R", "RR", "r:r", "X:R", "R:R:R", "R-R", " R:R"}) {
    std::string error;
    EXPECT_FALSE(ParseKeyPattern(bad, &set, &get, &error)) << bad;
    EXPECT_NE(error.find(std::string("'") + bad + "'"), std::string::npos) << error;
  }
}

TEST(KeyGeneratorTest, RandomStaysInRangeAndCoversIt) {
  KeyGenerator g(KeyPattern::kRandom, {5, 14}, 0, 1, 99);
  std::set<uint64_t> seen;
  for (int i = 0; i < 10'000; ++i) {
    const uint64_t k = g.Next();
    ASSERT_GE(k, 5u);
    ASSERT_LE(k, 14u);
    seen.insert(k);
  }
  EXPECT_EQ(seen.size(), 10u);
}

TEST(KeyGeneratorTest, RandomIsDeterministicBySeedAndClientSeedsDiffer) {
  KeyGenerator a(KeyPattern::kRandom, {}, 0, 4, 1234);
  KeyGenerator b(KeyPattern::kRandom, {}, 0, 4, 1234);
  KeyGenerator c(KeyPattern::kRandom, {}, 0, 4, 1235);
  KeyGenerator d(KeyPattern::kRandom, {}, 1, 4, ClientSeed(1234, 1));
  std::vector<uint64_t> va, vb, vc, vd;
  for (int i = 0; i < 100; ++i) {
    va.push_back(a.Next());
    vb.push_back(b.Next());
    vc.push_back(c.Next());
    vd.push_back(d.Next());
  }
  EXPECT_EQ(va, vb);
  EXPECT_NE(va, vc);
  EXPECT_NE(va, vd);
  // Without --distinct-client-seed every client draws the same stream, as in memtier.
  KeyGenerator e(KeyPattern::kRandom, {}, 3, 4, 1234);
  for (uint64_t v : va) EXPECT_EQ(e.Next(), v);
  EXPECT_NE(ClientSeed(1234, 0), ClientSeed(1234, 1));
  EXPECT_EQ(ClientSeed(1234, 7), ClientSeed(1234, 7));
}

TEST(KeyGeneratorTest, SequentialWraps) {
  KeyGenerator g(KeyPattern::kSequential, {3, 6}, 0, 1, 0);
  std::vector<uint64_t> got;
  for (int i = 0; i < 10; ++i) got.push_back(g.Next());
  EXPECT_EQ(got, (std::vector<uint64_t>{3, 4, 5, 6, 3, 4, 5, 6, 3, 4}));
}

TEST(KeyGeneratorTest, SequentialWrapsAtTheTopOfTheKeySpace) {
  KeyGenerator g(KeyPattern::kSequential, {UINT64_MAX - 1, UINT64_MAX}, 0, 1, 0);
  EXPECT_EQ(g.Next(), UINT64_MAX - 1);
  EXPECT_EQ(g.Next(), UINT64_MAX);
  EXPECT_EQ(g.Next(), UINT64_MAX - 1);
}

TEST(KeyGeneratorTest, ParallelSlicesAreDisjointAndCoverTheRange) {
  const KeyRange range{10, 109};  // 100 keys
  for (uint32_t clients : {1u, 3u, 7u, 100u}) {
    std::vector<int> hits(100, 0);
    for (uint32_t i = 0; i < clients; ++i) {
      KeyGenerator g(KeyPattern::kParallel, range, i, clients, 5);
      const uint64_t slice = g.hi() - g.lo() + 1;
      // One full walk of the slice, then it wraps to its start.
      for (uint64_t n = 0; n < slice; ++n) {
        const uint64_t k = g.Next();
        ASSERT_GE(k, range.min);
        ASSERT_LE(k, range.max);
        EXPECT_EQ(k, g.lo() + n);
        ++hits[k - range.min];
      }
      EXPECT_EQ(g.Next(), g.lo());
    }
    for (int h : hits) EXPECT_EQ(h, 1) << clients << " clients";
  }
}

TEST(KeyGeneratorTest, ParallelWithMoreClientsThanKeys) {
  for (uint32_t i = 0; i < 5; ++i) {
    KeyGenerator g(KeyPattern::kParallel, {0, 1}, i, 5, 0);
    EXPECT_EQ(g.Next(), i % 2);
    EXPECT_EQ(g.Next(), i % 2);
  }
}

TEST(KeyGeneratorTest, GaussianCentersOnMedianAndIsClamped) {
  const KeyRange range{1000, 2000};
  KeyGenerator g(KeyPattern::kGaussian, range, 0, 1, 77);
  double sum = 0;
  const int n = 100'000;
  for (int i = 0; i < n; ++i) {
    const uint64_t k = g.Next();
    ASSERT_GE(k, range.min);
    ASSERT_LE(k, range.max);
    sum += static_cast<double>(k);
  }
  EXPECT_NEAR(sum / n, 1500.0, 5.0);

  // A wide stddev around an off-center median piles up at the clamps.
  KeyGenerator wide(KeyPattern::kGaussian, range, 0, 1, 77, /*gaussian_stddev=*/5000,
                    /*gaussian_median=*/1100);
  int at_min = 0, at_max = 0;
  for (int i = 0; i < 10'000; ++i) {
    const uint64_t k = wide.Next();
    ASSERT_GE(k, range.min);
    ASSERT_LE(k, range.max);
    at_min += k == range.min;
    at_max += k == range.max;
  }
  EXPECT_GT(at_min, 1000);
  EXPECT_GT(at_max, 1000);
}

TEST(KeyGeneratorTest, GaussianHonorsMedianAndIsDeterministic) {
  KeyGenerator a(KeyPattern::kGaussian, {0, 1'000'000}, 0, 1, 9, 1000, 250'000);
  KeyGenerator b(KeyPattern::kGaussian, {0, 1'000'000}, 0, 1, 9, 1000, 250'000);
  double sum = 0;
  for (int i = 0; i < 10'000; ++i) {
    const uint64_t k = a.Next();
    ASSERT_EQ(k, b.Next());
    sum += static_cast<double>(k);
  }
  EXPECT_NEAR(sum / 10'000, 250'000.0, 100.0);
}

TEST(ParseRatioTest, AcceptsGoodInputs) {
  uint32_t sets = 99, gets = 99;
  std::string error;
  ASSERT_TRUE(ParseRatio("1:10", &sets, &gets, &error));
  EXPECT_EQ(sets, 1u);
  EXPECT_EQ(gets, 10u);
  ASSERT_TRUE(ParseRatio("0:1", &sets, &gets, &error));
  EXPECT_EQ(sets, 0u);
  EXPECT_EQ(gets, 1u);
  ASSERT_TRUE(ParseRatio("3:0", &sets, &gets, &error));
  EXPECT_EQ(sets, 3u);
  EXPECT_EQ(gets, 0u);
  ASSERT_TRUE(ParseRatio("4294967295:4294967295", &sets, &gets, &error));
  EXPECT_EQ(sets, 4294967295u);
}

TEST(ParseRatioTest, RejectsBadInputsNamingThem) {
  for (const char* bad : {"0:0", "", "1", "1:", ":1", "-1:2", "1:-2", "+1:2", "1:10x", " 1:10",
                          "1:10 ", "a:b", "1:2:3", "1.5:2", "4294967296:1", "1:99999999999"}) {
    uint32_t sets = 7, gets = 8;
    std::string error;
    EXPECT_FALSE(ParseRatio(bad, &sets, &gets, &error)) << bad;
    EXPECT_NE(error.find(std::string("'") + bad + "'"), std::string::npos) << error;
    EXPECT_EQ(error.find('\n'), std::string::npos);
    EXPECT_EQ(sets, 7u);
    EXPECT_EQ(gets, 8u);
  }
}

void ExpectExactCounts(uint32_t sets, uint32_t gets) {
  RatioScheduler s(sets, gets);
  const uint64_t cycles = 13;
  uint64_t got_sets = 0, got_gets = 0;
  for (uint64_t i = 0; i < cycles * (sets + gets); ++i) {
    // Within each cycle all SETs come first.
    const bool is_set = s.NextIsSet();
    EXPECT_EQ(is_set, i % (sets + gets) < sets);
    (is_set ? got_sets : got_gets)++;
  }
  EXPECT_EQ(got_sets, cycles * sets) << sets << ":" << gets;
  EXPECT_EQ(got_gets, cycles * gets) << sets << ":" << gets;
}

TEST(RatioSchedulerTest, ExactCountsOverWholeCycles) {
  ExpectExactCounts(1, 10);
  ExpectExactCounts(1, 1);
  ExpectExactCounts(0, 1);
  ExpectExactCounts(3, 0);
  ExpectExactCounts(7, 5);
}

TEST(RatioSchedulerTest, BothZeroIsAllGets) {
  RatioScheduler s(0, 0);
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(s.NextIsSet());
}

TEST(ParseExpiryRangeTest, GoodAndBad) {
  uint32_t lo = 1, hi = 1;
  std::string error;
  ASSERT_TRUE(ParseExpiryRange("10-20", &lo, &hi, &error));
  EXPECT_EQ(lo, 10u);
  EXPECT_EQ(hi, 20u);
  ASSERT_TRUE(ParseExpiryRange("0-0", &lo, &hi, &error));
  EXPECT_EQ(lo, 0u);
  EXPECT_EQ(hi, 0u);
  ASSERT_TRUE(ParseExpiryRange("5-5", &lo, &hi, &error));
  EXPECT_EQ(lo, 5u);

  for (const char* bad :
       {"", "10", "10-", "-20", "20-10", "a-b", "10-20-30", "10 - 20", "-1-5", "10:20", "1-5x"}) {
    error.clear();
    EXPECT_FALSE(ParseExpiryRange(bad, &lo, &hi, &error)) << bad;
    EXPECT_NE(error.find(std::string("'") + bad + "'"), std::string::npos) << error;
  }
  EXPECT_EQ(lo, 5u);
  ParseExpiryRange("20-10", &lo, &hi, &error);
  EXPECT_NE(error.find("greater than"), std::string::npos) << error;
}

TEST(RandomTtlTest, UniformWithinBounds) {
  Rng rng(11);
  std::set<uint32_t> seen;
  for (int i = 0; i < 5000; ++i) {
    const uint32_t t = RandomTtl(10, 20, &rng);
    ASSERT_GE(t, 10u);
    ASSERT_LE(t, 20u);
    seen.insert(t);
  }
  EXPECT_EQ(seen.size(), 11u);
  EXPECT_EQ(RandomTtl(0, 0, &rng), 0u);
  EXPECT_EQ(RandomTtl(7, 7, &rng), 7u);
  const uint32_t full = RandomTtl(0, UINT32_MAX, &rng);
  (void)full;  // any value is in range; must not overflow
}

TEST(FormatKeyTest, AppendsPrefixAndDecimal) {
  std::string out;
  FormatKey("memtier-", 0, &out);
  EXPECT_EQ(out, "memtier-0");
  out.clear();
  FormatKey("memtier-", 1234567, &out);
  EXPECT_EQ(out, "memtier-1234567");
  out.clear();
  FormatKey("", UINT64_MAX, &out);
  EXPECT_EQ(out, "18446744073709551615");
  // Appends, and does not reallocate when the capacity is there.
  out.assign("x:");
  out.reserve(64);
  const char* data = out.data();
  FormatKey("k", 42, &out);
  EXPECT_EQ(out, "x:k42");
  EXPECT_EQ(out.data(), data);
}

}  // namespace
}  // namespace strata::bench
