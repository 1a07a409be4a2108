#include "tools/strata-mem/cli.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace strata::mem {
namespace {

CliResult Parse(std::vector<std::string> args) {
  args.insert(args.begin(), "strata-mem");
  return ParseCommandLine(args);
}

TEST(CliTest, BenchDefaults) {
  CliResult r = Parse({"bench"});
  ASSERT_EQ(r.action, CliResult::Action::kBench) << r.output;
  const BenchOptions& b = r.bench;
  ASSERT_EQ(b.servers.size(), 1u);
  EXPECT_EQ(b.servers[0].ToString(), "127.0.0.1:6379");
  EXPECT_EQ(b.populate.keys, 1000000u);
  EXPECT_EQ(b.populate.key_prefix, "memtier-");
  EXPECT_EQ(b.populate.data_size, 100u);
  EXPECT_EQ(b.populate.type, DataType::kString);
  EXPECT_EQ(b.populate.fields, 10);
  EXPECT_EQ(b.populate.pipeline, 100);
  EXPECT_FALSE(b.yes);
  EXPECT_EQ(b.format, OutputFormat::kText);
  EXPECT_EQ(b.progress, ProgressMode::kAuto);
  EXPECT_EQ(b.client.timeout_ms, 5000);
}

TEST(CliTest, BenchFlags) {
  CliResult r = Parse({"bench",
                       "--server",
                       "10.0.0.1:7000",
                       "--server",
                       "[::1]:6380",
                       "--keys",
                       "20000",
                       "--data-size",
                       "32",
                       "--type",
                       "hash",
                       "--fields",
                       "4",
                       "--pipeline",
                       "50",
                       "--yes",
                       "--format",
                       "csv",
                       "--no-progress",
                       "-a",
                       "pw",
                       "--timeout-ms",
                       "250",
                       "--seed",
                       "9",
                       "--key-prefix",
                       "k:",
                       "--settle-ms",
                       "0"});
  ASSERT_EQ(r.action, CliResult::Action::kBench) << r.output;
  const BenchOptions& b = r.bench;
  ASSERT_EQ(b.servers.size(), 2u);
  EXPECT_EQ(b.servers[0].host, "10.0.0.1");
  EXPECT_EQ(b.servers[0].port, 7000);
  EXPECT_EQ(b.servers[1].host, "::1");
  EXPECT_EQ(b.servers[1].ToString(), "[::1]:6380");
  EXPECT_EQ(b.populate.keys, 20000u);
  EXPECT_EQ(b.populate.data_size, 32u);
  EXPECT_EQ(b.populate.type, DataType::kHash);
  EXPECT_EQ(b.populate.fields, 4);
  EXPECT_EQ(b.populate.pipeline, 50);
  EXPECT_EQ(b.populate.seed, 9u);
  EXPECT_EQ(b.populate.key_prefix, "k:");
  EXPECT_TRUE(b.yes);
  EXPECT_EQ(b.format, OutputFormat::kCsv);
  EXPECT_EQ(b.progress, ProgressMode::kOff);
  EXPECT_EQ(b.client.password, "pw");
  EXPECT_EQ(b.client.timeout_ms, 250);
  EXPECT_EQ(b.settle_ms, 0);
  EXPECT_EQ(Parse({"bench", "--progress"}).bench.progress, ProgressMode::kOn);
}

TEST(CliTest, ReportFlags) {
  CliResult r = Parse({"report"});
  ASSERT_EQ(r.action, CliResult::Action::kReport) << r.output;
  EXPECT_EQ(r.report.server.ToString(), "127.0.0.1:6379");
  EXPECT_EQ(r.report.scan_count, 1000);
  EXPECT_EQ(r.report.max_keys_per_sec, 50000u);
  EXPECT_EQ(r.report.grouping.separators, ":");
  EXPECT_EQ(r.report.grouping.depth, 2);
  EXPECT_TRUE(r.report.grouping.collapse_numbers);
  EXPECT_EQ(r.report.top, 20u);
  EXPECT_TRUE(r.report.dedupe);

  r = Parse({"report",
             "--server",
             "h:1",
             "--db",
             "3",
             "--match",
             "user:*",
             "--scan-count",
             "10",
             "--max-keys-per-sec",
             "0",
             "--separators",
             ":/",
             "--depth",
             "1",
             "--no-collapse-numbers",
             "--top",
             "5",
             "--json",
             "-",
             "--html",
             "out.html",
             "--no-dedupe",
             "--prefix-rows",
             "7",
             "--max-groups",
             "9"});
  ASSERT_EQ(r.action, CliResult::Action::kReport) << r.output;
  const ReportOptions& o = r.report;
  EXPECT_EQ(o.server.host, "h");
  EXPECT_EQ(o.server.port, 1);
  EXPECT_EQ(o.db, 3);
  EXPECT_EQ(o.match, "user:*");
  EXPECT_EQ(o.scan_count, 10);
  EXPECT_EQ(o.max_keys_per_sec, 0u);
  EXPECT_EQ(o.grouping.separators, ":/");
  EXPECT_EQ(o.grouping.depth, 1);
  EXPECT_FALSE(o.grouping.collapse_numbers);
  EXPECT_EQ(o.grouping.max_groups, 9u);
  EXPECT_EQ(o.top, 5u);
  EXPECT_EQ(o.prefix_rows, 7u);
  EXPECT_EQ(o.json_path, "-");
  EXPECT_EQ(o.html_path, "out.html");
  EXPECT_FALSE(o.dedupe);
}

TEST(CliTest, HelpAndVersion) {
  CliResult r = Parse({"--help"});
  EXPECT_EQ(r.action, CliResult::Action::kExit);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("bench"), std::string::npos);
  r = Parse({"bench", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("--data-size"), std::string::npos);
  EXPECT_NE(r.output.find("bytes/key"), std::string::npos);
  r = Parse({"report", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("--max-keys-per-sec"), std::string::npos);
  EXPECT_NE(r.output.find("(no prefix)"), std::string::npos);
  r = Parse({"--version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output.rfind("strata-mem ", 0), 0u);
}

TEST(CliTest, UsageErrors) {
  const std::vector<std::vector<std::string>> bad = {
      {},
      {"nosuch"},
      {"bench", "--keys", "0"},
      {"bench", "--keys", "-5"},
      {"bench", "--keys", "many"},
      {"bench", "--type", "stream"},
      {"bench", "--format", "xml"},
      {"bench", "--server", "localhost"},
      {"bench", "--server", "h:0"},
      {"bench", "--server", "h:70000"},
      {"bench", "--server", ":6379"},
      {"bench", "--server", "::1:6379"},
      {"bench", "--pipeline", "0"},
      {"bench", "--timeout-ms", "0"},
      {"bench", "--nosuch"},
      {"report", "--depth", "0"},
      {"report", "--separators", ""},
      {"report", "--scan-count", "0"},
      {"report", "--server", "a:1", "--server", "b:2"},
      {"report", "--html", "-"},
      {"report", "--db", "-1"},
  };
  for (const auto& args : bad) {
    CliResult r = Parse(args);
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    EXPECT_EQ(r.action, CliResult::Action::kExit) << joined;
    EXPECT_EQ(r.exit_code, 2) << joined << r.output;
    EXPECT_NE(r.output.find("strata-mem: "), std::string::npos) << joined << r.output;
  }
}

}  // namespace
}  // namespace strata::mem
