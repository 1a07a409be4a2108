// What writes propagate to a master's replicas instead of themselves (engine/repl_feed.h,
// CommandSpec::propagate): the commands whose call would not reproduce their change on a
// replica, because it depends on the time, on randomness or on the master's own layout.
// Each reads the shard's data after the call (and its reply) and writes the commands
// that give a replica the same data, as Redis 7 rewrites them:
//   - relative and absolute expiries (EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT, SET EX/PX/EXAT,
//     SETEX, PSETEX, GETEX, RESTORE with a relative TTL) as the absolute PXAT/PEXPIREAT the
//     key got, or DEL when it is gone;
//   - GETDEL as DEL; INCRBYFLOAT as SET KEEPTTL and HINCRBYFLOAT as HSET of the result
//     (floating-point formatting must not differ between master and replica);
//   - SPOP as SREM of the members it took;
//   - XADD with an ID made here (* or ms-*) with that ID, and approximate trimming (~) in
//     XADD and XTRIM as the exact trim it came to (MAXLEN = the length left, or MINID = the
//     first ID left): where "~" stops depends on the server's node layout.
// Blocking pops propagate where a shard serves them (blocking_family.cc, zset_blocking.cc);
// consumer-group reads and claims as their effects (stream_repl.h).
// Thread-safety: on the shard that ran the call.
#include <string>
#include <string_view>
#include <vector>

#include "core/stream_type.h"
#include "core/string_util.h"
#include "server/commands/families.h"
#include "server/engine/command.h"
#include "server/engine/repl_feed.h"

namespace strata {
namespace {

const Entry* Lookup(const PropagateCtx& ctx, std::string_view key) {
  return ctx.ks.FindNoTouch(ctx.db, key, ctx.now_ms);
}

// The key's expiry as the replica must have it: PEXPIREAT, or DEL when it is gone.
void ExpiryState(std::string_view key, const PropagateCtx& ctx, ReplOut* out) {
  const Entry* e = Lookup(ctx, key);
  if (e == nullptr) {
    out->Add({"DEL", key});
    return;
  }
  if (e->HasExpire()) {
    std::string at = std::to_string(e->ExpireMs());
    out->Add({"PEXPIREAT", key, at});
  } else {
    out->Add({"PERSIST", key});
  }
}

// One bulk string at the start of a reply ("$3\r\nabc\r\n"); false for anything else.
bool ReplyBulk(std::string_view reply, std::string_view* out) {
  if (reply.size() < 4 || reply[0] != '$') return false;
  size_t nl = reply.find("\r\n");
  if (nl == std::string_view::npos) return false;
  int64_t len = 0;
  if (!ParseInt64(reply.substr(1, nl - 1), &len) || len < 0) return false;
  if (nl + 2 + static_cast<size_t>(len) > reply.size()) return false;
  *out = reply.substr(nl + 2, static_cast<size_t>(len));
  return true;
}

// The bulk strings of a reply that is one bulk or an array/set of bulks.
bool ReplyBulks(std::string_view reply, std::vector<std::string_view>* out) {
  std::string_view b;
  if (ReplyBulk(reply, &b)) {
    out->push_back(b);
    return true;
  }
  if (reply.empty() || (reply[0] != '*' && reply[0] != '~')) return false;
  size_t nl = reply.find("\r\n");
  if (nl == std::string_view::npos) return false;
  int64_t n = 0;
  if (!ParseInt64(reply.substr(1, nl - 1), &n) || n < 0) return false;
  size_t pos = nl + 2;
  for (int64_t i = 0; i < n; i++) {
    std::string_view rest = reply.substr(pos);
    if (!ReplyBulk(rest, &b)) return false;
    out->push_back(b);
    pos = static_cast<size_t>(b.data() + b.size() - reply.data()) + 2;
  }
  return true;
}

bool PropagateExpire(CmdArgs args, const PropagateCtx& ctx, std::string_view, ReplOut* out) {
  ExpiryState(args[1], ctx, out);
  return true;
}

// SET key value [NX|XX] [GET] [EX s|PX ms|EXAT s|PXAT ms|KEEPTTL], with at least one
// option (PropagateSet).
[[gnu::noinline]] bool PropagateSetOptions(CmdArgs args, const PropagateCtx& ctx, ReplOut* out) {
  size_t at = 0;
  for (size_t i = 3; i + 1 < args.size(); i++) {
    if (EqualsIgnoreCase(args[i], "ex") || EqualsIgnoreCase(args[i], "px") ||
        EqualsIgnoreCase(args[i], "exat") || EqualsIgnoreCase(args[i], "pxat")) {
      at = i;
      break;
    }
  }
  if (at == 0) {  // SET key value, and the options that need no rewrite
    return false;
  }
  std::vector<std::string_view> v(args.begin(), args.end());
  const Entry* e = Lookup(ctx, args[1]);
  if (e == nullptr || !e->HasExpire()) {
    out->Add({"DEL", args[1]});
    return true;
  }
  std::string ms = std::to_string(e->ExpireMs());
  v[at] = "PXAT";
  v[at + 1] = ms;
  out->Add(CmdArgs(v.data(), v.size()));
  return true;
}

// SET goes as itself unless it sets a relative expiry: an expiry option needs five
// arguments, so plain SET key value, the most common write, returns at once.
bool PropagateSet(CmdArgs args, const PropagateCtx& ctx, std::string_view, ReplOut* out) {
  if (args.size() < 5) return false;
  return PropagateSetOptions(args, ctx, out);
}

// SETEX key seconds value, PSETEX key ms value.
bool PropagateSetEx(CmdArgs args, const PropagateCtx& ctx, std::string_view, ReplOut* out) {
  const Entry* e = Lookup(ctx, args[1]);
  if (e == nullptr || !e->HasExpire()) {
    out->Add({"DEL", args[1]});
    return true;
  }
  std::string ms = std::to_string(e->ExpireMs());
  out->Add({"SET", args[1], args[3], "PXAT", ms});
  return true;
}

bool PropagateGetEx(CmdArgs args, const PropagateCtx& ctx, std::string_view, ReplOut* out) {
  ExpiryState(args[1], ctx, out);
  return true;
}

bool PropagateGetDel(CmdArgs args, const PropagateCtx&, std::string_view, ReplOut* out) {
  out->Add({"DEL", args[1]});
  return true;
}

bool PropagateIncrByFloat(CmdArgs args, const PropagateCtx&, std::string_view reply, ReplOut* out) {
  std::string_view v;
  if (!ReplyBulk(reply, &v)) return true;
  out->Add({"SET", args[1], v, "KEEPTTL"});
  return true;
}

bool PropagateHIncrByFloat(CmdArgs args, const PropagateCtx&, std::string_view reply,
                           ReplOut* out) {
  std::string_view v;
  if (!ReplyBulk(reply, &v)) return true;
  out->Add({"HSET", args[1], args[2], v});
  return true;
}

bool PropagateSPop(CmdArgs args, const PropagateCtx&, std::string_view reply, ReplOut* out) {
  std::vector<std::string_view> members;
  if (!ReplyBulks(reply, &members) || members.empty()) return true;
  std::vector<std::string_view> v{"SREM", args[1]};
  v.insert(v.end(), members.begin(), members.end());
  out->Add(CmdArgs(v.data(), v.size()));
  return true;
}

// RESTORE key ttl payload [REPLACE] [ABSTTL] [IDLETIME s] [FREQ f]
bool PropagateRestore(CmdArgs args, const PropagateCtx& ctx, std::string_view, ReplOut* out) {
  bool abs = false;
  for (size_t i = 4; i < args.size(); i++) abs = abs || EqualsIgnoreCase(args[i], "absttl");
  if (abs || args[2] == "0") {
    return false;
  }
  const Entry* e = Lookup(ctx, args[1]);
  if (e == nullptr || !e->HasExpire()) {
    out->Add({"DEL", args[1]});
    return true;
  }
  std::string ms = std::to_string(e->ExpireMs());
  std::vector<std::string_view> v(args.begin(), args.end());
  v[2] = ms;
  v.push_back("ABSTTL");
  out->Add(CmdArgs(v.data(), v.size()));
  return true;
}

const StreamObject* StreamOf(const PropagateCtx& ctx, std::string_view key) {
  const Entry* e = Lookup(ctx, key);
  if (e == nullptr || e->Type() != ValueType::kStream || !e->IsExternal()) return nullptr;
  return static_cast<const StreamObject*>(e->Object());
}

// Rewrites a trim clause at i (MAXLEN|MINID [=|~] threshold [LIMIT n]) in v as the exact
// trim it came to; returns the index after the clause.
size_t RewriteTrim(std::vector<std::string_view>& v, size_t i, const StreamObject* s,
                   std::vector<std::string>* storage) {
  bool maxlen = EqualsIgnoreCase(v[i], "maxlen");
  size_t j = i + 1;
  bool approx = false;
  if (j < v.size() && (v[j] == "~" || v[j] == "=")) {
    approx = v[j] == "~";
    j++;
  }
  size_t threshold = j;
  size_t end = j + 1;
  if (end + 1 < v.size() && EqualsIgnoreCase(v[end], "limit")) end += 2;
  if (!approx || s == nullptr) return end;
  storage->push_back(maxlen ? std::to_string(s->Length()) : s->first_id().ToString());
  std::vector<std::string_view> clause{v[i], "=", storage->back()};
  v.erase(v.begin() + static_cast<std::ptrdiff_t>(i), v.begin() + static_cast<std::ptrdiff_t>(end));
  v.insert(v.begin() + static_cast<std::ptrdiff_t>(i), clause.begin(), clause.end());
  (void)threshold;
  return i + clause.size();
}

// XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT count]] id|* field value ...
bool PropagateXAdd(CmdArgs args, const PropagateCtx& ctx, std::string_view reply, ReplOut* out) {
  std::vector<std::string_view> v(args.begin(), args.end());
  std::vector<std::string> storage;
  storage.reserve(2);
  const StreamObject* s = StreamOf(ctx, args[1]);
  size_t i = 2;
  while (i < v.size()) {
    if (EqualsIgnoreCase(v[i], "nomkstream")) {
      i++;
    } else if (EqualsIgnoreCase(v[i], "maxlen") || EqualsIgnoreCase(v[i], "minid")) {
      i = RewriteTrim(v, i, s, &storage);
    } else {
      break;
    }
  }
  std::string_view id;
  if (i < v.size() && ReplyBulk(reply, &id)) v[i] = id;
  out->Add(CmdArgs(v.data(), v.size()));
  return true;
}

// XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT count]
bool PropagateXTrim(CmdArgs args, const PropagateCtx& ctx, std::string_view, ReplOut* out) {
  std::vector<std::string_view> v(args.begin(), args.end());
  std::vector<std::string> storage;
  storage.reserve(1);
  if (v.size() > 2) RewriteTrim(v, 2, StreamOf(ctx, args[1]), &storage);
  out->Add(CmdArgs(v.data(), v.size()));
  return true;
}

// A command whose effects were sent while it ran: nothing more.
bool PropagateNothing(CmdArgs, const PropagateCtx&, std::string_view, ReplOut*) { return true; }

}  // namespace

void InstallPropagation(CommandRegistry& r) {
  auto set = [&](const char* name, PropagateFn fn) {
    CommandSpec* s = r.FindMutable(name);
    if (s != nullptr) s->propagate = fn;
  };
  for (const char* name : {"expire", "pexpire", "expireat", "pexpireat"})
    set(name, PropagateExpire);
  set("set", PropagateSet);
  set("setex", PropagateSetEx);
  set("psetex", PropagateSetEx);
  set("getex", PropagateGetEx);
  set("getdel", PropagateGetDel);
  set("incrbyfloat", PropagateIncrByFloat);
  set("hincrbyfloat", PropagateHIncrByFloat);
  set("spop", PropagateSPop);
  set("restore", PropagateRestore);
  set("xadd", PropagateXAdd);
  set("xtrim", PropagateXTrim);
  // Their effects propagate where they happen, not as the call.
  for (const auto& spec : r.all()) {
    if (spec->flags & kCmdBlocking) spec->no_fiber_propagation = true;
  }
  if (CommandSpec* s = r.FindMutable("migrate"); s != nullptr) s->no_fiber_propagation = true;
  // Consumer-group reads and claims: their effects, where they happen (stream_repl.h).
  for (const char* name : {"xreadgroup", "xclaim", "xautoclaim"}) set(name, PropagateNothing);
  if (CommandSpec* s = r.FindMutable("xreadgroup"); s != nullptr) s->no_fiber_propagation = true;
}

}  // namespace strata
