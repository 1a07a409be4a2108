// DUMP and RESTORE: a key's value as a Redis-compatible payload (storage/dump_payload.h)
// and back. Both run on the key's shard.
//
// DUMP writes Redis 7.0's encodings with the lowest RDB version that defines them, so a
// payload RESTOREs into Redis 7.0 and later (and strings, intsets and plain collections
// into older ones too). RESTORE reads payloads of RDB versions up to 12 (Redis 7.4) and
// Valkey 9's 80, checks them in full whatever sanitize-dump-payload says, and follows
// Redis 7's order of checks and its error texts: options, BUSYKEY, the TTL, the footer
// ("DUMP payload version or checksum are wrong"), then the value ("Bad data format").
// Values strata has no type for yet (streams, module values) and hashes with live field
// TTLs are refused as bad data, with the reason after the text.
//
// MIGRATE is a fiber: it locks its keys on their shards (exclusively unless COPY),
// makes their DUMP payloads there, then connects to the target and sends AUTH, SELECT
// and one RESTORE per key on an OffThread thread (server/engine/off_thread.h) - the
// worker goes on serving others meanwhile; only these keys wait - and finally deletes,
// on their shards, the keys the target accepted (unless COPY). A cluster node sends
// RESTORE-ASKING, which the target runs in a slot it imports. Replies and errors are
// Redis's: +OK, +NOKEY, IOERR for a connection or a timeout, "Target instance replied
// with error: ..." for the first key the target refused (that key and later refused ones
// stay). Each wait is bounded by the command's timeout (1000 ms when 0 or less). There
// is no connection cache: every call connects.
#include <string>

#include "core/access.h"
#include "core/keyspace.h"
#include "core/string_util.h"
#include "server/base/config.h"
#include "server/commands/errors.h"
#include "server/commands/families.h"
#include "server/commands/migrate_client.h"
#include "server/engine/client.h"
#include "server/engine/command.h"
#include "server/engine/engine.h"
#include "server/engine/hops.h"
#include "server/engine/notify.h"
#include "server/engine/off_thread.h"
#include "server/engine/shard_groups.h"
#include "server/engine/try_lock_all.h"
#include "server/engine/worker.h"
#include "storage/dump_payload.h"

namespace strata {
namespace {

void CmdDump(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  Entry* e = ctx.ks.FindRead(ctx.db, args[1], ctx.now_ms);
  if (e == nullptr) {
    rb.Null();
    return;
  }
  // The setting's mirror: a lookup by name would cost more than a short value's DUMP.
  bool compression = GlobalEncodingLimits().rdb_compression.load(std::memory_order_relaxed) != 0;
  rdb::EncodeOptions opts = rdb::EncodeOptions::FromLimits(10, compression);
  if (!e->IsExternal()) {
    std::string scratch;  // for a packed (ascii7) value only
    rb.Bulk(rdb::MakeDumpPayload(e->Type(), e->Value(&scratch), opts));
    return;
  }
  rb.Bulk(rdb::MakeDumpPayload(e->Type(), Keyspace::Serialize(e), opts));
}

void CmdRestore(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  bool replace = false, absttl = false;
  int64_t idle = -1, freq = -1;
  for (size_t j = 4; j < args.size(); j++) {
    size_t more = args.size() - j - 1;
    if (EqualsIgnoreCase(args[j], "replace")) {
      replace = true;
    } else if (EqualsIgnoreCase(args[j], "absttl")) {
      absttl = true;
    } else if (EqualsIgnoreCase(args[j], "idletime") && more >= 1 && freq == -1) {
      if (!ParseInt64(args[j + 1], &idle)) {
        rb.Error(errors::kNotInteger);
        return;
      }
      if (idle < 0) {
        rb.Error("ERR Invalid IDLETIME value, must be >= 0");
        return;
      }
      j++;
    } else if (EqualsIgnoreCase(args[j], "freq") && more >= 1 && idle == -1) {
      if (!ParseInt64(args[j + 1], &freq)) {
        rb.Error(errors::kNotInteger);
        return;
      }
      if (freq < 0 || freq > 255) {
        rb.Error("ERR Invalid FREQ value, must be >= 0 and <= 255");
        return;
      }
      j++;
    } else {
      rb.Error(errors::kSyntax);
      return;
    }
  }
  std::string_view key = args[1];
  bool exists = ctx.ks.FindMeta(ctx.db, key, ctx.now_ms) != nullptr;
  if (!replace && exists) {
    rb.Error("BUSYKEY Target key name already exists.");
    return;
  }
  int64_t ttl = 0;
  if (!ParseInt64(args[2], &ttl)) {
    rb.Error(errors::kNotInteger);
    return;
  }
  if (ttl < 0) {
    rb.Error("ERR Invalid TTL value, must be >= 0");
    return;
  }
  rdb::RdbValue v;
  std::string why;
  switch (rdb::ParseDumpPayload(args[3], {}, &v, &why)) {
    case rdb::PayloadStatus::kOk:
      break;
    case rdb::PayloadStatus::kBadFooter:
      rb.Error("ERR DUMP payload version or checksum are wrong");
      return;
    case rdb::PayloadStatus::kBadData:
      rb.Error("ERR Bad data format");
      return;
  }
  if (v.kind == rdb::RdbKind::kModule) {
    rb.Error(std::string("ERR Bad data format: strata cannot hold ") + rdb::RdbKindName(v.kind) +
             " values yet");
    return;
  }
  if (!v.field_expire_ms.empty() && rdb::DropExpiredFields(&v, ctx.now_ms) > 0) {
    rb.Error("ERR Bad data format: hash fields with their own TTL (HEXPIRE) are not supported");
    return;
  }
  if (ttl != 0 && !absttl) ttl += ctx.now_ms;
  if (replace && exists) ctx.ks.Delete(ctx.db, key);
  // (An empty stream is a value: it keeps its last ID and its groups.)
  if ((ttl != 0 && ctx.ExpiryAlreadyPast(ttl)) ||
      (v.elements == 0 && v.kind != rdb::RdbKind::kStream)) {
    if (replace && exists) NotifyKeyspaceEvent(kNotifyGeneric, "del", key, ctx.db);
    rb.Ok();  // already expired (or every field was): nothing is created, as in Redis
    return;
  }
  Entry* e = ctx.ks.SetRaw(ctx.db, key, v.data, v.value_type(), ttl != 0 ? ttl : Entry::kNoExpire);
  const access::Clock& clock = ctx.ks.access_clock();
  if (clock.mode == access::Mode::kLfu && freq >= 0) {
    e->SetAccess(access::LfuState(access::LfuMinutes(ctx.now_ms), static_cast<uint8_t>(freq)));
  } else if (clock.mode == access::Mode::kLru && idle >= 0) {
    e->SetAccess(access::LruStateIdle(ctx.now_ms, idle));
  }
  NotifyKeyspaceEvent(kNotifyGeneric, "restore", key, ctx.db);
  rb.Ok();
}

Fiber MigrateFiber(Client* c, std::shared_ptr<OwnedArgs> owned) {
  CmdArgs args = owned->span();
  std::string out;
  ReplyBuilder rb(&out, c->resp);
  auto finish = [&] { c->FinishFiber(std::move(out)); };
  bool copy = false, replace = false;
  std::string_view user, password;
  bool auth = false;
  std::vector<std::string_view> keys;
  size_t first_key = 3;
  bool keys_option = false;
  for (size_t j = 6; j < args.size(); j++) {
    size_t more = args.size() - 1 - j;
    if (EqualsIgnoreCase(args[j], "copy")) {
      copy = true;
    } else if (EqualsIgnoreCase(args[j], "replace")) {
      replace = true;
    } else if (EqualsIgnoreCase(args[j], "auth") && more >= 1) {
      password = args[++j];
      auth = true;
    } else if (EqualsIgnoreCase(args[j], "auth2") && more >= 2) {
      user = args[++j];
      password = args[++j];
      auth = true;
    } else if (EqualsIgnoreCase(args[j], "keys")) {
      if (!args[3].empty()) {
        rb.Error(
            "ERR When using MIGRATE KEYS option, the key argument must be set to the empty "
            "string");
        finish();
        co_return;
      }
      first_key = j + 1;
      keys_option = true;
      break;
    } else {
      rb.Error(errors::kSyntax);
      finish();
      co_return;
    }
  }
  int64_t timeout = 0, dbid = 0, port = 0;
  if (!ParseInt64(args[5], &timeout) || !ParseInt64(args[4], &dbid) || dbid < 0 ||
      dbid > INT32_MAX) {
    rb.Error(errors::kNotInteger);
    finish();
    co_return;
  }
  if (timeout <= 0) timeout = 1000;
  if (!ParseInt64(args[2], &port) || port <= 0 || port > 65535) {
    rb.Error("IOERR error or timeout connecting to the client");
    finish();
    co_return;
  }
  if (keys_option) {
    keys.assign(args.begin() + static_cast<ptrdiff_t>(first_key), args.end());
  } else {
    keys.push_back(args[3]);
  }
  uint32_t db = c->db;
  Engine& engine = c->worker().engine();
  ShardGroups g = GroupByShard(keys, db, engine.shard_count(), !copy, c->txn_owner);
  if (!co_await TryLockAll(g)) {
    for (size_t i = 0; i < g.shards.size(); i++) co_await LockOn(g.shards[i], &g.locks[i]);
  }
  struct Moving {
    std::string payload;
    int64_t ttl = 0;
    bool present = false;
    bool moved = false;
  };
  std::vector<Moving> m(keys.size());
  co_await RunOn(g.shards, [&](Worker& w) {
    size_t gi = g.IndexOf(w.index());
    rdb::EncodeOptions opts =
        rdb::EncodeOptions::FromLimits(10, w.engine().config().Bool("rdbcompression"));
    for (size_t p : g.positions[gi]) {
      Entry* e = w.keyspace().FindRead(db, keys[p], w.now_ms());
      if (e == nullptr) continue;
      m[p].present = true;
      m[p].payload = rdb::MakeDumpPayload(e->Type(), Keyspace::Serialize(e), opts);
      if (e->HasExpire()) m[p].ttl = std::max<int64_t>(1, e->ExpireMs() - w.now_ms());
    }
  });
  size_t present = 0;
  for (const Moving& x : m) present += x.present;
  std::string error;
  if (present > 0) {
    std::string host(args[1]);
    std::string pw(password), usr(user);
    // A cluster node's target may import the slot: RESTORE-ASKING runs there (Redis).
    std::string_view restore = engine.process().cluster_yes ? "RESTORE-ASKING" : "RESTORE";
    co_await OffThread(engine, [&] {
      MigrateClient mc;
      if (!mc.Connect(host, static_cast<int>(port), static_cast<int>(timeout), &error)) return;
      std::string line;
      if (auth) {
        if (usr.empty()) {
          mc.Append({"AUTH", pw});
        } else {
          mc.Append({"AUTH", usr, pw});
        }
      }
      std::string dbs = std::to_string(dbid);
      mc.Append({"SELECT", dbs});
      std::vector<std::string> ttls(keys.size());
      for (size_t i = 0; i < keys.size(); i++) {
        if (!m[i].present) continue;
        ttls[i] = std::to_string(m[i].ttl);
        std::vector<std::string_view> cmd = {restore, keys[i], ttls[i], m[i].payload};
        if (replace) cmd.push_back("REPLACE");
        mc.Append(cmd);
      }
      if (!mc.Flush(&error)) return;
      auto target_error = [&](const std::string& l) {
        if (error.empty()) error = "ERR Target instance replied with error: " + l.substr(1);
      };
      if (auth) {
        if (!mc.ReadLine(&line, &error)) return;
        if (!line.empty() && line[0] == '-') target_error(line);
      }
      if (!mc.ReadLine(&line, &error)) return;
      if (!line.empty() && line[0] == '-') target_error(line);
      for (size_t i = 0; i < keys.size(); i++) {
        if (!m[i].present) continue;
        std::string e2;
        if (!mc.ReadLine(&line, &e2)) {
          if (error.empty()) error = e2;
          return;
        }
        if (!line.empty() && line[0] == '-') {
          target_error(line);
        } else if (error.empty() || error.rfind("ERR Target", 0) == 0) {
          m[i].moved = true;
        }
      }
    });
  }
  co_await RunOn(g.shards, [&](Worker& w) {
    size_t gi = g.IndexOf(w.index());
    if (!copy) {
      for (size_t p : g.positions[gi]) {
        if (m[p].moved && w.keyspace().Delete(db, keys[p])) {
          NotifyKeyspaceEvent(kNotifyGeneric, "del", keys[p], db);
          // Replicas delete what moved (MIGRATE itself is not propagated).
          if (w.repl_on()) {
            std::string_view d[2] = {"DEL", keys[p]};
            w.repl_feed().Effect(db, CmdArgs(d, 2));
          }
        }
      }
    }
    w.locks().Release(g.locks[gi].keys, !copy);
  });
  if (present == 0) {
    rb.Simple("NOKEY");
  } else if (!error.empty()) {
    rb.Error(error);
  } else {
    rb.Ok();
  }
  finish();
}

}  // namespace

void RegisterDumpFamily(CommandRegistry& r) {
  {
    CommandSpec s{"dump", 2, kCmdReadOnly | kCmdKeyspace, 1, 1, 1};
    s.shard_fn = CmdDump;
    s.group = "generic";
    s.since = "2.6.0";
    r.Add(std::move(s));
  }
  {
    // Its keys are argument 3, or those after KEYS: the fiber finds and locks them.
    CommandSpec s{"migrate", -6, kCmdWrite | kCmdKeyspace, 0, 0, 0};
    s.fiber_fn = MigrateFiber;
    s.group = "generic";
    s.since = "2.6.0";
    r.Add(std::move(s));
  }
  {
    CommandSpec s{"restore", -4, kCmdWrite | kCmdDenyOom | kCmdKeyspace, 1, 1, 1};
    s.shard_fn = CmdRestore;
    s.group = "generic";
    s.since = "2.6.0";
    // MIGRATE's RESTORE in a cluster: the same command, run in a slot the target imports.
    CommandSpec asking = s;
    asking.name = "restore-asking";
    asking.asking = true;
    asking.group = "server";
    asking.since = "3.0.0";
    asking.summary = "An internal command for migrating keys in a cluster.";
    r.Add(std::move(s));
    r.Add(std::move(asking));
  }
}

}  // namespace strata
