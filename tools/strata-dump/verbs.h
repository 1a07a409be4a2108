// The verbs of strata-dump (docs/STRATA-DUMP.md): dump, restore, copy, verify and
// inspect, each against any RESP server (strata, Redis, Valkey) or file.
//
// Thread-safety: each Run* runs on the main thread (restores start their connection
// threads); Stop() may be called from a signal handler.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>

#include "tools/strata-dump/filter.h"
#include "tools/strata-mem/progress.h"
#include "tools/strata-mem/resp_client.h"

namespace strata::dump {

struct Common {
  mem::ClientOptions client;  // password, user, timeout
  mem::ProgressMode progress = mem::ProgressMode::kAuto;
  Filter filter;
  bool skip_modules = false;
  int checkpoint_every_ms = 1000;  // how often restore and copy save their checkpoint
};

struct DumpOptions {
  Common common;
  mem::Endpoint from;
  std::string output;
  std::string method = "auto";  // auto | psync | scan
  std::string format = "rdb";   // rdb | strata
  int rdb_version = 10;
  bool rdb_version_given = false;  // --rdb-version on the command line
  bool compression = true;
  std::map<uint32_t, uint32_t> db_map;
};

struct RestoreVerbOptions {
  Common common;
  std::string input;
  mem::Endpoint to;
  bool replace = false;
  std::map<uint32_t, uint32_t> db_map;
  int connections = 4;
  uint64_t max_value_bytes = 64ull << 20;
  bool resume = false;
  std::string checkpoint;  // default: <input>.checkpoint
};

struct CopyOptions {
  Common common;
  mem::Endpoint from, to;
  bool follow = false;
  bool replace = false;
  std::map<uint32_t, uint32_t> db_map;
  int connections = 4;
  uint64_t max_value_bytes = 64ull << 20;
  std::string method = "auto";
  bool resume = false;
  std::string checkpoint;  // default: copy-<from>-<to>.checkpoint
};

struct VerifyOptions {
  Common common;
  std::string from, to;  // HOST:PORT or a file
  int64_t ttl_tolerance_ms = 2000;
  int max_diffs = 20;
};

struct InspectOptions {
  Common common;
  std::string input;
  std::string format = "text";  // text | json | csv
  bool summary = false;
  int depth = 2;
  std::string separators = ":";
  uint64_t limit = 0;  // 0: every key
};

int RunDump(const DumpOptions& o, FILE* out);
int RunRestore(const RestoreVerbOptions& o, FILE* out);
int RunCopy(const CopyOptions& o, FILE* out);
int RunVerify(const VerifyOptions& o, FILE* out);
int RunInspect(const InspectOptions& o, FILE* out);

// Asks a running verb to stop at the next item (SIGINT, SIGTERM): it finishes what is
// in flight, keeps its checkpoint and returns kExitInterrupted.
void Stop();

}  // namespace strata::dump
