// Report: strata-bench's results in memtier_benchmark's layouts.
//
// Text (stdout or --out-file): the run header ("4 Threads", "50 Connections per thread",
// "10000 Requests per client"), then the "ALL STATS" table with rows Sets, Gets, Waits
// and Totals and columns Ops/sec, Hits/sec, Misses/sec, Avg. Latency, one column per
// --print-percentiles value ("p99.9 Latency") and KB/sec; latencies in milliseconds.
// Unless --hide-histogram, the "Request Latency Distribution" follows: per type, the
// latency in ms at percentiles 0, 50, 75, 87.5, ... 100 (each step halves the distance
// to 100, as HdrHistogram's percentile listing does). Errors (error replies, connection errors,
// requests lost with a failed connection) are listed after the table when there were any. JSON
// (--json-out-file): {"configuration": {...}, "ALL STATS": {"Sets", "Gets", "Waits", "Totals",
// "Runtime"}} with memtier's key names ("Ops/sec", "Latency", "Percentile Latencies": {"p50.00":
// ms, ...}, "KB/sec", ...) plus "Errors", "Connection Errors". Rates divide by `seconds`, the run's
// duration from launch to the last reply. With --cluster-mode only, the text adds a
// "CLUSTER NODES" table after the errors (per node: Ops/sec, latencies, Ops, Errors, MOVED,
// ASK, then the redirect and slot map refresh totals) and the JSON adds "cluster_mode" to
// the configuration and a "Cluster" object ("MOVED", "ASK", "Nodes": {"host:port": {...}}).
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

#include "tools/strata-bench/options.h"
#include "tools/strata-bench/run_stats.h"

namespace strata::bench {

struct RunTimes {
  double seconds = 0;         // duration used for every rate
  int64_t start_unix_ms = 0;  // wall clock at launch
  int64_t end_unix_ms = 0;
};

void WriteTextReport(const Options& o, const RunStats& s, const RunTimes& t, std::ostream& out);
void WriteJsonReport(const Options& o, const RunStats& s, const RunTimes& t, std::ostream& out);

// One progress line (without line ending), memtier style:
// "[RUN #1 45%,   3 secs]  4 threads:  123456 ops,  41000 (avg:  40000) ops/sec,
//  4.1MB/sec (avg: 4.0MB/sec),  0.24 (avg:  0.25) msec latency"
struct ProgressSample {
  double elapsed_s = 0;
  double percent = 0;
  uint32_t active_threads = 0;
  uint64_t ops = 0;
  double ops_per_sec_now = 0;
  double ops_per_sec_avg = 0;
  double bytes_per_sec_now = 0;
  double bytes_per_sec_avg = 0;
  double latency_ms_now = 0;
  double latency_ms_avg = 0;
};
std::string FormatProgress(const ProgressSample& p);

// "50.00" style key of a percentile in the JSON report ("p99.90").
std::string PercentileKey(double p);
// "99.9" style label of a percentile in the text table ("p99.9 Latency").
std::string PercentileLabel(double p);

}  // namespace strata::bench
