// strata-bench's command line: memtier_benchmark's defaults and flag meanings, and a clear
// usage error (exit status 2) for every bad value.
#include "tools/strata-bench/options.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace strata::bench {
namespace {

struct Parsed {
  ParseOutcome outcome;
  Options options;
  std::string out;
  std::string err;
};

Parsed Parse(std::vector<std::string> args) {
  args.insert(args.begin(), "strata-bench");
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  Parsed p;
  std::ostringstream out, err;
  p.outcome = ParseOptions(static_cast<int>(argv.size()), argv.data(), &p.options, out, err);
  p.out = out.str();
  p.err = err.str();
  return p;
}

TEST(StrataBenchOptions, MemtierDefaults) {
  const Parsed p = Parse({});
  ASSERT_TRUE(p.outcome.run) << p.err;
  const Options& o = p.options;
  EXPECT_EQ(o.server, "127.0.0.1");
  EXPECT_EQ(o.port, 6379);
  EXPECT_EQ(o.threads, 4u);
  EXPECT_EQ(o.clients, 50u);
  EXPECT_EQ(o.ratio_sets, 1u);
  EXPECT_EQ(o.ratio_gets, 10u);
  EXPECT_EQ(o.pipeline, 1u);
  EXPECT_EQ(o.data_size, 32u);
  EXPECT_EQ(o.key_prefix, "memtier-");
  EXPECT_EQ(o.keys.min, 0u);
  EXPECT_EQ(o.keys.max, 10000000u);
  EXPECT_EQ(o.set_pattern, KeyPattern::kRandom);
  EXPECT_EQ(o.get_pattern, KeyPattern::kRandom);
  EXPECT_EQ(o.requests, 10000u);
  EXPECT_FALSE(o.all_keys);
  EXPECT_EQ(o.test_time, 0u);
  EXPECT_FALSE(o.distinct_client_seed);
  EXPECT_EQ(o.expiry_min, 0u);
  EXPECT_EQ(o.expiry_max, 0u);
  EXPECT_FALSE(o.hide_histogram);
  EXPECT_EQ(o.percentiles, (std::vector<double>{50, 99, 99.9}));
  EXPECT_EQ(o.total_clients(), 200u);
}

TEST(StrataBenchOptions, EveryMemtierFlagShortAndLong) {
  const Parsed p = Parse({"-s",
                          "localhost",
                          "-p",
                          "7000",
                          "-t",
                          "2",
                          "-c",
                          "8",
                          "--ratio=1:1",
                          "--pipeline=16",
                          "-d",
                          "100",
                          "--key-prefix=k:",
                          "--key-minimum=1",
                          "--key-maximum=1000",
                          "--key-pattern=S:G",
                          "-n",
                          "500",
                          "--distinct-client-seed",
                          "--expiry-range=10-20",
                          "--hide-histogram",
                          "--json-out-file",
                          "/tmp/x.json",
                          "-o",
                          "/tmp/x.txt",
                          "-R",
                          "--print-percentiles",
                          "99.9,50,90",
                          "-a",
                          "pw",
                          "--select-db",
                          "3"});
  ASSERT_TRUE(p.outcome.run) << p.err;
  const Options& o = p.options;
  EXPECT_EQ(o.server, "localhost");
  EXPECT_EQ(o.port, 7000);
  EXPECT_EQ(o.threads, 2u);
  EXPECT_EQ(o.clients, 8u);
  EXPECT_EQ(o.ratio_sets, 1u);
  EXPECT_EQ(o.ratio_gets, 1u);
  EXPECT_EQ(o.pipeline, 16u);
  EXPECT_EQ(o.data_size, 100u);
  EXPECT_EQ(o.key_prefix, "k:");
  EXPECT_EQ(o.keys.min, 1u);
  EXPECT_EQ(o.keys.max, 1000u);
  EXPECT_EQ(o.set_pattern, KeyPattern::kSequential);
  EXPECT_EQ(o.get_pattern, KeyPattern::kGaussian);
  EXPECT_EQ(o.requests, 500u);
  EXPECT_TRUE(o.distinct_client_seed);
  EXPECT_EQ(o.expiry_min, 10u);
  EXPECT_EQ(o.expiry_max, 20u);
  EXPECT_TRUE(o.hide_histogram);
  EXPECT_EQ(o.json_out_file, "/tmp/x.json");
  EXPECT_EQ(o.out_file, "/tmp/x.txt");
  EXPECT_TRUE(o.random_data);
  EXPECT_EQ(o.percentiles, (std::vector<double>{50, 90, 99.9}));  // sorted
  EXPECT_EQ(o.password, "pw");
  EXPECT_EQ(o.select_db, 3);
  EXPECT_EQ(RatioText(o), "1:1");
  EXPECT_EQ(KeyPatternText(o), "S:G");
}

TEST(StrataBenchOptions, TestTimeAllKeysAndMultiKey) {
  Parsed p = Parse({"--test-time", "30"});
  ASSERT_TRUE(p.outcome.run) << p.err;
  EXPECT_EQ(p.options.test_time, 30u);

  p = Parse({"-n", "allkeys", "--ratio", "1:0", "--key-pattern", "P:P"});
  ASSERT_TRUE(p.outcome.run) << p.err;
  EXPECT_TRUE(p.options.all_keys);
  EXPECT_EQ(p.options.ratio_gets, 0u);

  p = Parse({"--multi-key-get", "10", "--multi-key-set", "4"});
  ASSERT_TRUE(p.outcome.run) << p.err;
  EXPECT_EQ(p.options.multi_key_get, 10u);
  EXPECT_EQ(p.options.multi_key_set, 4u);
}

TEST(StrataBenchOptions, DataSizeRangeAndPattern) {
  Parsed p = Parse({"-d", "100"});
  ASSERT_TRUE(p.outcome.run) << p.err;
  EXPECT_EQ(p.options.data_size_min, 100u);
  EXPECT_EQ(p.options.data_size_max, 100u);
  p = Parse({"--data-size-range=10-2000", "--data-size-pattern=S"});
  ASSERT_TRUE(p.outcome.run) << p.err;
  EXPECT_EQ(p.options.data_size_min, 10u);
  EXPECT_EQ(p.options.data_size_max, 2000u);
  EXPECT_EQ(p.options.data_size, 2000u);  // the value buffer holds the largest
  EXPECT_TRUE(p.options.data_size_sequential);
  p = Parse({"--data-size-range", "0-0"});
  ASSERT_TRUE(p.outcome.run) << p.err;
  EXPECT_EQ(p.options.data_size_max, 0u);
}

TEST(StrataBenchOptions, HelpAndVersionExitZero) {
  Parsed p = Parse({"--help"});
  EXPECT_FALSE(p.outcome.run);
  EXPECT_EQ(p.outcome.exit_code, 0);
  EXPECT_NE(p.out.find("--key-pattern"), std::string::npos);
  EXPECT_NE(p.out.find("memtier_benchmark"), std::string::npos);
  p = Parse({"--version"});
  EXPECT_FALSE(p.outcome.run);
  EXPECT_EQ(p.outcome.exit_code, 0);
  EXPECT_NE(p.out.find("strata-bench"), std::string::npos);
}

TEST(StrataBenchOptions, BadValuesAreUsageErrorsNamingTheValue) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--ratio", "1-10"}, "1-10"},
      {{"--ratio", "0:0"}, "0:0"},
      {{"--key-pattern", "X:R"}, "X:R"},
      {{"--key-pattern", "RR"}, "RR"},
      {{"--expiry-range", "20-10"}, "20-10"},
      {{"--expiry-range", "abc"}, "abc"},
      {{"-n", "0"}, "'0'"},
      {{"-n", "12x"}, "12x"},
      {{"-n", "-5"}, "-5"},
      {{"--print-percentiles", "50,101"}, "50,101"},
      {{"--print-percentiles", "50,,99"}, "50,,99"},
      {{"--key-minimum", "10", "--key-maximum", "5"}, "--key-maximum 5"},
      {{"-p", "0"}, "port"},
      {{"-p", "70000"}, "port"},
      {{"-t", "0"}, "threads"},
      {{"-c", "0"}, "clients"},
      {{"--pipeline", "0"}, "pipeline"},
      {{"--test-time", "0"}, "test-time"},
      {{"--test-time", "5", "-n", "100"}, "excludes"},
      {{"--test-time", "5", "--ratio", "1:0"}, ""},  // fine: see below
      {{"--multi-key-set", "3", "--expiry-range", "1-2"}, "MSET"},
      {{"-t", "1000", "-c", "1001"}, "connections"},
      {{"--pipeline", "100000", "-d", "100000"}, "1 GiB"},
      {{"-t", "100", "-c", "100", "--pipeline", "100000", "--ratio", "0:1"}, "in flight"},
      {{"--no-such-flag"}, "no-such-flag"},
      {{"--data-size-range", "20-10"}, "20-10"},
      {{"--data-size-range", "x"}, "'x'"},
      {{"--data-size-range", "1-600000000"}, "MAX is over"},
      {{"--data-size-range", "1-2", "-d", "5"}, "excludes"},
      {{"--data-size-pattern", "Z"}, "'Z'"},
      {{"--rate-limiting", "-1"}, "rate-limiting"},
      {{"--rate-limiting", "20000000"}, "rate-limiting"},
      {{"--rate-limiting", "100", "--cluster-mode"}, "--rate-limiting"},
      {{"-s", ""}, "--server"},
  };
  for (const auto& [args, needle] : cases) {
    const Parsed p = Parse(args);
    if (needle.empty()) {
      EXPECT_TRUE(p.outcome.run) << args[0] << ": " << p.err;
      continue;
    }
    EXPECT_FALSE(p.outcome.run) << args[0];
    EXPECT_EQ(p.outcome.exit_code, 2) << args[0];
    EXPECT_NE(p.err.find(needle), std::string::npos) << args[0] << ": " << p.err;
    EXPECT_NE(p.err.find("--help"), std::string::npos) << p.err;
  }
}

}  // namespace
}  // namespace strata::bench
