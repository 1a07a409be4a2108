// BenchResult: the figures `strata-mem bench` measures on one server, and their output
// as a text table (one column per server), CSV (header plus one row per server) or JSON
// (an array with one object per server). Field names are the same in CSV and JSON.
// Thread-safety: value types and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/strata-mem/info.h"

namespace strata::mem {

enum class OutputFormat { kText, kCsv, kJson };

struct BenchResult {
  std::string server;  // host:port
  ServerIdentity identity;
  std::string type;  // string, hash, ...
  uint64_t keys = 0;
  uint64_t data_size = 0;
  int fields = 0;  // members per key for non-string types; unused for strings
  std::string key_prefix;
  MemoryFigures before;
  MemoryFigures after;
  double populate_seconds = 0;

  int64_t used_delta() const;
  int64_t rss_delta() const;
  double bytes_per_key_used() const;
  double bytes_per_key_rss() const;
  bool has_fields() const { return type != "string"; }
};

std::string RenderBenchText(const std::vector<BenchResult>& results);
std::string RenderBenchCsv(const std::vector<BenchResult>& results);
std::string RenderBenchJson(const std::vector<BenchResult>& results);
std::string RenderBench(const std::vector<BenchResult>& results, OutputFormat format);

}  // namespace strata::mem
