#include "tools/strata-dump/cli.h"

#include <CLI/CLI.hpp>
#include <cctype>

#include "core/string_util.h"

namespace strata::dump {

namespace {

const char* kFooter = R"txt(
Each verb works against any RESP server (strata, Redis, Valkey). Exit codes: 0 done,
1 verify found differences, 2 usage, 3 unreachable server, wrong password or refused
handshake, 4 damaged file or value, 5 the target refused a write, 6 interrupted (run
again with --resume).

Examples:
  strata-dump dump --from 10.0.0.5:6379 -a secret -o backup.rdb
  strata-dump restore backup.rdb --to 127.0.0.1:6379 --replace --db-map 0:3
  strata-dump copy --from redis:6379 --to strata:6379 --follow
  strata-dump verify --from redis:6379 --to strata:6379
  strata-dump inspect backup.rdb --summary --depth 1)txt";

struct Raw {
  std::string password, user;
  int timeout_ms = 10000;
  int progress = 0;
  std::vector<std::string> match, types;
  std::vector<uint32_t> dbs;
  bool exclude_expired = false;
  bool skip_modules = false;
  std::vector<std::string> db_map;
  std::string max_value_bytes = "64mb";
  std::string from, to;
  int checkpoint_every_ms = 1000;
};

void AddCommon(CLI::App* cmd, Raw* r, bool servers) {
  if (servers) {
    cmd->add_option("-a,--password", r->password, "AUTH with this password")->type_name("PASSWORD");
    cmd->add_option("--user", r->user, "AUTH as this ACL user (with --password)");
    cmd->add_option("--timeout-ms", r->timeout_ms,
                    "Give up when a connect, send or receive makes no progress for this long")
        ->capture_default_str()
        ->check(CLI::Range(1, 3600000));
  }
  cmd->add_flag("--progress,!--no-progress", r->progress,
                "Progress bar on a terminal (default), plain lines otherwise");
  cmd->add_option("--match", r->match, "Only keys matching this glob (repeatable: any of them)");
  cmd->add_option("--type", r->types,
                  "Only keys of this type: string list set zset hash stream (repeatable)");
  cmd->add_option("--db", r->dbs, "Only this database (repeatable)");
  cmd->add_flag("--exclude-expired", r->exclude_expired, "Leave out keys whose TTL has passed");
  cmd->add_flag("--skip-modules", r->skip_modules,
                "Skip module values instead of refusing the file or server");
  cmd->add_option("--checkpoint-every-ms", r->checkpoint_every_ms,
                  "How often restore and copy save their checkpoint")
      ->capture_default_str()
      ->check(CLI::Range(1, 3600000));
}

bool Finish(const Raw& r, Common* c, std::string* error) {
  c->client.password = r.password;
  c->client.user = r.user;
  c->client.timeout_ms = r.timeout_ms;
  c->progress = r.progress > 0   ? mem::ProgressMode::kOn
                : r.progress < 0 ? mem::ProgressMode::kOff
                                 : mem::ProgressMode::kAuto;
  c->filter.match = r.match;
  for (const std::string& t : r.types) {
    std::string e = Filter::CheckType(t);
    if (!e.empty()) {
      *error = e;
      return false;
    }
    c->filter.types.insert(t);
  }
  c->filter.dbs.insert(r.dbs.begin(), r.dbs.end());
  c->filter.exclude_expired = r.exclude_expired;
  c->skip_modules = r.skip_modules;
  c->checkpoint_every_ms = r.checkpoint_every_ms;
  return true;
}

CliResult Usage(const std::string& msg) {
  CliResult r;
  r.exit_code = kExitUsage;
  r.output = "strata-dump: " + msg + "\nRun with --help for more information.\n";
  return r;
}

}  // namespace

bool ParseBytes(const std::string& text, uint64_t* out) {
  std::string t;
  for (char c : text) t.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  uint64_t mult = 1;
  for (auto [suffix, m] : {std::pair<const char*, uint64_t>{"gb", 1ull << 30},
                           {"mb", 1ull << 20},
                           {"kb", 1ull << 10},
                           {"g", 1ull << 30},
                           {"m", 1ull << 20},
                           {"k", 1ull << 10},
                           {"b", 1}}) {
    std::string s(suffix);
    if (t.size() > s.size() && t.compare(t.size() - s.size(), s.size(), s) == 0) {
      t.resize(t.size() - s.size());
      mult = m;
      break;
    }
  }
  uint64_t v = 0;
  if (!ParseUint64(t, &v)) return false;
  *out = v * mult;
  return true;
}

bool ParseDbMap(const std::vector<std::string>& pairs, std::map<uint32_t, uint32_t>* out,
                std::string* error) {
  for (const std::string& p : pairs) {
    size_t colon = p.find(':');
    uint64_t a = 0, b = 0;
    if (colon == std::string::npos || !ParseUint64(std::string_view(p).substr(0, colon), &a) ||
        !ParseUint64(std::string_view(p).substr(colon + 1), &b) || a > 0xffff || b > 0xffff) {
      *error = "--db-map takes FROM:TO database numbers, not '" + p + "'";
      return false;
    }
    (*out)[static_cast<uint32_t>(a)] = static_cast<uint32_t>(b);
  }
  return true;
}

CliResult ParseCommandLine(const std::vector<std::string>& args) {
  CliResult result;
  CLI::App app{"strata-dump: dump, restore, copy, verify and inspect Redis-compatible data",
               "strata-dump"};
  app.set_version_flag("-v,--version", std::string("strata-dump ") + STRATA_VERSION);
  app.require_subcommand(1);
  app.footer(kFooter);

  Raw dr, rr, cr, vr, ir;
  CLI::App* dump = app.add_subcommand(
      "dump", "Write a live server's data to an RDB file (replication, or SCAN with DUMP)");
  dump->add_option("--from", dr.from, "Source server HOST:PORT")->required();
  dump->add_option("-o,--output", result.dump.output, "RDB file to write")->required();
  dump->add_option("--method", result.dump.method,
                   "auto (replication, then SCAN and DUMP if refused), psync or scan")
      ->check(CLI::IsMember({"auto", "psync", "scan"}))
      ->capture_default_str();
  CLI::Option* rdb_version =
      dump->add_option("--rdb-version", result.dump.rdb_version,
                       "RDB version to write (10: Redis 7.0). Without it, a file transferred "
                       "by replication keeps the source's version")
          ->check(CLI::Range(10, 12))
          ->capture_default_str();
  dump->add_option("--format", result.dump.format,
                   "Output: rdb, or strata (a strata snapshot: the manifest at -o, its file "
                   "beside it)")
      ->check(CLI::IsMember({"rdb", "strata"}))
      ->capture_default_str();
  bool no_compression = false;
  dump->add_flag("--no-compression", no_compression, "Do not LZF-compress strings");
  dump->add_option("--db-map", dr.db_map, "Write database FROM as TO (FROM:TO, repeatable)");
  AddCommon(dump, &dr, true);

  CLI::App* restore =
      app.add_subcommand("restore", "Write an RDB file into a live server with pipelined RESTORE");
  restore->add_option("file", result.restore.input, "RDB file or strata snapshot (its manifest)")
      ->required();
  restore->add_option("--to", rr.to, "Target server HOST:PORT")->required();
  restore->add_flag("--replace", result.restore.replace, "Overwrite keys that exist");
  restore->add_option("--db-map", rr.db_map, "Restore database FROM into TO (FROM:TO, repeatable)");
  restore->add_option("--connections", result.restore.connections, "Parallel connections")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  restore
      ->add_option("--max-value-bytes", rr.max_value_bytes,
                   "Keys bigger than this are written in chunks with type commands")
      ->capture_default_str();
  restore->add_flag("--resume", result.restore.resume,
                    "Go on from the checkpoint of an interrupted run");
  restore->add_option("--checkpoint", result.restore.checkpoint,
                      "Checkpoint file (default: FILE.checkpoint)");
  AddCommon(restore, &rr, true);

  CLI::App* copy = app.add_subcommand("copy", "Copy a live server into another");
  copy->add_option("--from", cr.from, "Source server HOST:PORT")->required();
  copy->add_option("--to", cr.to, "Target server HOST:PORT")->required();
  copy->add_flag("--follow", result.copy.follow,
                 "After the copy, keep applying the source's replication stream until stopped");
  copy->add_flag("--replace", result.copy.replace, "Overwrite keys that exist");
  copy->add_option("--db-map", cr.db_map, "Copy database FROM into TO (FROM:TO, repeatable)");
  copy->add_option("--connections", result.copy.connections, "Parallel connections")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  copy->add_option("--max-value-bytes", cr.max_value_bytes,
                   "Keys bigger than this are written in chunks with type commands")
      ->capture_default_str();
  copy->add_flag("--resume", result.copy.resume, "Go on from the checkpoint of an interrupted run");
  copy->add_option("--checkpoint", result.copy.checkpoint, "Checkpoint file");
  AddCommon(copy, &cr, true);

  CLI::App* verify = app.add_subcommand(
      "verify", "Compare two servers, or a file and a server: counts, types, values, TTLs");
  verify->add_option("--from", vr.from, "HOST:PORT, an RDB file or a strata snapshot")->required();
  verify->add_option("--to", vr.to, "HOST:PORT, an RDB file or a strata snapshot")->required();
  verify
      ->add_option("--ttl-tolerance-ms", result.verify.ttl_tolerance_ms,
                   "TTLs closer than this are equal")
      ->capture_default_str();
  verify->add_option("--max-diffs", result.verify.max_diffs, "Differences printed")
      ->capture_default_str();
  AddCommon(verify, &vr, true);

  CLI::App* inspect = app.add_subcommand(
      "inspect", "List an RDB file's keys (type, encoding, size, TTL), or summarise by prefix");
  inspect->add_option("file", result.inspect.input, "RDB file or strata snapshot (its manifest)")
      ->required();
  inspect->add_option("--format", result.inspect.format, "text, json (lines) or csv")
      ->check(CLI::IsMember({"text", "json", "csv"}))
      ->capture_default_str();
  inspect->add_flag("--summary", result.inspect.summary, "Keys and bytes per prefix and per type");
  inspect->add_option("--depth", result.inspect.depth, "Prefix segments kept (--summary)")
      ->capture_default_str();
  inspect->add_option("--separators", result.inspect.separators, "Prefix separators (--summary)")
      ->capture_default_str();
  inspect->add_option("--limit", result.inspect.limit, "List at most this many keys (0: all)");
  AddCommon(inspect, &ir, false);

  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::CallForHelp& e) {
    result.output = app.help();
    return result;
  } catch (const CLI::CallForAllHelp& e) {
    result.output = app.help("", CLI::AppFormatMode::All);
    return result;
  } catch (const CLI::CallForVersion& e) {
    result.output = std::string("strata-dump ") + STRATA_VERSION + "\n";
    return result;
  } catch (const CLI::ParseError& e) {
    return Usage(e.what());
  }
  std::string error;
  auto endpoint = [&](const std::string& s, mem::Endpoint* ep) {
    return mem::Endpoint::Parse(s, ep, &error);
  };
  if (dump->parsed()) {
    result.verb = CliResult::Verb::kDump;
    result.dump.compression = !no_compression;
    result.dump.rdb_version_given = rdb_version->count() > 0;
    if (!Finish(dr, &result.dump.common, &error) || !endpoint(dr.from, &result.dump.from) ||
        !ParseDbMap(dr.db_map, &result.dump.db_map, &error)) {
      return Usage(error);
    }
  } else if (restore->parsed()) {
    result.verb = CliResult::Verb::kRestore;
    if (!Finish(rr, &result.restore.common, &error) || !endpoint(rr.to, &result.restore.to) ||
        !ParseDbMap(rr.db_map, &result.restore.db_map, &error)) {
      return Usage(error);
    }
    if (!ParseBytes(rr.max_value_bytes, &result.restore.max_value_bytes)) {
      return Usage("--max-value-bytes takes a size such as 64mb");
    }
  } else if (copy->parsed()) {
    result.verb = CliResult::Verb::kCopy;
    if (!Finish(cr, &result.copy.common, &error) || !endpoint(cr.from, &result.copy.from) ||
        !endpoint(cr.to, &result.copy.to) || !ParseDbMap(cr.db_map, &result.copy.db_map, &error)) {
      return Usage(error);
    }
    if (!ParseBytes(cr.max_value_bytes, &result.copy.max_value_bytes)) {
      return Usage("--max-value-bytes takes a size such as 64mb");
    }
    if (result.copy.follow && result.copy.resume) {
      return Usage("--resume does not apply to --follow (a new replication starts over)");
    }
  } else if (verify->parsed()) {
    result.verb = CliResult::Verb::kVerify;
    result.verify.from = vr.from;
    result.verify.to = vr.to;
    if (!Finish(vr, &result.verify.common, &error)) return Usage(error);
  } else if (inspect->parsed()) {
    result.verb = CliResult::Verb::kInspect;
    if (!Finish(ir, &result.inspect.common, &error)) return Usage(error);
  }
  return result;
}

}  // namespace strata::dump
