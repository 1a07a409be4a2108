// Expiry commands: EXPIRE PEXPIRE EXPIREAT PEXPIREAT (NX XX GT LT), TTL PTTL,
// EXPIRETIME PEXPIRETIME, PERSIST. All run on the key's shard.
#include "core/string_util.h"
#include "server/commands/arg_parsers.h"
#include "server/commands/errors.h"
#include "server/commands/families.h"
#include "server/engine/command.h"
#include "server/engine/notify.h"
#include "server/engine/worker.h"

namespace strata {
namespace {

void ExpireGeneric(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb, ExpireUnit unit, bool absolute) {
  bool nx = false, xx = false, gt = false, lt = false;
  for (size_t i = 3; i < args.size(); i++) {
    if (EqualsIgnoreCase(args[i], "nx")) {
      nx = true;
    } else if (EqualsIgnoreCase(args[i], "xx")) {
      xx = true;
    } else if (EqualsIgnoreCase(args[i], "gt")) {
      gt = true;
    } else if (EqualsIgnoreCase(args[i], "lt")) {
      lt = true;
    } else {
      rb.Error("ERR Unsupported option " + std::string(args[i]));
      return;
    }
  }
  if (nx && (xx || gt || lt)) {
    rb.Error("ERR NX and XX, GT or LT options at the same time are not compatible");
    return;
  }
  if (gt && lt) {
    rb.Error("ERR GT and LT options at the same time are not compatible");
    return;
  }
  int64_t when = 0;
  if (!ParseInt64(args[2], &when)) {
    rb.Error(errors::kNotInteger);
    return;
  }
  if (unit == ExpireUnit::kSeconds) {
    if (when > INT64_MAX / 1000 || when < INT64_MIN / 1000) {
      rb.Error(InvalidExpireError(args[0]));
      return;
    }
    when *= 1000;
  }
  if (!absolute) {
    if (when > INT64_MAX - ctx.now_ms) {
      rb.Error(InvalidExpireError(args[0]));
      return;
    }
    when += ctx.now_ms;
  }
  // The expiry is in the entry: a cold value stays on disk.
  Entry* e = ctx.ks.FindMeta(ctx.db, args[1], ctx.now_ms, false, /*touch=*/true);
  if (e == nullptr) {
    rb.Integer(0);
    return;
  }
  bool has = e->HasExpire();
  int64_t cur = e->ExpireMs();
  if ((nx && has) || (xx && !has) || (gt && (!has || when <= cur)) || (lt && has && when >= cur)) {
    rb.Integer(0);
    return;
  }
  if (ctx.ExpiryAlreadyPast(when)) {
    ctx.ks.Delete(ctx.db, args[1]);
    ctx.ks.stats().expired_keys++;
    NotifyKeyspaceEvent(kNotifyGeneric, "del", args[1], ctx.db);
  } else {
    ctx.ks.SetExpire(ctx.db, args[1], when);
    NotifyKeyspaceEvent(kNotifyGeneric, "expire", args[1], ctx.db);
  }
  rb.Integer(1);
}

void CmdExpire(CmdArgs a, ShardCtx& c, ReplyBuilder& rb) {
  ExpireGeneric(a, c, rb, ExpireUnit::kSeconds, false);
}
void CmdPExpire(CmdArgs a, ShardCtx& c, ReplyBuilder& rb) {
  ExpireGeneric(a, c, rb, ExpireUnit::kMilliseconds, false);
}
void CmdExpireAt(CmdArgs a, ShardCtx& c, ReplyBuilder& rb) {
  ExpireGeneric(a, c, rb, ExpireUnit::kSeconds, true);
}
void CmdPExpireAt(CmdArgs a, ShardCtx& c, ReplyBuilder& rb) {
  ExpireGeneric(a, c, rb, ExpireUnit::kMilliseconds, true);
}

// mode: 0 TTL, 1 PTTL, 2 EXPIRETIME, 3 PEXPIRETIME
void TtlGeneric(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb, int mode) {
  Entry* e = ctx.ks.FindMeta(ctx.db, args[1], ctx.now_ms, /*count=*/true);
  if (e == nullptr) {
    rb.Integer(-2);
    return;
  }
  if (!e->HasExpire()) {
    rb.Integer(-1);
    return;
  }
  int64_t at = e->ExpireMs();
  int64_t ttl = at - ctx.now_ms;
  if (ttl < 0) ttl = 0;
  switch (mode) {
    case 0:
      rb.Integer((ttl + 500) / 1000);
      break;
    case 1:
      rb.Integer(ttl);
      break;
    case 2:
      rb.Integer((at + 500) / 1000);
      break;
    default:
      rb.Integer(at);
      break;
  }
}

void CmdTtl(CmdArgs a, ShardCtx& c, ReplyBuilder& rb) { TtlGeneric(a, c, rb, 0); }
void CmdPTtl(CmdArgs a, ShardCtx& c, ReplyBuilder& rb) { TtlGeneric(a, c, rb, 1); }
void CmdExpireTime(CmdArgs a, ShardCtx& c, ReplyBuilder& rb) { TtlGeneric(a, c, rb, 2); }
void CmdPExpireTime(CmdArgs a, ShardCtx& c, ReplyBuilder& rb) { TtlGeneric(a, c, rb, 3); }

void CmdPersist(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  Entry* e = ctx.ks.FindMeta(ctx.db, args[1], ctx.now_ms, false, /*touch=*/true);
  if (e == nullptr || !e->HasExpire()) {
    rb.Integer(0);
    return;
  }
  ctx.ks.SetExpire(ctx.db, args[1], Entry::kNoExpire);
  NotifyKeyspaceEvent(kNotifyGeneric, "persist", args[1], ctx.db);
  rb.Integer(1);
}

}  // namespace

void RegisterExpireFamily(CommandRegistry& r) {
  auto add = [&](const char* name, int arity, uint32_t flags, ShardFn fn) {
    CommandSpec s{name, arity, flags | kCmdKeyspace, 1, 1, 1};
    s.shard_fn = fn;
    s.group = "generic";
    r.Add(std::move(s));
  };
  add("expire", -3, kCmdWrite | kCmdFast, CmdExpire);
  add("pexpire", -3, kCmdWrite | kCmdFast, CmdPExpire);
  add("expireat", -3, kCmdWrite | kCmdFast, CmdExpireAt);
  add("pexpireat", -3, kCmdWrite | kCmdFast, CmdPExpireAt);
  add("ttl", 2, kCmdReadOnly | kCmdFast, CmdTtl);
  add("pttl", 2, kCmdReadOnly | kCmdFast, CmdPTtl);
  add("expiretime", 2, kCmdReadOnly | kCmdFast, CmdExpireTime);
  add("pexpiretime", 2, kCmdReadOnly | kCmdFast, CmdPExpireTime);
  add("persist", 2, kCmdWrite | kCmdFast, CmdPersist);
}

}  // namespace strata
