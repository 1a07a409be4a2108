// `strata-mem report`: visits every key of one database and shows where memory goes.
//
// Loop: SCAN cursor [MATCH pattern] COUNT scan_count; keys SCAN already returned are
// skipped (SeenSet); the token bucket (rate_limit.h) waits until the batch fits in
// max_keys_per_sec; then TYPE key and MEMORY USAGE key SAMPLES 0 are pipelined for every
// key of the batch. A key whose TYPE is "none" or whose MEMORY USAGE is nil was deleted
// between SCAN and the lookup and counts as vanished. Any error reply stops the run
// (a server without MEMORY USAGE is told apart with a hint). At the end INFO memory
// gives used_memory for comparison, and the report is printed as text, JSON and/or HTML.
// Thread-safety: runs on the calling thread.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "tools/strata-mem/progress.h"
#include "tools/strata-mem/report_model.h"
#include "tools/strata-mem/report_render.h"
#include "tools/strata-mem/resp_client.h"

namespace strata::mem {

struct ReportOptions {
  Endpoint server;
  ClientOptions client;
  int db = 0;
  std::string match;  // empty: all keys
  int scan_count = 1000;
  uint64_t max_keys_per_sec = 50000;  // 0 = unlimited
  GroupingOptions grouping;
  size_t top = 20;
  size_t prefix_rows = 30;
  bool dedupe = true;
  std::string json_path;  // "-" = stdout (then no text table); empty = none
  std::string html_path;  // empty = none
  ProgressMode progress = ProgressMode::kAuto;
};

// Scans the server into *model and fills *meta; false with *error on failure.
bool ScanServer(const ReportOptions& options, ReportModel* model, ReportMeta* meta,
                std::string* error);

// The whole subcommand; returns the process exit code (0, or 1 on failure).
int RunReport(const ReportOptions& options, FILE* out);

}  // namespace strata::mem
