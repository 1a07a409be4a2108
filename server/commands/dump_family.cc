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
#include <string>

#include "core/access.h"
#include "core/keyspace.h"
#include "core/string_util.h"
#include "server/base/config.h"
#include "server/commands/errors.h"
#include "server/commands/families.h"
#include "server/engine/command.h"
#include "server/engine/engine.h"
#include "server/engine/worker.h"
#include "storage/dump_payload.h"

namespace strata {
namespace {

void CmdDump(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  Entry* e = ctx.ks.Find(ctx.db, args[1], ctx.now_ms);
  if (e == nullptr) {
    rb.Null();
    return;
  }
  bool compression = ctx.worker.engine().config().Bool("rdbcompression");
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
  bool exists = ctx.ks.Find(ctx.db, key, ctx.now_ms) != nullptr;
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
    case rdb::PayloadStatus::kOk: break;
    case rdb::PayloadStatus::kBadFooter:
      rb.Error("ERR DUMP payload version or checksum are wrong");
      return;
    case rdb::PayloadStatus::kBadData:
      rb.Error("ERR Bad data format");
      return;
  }
  if (v.kind == rdb::RdbKind::kStream || v.kind == rdb::RdbKind::kModule) {
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
  if ((ttl != 0 && ttl <= ctx.now_ms) || v.elements == 0) {
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
  rb.Ok();
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
    CommandSpec s{"restore", -4, kCmdWrite | kCmdDenyOom | kCmdKeyspace, 1, 1, 1};
    s.shard_fn = CmdRestore;
    s.group = "generic";
    s.since = "2.6.0";
    r.Add(std::move(s));
  }
}

}  // namespace strata
