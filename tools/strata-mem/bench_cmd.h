// `strata-mem bench`: measures bytes per key on one or more servers, one after another.
//
// For each server: connect; refuse unless db 0 is empty or --yes allows FLUSHALL; read
// INFO memory (baseline); populate (populate.h); wait settle_ms; read INFO memory again.
// Bytes per key = (after - baseline) / keys, by used_memory and by used_memory_rss.
// The results of all servers are printed together at the end; the first failure stops
// the run with a message naming the server.
// Thread-safety: runs on the calling thread.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "tools/strata-mem/bench_result.h"
#include "tools/strata-mem/populate.h"
#include "tools/strata-mem/progress.h"
#include "tools/strata-mem/resp_client.h"

namespace strata::mem {

struct BenchOptions {
  std::vector<Endpoint> servers;
  ClientOptions client;
  PopulateOptions populate;
  bool yes = false;  // allows FLUSHALL
  OutputFormat format = OutputFormat::kText;
  ProgressMode progress = ProgressMode::kAuto;
  int settle_ms = 500;  // wait after FLUSHALL and after populating, before INFO memory
};

// Measures one server; false with *error on failure.
bool BenchOneServer(const BenchOptions& options, const Endpoint& endpoint, BenchResult* result,
                    std::string* error);

// The whole subcommand: results to `out`, progress and errors to stderr. Returns the
// process exit code (0, or 1 on failure).
int RunBench(const BenchOptions& options, FILE* out);

}  // namespace strata::mem
