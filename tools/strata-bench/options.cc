#include "tools/strata-bench/options.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <ostream>
#include <sstream>

namespace strata::bench {
namespace {

#ifndef STRATA_VERSION
#define STRATA_VERSION "unknown"
#endif

constexpr int kUsageError = 2;

// Limits on flag values: large enough for any real run, small enough that a typo cannot
// ask for a million threads or a 4 GB value.
constexpr uint32_t kMaxThreads = 1024;
constexpr uint32_t kMaxClientsTotal = 1'000'000;
constexpr uint32_t kMaxPipeline = 100'000;
constexpr uint32_t kMaxDataSize = 512u * 1024 * 1024;  // Redis's largest string
constexpr uint32_t kMaxMultiKeys = 100'000;
constexpr uint32_t kMaxTestTime = 30 * 24 * 3600;
constexpr uint32_t kMaxReplyTimeout = 24 * 3600;
constexpr uint32_t kMaxRate = 10'000'000;  // requests a second per connection
// One connection's out buffer holds a pipeline of requests; keep that under 1 GiB.
constexpr uint64_t kMaxBatchBytes = 1ull << 30;
// Requests in flight over all connections (each keeps a 9-byte slot per request).
constexpr uint64_t kMaxInFlight = 100'000'000;

constexpr const char* kFooter = R"txt(
Flags keep memtier_benchmark's names, defaults and meanings; scripts written for
memtier_benchmark's Redis protocol can call strata-bench instead.

Workload: each of --threads threads runs --clients connections in one event loop. Each
connection keeps --pipeline requests in flight: SETs and GETs in the --ratio mix (1:10 is
one SET per ten GETs), on keys <key-prefix><n> with n in [key-minimum, key-maximum]
chosen by --key-pattern (R random, S sequential, G gaussian, P each client its own slice,
walked in order). --multi-key-get N turns each GET into MGET of N keys; --multi-key-set N
turns each SET into MSET of N keys. -n allkeys sends, from every client, one request per
key of its slice (with P) or of the whole range: `--ratio 1:0 --key-pattern P:P -n
allkeys` writes every key once, to populate a server.

Without --distinct-client-seed every client draws the same random key sequence (as in
memtier_benchmark); with it each client has its own.

Latency is measured per request, also under pipelining: from the moment the request is
written to the moment its own reply is read. Reports use memtier_benchmark's layout.

Cluster: --cluster-mode reads CLUSTER SLOTS from --server/--port, and every client keeps
one connection to each master, sending each request to the master of its key's slot
(-MOVED and -ASK replies are followed, counted and reported per node).

Errors: error replies and connection errors (refused, closed, malformed replies, no reply
for --reply-timeout seconds) are counted and reported; the run then exits with status 1.
Status 2: bad arguments.

Examples:
  strata-bench -p 6379 --ratio 1:0 --key-pattern P:P -n allkeys --key-maximum 1000000 -d 100
  strata-bench -p 6379 -t 2 -c 25 --pipeline 16 --test-time 30 --ratio 1:10 -d 100
  strata-bench -p 6379 --multi-key-get 10 --ratio 0:1 --json-out-file run.json)txt";

bool ParsePercentiles(const std::string& spec, std::vector<double>* out, std::string* error) {
  out->clear();
  size_t start = 0;
  while (start <= spec.size()) {
    const size_t comma = std::min(spec.find(',', start), spec.size());
    const std::string item = spec.substr(start, comma - start);
    double v = 0;
    const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || ptr != item.data() + item.size() || !(v > 0) ||
        v > 100) {
      *error = "invalid --print-percentiles '" + spec +
               "': expected comma-separated numbers in (0, 100], e.g. 50,99,99.9";
      return false;
    }
    out->push_back(v);
    start = comma + 1;
  }
  std::sort(out->begin(), out->end());
  out->erase(std::unique(out->begin(), out->end()), out->end());
  return true;
}

ParseOutcome Usage(std::ostream& err, const std::string& message) {
  err << "strata-bench: " << message << "\nRun with --help for more information.\n";
  return ParseOutcome{false, kUsageError};
}

}  // namespace

std::string RatioText(const Options& o) {
  return std::to_string(o.ratio_sets) + ":" + std::to_string(o.ratio_gets);
}

std::string KeyPatternText(const Options& o) {
  auto letter = [](KeyPattern p) {
    switch (p) {
      case KeyPattern::kRandom:
        return 'R';
      case KeyPattern::kSequential:
        return 'S';
      case KeyPattern::kGaussian:
        return 'G';
      case KeyPattern::kParallel:
      default:
        return 'P';
    }
  };
  return std::string{letter(o.set_pattern), ':', letter(o.get_pattern)};
}

ParseOutcome ParseOptions(int argc, const char* const* argv, Options* o, std::ostream& out,
                          std::ostream& err) {
  CLI::App app{"strata-bench: a memtier_benchmark-compatible load generator for RESP servers",
               "strata-bench"};
  app.set_version_flag("-v,--version", std::string("strata-bench ") + STRATA_VERSION);
  app.footer(kFooter);
  app.get_formatter()->column_width(34);

  std::string ratio = RatioText(*o);
  std::string key_pattern = "R:R";
  std::string requests = std::to_string(o->requests);
  std::string expiry = "0-0";
  std::string percentiles = "50,99,99.9";

  app.add_option("-s,--server", o->server, "Server address")->capture_default_str();
  app.add_option("-p,--port", o->port, "Server port")
      ->capture_default_str()
      ->check(CLI::Range(1, 65535));
  app.add_option("-a,--authenticate", o->password, "AUTH with this password")
      ->type_name("PASSWORD");
  app.add_option("--select-db", o->select_db, "SELECT this database on every connection")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 20));
  app.add_option("-t,--threads", o->threads, "Threads, each with its own event loop")
      ->capture_default_str()
      ->check(CLI::Range(1u, kMaxThreads));
  app.add_option("-c,--clients", o->clients, "Connections per thread")
      ->capture_default_str()
      ->check(CLI::Range(1u, kMaxClientsTotal));
  app.add_option("--ratio", ratio, "SET:GET ratio")->capture_default_str();
  app.add_option("--pipeline", o->pipeline, "Requests in flight per connection")
      ->capture_default_str()
      ->check(CLI::Range(1u, kMaxPipeline));
  CLI::Option* size_opt = app.add_option("-d,--data-size", o->data_size, "Value size in bytes")
                              ->capture_default_str()
                              ->check(CLI::Range(0u, kMaxDataSize));
  std::string size_range;
  std::string size_pattern = "R";
  app.add_option("--data-size-range", size_range,
                 "Value sizes drawn from MIN-MAX bytes instead of one --data-size")
      ->excludes(size_opt);
  app.add_option("--data-size-pattern", size_pattern,
                 "With --data-size-range: R random, S sequential sizes")
      ->capture_default_str();
  app.add_flag("-R,--random-data", o->random_data,
               "Random printable values (default: a fixed repeating pattern)");
  app.add_option("--key-prefix", o->key_prefix, "Key name prefix")->capture_default_str();
  app.add_option("--key-minimum", o->keys.min, "Lowest key index")->capture_default_str();
  app.add_option("--key-maximum", o->keys.max, "Highest key index")->capture_default_str();
  app.add_option("--key-pattern", key_pattern,
                 "SET:GET key patterns, each R (random), S (sequential), G (gaussian) or "
                 "P (parallel: each client its own slice)")
      ->capture_default_str();
  app.add_option("--key-stddev", o->key_stddev,
                 "Standard deviation of the G pattern (default: range / 6)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--key-median", o->key_median,
                 "Median of the G pattern (default: middle of the range)")
      ->check(CLI::NonNegativeNumber);
  CLI::Option* requests_opt =
      app.add_option("-n,--requests", requests, "Requests per client, or allkeys")
          ->capture_default_str();
  CLI::Option* test_time_opt =
      app.add_option("--test-time", o->test_time, "Run for this many seconds instead")
          ->check(CLI::Range(1u, kMaxTestTime));
  requests_opt->excludes(test_time_opt);
  app.add_flag("--distinct-client-seed", o->distinct_client_seed,
               "Give every client its own random seed");
  app.add_flag("--randomize", o->randomize, "Seed from the clock (default: --seed)");
  app.add_option("--seed", o->seed, "Random seed")->capture_default_str();
  app.add_option("--expiry-range", expiry, "TTL of each SET, uniform in MIN-MAX seconds")
      ->capture_default_str();
  app.add_option("--multi-key-get", o->multi_key_get, "GETs become MGET of this many keys")
      ->check(CLI::Range(0u, kMaxMultiKeys));
  app.add_option("--multi-key-set", o->multi_key_set, "SETs become MSET of this many keys")
      ->check(CLI::Range(0u, kMaxMultiKeys));
  app.add_flag("--hide-histogram", o->hide_histogram, "Do not print the latency distribution");
  app.add_option("--json-out-file", o->json_out_file, "Also write the results as JSON here")
      ->type_name("FILE");
  app.add_option("-o,--out-file", o->out_file, "Write the report here instead of stdout")
      ->type_name("FILE");
  app.add_option("--print-percentiles", percentiles, "Percentiles in the results table")
      ->capture_default_str();
  app.add_option("--reply-timeout", o->reply_timeout_s,
                 "Fail a connection that waits this many seconds for a reply or to connect")
      ->capture_default_str()
      ->check(CLI::Range(1u, kMaxReplyTimeout));
  app.add_option("--rate-limiting", o->rate_limiting,
                 "At most this many requests a second per connection (0: no limit)")
      ->capture_default_str()
      ->check(CLI::Range(0u, kMaxRate));
  app.add_flag("--show-config", o->show_config, "Print the effective settings first");
  app.add_flag("--cluster-mode", o->cluster_mode,
               "Redis Cluster: send each request to the master of its key's slot");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    std::ostringstream discard;
    app.exit(e, out, discard);
    return ParseOutcome{false, 0};
  } catch (const CLI::CallForVersion&) {
    out << "strata-bench " << STRATA_VERSION << "\n";
    return ParseOutcome{false, 0};
  } catch (const CLI::ParseError& e) {
    return Usage(err, e.what());
  }

  std::string error;
  if (!ParseRatio(ratio, &o->ratio_sets, &o->ratio_gets, &error)) return Usage(err, error);
  if (!ParseKeyPattern(key_pattern, &o->set_pattern, &o->get_pattern, &error)) {
    return Usage(err, error);
  }
  if (!ParseExpiryRange(expiry, &o->expiry_min, &o->expiry_max, &error)) {
    return Usage(err, error);
  }
  if (!ParsePercentiles(percentiles, &o->percentiles, &error)) return Usage(err, error);
  o->data_size_min = o->data_size_max = o->data_size;
  if (!size_range.empty()) {
    uint32_t lo = 0, hi = 0;
    if (!ParseExpiryRange(size_range, &lo, &hi, &error)) {
      return Usage(err, "invalid --data-size-range '" + size_range +
                            "': expected MIN-MAX bytes with MIN <= MAX (e.g. 100-1000)");
    }
    if (hi > kMaxDataSize) {
      return Usage(err, "invalid --data-size-range '" + size_range + "': MAX is over " +
                            std::to_string(kMaxDataSize) + " bytes");
    }
    o->data_size_min = lo;
    o->data_size_max = o->data_size = hi;
  }
  if (size_pattern != "R" && size_pattern != "S") {
    return Usage(err, "invalid --data-size-pattern '" + size_pattern + "': expected R or S");
  }
  o->data_size_sequential = size_pattern == "S";
  if (requests == "allkeys") {
    o->all_keys = true;
  } else {
    uint64_t n = 0;
    const auto [ptr, ec] = std::from_chars(requests.data(), requests.data() + requests.size(), n);
    if (requests.empty() || ec != std::errc() || ptr != requests.data() + requests.size() ||
        n == 0) {
      return Usage(err, "invalid --requests '" + requests +
                            "': expected a positive number of requests per client, or allkeys");
    }
    o->requests = n;
  }
  if (o->keys.max < o->keys.min) {
    return Usage(err, "--key-maximum " + std::to_string(o->keys.max) + " is below --key-minimum " +
                          std::to_string(o->keys.min));
  }
  if (o->total_clients() > kMaxClientsTotal) {
    return Usage(err, "--threads x --clients is " + std::to_string(o->total_clients()) +
                          ", more than " + std::to_string(kMaxClientsTotal) + " connections");
  }
  if (o->multi_key_set > 0 && o->expiry_max > 0) {
    return Usage(err, "--expiry-range cannot be combined with --multi-key-set (MSET sets no TTL)");
  }
  if (o->total_clients() * o->pipeline > kMaxInFlight) {
    return Usage(err, "--threads x --clients x --pipeline is " +
                          std::to_string(o->total_clients() * o->pipeline) +
                          " requests in flight, more than " + std::to_string(kMaxInFlight));
  }
  if (o->server.empty()) return Usage(err, "--server must not be empty");
  if (o->cluster_mode && (o->multi_key_get > 0 || o->multi_key_set > 0)) {
    return Usage(err,
                 "--cluster-mode cannot be combined with --multi-key-get or --multi-key-set "
                 "(the keys of one request would span slots)");
  }
  if (o->cluster_mode && o->rate_limiting > 0) {
    return Usage(err, "--cluster-mode cannot be combined with --rate-limiting");
  }
  // A SET carries its value (MSET one per key): bound one connection's pipeline of them.
  const uint64_t keys_per_set = std::max<uint32_t>(1, o->multi_key_set);
  const uint64_t batch = uint64_t{o->pipeline} * keys_per_set * (uint64_t{o->data_size} + 64);
  if (o->ratio_sets > 0 && batch > kMaxBatchBytes) {
    return Usage(err, "--pipeline x --data-size x keys per SET needs " + std::to_string(batch) +
                          " bytes of buffer per connection, more than 1 GiB");
  }
  return ParseOutcome{true, 0};
}

}  // namespace strata::bench
