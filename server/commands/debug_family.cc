// DEBUG: the subcommands that tools and test suites use, behind enable-debug-command
// (no | yes | local, default no, as Redis 7: "local" allows loopback clients only).
//
//   SLEEP <seconds>            blocks the client's worker that long (its other clients
//                              wait; other workers go on), then +OK
//   RELOAD [MERGE] [NOFLUSH] [NOSAVE]  takes a snapshot and loads it back (NOSAVE: the
//                              last one; NOFLUSH: over the current data), as SAVE and a
//                              start-up load do, while other clients get -LOADING
//                              (server/persistence/snapshot.h "Reloading")
//   SET-ACTIVE-EXPIRE <0|1>    stops or resumes the expiry cycle on every worker (keys
//                              still expire when read)
//   OBJECT <key>               Redis's line: encoding, serializedlength (the value's RDB
//                              bytes), lru and lru_seconds_idle
//   DIGEST                     40 hex digits over every key of every database: 0s when the
//                              server is empty, and the same for the same data
//   DIGEST-VALUE <key> ...     the same per key (0s for a missing key)
//   CHANGE-REPL-ID             +OK (no replication id to change yet)
//   QUICKLIST-PACKED-THRESHOLD <size>  elements at least this long get a list node of
//                              their own (Redis's PLAIN nodes; 0 restores 1 GB)
//   LISTPACK <key>             logs a packed value's form (+"printed on stdout")
//   STRINGMATCH-LEN            runs random patterns through the glob matcher, bounded
//   POPULATE <count> [<prefix>] [<size>]  creates the string keys <prefix>:0 ..
//                              <prefix>:<count-1> ("key" by default) that do not exist,
//                              each "value:<n>" (cut or padded with zero bytes to <size>
//                              when given), as Redis does: not propagated to replicas, no
//                              keyspace events, maxmemory not checked. The keys go to their
//                              shards kPopulateChunk at a time (one hop each), so memory
//                              stays bounded; other clients are served between chunks,
//                              and may see part of the keys (Redis blocks until all exist)
//   HELP
//
// The digest is SHA-1 based and xor-combined per key over the database number, the key,
// the type, the canonical serialized value (core/object.h: the same whatever the
// encoding) and whether the key has an expiry, so it changes with any write and does not
// depend on the order keys are visited, nor on the thread count. A stream's consumers'
// seen and active times are left out: a replica sets them from its own clock, so a
// master and its replica in sync have the same digest. It is not Redis's digest
// (which hashes each type's elements its own way): compare digests of strata with strata.
//
// Thread-safety: a fiber on the client's worker; per-key work hops to the key's shard.
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/access.h"
#include "core/glob.h"
#include "core/object.h"
#include "core/sha1.h"
#include "core/stream_type.h"
#include "core/string_util.h"
#include "server/base/config.h"
#include "server/base/log.h"
#include "server/commands/errors.h"
#include "server/commands/families.h"
#include "server/commands/lookup.h"
#include "server/engine/client.h"
#include "server/engine/command.h"
#include "server/engine/engine.h"
#include "server/engine/hops.h"
#include "server/engine/shard_groups.h"
#include "server/engine/worker.h"
#include "server/persistence/snapshot_await.h"
#include "storage/dump_payload.h"

namespace strata {
namespace {

using Digest = std::array<uint8_t, 20>;

std::string Hex(const Digest& d) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(40, '0');
  for (size_t i = 0; i < 20; i++) {
    out[2 * i] = kHex[d[i] >> 4];
    out[2 * i + 1] = kHex[d[i] & 15];
  }
  return out;
}

void Xor(Digest* into, const Digest& d) {
  for (size_t i = 0; i < 20; i++) (*into)[i] ^= d[i];
}

// A key's digest; false when a cold value could not be read back.
bool KeyDigest(Keyspace& ks, uint32_t db, const Entry* e, Digest* out) {
  std::string value;
  if (e->IsCold()) {
    if (ks.cold_hook() == nullptr || !ks.cold_hook()->ReadColdNow(e->ColdSeq(), &value))
      return false;
  } else {
    value = Keyspace::Serialize(e);
  }
  if (e->Type() == ValueType::kStream) {
    std::string error;
    std::unique_ptr<StreamObject> s = StreamObject::Parse(value, &error);
    if (s != nullptr) {
      std::vector<std::string> groups;
      for (const auto& g : s->groups()) groups.emplace_back(g.first);
      for (const std::string& name : groups) {
        for (auto& c : s->FindGroup(name)->consumers) {
          c.second->seen_ms = 0;
          c.second->active_ms = -1;
        }
      }
      value.clear();
      s->Serialize(&value);
    }
  }
  std::string buf;
  buf.reserve(e->Key().size() + value.size() + 32);
  AppendInt(&buf, db);
  buf += ':';
  AppendInt(&buf, static_cast<int64_t>(e->Key().size()));
  buf += ':';
  buf.append(e->Key());
  buf += static_cast<char>(e->Type());
  buf += e->HasExpire() ? '!' : '.';
  buf += value;
  *out = Sha1(buf);
  return true;
}

// "ERR DEBUG command not allowed..." unless enable-debug-command lets this client in.
bool DebugAllowed(Client& c) {
  std::string mode = c.worker().engine().config().String("enable-debug-command");
  if (mode == "yes") return true;
  if (mode == "local") {
    const std::string& a = c.addr();
    return a.rfind("127.", 0) == 0 || a.rfind("[::1]", 0) == 0 || a.rfind("::1", 0) == 0 ||
           a.rfind("/", 0) == 0 || a.empty();
  }
  return false;
}

// The glob matcher under random patterns and strings: it must return, whatever it gets.
void StringMatchFuzz() {
  std::mt19937 rng(12345);
  const char alphabet[] = "ab*?[]\\^-c";
  for (int i = 0; i < 100000; i++) {
    std::string pattern, text;
    size_t pl = rng() % 32, tl = rng() % 32;
    for (size_t j = 0; j < pl; j++) pattern += alphabet[rng() % (sizeof(alphabet) - 1)];
    for (size_t j = 0; j < tl; j++) text += static_cast<char>('a' + rng() % 3);
    (void)GlobMatch(pattern, text, rng() % 2 == 0);
  }
}

constexpr uint64_t kPopulateChunk = 16384;

// "<prefix>:<n>" into *out.
void PopulateKey(std::string_view prefix, uint64_t n, std::string* out) {
  out->assign(prefix);
  out->push_back(':');
  AppendInt(out, static_cast<int64_t>(n));
}

// The numbers in [first, end) whose keys live on each shard.
void GroupPopulateChunk(std::string_view prefix, uint64_t first, uint64_t end, uint32_t n,
                        std::vector<std::vector<uint64_t>>* by_shard) {
  by_shard->resize(n);
  for (auto& v : *by_shard) v.clear();
  std::string key;
  for (uint64_t j = first; j < end; j++) {
    PopulateKey(prefix, j, &key);
    (*by_shard)[ShardOfKey(key, n)].push_back(j);
  }
}

// On a shard: creates the keys of its numbers that do not exist.
void PopulateShard(Worker& w, uint32_t db, std::string_view prefix,
                   const std::vector<uint64_t>& numbers, size_t size) {
  Keyspace& ks = w.keyspace();
  std::string k, v;
  for (uint64_t j : numbers) {
    PopulateKey(prefix, j, &k);
    if (ks.FindMeta(db, k, w.now_ms(), false, /*touch=*/true) != nullptr) continue;
    v = "value:";
    AppendInt(&v, static_cast<int64_t>(j));
    if (size > 0) v.resize(size, '\0');
    ks.SetString(db, k, v, Entry::kNoExpire);
  }
}

void DebugHelp(ReplyBuilder& rb) {
  const char* lines[] = {
      "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "CHANGE-REPL-ID",
      "    Change the replication IDs of the instance.",
      "    Dangerous: should be used only for testing the replication subsystem.",
      "DIGEST",
      "    Output a hex signature representing the current DB content.",
      "DIGEST-VALUE <key> [<key> ...]",
      "    Output a hex signature of the values of all the specified keys.",
      "LISTPACK <key>",
      "    Show low level info about the listpack encoding of <key>.",
      "OBJECT <key>",
      "    Show low level info about the key and associated value.",
      "QUICKLIST-PACKED-THRESHOLD <size>",
      "    Sets the threshold for elements to be inserted as plain vs packed nodes",
      "    Default value is 1GB, allows values up to 4GB. Setting to 0 restores to default.",
      "RELOAD [MERGE] [NOFLUSH] [NOSAVE]",
      "    Take a snapshot and load it back into memory. Options:",
      "    * NOSAVE: load the last snapshot without taking a new one.",
      "    * NOFLUSH: keep the current data; loaded keys replace keys of the same name.",
      "    * MERGE: accepted with NOFLUSH (loaded keys always replace).",
      "POPULATE <count> [<prefix>] [<size>]",
      "    Create string keys <prefix>:0 to <prefix>:<count-1> (prefix 'key' by default),",
      "    each holding value:<n>, cut or padded with zero bytes to <size> when given. Keys",
      "    that exist are left alone. Not propagated to replicas.",
      "SET-ACTIVE-EXPIRE <0|1>",
      "    Setting it to 0 disables expiring keys in background when they are not accessed "
      "(otherwise the Redis behavior). Setting it to 1 reenables back the default.",
      "SLEEP <seconds>",
      "    Stop the server for <seconds>. Decimals allowed.",
      "STRINGMATCH-LEN",
      "    Run a fuzz tester against the stringmatchlen() function.",
      "HELP",
      "    Prints this help."};
  rb.Array(sizeof(lines) / sizeof(lines[0]));
  for (const char* l : lines) rb.Simple(l);
}

Fiber DebugFiber(Client* c, std::shared_ptr<OwnedArgs> owned) {
  CmdArgs args = owned->span();
  std::string out;
  ReplyBuilder rb(&out, c->resp);
  Engine& srv = c->worker().engine();
  std::string sub = Lowercase(args[1]);
  uint32_t db = c->db;
  if (!DebugAllowed(*c)) {
    rb.Error(
        "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", "
        "you can run it from a local connection, otherwise you need to set this option in the "
        "configuration file, and then restart the server.");
  } else if (sub == "help" && args.size() == 2) {
    DebugHelp(rb);
  } else if (sub == "sleep" && args.size() == 3) {
    double secs = std::strtod(std::string(args[2]).c_str(), nullptr);
    if (secs > 0) {
      std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(secs * 1e6)));
    }
    c->worker().RefreshClock();
    rb.Ok();
  } else if (sub == "set-active-expire" && args.size() == 3) {
    srv.set_active_expire(std::atoi(std::string(args[2]).c_str()) != 0);
    rb.Ok();
  } else if (sub == "object" && args.size() == 3) {
    std::string line;
    bool found = false;
    bool compression = srv.config().Bool("rdbcompression");
    co_await RunOn(std::vector<uint32_t>(1, ShardOfKey(args[2], srv.shard_count())),
                   [&](Worker& w) {
                     Keyspace& ks = w.keyspace();
                     Entry* e = ks.FindNoTouch(db, args[2], w.now_ms());
                     if (e == nullptr) return;
                     found = true;
                     std::string scratch;
                     std::string value =
                         e->IsExternal() ? Keyspace::Serialize(e) : std::string(e->Value(&scratch));
                     rdb::EncodeOptions opts = rdb::EncodeOptions::FromLimits(10, compression);
                     size_t payload = rdb::MakeDumpPayload(e->Type(), value, opts).size();
                     // The payload is the type byte, the value, 2 bytes of version and 8
                     // of checksum: the value's RDB bytes are what is left.
                     size_t serialized = payload > 11 ? payload - 11 : 0;
                     uint32_t lru = access::LruClock(w.now_ms());
                     uint64_t idle = access::LruIdleMs(lru, e->Access()) / 1000;
                     char buf[256];
                     std::snprintf(buf, sizeof(buf),
                                   "Value at:%p refcount:1 encoding:%s serializedlength:%zu "
                                   "lru:%u lru_seconds_idle:%llu",
                                   static_cast<const void*>(e), EncodingOf(e), serialized, lru,
                                   static_cast<unsigned long long>(idle));
                     line = buf;
                   });
    found ? rb.Simple(line) : rb.Error("ERR no such key");
  } else if (sub == "digest" && args.size() == 2) {
    Digest total{};
    std::atomic<bool> failed{false};
    std::mutex mu;
    uint32_t dbs = static_cast<uint32_t>(srv.config().Int("databases"));
    co_await RunOn(srv.AllShards(), [&](Worker& w) {
      Digest mine{};
      for (uint32_t d = 0; d < dbs; d++) {
        uint64_t cursor = 0;
        do {
          cursor = w.keyspace().ScanBucket(d, cursor, w.now_ms(), [&](Entry* e) {
            Digest k;
            if (KeyDigest(w.keyspace(), d, e, &k)) {
              Xor(&mine, k);
            } else {
              failed = true;
            }
          });
        } while (cursor != 0);
      }
      std::lock_guard<std::mutex> lock(mu);  // the shards run in parallel
      Xor(&total, mine);
    });
    failed ? rb.Error("ERR a spilled value could not be read back") : rb.Simple(Hex(total));
  } else if (sub == "digest-value" && args.size() >= 2) {
    std::vector<std::string> digests(args.size() - 2, std::string(40, '0'));
    for (size_t i = 2; i < args.size(); i++) {
      co_await RunOn(std::vector<uint32_t>(1, ShardOfKey(args[i], srv.shard_count())),
                     [&](Worker& w) {
                       Entry* e = w.keyspace().FindNoTouch(db, args[i], w.now_ms());
                       Digest k;
                       if (e != nullptr && KeyDigest(w.keyspace(), db, e, &k))
                         digests[i - 2] = Hex(k);
                     });
    }
    rb.Array(digests.size());
    for (const std::string& d : digests) rb.Simple(d);
  } else if (sub == "quicklist-packed-threshold" && args.size() == 3) {
    std::optional<uint64_t> sz = ParseMemory(args[2]);
    if (!sz || *sz > (uint64_t{1} << 32) - (uint64_t{1} << 20)) {
      rb.Error("ERR argument must be a memory value bigger than 1 and smaller than 4gb");
    } else {
      GlobalEncodingLimits().list_packed_threshold.store(*sz == 0 ? int64_t{1} << 30
                                                                  : static_cast<int64_t>(*sz));
      rb.Ok();
    }
  } else if (sub == "listpack" && args.size() == 3) {
    int found = 0;  // 0 none, 1 not packed, 2 logged
    co_await RunOn(std::vector<uint32_t>(1, ShardOfKey(args[2], srv.shard_count())),
                   [&](Worker& w) {
                     Entry* e = w.keyspace().FindNoTouch(db, args[2], w.now_ms());
                     if (e == nullptr) return;
                     found = 1;
                     if (e->IsExternal() || e->Type() == ValueType::kString) return;
                     found = 2;
                     std::string scratch;
                     std::string_view v = e->Value(&scratch);
                     LogNotice("DEBUG LISTPACK %.*s: %s, %zu bytes, encoding %s",
                               static_cast<int>(args[2].size()), args[2].data(),
                               ValueTypeName(e->Type()), v.size(), EncodingOf(e));
                   });
    if (found == 0) {
      rb.Error("ERR no such key");
    } else if (found == 1) {
      rb.Error("ERR Not a listpack encoded object.");
    } else {
      rb.Simple("Listpack structure printed on stdout");
    }
  } else if (sub == "reload") {
    SnapshotManager::ReloadOptions o;
    o.owner = c->txn_owner;
    bool bad = false;
    for (size_t i = 2; i < args.size(); i++) {
      if (EqualsIgnoreCase(args[i], "nosave")) {
        o.save = false;
      } else if (EqualsIgnoreCase(args[i], "noflush")) {
        o.flush = false;
      } else if (!EqualsIgnoreCase(args[i], "merge")) {
        bad = true;
      }
    }
    if (bad) {
      rb.Error("ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.");
    } else {
      Status st = co_await SnapshotAwait::Reload(o);
      st.ok() ? rb.Ok() : rb.Error(st.message());
    }
  } else if (sub == "populate" && args.size() >= 3 && args.size() <= 5) {
    int64_t count = 0, size = 0;
    bool ok = ParseInt64(args[2], &count) && count >= 0;
    if (ok && args.size() == 5) ok = ParseInt64(args[4], &size) && size >= 0;
    if (!ok) {
      rb.Error("ERR value is out of range, must be positive");
    } else if (size > srv.config().Int("proto-max-bulk-len")) {
      rb.Error("ERR string exceeds maximum allowed size (proto-max-bulk-len)");
    } else {
      std::string prefix = args.size() >= 4 ? std::string(args[3]) : std::string("key");
      uint32_t n = srv.shard_count();
      std::vector<std::vector<uint64_t>> by_shard;
      for (uint64_t first = 0; first < static_cast<uint64_t>(count); first += kPopulateChunk) {
        uint64_t end = std::min(static_cast<uint64_t>(count), first + kPopulateChunk);
        GroupPopulateChunk(prefix, first, end, n, &by_shard);
        std::vector<uint32_t> shards;
        for (uint32_t i = 0; i < n; i++) {
          if (!by_shard[i].empty()) shards.push_back(i);
        }
        co_await RunOn(shards, [&](Worker& w) {
          PopulateShard(w, db, prefix, by_shard[w.index()], static_cast<size_t>(size));
        });
      }
      rb.Ok();
    }
  } else if (sub == "change-repl-id" && args.size() == 2) {
    rb.Ok();
  } else if (sub == "stringmatch-len" && args.size() == 2) {
    StringMatchFuzz();
    rb.Simple("Apparently Redis did not crash: test passed");
  } else {
    rb.Error("ERR unknown subcommand or wrong number of arguments for '" + std::string(args[1]) +
             "'. Try DEBUG HELP.");
  }
  c->FinishFiber(std::move(out));
}

}  // namespace

void RegisterDebugFamily(CommandRegistry& r) {
  CommandSpec s{"debug", -2, kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale | kCmdServer,
                0,       0,  0};
  s.fiber_fn = DebugFiber;
  s.group = "server";
  s.since = "1.0.0";
  s.summary = "A container for debugging commands.";
  r.Add(std::move(s));
}

}  // namespace strata
