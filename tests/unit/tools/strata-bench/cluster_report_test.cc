// strata-bench --cluster-mode outside the network: the flag and what it refuses, the
// per-node section of the reports (absent without the flag), and merging per-node stats
// of threads that met the nodes in different orders.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "tools/strata-bench/options.h"
#include "tools/strata-bench/report.h"
#include "tools/strata-bench/run_stats.h"

namespace strata::bench {
namespace {

ParseOutcome Parse(std::vector<std::string> args, Options* o, std::string* err) {
  args.insert(args.begin(), "strata-bench");
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  std::ostringstream out, errs;
  const ParseOutcome p = ParseOptions(static_cast<int>(argv.size()), argv.data(), o, out, errs);
  *err = errs.str();
  return p;
}

NodeStats Node(const std::string& name, uint64_t ops, uint64_t moved, uint64_t ask,
               uint64_t latency_us) {
  NodeStats n;
  n.name = name;
  n.ops = ops;
  n.moved = moved;
  n.ask = ask;
  for (uint64_t i = 0; i < ops; ++i) n.latency.Record(latency_us);
  return n;
}

RunStats TwoNodeRun() {
  RunStats s;
  s.sets.ops = 300;
  s.gets.ops = 300;
  for (int i = 0; i < 300; ++i) s.sets.latency.Record(100);
  for (int i = 0; i < 300; ++i) s.gets.latency.Record(300);
  s.nodes.push_back(Node("127.0.0.1:7000", 200, 3, 0, 100));
  s.nodes.push_back(Node("127.0.0.1:7001", 400, 0, 2, 300));
  s.slot_map_refreshes = 1;
  return s;
}

TEST(StrataBenchClusterMode, FlagParsesAndRefusesMultiKeyRequests) {
  Options o;
  std::string err;
  ASSERT_TRUE(Parse({}, &o, &err).run) << err;
  EXPECT_FALSE(o.cluster_mode);

  o = Options{};
  ASSERT_TRUE(Parse({"--cluster-mode", "-p", "7000"}, &o, &err).run) << err;
  EXPECT_TRUE(o.cluster_mode);
  EXPECT_EQ(o.port, 7000);

  for (const char* flag : {"--multi-key-get", "--multi-key-set"}) {
    o = Options{};
    const ParseOutcome p = Parse({"--cluster-mode", flag, "4"}, &o, &err);
    EXPECT_FALSE(p.run) << flag;
    EXPECT_EQ(p.exit_code, 2) << flag;
    EXPECT_NE(err.find("--cluster-mode"), std::string::npos) << err;
  }
}

TEST(StrataBenchClusterMode, TextReportListsEveryNodeOnlyInClusterMode) {
  Options o;
  o.hide_histogram = true;
  RunTimes t;
  t.seconds = 2;
  const RunStats s = TwoNodeRun();

  std::ostringstream plain;
  WriteTextReport(o, s, t, plain);
  EXPECT_EQ(plain.str().find("CLUSTER NODES"), std::string::npos) << plain.str();
  EXPECT_EQ(plain.str().find("7000"), std::string::npos) << plain.str();

  o.cluster_mode = true;
  std::ostringstream text;
  WriteTextReport(o, s, t, text);
  const std::string r = text.str();
  // The memtier table comes first, unchanged.
  EXPECT_EQ(r.substr(0, plain.str().size()), plain.str());
  ASSERT_NE(r.find("CLUSTER NODES"), std::string::npos) << r;
  std::istringstream lines(r);
  int rows = 0;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::vector<std::string> f;
    for (std::string w; fields >> w;) f.push_back(w);
    if (f.empty() || f[0].rfind("127.0.0.1:", 0) != 0) continue;
    ++rows;
    // Node, Ops/sec, Avg, p50, p99, p99.9, Ops, Errors, MOVED, ASK
    ASSERT_EQ(f.size(), 10u) << line;
    if (f[0] == "127.0.0.1:7000") {
      EXPECT_EQ(f[1], "100.00");
      EXPECT_EQ(f[2], "0.10000");
      EXPECT_EQ(f[6], "200");
      EXPECT_EQ(f[8], "3");
      EXPECT_EQ(f[9], "0");
    } else {
      EXPECT_EQ(f[0], "127.0.0.1:7001");
      EXPECT_EQ(f[1], "200.00");
      EXPECT_EQ(f[3], "0.30000");
      EXPECT_EQ(f[6], "400");
      EXPECT_EQ(f[8], "0");
      EXPECT_EQ(f[9], "2");
    }
  }
  EXPECT_EQ(rows, 2) << r;
  EXPECT_NE(r.find("Redirects: 3 MOVED, 2 ASK; slot map refreshes: 1 (0 failed)"),
            std::string::npos)
      << r;
}

TEST(StrataBenchClusterMode, JsonHasAClusterObjectOnlyInClusterMode) {
  Options o;
  RunTimes t;
  t.seconds = 2;
  const RunStats s = TwoNodeRun();
  std::ostringstream plain;
  WriteJsonReport(o, s, t, plain);
  EXPECT_EQ(plain.str().find("Cluster"), std::string::npos);
  EXPECT_EQ(plain.str().find("cluster_mode"), std::string::npos);
  EXPECT_EQ(plain.str().substr(plain.str().size() - 4), "}\n}\n");

  o.cluster_mode = true;
  std::ostringstream json;
  WriteJsonReport(o, s, t, json);
  const std::string j = json.str();
  EXPECT_NE(j.find("\"cluster_mode\": true"), std::string::npos) << j;
  EXPECT_NE(j.find("\"Cluster\": {\"MOVED\": 3, \"ASK\": 2, \"Slot Map Refreshes\": 1"),
            std::string::npos)
      << j;
  EXPECT_NE(j.find("\"127.0.0.1:7001\": {\"Count\": 400, \"Ops/sec\": 200.000000"),
            std::string::npos)
      << j;
  EXPECT_NE(j.find("\"p99.90\": 0.300000"), std::string::npos) << j;
  // Balanced braces: the object closes once, at the end.
  int depth = 0;
  for (char c : j) {
    depth += c == '{' ? 1 : c == '}' ? -1 : 0;
    ASSERT_GE(depth, 0);
  }
  EXPECT_EQ(depth, 0) << j;
}

TEST(StrataBenchClusterMode, MergeMatchesNodesByName) {
  RunStats a;
  a.nodes.push_back(Node("n1:1", 10, 1, 0, 100));
  a.nodes.push_back(Node("n2:2", 20, 0, 0, 100));
  RunStats b;
  b.nodes.push_back(Node("n2:2", 5, 2, 1, 100));
  b.nodes.push_back(Node("n3:3", 7, 0, 0, 100));
  b.nodes.push_back(Node("n1:1", 1, 0, 0, 100));
  b.slot_map_refreshes = 2;
  b.slot_map_refresh_failures = 1;

  RunStats total;
  total.Merge(a);
  total.Merge(b);
  ASSERT_EQ(total.nodes.size(), 3u);
  EXPECT_EQ(total.nodes[0].name, "n1:1");
  EXPECT_EQ(total.nodes[0].ops, 11u);
  EXPECT_EQ(total.nodes[0].latency.Count(), 11u);
  EXPECT_EQ(total.nodes[1].ops, 25u);
  EXPECT_EQ(total.nodes[2].name, "n3:3");
  EXPECT_EQ(total.moved(), 3u);
  EXPECT_EQ(total.ask(), 1u);
  EXPECT_EQ(total.slot_map_refreshes, 2u);
  EXPECT_EQ(total.slot_map_refresh_failures, 1u);
}

}  // namespace
}  // namespace strata::bench
