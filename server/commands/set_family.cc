// Set commands. Single-key commands run on the key's shard; the commands over several
// keys (SMOVE and the algebra) are in set_algebra.cc.
//
// Reads go through set_access (any form). Writes go through SetEditor: a SetObject is
// changed in place and re-charged, a small form is rebuilt and stored again, converting
// by Redis's rules (set_type.h). A set emptied by SREM or SPOP is deleted, as in Redis.
#include <algorithm>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/glob.h"
#include "core/set_type.h"
#include "core/string_util.h"
#include "server/commands/errors.h"
#include "server/commands/families.h"
#include "server/commands/lookup.h"
#include "server/commands/set_algebra.h"
#include "server/engine/command.h"
#include "server/engine/notify.h"
#include "server/engine/worker.h"

namespace strata {
namespace {

// Looks a key up for a set command: false (error replied) when it holds another type.
bool LookupSet(ShardCtx& ctx, std::string_view key, ReplyBuilder& rb, Entry** out,
               bool read = true) {
  return LookupTyped(ctx, key, ValueType::kSet, rb, out, read);
}

void CmdSAdd(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  Entry* e;
  if (!LookupSet(ctx, args[1], rb, &e, false)) return;
  size_t hint = args.size() - 2;  // Redis sizes the set for every argument, repeats included
  std::optional<SetEditor> ed;
  if (e == nullptr) {
    ed.emplace(ctx.ks, ctx.db, args[1], args[2], hint);
  } else {
    ed.emplace(ctx.ks, ctx.db, args[1], e);
    ed->MaybeConvert(hint);
  }
  int64_t added = 0;
  for (size_t i = 2; i < args.size(); i++) added += ed->Add(args[i]) ? 1 : 0;
  ed->Commit();
  if (added == 0) {
    ctx.ks.NoChange(ctx.db, args[1]);  // every member was there (WATCH)
  } else {
    NotifyKeyspaceEvent(kNotifySet, "sadd", args[1], ctx.db);
  }
  rb.Integer(added);
}

void CmdSRem(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  Entry* e;
  if (!LookupSet(ctx, args[1], rb, &e, false)) return;
  if (e == nullptr) {
    rb.Integer(0);
    return;
  }
  SetEditor ed(ctx.ks, ctx.db, args[1], e);
  int64_t removed = 0;
  for (size_t i = 2; i < args.size() && ed.size() > 0; i++) removed += ed.Remove(args[i]) ? 1 : 0;
  if (removed > 0) {
    bool emptied = ed.size() == 0;
    ed.Commit();
    NotifyKeyspaceEvent(kNotifySet, "srem", args[1], ctx.db);
    if (emptied) NotifyKeyspaceEvent(kNotifyGeneric, "del", args[1], ctx.db);
  } else {
    ctx.ks.NoChange(ctx.db, args[1]);
  }
  rb.Integer(removed);
}

void CmdSIsMember(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  Entry* e;
  if (!LookupSet(ctx, args[1], rb, &e)) return;
  rb.Integer(e != nullptr && set_access::Contains(e, args[2]) ? 1 : 0);
}

void CmdSMIsMember(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  Entry* e;
  if (!LookupSet(ctx, args[1], rb, &e)) return;
  rb.Array(args.size() - 2);
  for (size_t i = 2; i < args.size(); i++)
    rb.Integer(e != nullptr && set_access::Contains(e, args[i]) ? 1 : 0);
}

void CmdSCard(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  Entry* e;
  if (!LookupSet(ctx, args[1], rb, &e)) return;
  rb.Integer(e == nullptr ? 0 : static_cast<int64_t>(set_access::Length(e)));
}

void CmdSMembers(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  Entry* e;
  if (!LookupSet(ctx, args[1], rb, &e)) return;
  if (e == nullptr) {
    rb.Set(0);
    return;
  }
  rb.Set(set_access::Length(e));
  set_access::ForEach(e, [&](std::string_view m) { rb.Bulk(m); });
}

// Moves a random sample of `want` distinct items of v to its front (partial Fisher-Yates).
template <class T>
void SampleToFront(std::vector<T>* v, size_t want, Worker& w) {
  for (size_t i = 0; i < want; i++) {
    size_t j = i + w.next_random() % (v->size() - i);
    std::swap((*v)[i], (*v)[j]);
  }
}

void CmdSRandMember(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  if (args.size() > 3) {
    rb.Error(errors::kSyntax);
    return;
  }
  bool with_count = args.size() == 3;
  int64_t count = 1;
  if (with_count) {
    if (!ParseInt64(args[2], &count)) {
      rb.Error(errors::kNotInteger);
      return;
    }
    if (count == INT64_MIN) {
      rb.Error(
          "ERR value is out of range, value must between -9223372036854775807 and "
          "9223372036854775807");
      return;
    }
  }
  Entry* e;
  if (!LookupSet(ctx, args[1], rb, &e)) return;
  if (e == nullptr) {
    with_count ? rb.Array(0) : rb.Null();
    return;
  }
  Worker& w = ctx.worker;
  if (!with_count) {
    rb.Bulk(set_access::Random(e, w.next_random()));
    return;
  }
  if (count == 0) {
    rb.Array(0);
    return;
  }
  size_t size = set_access::Length(e);
  bool unique = count > 0;
  uint64_t want = unique ? static_cast<uint64_t>(count) : 0 - static_cast<uint64_t>(count);
  if (!unique || want == 1) {
    // Repeats allowed: `want` independent picks.
    rb.Array(want);
    if (e->IsExternal()) {
      const auto* obj = static_cast<const SetObject*>(e->Object());
      for (uint64_t i = 0; i < want; i++) rb.Bulk(obj->Random(w.next_random()));
      return;
    }
    std::vector<std::string> all = set_access::Members(e);
    for (uint64_t i = 0; i < want; i++) rb.Bulk(all[w.next_random() % all.size()]);
    return;
  }
  if (want >= size) {
    rb.Array(size);
    set_access::ForEach(e, [&](std::string_view m) { rb.Bulk(m); });
    return;
  }
  if (!e->IsExternal() || want * 3 > size) {
    // Small sets, or a sample close to the whole set: copy, then sample.
    std::vector<std::string> all = set_access::Members(e);
    SampleToFront(&all, want, w);
    rb.Array(want);
    for (uint64_t i = 0; i < want; i++) rb.Bulk(all[i]);
    return;
  }
  // A small sample of a big set: random picks until enough distinct members.
  const auto* obj = static_cast<const SetObject*>(e->Object());
  std::unordered_set<std::string> picked;
  picked.reserve(want);
  while (picked.size() < want) picked.emplace(obj->Random(w.next_random()));
  rb.Array(want);
  for (const std::string& m : picked) rb.Bulk(m);
}

void CmdSPop(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  if (args.size() > 3) {
    rb.Error(errors::kSyntax);
    return;
  }
  Worker& w = ctx.worker;
  if (args.size() == 2) {
    Entry* e;
    if (!LookupSet(ctx, args[1], rb, &e, false)) return;
    if (e == nullptr) {
      rb.Null();
      return;
    }
    SetEditor ed(ctx.ks, ctx.db, args[1], e);
    std::string m = ed.PopRandom(w.next_random());
    bool emptied = ed.size() == 0;
    ed.Commit();
    NotifyKeyspaceEvent(kNotifySet, "spop", args[1], ctx.db);
    if (emptied) NotifyKeyspaceEvent(kNotifyGeneric, "del", args[1], ctx.db);
    rb.Bulk(m);
    return;
  }
  int64_t count = 0;
  if (!ParseInt64(args[2], &count) || count < 0) {
    rb.Error("ERR value is out of range, must be positive");
    return;
  }
  Entry* e;
  if (!LookupSet(ctx, args[1], rb, &e, false)) return;
  if (e == nullptr || count == 0) {
    rb.Set(0);
    return;
  }
  size_t size = set_access::Length(e);
  uint64_t want = static_cast<uint64_t>(count);
  if (want >= size) {
    // The whole set, and the key goes.
    rb.Set(size);
    set_access::ForEach(e, [&](std::string_view m) { rb.Bulk(m); });
    ctx.ks.Delete(ctx.db, args[1]);
    NotifyKeyspaceEvent(kNotifySet, "spop", args[1], ctx.db);
    NotifyKeyspaceEvent(kNotifyGeneric, "del", args[1], ctx.db);
    return;
  }
  size_t remaining = size - want;
  rb.Set(want);
  if (remaining * 5 > want) {
    // Few members leave: pop them one by one.
    SetEditor ed(ctx.ks, ctx.db, args[1], e);
    for (uint64_t i = 0; i < want; i++) rb.Bulk(ed.PopRandom(w.next_random()));
    ed.Commit();
    NotifyKeyspaceEvent(kNotifySet, "spop", args[1], ctx.db);
    return;
  }
  // Most members leave: pick the few that stay and build a new set of them (as Redis,
  // in an intset for an intset, else starting from a listpack).
  std::vector<std::string> all = set_access::Members(e);
  std::vector<size_t> order(all.size());
  for (size_t i = 0; i < order.size(); i++) order[i] = i;
  SampleToFront(&order, remaining, w);
  std::vector<char> stays(all.size(), 0);
  SetBuilder kept(set_access::Encoding(e) == SetEncoding::kIntSet ? SetEncoding::kIntSet
                                                                  : SetEncoding::kListpack);
  for (size_t i = 0; i < remaining; i++) {
    stays[order[i]] = 1;
    kept.Add(all[order[i]]);
  }
  for (size_t i = 0; i < all.size(); i++) {
    if (!stays[i]) rb.Bulk(all[i]);
  }
  kept.Store(ctx.ks, ctx.db, args[1], e->ExpireMs());
  NotifyKeyspaceEvent(kNotifySet, "spop", args[1], ctx.db);
}

// A SCAN cursor as Redis reads it (strtoul): an optional sign, decimal digits (none is
// 0), no leading space, at most 2^64-1; a negative cursor wraps around.
bool ParseScanCursor(std::string_view s, uint64_t* out) {
  size_t i = 0;
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    i = 1;
    if (s.size() == 1) return false;
  }
  uint64_t v = 0;
  for (; i < s.size(); i++) {
    if (s[i] < '0' || s[i] > '9') return false;
    uint64_t d = static_cast<uint64_t>(s[i] - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  *out = negative ? 0 - v : v;
  return true;
}

void CmdSScan(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  uint64_t cursor = 0;
  if (!ParseScanCursor(args[2], &cursor)) {
    rb.Error("ERR invalid cursor");
    return;
  }
  Entry* e;
  if (!LookupSet(ctx, args[1], rb, &e)) return;
  if (e == nullptr) {
    // Redis answers a missing key before looking at the options.
    rb.Array(2);
    rb.Bulk("0");
    rb.Array(0);
    return;
  }
  std::string_view pattern;
  bool has_pattern = false;
  int64_t count = 10;
  for (size_t i = 3; i < args.size(); i++) {
    bool has_next = i + 1 < args.size();
    if (EqualsIgnoreCase(args[i], "match") && has_next) {
      pattern = args[++i];
      has_pattern = !(pattern.size() == 1 && pattern[0] == '*');
    } else if (EqualsIgnoreCase(args[i], "count") && has_next) {
      if (!ParseInt64(args[++i], &count)) {
        rb.Error(errors::kNotInteger);
        return;
      }
      if (count < 1) {
        rb.Error(errors::kSyntax);
        return;
      }
    } else {
      rb.Error(errors::kSyntax);
      return;
    }
  }
  std::vector<std::string> found;
  auto take = [&](std::string_view m) {
    if (!has_pattern || GlobMatch(pattern, m)) found.emplace_back(m);
  };
  uint64_t next = 0;
  if (e->IsExternal()) {
    Table& t = static_cast<SetObject*>(e->Object())->table();
    uint64_t p = cursor < Table::kCursorEnd ? cursor : 0;
    int64_t budget = count * 10;
    do {
      p = t.ScanChunk(p, [&](Entry* m) {
        take(m->Key());
        return false;
      });
    } while (p != 0 && static_cast<int64_t>(found.size()) < count && --budget > 0);
    next = p;
  } else {
    set_access::ForEach(e, take);  // small sets are returned whole, as Redis does
  }
  rb.Array(2);
  rb.Bulk(std::to_string(next));
  rb.Array(found.size());
  for (const std::string& m : found) rb.Bulk(m);
}

}  // namespace

void RegisterSetFamily(CommandRegistry& r) {
  constexpr uint32_t kR = kCmdReadOnly | kCmdSet;
  auto add = [&](const char* name, int arity, uint32_t flags, ShardFn fn, const char* since,
                 const char* summary) {
    CommandSpec s{name, arity, flags, 1, 1, 1};
    s.shard_fn = fn;
    s.group = "set";
    s.since = since;
    s.summary = summary;
    r.Add(std::move(s));
  };
  add("sadd", -3, kCmdWrite | kCmdDenyOom | kCmdFast | kCmdSet, CmdSAdd, "1.0.0",
      "Adds one or more members to a set. Creates the key if it doesn't exist.");
  add("srem", -3, kCmdWrite | kCmdFast | kCmdSet, CmdSRem, "1.0.0",
      "Removes one or more members from a set. Deletes the set if the last member was removed.");
  add("sismember", 3, kR | kCmdFast, CmdSIsMember, "1.0.0",
      "Determines whether a member belongs to a set.");
  add("smismember", -3, kR | kCmdFast, CmdSMIsMember, "6.2.0",
      "Determines whether multiple members belong to a set.");
  add("scard", 2, kR | kCmdFast, CmdSCard, "1.0.0", "Returns the number of members in a set.");
  add("smembers", 2, kR, CmdSMembers, "1.0.0", "Returns all members of a set.");
  add("srandmember", -2, kR, CmdSRandMember, "1.0.0",
      "Get one or multiple random members from a set");
  add("spop", -2, kCmdWrite | kCmdFast | kCmdSet, CmdSPop, "1.0.0",
      "Returns one or more random members from a set after removing them. Deletes the set if "
      "the last member was popped.");
  add("sscan", -3, kR, CmdSScan, "2.8.0", "Iterates over members of a set.");
  RegisterSetAlgebraCommands(r);
}

}  // namespace strata
