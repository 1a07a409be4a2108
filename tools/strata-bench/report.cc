#include "tools/strata-bench/report.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <ostream>
#include <string>

#include "tools/strata-mem/escape.h"

namespace strata::bench {
namespace {

using strata::mem::JsonString;

std::string Fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, v);
  return buf;
}

std::string Pad(const std::string& s, int width, bool left = false) {
  if (static_cast<int>(s.size()) >= width) return s;
  const std::string fill(static_cast<size_t>(width) - s.size(), ' ');
  return left ? s + fill : fill + s;
}

double Rate(uint64_t n, double seconds) {
  return seconds > 0 ? static_cast<double>(n) / seconds : 0.0;
}

double Ms(uint64_t us) { return static_cast<double>(us) / 1000.0; }

// A row's figures, for Sets, Gets or Totals.
struct Row {
  const char* name;
  uint64_t ops = 0;
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t errors = 0;
  uint64_t bytes_tx = 0;
  uint64_t bytes_rx = 0;
  bool has_hits = false;
  const LatencyHistogram* latency = nullptr;
};

Row MakeRow(const char* name, const TypeStats& t, bool has_hits) {
  Row r{name};
  r.ops = t.ops;
  r.hits = t.hits;
  r.misses = t.misses;
  r.errors = t.errors;
  r.bytes_tx = t.bytes_tx;
  r.bytes_rx = t.bytes_rx;
  r.has_hits = has_hits;
  r.latency = &t.latency;
  return r;
}

std::string JsonNumber(double v) { return Fmt("%.6f", v); }

const char* PatternName(KeyPattern p) {
  switch (p) {
    case KeyPattern::kRandom:
      return "R";
    case KeyPattern::kSequential:
      return "S";
    case KeyPattern::kGaussian:
      return "G";
    case KeyPattern::kParallel:
    default:
      return "P";
  }
}

void WriteJsonRow(const Options& o, const Row& r, const RunTimes& t, std::ostream& out) {
  const LatencyHistogram& h = *r.latency;
  const double seconds = t.seconds;
  out << "{\"Count\": " << r.ops << ", \"Ops/sec\": " << JsonNumber(Rate(r.ops, seconds))
      << ", \"Hits/sec\": " << JsonNumber(Rate(r.hits, seconds))
      << ", \"Misses/sec\": " << JsonNumber(Rate(r.misses, seconds))
      << ", \"Latency\": " << JsonNumber(h.Mean() / 1000.0)
      << ", \"Average Latency\": " << JsonNumber(h.Mean() / 1000.0)
      << ", \"Min Latency\": " << JsonNumber(Ms(h.Min()))
      << ", \"Max Latency\": " << JsonNumber(Ms(h.Max()))
      << ", \"KB/sec\": " << JsonNumber(Rate(r.bytes_tx + r.bytes_rx, seconds) / 1024.0)
      << ", \"KB/sec RX\": " << JsonNumber(Rate(r.bytes_rx, seconds) / 1024.0)
      << ", \"KB/sec TX\": " << JsonNumber(Rate(r.bytes_tx, seconds) / 1024.0)
      << ", \"Errors\": " << r.errors << ", \"Percentile Latencies\": {";
  bool first = true;
  for (double p : o.percentiles) {
    out << (first ? "" : ", ") << "\"" << PercentileKey(p)
        << "\": " << JsonNumber(Ms(h.ValueAtPercentile(p)));
    first = false;
  }
  out << "}";
}

// --cluster-mode: one row per node (ops, rate, latencies, errors, redirects), then the
// run's redirect and refresh totals.
void WriteNodesTable(const Options& o, const RunStats& s, const RunTimes& t, std::ostream& out) {
  int name_width = 22;
  for (const NodeStats& n : s.nodes) {
    name_width = std::max(name_width, static_cast<int>(n.name.size()) + 2);
  }
  const int width = name_width + 14 + 16 * static_cast<int>(1 + o.percentiles.size()) + 12 + 3 * 10;
  out << "\n\nCLUSTER NODES\n";
  out << std::string(static_cast<size_t>(width), '=') << "\n";
  out << Pad("Node", name_width, true) << Pad("Ops/sec", 14) << Pad("Avg. Latency", 16);
  for (double p : o.percentiles) out << Pad(PercentileLabel(p) + " Latency", 16);
  out << Pad("Ops", 12) << Pad("Errors", 10) << Pad("MOVED", 10) << Pad("ASK", 10) << " \n";
  out << std::string(static_cast<size_t>(width), '-') << "\n";
  for (const NodeStats& n : s.nodes) {
    out << Pad(n.name, name_width, true) << Pad(Fmt("%.2f", Rate(n.ops, t.seconds)), 14)
        << Pad(Fmt("%.5f", n.latency.Mean() / 1000.0), 16);
    for (double p : o.percentiles) {
      out << Pad(Fmt("%.5f", Ms(n.latency.ValueAtPercentile(p))), 16);
    }
    out << Pad(std::to_string(n.ops), 12) << Pad(std::to_string(n.errors), 10)
        << Pad(std::to_string(n.moved), 10) << Pad(std::to_string(n.ask), 10) << " \n";
  }
  out << "Redirects: " << s.moved() << " MOVED, " << s.ask()
      << " ASK; slot map refreshes: " << s.slot_map_refreshes << " (" << s.slot_map_refresh_failures
      << " failed)\n";
}

void WriteNodesJson(const Options& o, const RunStats& s, const RunTimes& t, std::ostream& out) {
  out << "{\"MOVED\": " << s.moved() << ", \"ASK\": " << s.ask()
      << ", \"Slot Map Refreshes\": " << s.slot_map_refreshes
      << ", \"Slot Map Refresh Failures\": " << s.slot_map_refresh_failures << ", \"Nodes\": {";
  bool first_node = true;
  for (const NodeStats& n : s.nodes) {
    const LatencyHistogram& h = n.latency;
    out << (first_node ? "\n" : ",\n") << JsonString(n.name) << ": {\"Count\": " << n.ops
        << ", \"Ops/sec\": " << JsonNumber(Rate(n.ops, t.seconds))
        << ", \"Average Latency\": " << JsonNumber(h.Mean() / 1000.0)
        << ", \"Min Latency\": " << JsonNumber(Ms(h.Min()))
        << ", \"Max Latency\": " << JsonNumber(Ms(h.Max())) << ", \"Errors\": " << n.errors
        << ", \"MOVED\": " << n.moved << ", \"ASK\": " << n.ask << ", \"Percentile Latencies\": {";
    bool first = true;
    for (double p : o.percentiles) {
      out << (first ? "" : ", ") << "\"" << PercentileKey(p)
          << "\": " << JsonNumber(Ms(h.ValueAtPercentile(p)));
      first = false;
    }
    out << "}}";
    first_node = false;
  }
  out << "}}";
}

}  // namespace

std::string PercentileKey(double p) { return Fmt("p%.2f", p); }

std::string PercentileLabel(double p) {
  std::string s = Fmt("%.3f", p);
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return "p" + s;
}

void WriteTextReport(const Options& o, const RunStats& s, const RunTimes& t, std::ostream& out) {
  out << Pad(std::to_string(o.threads), 9, true) << " Threads\n";
  out << Pad(std::to_string(o.clients), 9, true) << " Connections per thread\n";
  if (o.test_time > 0) {
    out << Pad(std::to_string(o.test_time), 9, true) << " Seconds\n";
  } else if (o.all_keys) {
    out << Pad("allkeys", 9, true) << " Requests per client\n";
  } else {
    out << Pad(std::to_string(o.requests), 9, true) << " Requests per client\n";
  }
  out << "\n\nALL STATS\n";

  const int width = 6 + 14 + 13 + 13 + 16 * static_cast<int>(1 + o.percentiles.size()) + 14;
  const std::string rule_eq(static_cast<size_t>(width), '=');
  const std::string rule_dash(static_cast<size_t>(width), '-');
  out << rule_eq << "\n";
  out << Pad("Type", 6, true) << Pad("Ops/sec", 14) << Pad("Hits/sec", 13) << Pad("Misses/sec", 13)
      << Pad("Avg. Latency", 16);
  for (double p : o.percentiles) out << Pad(PercentileLabel(p) + " Latency", 16);
  out << Pad("KB/sec", 13) << " \n";
  out << rule_dash << "\n";

  TypeStats totals;
  totals.Merge(s.sets);
  totals.Merge(s.gets);
  const Row rows[] = {MakeRow("Sets", s.sets, false), MakeRow("Gets", s.gets, true),
                      MakeRow("Totals", totals, true)};
  for (size_t i = 0; i < 3; ++i) {
    const Row& r = rows[i];
    out << Pad(r.name, 6, true) << Pad(Fmt("%.2f", Rate(r.ops, t.seconds)), 14);
    if (r.has_hits) {
      out << Pad(Fmt("%.2f", Rate(r.hits, t.seconds)), 13)
          << Pad(Fmt("%.2f", Rate(r.misses, t.seconds)), 13);
    } else {
      out << Pad("---", 13) << Pad("---", 13);
    }
    out << Pad(Fmt("%.5f", r.latency->Mean() / 1000.0), 16);
    for (double p : o.percentiles) {
      out << Pad(Fmt("%.5f", Ms(r.latency->ValueAtPercentile(p))), 16);
    }
    out << Pad(Fmt("%.2f", Rate(r.bytes_tx + r.bytes_rx, t.seconds) / 1024.0), 13) << " \n";
    if (i == 1) {
      // memtier prints a Waits row (WAIT commands, which strata-bench does not send).
      out << Pad("Waits", 6, true) << Pad("0.00", 14) << Pad("---", 13) << Pad("---", 13)
          << Pad("---", 16);
      for (size_t i = 0; i < o.percentiles.size(); ++i) out << Pad("---", 16);
      out << Pad("---", 13) << " \n";
    }
  }

  if (s.error_replies() > 0 || s.connection_errors > 0) {
    out << "\nErrors: " << s.error_replies() << " error replies (" << s.sets.errors << " to SETs, "
        << s.gets.errors << " to GETs), " << s.connection_errors << " connection errors, "
        << s.lost_requests << " requests lost in flight\n";
    if (!s.first_error_reply.empty()) out << "First error reply: " << s.first_error_reply << "\n";
    if (!s.first_connection_error.empty()) {
      out << "First connection error: " << s.first_connection_error << "\n";
    }
  }

  if (o.cluster_mode) WriteNodesTable(o, s, t, out);

  if (o.hide_histogram) return;
  out << "\n\nRequest Latency Distribution\n";
  out << "Type     <= msec         Percent\n";
  out << std::string(72, '-') << "\n";
  const struct {
    const char* name;
    const LatencyHistogram* h;
  } hists[] = {{"SET", &s.sets.latency}, {"GET", &s.gets.latency}};
  for (const auto& e : hists) {
    // HdrHistogram-style percentile steps: 0, 50, 75, 87.5, ... (each step halves the
    // distance to 100) until a step reaches the last request or the maximum, then 100.
    const double count = static_cast<double>(e.h->Count());
    if (count > 0) {
      double p = 0;
      for (int step = 0; step < 64; ++step) {
        const uint64_t v = e.h->ValueAtPercentile(p);
        if (p / 100.0 * count >= count - 1 || v >= e.h->Max()) break;
        out << Pad(e.name, 6, true) << Pad(Fmt("%.3f", Ms(v)), 9) << Pad(Fmt("%.3f", p), 14)
            << "\n";
        p = 100.0 - (100.0 - p) / 2;
      }
      out << Pad(e.name, 6, true) << Pad(Fmt("%.3f", Ms(e.h->Max())), 9) << Pad("100.000", 14)
          << "\n";
    }
    out << "---\n";
  }
  out << Pad("WAIT", 6, true) << Pad("0.000", 9) << Pad("100.000", 14) << "\n";
}

void WriteJsonReport(const Options& o, const RunStats& s, const RunTimes& t, std::ostream& out) {
  out << "{\n\"configuration\": {";
  out << "\"server\": " << JsonString(o.server) << ", \"port\": " << o.port
      << ", \"threads\": " << o.threads << ", \"clients\": " << o.clients
      << ", \"ratio\": " << JsonString(RatioText(o)) << ", \"pipeline\": " << o.pipeline
      << ", \"data_size\": " << o.data_size << ", \"data_size_range\": \"" << o.data_size_min << "-"
      << o.data_size_max << "\", \"data_size_pattern\": \"" << (o.data_size_sequential ? "S" : "R")
      << "\""
      << ", \"random_data\": " << (o.random_data ? "true" : "false")
      << ", \"key_prefix\": " << JsonString(o.key_prefix) << ", \"key_minimum\": " << o.keys.min
      << ", \"key_maximum\": " << o.keys.max << ", \"key_pattern\": \""
      << PatternName(o.set_pattern) << ":" << PatternName(o.get_pattern) << "\"";
  if (o.test_time > 0) {
    out << ", \"test_time\": " << o.test_time;
  } else if (o.all_keys) {
    out << ", \"requests\": \"allkeys\"";
  } else {
    out << ", \"requests\": " << o.requests;
  }
  out << ", \"distinct_client_seed\": " << (o.distinct_client_seed ? "true" : "false")
      << ", \"seed\": " << o.seed << ", \"expiry_range\": \"" << o.expiry_min << "-" << o.expiry_max
      << "\", \"multi_key_get\": " << o.multi_key_get << ", \"multi_key_set\": " << o.multi_key_set
      << ", \"select_db\": " << o.select_db;
  if (o.cluster_mode) out << ", \"cluster_mode\": true";
  out << "},\n\"ALL STATS\": {\n";

  TypeStats totals;
  totals.Merge(s.sets);
  totals.Merge(s.gets);
  Row sets = MakeRow("Sets", s.sets, false);
  Row gets = MakeRow("Gets", s.gets, true);
  Row all = MakeRow("Totals", totals, true);
  out << "\"Sets\": ";
  WriteJsonRow(o, sets, t, out);
  out << "},\n\"Gets\": ";
  WriteJsonRow(o, gets, t, out);
  out << "},\n\"Waits\": ";
  const TypeStats none;
  WriteJsonRow(o, MakeRow("Waits", none, false), t, out);
  out << "},\n\"Totals\": ";
  WriteJsonRow(o, all, t, out);
  out << ", \"Connection Errors\": " << s.connection_errors
      << ", \"Connection Errors/sec\": " << JsonNumber(Rate(s.connection_errors, t.seconds))
      << ", \"Error Replies\": " << s.error_replies() << ", \"Lost Requests\": " << s.lost_requests
      << "},\n";
  out << "\"Runtime\": {\"Start time\": " << t.start_unix_ms
      << ", \"Finish time\": " << t.end_unix_ms
      << ", \"Total duration\": " << static_cast<int64_t>(t.seconds * 1000.0)
      << ", \"Time unit\": \"MILLISECONDS\"}\n}";
  if (o.cluster_mode) {
    out << ",\n\"Cluster\": ";
    WriteNodesJson(o, s, t, out);
  }
  out << "\n}\n";
}

std::string FormatProgress(const ProgressSample& p) {
  auto bytes = [](double b) {
    if (b >= 1024.0 * 1024 * 1024) return Fmt("%.2fGB", b / (1024.0 * 1024 * 1024));
    if (b >= 1024.0 * 1024) return Fmt("%.2fMB", b / (1024.0 * 1024));
    return Fmt("%.2fKB", b / 1024.0);
  };
  char buf[512];
  std::snprintf(buf, sizeof(buf),
                "[RUN #1 %3.0f%%, %3.0f secs] %2u threads: %11" PRIu64
                " ops, %7.0f (avg: %7.0f) ops/sec, %s/sec (avg: %s/sec), %5.2f (avg: %5.2f) "
                "msec latency",
                p.percent, p.elapsed_s, p.active_threads, p.ops, p.ops_per_sec_now,
                p.ops_per_sec_avg, bytes(p.bytes_per_sec_now).c_str(),
                bytes(p.bytes_per_sec_avg).c_str(), p.latency_ms_now, p.latency_ms_avg);
  return buf;
}

}  // namespace strata::bench
