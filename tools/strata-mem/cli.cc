#include "tools/strata-mem/cli.h"

#include <CLI/CLI.hpp>
#include <cstdint>
#include <sstream>

namespace strata::mem {
namespace {

#ifndef STRATA_VERSION
#define STRATA_VERSION "unknown"
#endif

constexpr int kUsageError = 2;
constexpr const char* kDefaultServer = "127.0.0.1:6379";

// Limits on flag values: large enough for any real use, small enough that a typo cannot
// ask for terabytes.
constexpr uint64_t kMaxKeys = 1'000'000'000'000ull;
constexpr size_t kMaxDataSize = 512 * 1024 * 1024;  // Redis's largest string
constexpr int kMaxFields = 1'000'000;
constexpr int kMaxPipeline = 1'000'000;
constexpr int kMaxTimeoutMs = 3'600'000;
constexpr int kMaxSettleMs = 600'000;
constexpr int kMaxScanCount = 1'000'000;
constexpr int kMaxDepth = 64;
constexpr size_t kMaxTop = 1'000'000;
constexpr size_t kMaxGroups = 100'000'000;

constexpr const char* kMainFooter =
    "\nRun `strata-mem bench --help` or `strata-mem report --help` for details.";

constexpr const char* kBenchFooter = R"txt(
What it does, for each --server in turn:
  1. connects; if db 0 holds keys, stops unless --yes is given, in which case it runs
     FLUSHALL (every database of that server is emptied);
  2. reads used_memory and used_memory_rss from INFO memory (the baseline);
  3. writes --keys keys named <key-prefix>1 .. <key-prefix>N (memtier_benchmark's names)
     with random printable values of --data-size bytes, --pipeline commands per batch;
     the first error reply stops the run;
  4. waits --settle-ms and reads INFO memory again.

Figures:
  used_memory         bytes the server's allocator reports as in use
  used_memory_rss     resident set size of the server process (what the OS charges)
  delta               after - baseline
  bytes/key           delta / keys, by used_memory and by RSS
RSS only shrinks when the allocator returns pages, so for the RSS figure measure a
freshly started server rather than one that held data before.

Data types (--type): string SET key value; hash HSET key f0 v0 .. (--fields fields of
--data-size bytes); set SADD key with --fields integer members; zset ZADD key with
--fields members m0.. scored 0..; list RPUSH key with --fields elements of --data-size.

Output (--format): text (one column per server), csv (header plus one row per server),
json (an array with one object per server).

Examples:
  strata-mem bench --server 127.0.0.1:6379 --keys 1000000 --yes
  strata-mem bench --server 127.0.0.1:7000 --server 127.0.0.1:6379 --yes --format csv
  strata-mem bench --type hash --fields 10 --data-size 20 --keys 100000 --yes)txt";

constexpr const char* kReportFooter = R"txt(
What it does: visits every key of the database with SCAN (not a sample), asks TYPE and
MEMORY USAGE <key> SAMPLES 0 for each (pipelined per SCAN batch), and adds them up:
  - by key prefix: keys are cut at any of the --separators characters and the first
    --depth parts are kept, e.g. at depth 2 "user:1234:name" -> "user:#:*" (numeric
    parts become # unless --no-collapse-numbers); a key with fewer separators keeps
    all parts before its last separator ("user:1234" -> "user:*"); a key without any
    separator is counted under "(no prefix)";
  - by type: string, hash, list, set, zset, stream, other;
  - a histogram of per-key sizes in power-of-two buckets;
  - the --top biggest keys.
Totals compare the sum of MEMORY USAGE with INFO used_memory (which also counts the
server's own overhead, buffers and fragmentation inside the allocator).

Keys deleted between SCAN and the lookup are counted as "vanished". A key SCAN returns
twice is counted once (unless --no-dedupe). The scan reads at most --max-keys-per-sec
keys per second (a token bucket; 0 = no limit), so it can run against production.

Output: a text report on stdout; --json FILE (or - for stdout, instead of the text) and
--html FILE (one self-contained page with charts, no scripts or external files).

Examples:
  strata-mem report --server 10.0.0.5:6379 -a secret --html mem.html
  strata-mem report --match 'session:*' --depth 1 --json -
  strata-mem report --separators ':/.' --max-keys-per-sec 0 --top 50)txt";

void AddCommonOptions(CLI::App* cmd, std::string* password, int* timeout_ms, int* progress_flag) {
  cmd->add_option("-a,--password", *password, "AUTH with this password after connecting")
      ->type_name("PASSWORD");
  cmd->add_option("--timeout-ms", *timeout_ms,
                  "Give up when a connect, send or receive makes no progress for this long")
      ->capture_default_str()
      ->check(CLI::Range(1, kMaxTimeoutMs));
  cmd->add_flag("--progress,!--no-progress", *progress_flag,
                "Show a progress bar on stderr (default: only when stderr is a terminal)");
}

ProgressMode ToProgressMode(int flag) {
  if (flag > 0) return ProgressMode::kOn;
  if (flag < 0) return ProgressMode::kOff;
  return ProgressMode::kAuto;
}

CliResult UsageError(const std::string& message) {
  CliResult r;
  r.action = CliResult::Action::kExit;
  r.exit_code = kUsageError;
  r.output = "strata-mem: " + message + "\nRun with --help for more information.\n";
  return r;
}

}  // namespace

CliResult ParseCommandLine(const std::vector<std::string>& args) {
  CliResult result;
  CLI::App app{"strata-mem: memory-efficiency tools for Redis-compatible servers", "strata-mem"};
  app.set_version_flag("-v,--version", std::string("strata-mem ") + STRATA_VERSION);
  app.require_subcommand(1);
  app.footer(kMainFooter);
  app.get_formatter()->column_width(32);

  // ---- bench
  BenchOptions& b = result.bench;
  std::vector<std::string> bench_servers;
  std::string bench_type = "string";
  std::string bench_format = "text";
  int bench_progress = 0;
  CLI::App* bench =
      app.add_subcommand("bench", "Measure bytes per key of an empty server (INFO memory delta)");
  bench->footer(kBenchFooter);
  bench
      ->add_option("--server", bench_servers,
                   "Server to measure; repeat to compare several side by side "
                   "(default 127.0.0.1:6379)")
      ->type_name("HOST:PORT");
  AddCommonOptions(bench, &b.client.password, &b.client.timeout_ms, &bench_progress);
  bench->add_flag("--yes", b.yes, "Allow FLUSHALL of a server that holds keys");
  bench->add_option("--keys", b.populate.keys, "Number of keys to write")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{1}, kMaxKeys));
  bench->add_option("--key-prefix", b.populate.key_prefix, "Key names are PREFIX1 .. PREFIXN")
      ->capture_default_str();
  bench
      ->add_option("--data-size", b.populate.data_size,
                   "Value size in bytes (string values; hash field values; list elements)")
      ->capture_default_str()
      ->check(CLI::Range(size_t{1}, kMaxDataSize));
  bench->add_option("--type", bench_type, "Data type to write")
      ->capture_default_str()
      ->check(CLI::IsMember({"string", "hash", "set", "zset", "list"}));
  bench
      ->add_option("--fields", b.populate.fields,
                   "Fields (hash), members (set, zset) or elements (list) per key")
      ->capture_default_str()
      ->check(CLI::Range(1, kMaxFields));
  bench->add_option("--pipeline", b.populate.pipeline, "Commands sent per batch")
      ->capture_default_str()
      ->check(CLI::Range(1, kMaxPipeline));
  bench->add_option("--seed", b.populate.seed, "Seed of the random values")->capture_default_str();
  bench
      ->add_option("--settle-ms", b.settle_ms,
                   "Wait this long after FLUSHALL and after populating before reading "
                   "INFO memory")
      ->capture_default_str()
      ->check(CLI::Range(0, kMaxSettleMs));
  bench->add_option("--format", bench_format, "Output format")
      ->capture_default_str()
      ->check(CLI::IsMember({"text", "csv", "json"}));

  // ---- report
  ReportOptions& r = result.report;
  std::string report_server = kDefaultServer;
  int report_progress = 0;
  bool no_dedupe = false;
  CLI::App* report =
      app.add_subcommand("report", "Show where a live server's memory goes (SCAN + MEMORY USAGE)");
  report->footer(kReportFooter);
  report->add_option("--server", report_server, "Server to inspect")
      ->type_name("HOST:PORT")
      ->capture_default_str();
  AddCommonOptions(report, &r.client.password, &r.client.timeout_ms, &report_progress);
  report->add_option("--db", r.db, "Database number (SELECT)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 20));
  report->add_option("--match", r.match, "Only keys matching this glob (SCAN MATCH)")
      ->type_name("PATTERN");
  report->add_option("--scan-count", r.scan_count, "SCAN COUNT hint: keys per batch")
      ->capture_default_str()
      ->check(CLI::Range(1, kMaxScanCount));
  report
      ->add_option("--max-keys-per-sec", r.max_keys_per_sec,
                   "Rate limit on keys inspected per second (0 = unlimited)")
      ->capture_default_str();
  report
      ->add_option("--separators", r.grouping.separators,
                   "Characters that separate the parts of a key name")
      ->capture_default_str();
  report->add_option("--depth", r.grouping.depth, "Key-name parts kept in a prefix group")
      ->capture_default_str()
      ->check(CLI::Range(1, kMaxDepth));
  report->add_flag("--collapse-numbers,!--no-collapse-numbers", r.grouping.collapse_numbers,
                   "Group numeric parts as # (user:1234:x and user:99:x -> user:#:*); on by "
                   "default");
  report
      ->add_option("--max-groups", r.grouping.max_groups,
                   "Distinct prefix groups kept; keys of further groups count under "
                   "\"(other groups)\"")
      ->capture_default_str()
      ->check(CLI::Range(size_t{1}, kMaxGroups));
  report->add_option("--top", r.top, "How many of the biggest keys to list")
      ->capture_default_str()
      ->check(CLI::Range(size_t{0}, kMaxTop));
  report
      ->add_option("--prefix-rows", r.prefix_rows,
                   "Prefix groups shown in the text and HTML output (JSON has all)")
      ->capture_default_str()
      ->check(CLI::Range(size_t{1}, kMaxGroups));
  report->add_flag("--no-dedupe", no_dedupe,
                   "Do not remember keys already counted (saves ~16-32 bytes per key of "
                   "client memory; a key SCAN returns twice is then counted twice)");
  report
      ->add_option("--json", r.json_path,
                   "Write the report as JSON to FILE; - writes it to stdout instead of "
                   "the text report")
      ->type_name("FILE|-");
  report->add_option("--html", r.html_path, "Write a self-contained HTML report to FILE")
      ->type_name("FILE");

  std::vector<char*> argv;
  std::vector<std::string> copies(args);
  if (copies.empty()) copies.push_back("strata-mem");
  for (std::string& a : copies) argv.push_back(a.data());
  std::ostringstream out;
  std::ostringstream err;
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::CallForHelp& e) {
    app.exit(e, out, err);
    result.output = out.str();
    if (result.output.empty() || result.output.back() != '\n') result.output += '\n';
    result.exit_code = 0;
    return result;
  } catch (const CLI::CallForVersion& e) {
    result.output = std::string("strata-mem ") + STRATA_VERSION + "\n";
    result.exit_code = 0;
    return result;
  } catch (const CLI::ParseError& e) {
    return UsageError(e.what());
  }

  std::string error;
  if (bench->parsed()) {
    if (bench_servers.empty()) bench_servers.push_back(kDefaultServer);
    for (const std::string& s : bench_servers) {
      Endpoint ep;
      if (!Endpoint::Parse(s, &ep, &error)) return UsageError(error);
      b.servers.push_back(ep);
    }
    b.populate.type = *ParseDataType(bench_type);
    b.format = bench_format == "csv"    ? OutputFormat::kCsv
               : bench_format == "json" ? OutputFormat::kJson
                                        : OutputFormat::kText;
    b.progress = ToProgressMode(bench_progress);
    result.action = CliResult::Action::kBench;
    return result;
  }
  if (!Endpoint::Parse(report_server, &r.server, &error)) return UsageError(error);
  if (r.grouping.separators.empty()) return UsageError("--separators must not be empty");
  if (r.json_path.empty() && report->count("--json") > 0) {
    return UsageError("--json needs a file name or -");
  }
  if (r.html_path == "-") return UsageError("--html needs a file name (stdout is not supported)");
  r.dedupe = !no_dedupe;
  r.progress = ToProgressMode(report_progress);
  result.action = CliResult::Action::kReport;
  return result;
}

}  // namespace strata::mem
