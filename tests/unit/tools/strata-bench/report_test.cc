// strata-bench's reports: memtier_benchmark's text layout (so scripts that parse it keep
// working), the JSON keys, and the progress line.
#include "tools/strata-bench/report.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace strata::bench {
namespace {

RunStats Sample() {
  RunStats s;
  s.sets.ops = 1000;
  s.sets.bytes_tx = 100 * 1024;
  s.sets.bytes_rx = 5 * 1024;
  for (int i = 1; i <= 1000; ++i) s.sets.latency.Record(100 + i % 10);  // 0.100-0.109 ms
  s.gets.ops = 10000;
  s.gets.hits = 9000;
  s.gets.misses = 1000;
  s.gets.bytes_tx = 300 * 1024;
  s.gets.bytes_rx = 700 * 1024;
  for (int i = 1; i <= 10000; ++i) s.gets.latency.Record(i <= 9900 ? 200 : 5000);
  return s;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST(StrataBenchReport, MemtierTableLayout) {
  Options o;
  o.threads = 2;
  o.clients = 25;
  o.hide_histogram = true;
  RunTimes t;
  t.seconds = 2.0;
  std::ostringstream out;
  WriteTextReport(o, Sample(), t, out);
  const std::vector<std::string> lines = Lines(out.str());
  ASSERT_GE(lines.size(), 12u) << out.str();
  EXPECT_EQ(lines[0], "2         Threads");
  EXPECT_EQ(lines[1], "25        Connections per thread");
  EXPECT_EQ(lines[2], "10000     Requests per client");
  EXPECT_EQ(lines[5], "ALL STATS");
  EXPECT_EQ(lines[6], std::string(124, '='));
  EXPECT_EQ(lines[7],
            "Type         Ops/sec     Hits/sec   Misses/sec    Avg. Latency     p50 Latency     "
            "p99 Latency   p99.9 Latency       KB/sec ");
  EXPECT_EQ(lines[8], std::string(124, '-'));
  // 1000 SETs in 2 s; mean latency 0.1045 ms; p50 0.104; p99 0.109; (105 KiB) / 2 s.
  EXPECT_EQ(lines[9],
            "Sets          500.00          ---          ---         0.10450         0.10400     "
            "    0.10900         0.10900        52.50 ");
  // GETs: 9900 at 0.2 ms and 100 at 5 ms: mean 0.248, p50 0.2, p99 0.2, p99.9 5.
  EXPECT_EQ(lines[10],
            "Gets         5000.00      4500.00       500.00         0.24800         0.20000     "
            "    0.20000         5.00000       500.00 ");
  EXPECT_EQ(lines[11],
            "Waits           0.00          ---          ---             ---             ---     "
            "        ---             ---          --- ");
  EXPECT_EQ(lines[12].substr(0, 33), "Totals       5500.00      4500.00");
  EXPECT_EQ(out.str().find("Errors"), std::string::npos);
  EXPECT_EQ(out.str().find("Request Latency Distribution"), std::string::npos);
}

TEST(StrataBenchReport, CustomPercentilesTestTimeErrorsAndHistogram) {
  Options o;
  o.test_time = 30;
  o.percentiles = {90, 99.99};
  RunStats s = Sample();
  s.gets.errors = 3;
  s.connection_errors = 2;
  s.lost_requests = 7;
  s.first_error_reply = "OOM command not allowed";
  s.first_connection_error = "127.0.0.1:1: connect: Connection refused";
  RunTimes t;
  t.seconds = 1.0;
  std::ostringstream out;
  WriteTextReport(o, s, t, out);
  const std::string text = out.str();
  EXPECT_NE(text.find("30        Seconds"), std::string::npos);
  EXPECT_NE(text.find("    p90 Latency  p99.99 Latency       KB/sec "), std::string::npos);
  EXPECT_NE(text.find("Errors: 3 error replies (0 to SETs, 3 to GETs), 2 connection errors, "
                      "7 requests lost in flight"),
            std::string::npos);
  EXPECT_NE(text.find("First error reply: OOM command not allowed"), std::string::npos);
  EXPECT_NE(text.find("Connection refused"), std::string::npos);
  // Histogram: percentile steps 0, 50, 75, ... then 100 at the maximum, per type.
  EXPECT_NE(text.find("Request Latency Distribution"), std::string::npos);
  EXPECT_NE(text.find("Type     <= msec         Percent\n"), std::string::npos) << text;
  EXPECT_NE(text.find("SET       0.100         0.000\nSET       0.104        50.000\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("SET       0.109       100.000\n---\n"), std::string::npos) << text;
  EXPECT_NE(text.find("GET       0.200        50.000"), std::string::npos) << text;
  EXPECT_NE(text.find("GET       5.000       100.000\n---\n"), std::string::npos) << text;
  EXPECT_NE(text.find("WAIT      0.000       100.000"), std::string::npos) << text;
}

TEST(StrataBenchReport, JsonHasMemtierKeys) {
  Options o;
  o.key_prefix = "a\"b";
  RunTimes t;
  t.seconds = 2.0;
  t.start_unix_ms = 1000;
  t.end_unix_ms = 3000;
  std::ostringstream out;
  WriteJsonReport(o, Sample(), t, out);
  const std::string j = out.str();
  for (const char* key :
       {"\"configuration\"", "\"ALL STATS\"", "\"Sets\": {\"Count\": 1000, \"Ops/sec\": 500.000000",
        "\"Gets\": {\"Count\": 10000, \"Ops/sec\": 5000.000000, \"Hits/sec\": 4500.000000, "
        "\"Misses/sec\": 500.000000",
        "\"Waits\"", "\"Totals\": {\"Count\": 11000", "\"Percentile Latencies\": {\"p50.00\": 0.2",
        "\"p99.90\": 5.000000", "\"KB/sec RX\"", "\"KB/sec TX\"", "\"Connection Errors\": 0",
        "\"Error Replies\": 0",
        "\"Runtime\": {\"Start time\": 1000, \"Finish time\": 3000, "
        "\"Total duration\": 2000, \"Time unit\": \"MILLISECONDS\"}",
        "\"key_prefix\": \"a\\\"b\""}) {
    EXPECT_NE(j.find(key), std::string::npos) << key << "\n" << j;
  }
  // Balanced braces: a cheap well-formedness check (the black-box tests parse it).
  int depth = 0;
  for (char c : j) {
    depth += c == '{' ? 1 : c == '}' ? -1 : 0;
    ASSERT_GE(depth, 0);
  }
  EXPECT_EQ(depth, 0);
}

TEST(StrataBenchReport, PercentileNamesAndProgressLine) {
  EXPECT_EQ(PercentileKey(50), "p50.00");
  EXPECT_EQ(PercentileKey(99.9), "p99.90");
  EXPECT_EQ(PercentileKey(99.99), "p99.99");
  EXPECT_EQ(PercentileLabel(50), "p50");
  EXPECT_EQ(PercentileLabel(99.9), "p99.9");
  EXPECT_EQ(PercentileLabel(99.99), "p99.99");
  ProgressSample p;
  p.elapsed_s = 3;
  p.percent = 45;
  p.active_threads = 4;
  p.ops = 123456;
  p.ops_per_sec_now = 41000;
  p.ops_per_sec_avg = 40000;
  p.bytes_per_sec_now = 4.1 * 1024 * 1024;
  p.bytes_per_sec_avg = 4.0 * 1024 * 1024;
  p.latency_ms_now = 0.24;
  p.latency_ms_avg = 0.25;
  EXPECT_EQ(FormatProgress(p),
            "[RUN #1  45%,   3 secs]  4 threads:      123456 ops,   41000 (avg:   40000) "
            "ops/sec, 4.10MB/sec (avg: 4.00MB/sec),  0.24 (avg:  0.25) msec latency");
}

}  // namespace
}  // namespace strata::bench
