// Options: strata-bench's command line, with memtier_benchmark's flag names, defaults and
// meanings, plus a few of its own (--multi-key-set, --seed, --reply-timeout).
// --cluster-mode is memtier's too: requests go to the Redis Cluster node that owns each
// key's slot (cluster_thread.h).
//
// ParseOptions() fills an Options from argv with CLI11 and validates the combination; it
// never exits the process: --help and --version print to `out` and return kExit with
// code 0, a bad flag prints a one-line message naming it to `err` and returns kExit with
// code 2. Thread-safety: call from main only; Options is a plain value afterwards.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "tools/strata-bench/workload.h"

namespace strata::bench {

struct Options {
  std::string server = "127.0.0.1";  // -s/--server (memtier's "localhost" resolves here)
  int port = 6379;                   // -p/--port
  std::string password;              // -a/--authenticate
  int select_db = 0;                 // --select-db
  uint32_t threads = 4;              // -t/--threads
  uint32_t clients = 50;             // -c/--clients, per thread
  uint32_t ratio_sets = 1;           // --ratio=SET:GET
  uint32_t ratio_gets = 10;
  uint32_t pipeline = 1;    // --pipeline: requests in flight per connection
  uint32_t data_size = 32;  // -d/--data-size, bytes per SET value
  // --data-size-range=MIN-MAX: each SET's value size is drawn from [MIN, MAX] (then
  // data_size is MAX); without it both are data_size. --data-size-pattern: R uniform
  // random (default), S sequential (MIN, MIN+1, ..., MAX, MIN, ... per connection).
  uint32_t data_size_min = 32;
  uint32_t data_size_max = 32;
  bool data_size_sequential = false;
  bool random_data = false;                      // -R/--random-data
  std::string key_prefix = "memtier-";           // --key-prefix
  KeyRange keys;                                 // --key-minimum / --key-maximum
  KeyPattern set_pattern = KeyPattern::kRandom;  // --key-pattern=SET:GET
  KeyPattern get_pattern = KeyPattern::kRandom;
  double key_stddev = 0;              // --key-stddev (G pattern; 0: range / 6)
  double key_median = 0;              // --key-median (G pattern; 0: middle of the range)
  uint64_t requests = 10000;          // -n/--requests, per client; ignored with test_time
  bool all_keys = false;              // -n allkeys: each client covers its whole key slice once
  uint32_t test_time = 0;             // --test-time seconds (0: run by --requests)
  bool distinct_client_seed = false;  // --distinct-client-seed
  bool randomize = false;             // --randomize: seed from the clock
  uint64_t seed = 0x5747'a7a5'be4c'0001ULL;  // --seed
  uint32_t expiry_min = 0;                   // --expiry-range=MIN-MAX seconds (0-0: no TTL)
  uint32_t expiry_max = 0;
  uint32_t multi_key_get = 0;   // --multi-key-get=N: GETs become MGET of N keys
  uint32_t multi_key_set = 0;   // --multi-key-set=N: SETs become MSET of N keys
  bool hide_histogram = false;  // --hide-histogram
  std::string json_out_file;    // --json-out-file
  std::string out_file;         // -o/--out-file (default stdout)
  std::vector<double> percentiles = {50, 99, 99.9};  // --print-percentiles
  uint32_t reply_timeout_s = 10;  // --reply-timeout: no reply for this long fails a connection
  // --rate-limiting: at most this many requests a second per connection, sent on a
  // schedule (0: each as soon as the pipeline has room).
  uint32_t rate_limiting = 0;
  bool show_config = false;  // --show-config
  // --cluster-mode: --server/--port name one node of a Redis Cluster; its CLUSTER SLOTS
  // reply decides where each key's requests go. Not with --multi-key-get/--multi-key-set.
  bool cluster_mode = false;

  uint64_t total_clients() const { return uint64_t{threads} * clients; }
};

struct ParseOutcome {
  bool run = false;   // true: go on and run the benchmark
  int exit_code = 0;  // when !run: what main should return
};

ParseOutcome ParseOptions(int argc, const char* const* argv, Options* options, std::ostream& out,
                          std::ostream& err);

// "1:10" style text of the ratio and key pattern, for reports.
std::string RatioText(const Options& o);
std::string KeyPatternText(const Options& o);

}  // namespace strata::bench
