// Hash commands. Every command touches one key and runs on the key's shard.
//
// Reads go through hash_access (either form). Writes on a small hash rebuild its packed
// form and store it again (converting to a HashObject past the thresholds); writes on a
// HashObject change it in place and re-charge its bytes. A hash emptied by HDEL is
// deleted, as in Redis.
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/glob.h"
#include "core/hash_type.h"
#include "core/packed_list.h"
#include "core/string_util.h"
#include "server/commands/errors.h"
#include "server/commands/families.h"
#include "server/commands/lookup.h"
#include "server/engine/command.h"
#include "server/engine/notify.h"
#include "server/engine/worker.h"

namespace strata {
namespace {

// Looks a key up for a hash command: false (error replied) when it holds another type.
bool LookupHash(ShardCtx& ctx, std::string_view key, ReplyBuilder& rb, Entry** out,
                bool read = true) {
  return LookupTyped(ctx, key, ValueType::kHash, rb, out, read);
}

using Pairs = std::vector<std::pair<std::string, std::string>>;

Pairs PackedPairs(const Entry* e) {
  Pairs kv;
  hash_access::ForEach(e, [&](std::string_view f, std::string_view v) {
    kv.emplace_back(std::string(f), std::string(v));
  });
  return kv;
}

// Stores a small hash's new contents (or deletes the key when empty).
void StorePairs(ShardCtx& ctx, std::string_view key, const Pairs& kv, int64_t expire_ms) {
  if (kv.empty()) {
    ctx.ks.Delete(ctx.db, key);
    return;
  }
  std::string packed;
  std::unique_ptr<HashObject> obj = BuildHash(kv, ctx.ks.heap(), &packed);
  if (obj != nullptr) {
    ctx.ks.SetObject(ctx.db, key, ValueType::kHash, std::move(obj), expire_ms);
  } else {
    ctx.ks.SetRaw(ctx.db, key, packed, ValueType::kHash, expire_ms);
  }
}

// Sets fields (args[first], args[first+1], ...) on key; returns the number of new fields.
// nx: only set fields that do not exist.
int64_t SetFields(ShardCtx& ctx, std::string_view key, Entry* e, CmdArgs args, size_t first,
                  bool nx) {
  int64_t added = 0;
  if (e != nullptr && e->IsExternal()) {
    auto* h = static_cast<HashObject*>(e->Object());
    size_t before = h->Bytes();
    for (size_t i = first; i + 1 < args.size(); i += 2) {
      if (nx && h->Find(args[i]) != nullptr) continue;
      if (h->Set(args[i], args[i + 1])) added++;
    }
    ctx.ks.Recharge(e, before);
    return added;
  }
  int64_t expire = e != nullptr ? e->ExpireMs() : Entry::kNoExpire;
  size_t pairs = (args.size() - first) / 2;
  if (!HashFitsPacked(pairs, 0)) {
    // More fields in one call than the small form holds: build the table form first, as
    // Redis does (hashTypeTryConversion), so each field costs one insert, not a scan of
    // the packed pairs.
    auto h = std::make_unique<HashObject>(ctx.ks.heap());
    if (e != nullptr)
      hash_access::ForEach(e, [&](std::string_view f, std::string_view v) { h->Set(f, v); });
    for (size_t i = first; i + 1 < args.size(); i += 2) {
      if (nx && h->Find(args[i]) != nullptr) continue;
      if (h->Set(args[i], args[i + 1])) added++;
    }
    ctx.ks.SetObject(ctx.db, key, ValueType::kHash, std::move(h), expire);
    return added;
  }
  // At most hash-max-listpack-entries pairs on a small hash: the scan below is bounded.
  Pairs kv;
  if (e != nullptr) kv = PackedPairs(e);
  for (size_t i = first; i + 1 < args.size(); i += 2) {
    bool found = false;
    for (auto& [f, v] : kv) {
      if (f == args[i]) {
        if (!nx) v.assign(args[i + 1]);
        found = true;
        break;
      }
    }
    if (!found) {
      kv.emplace_back(std::string(args[i]), std::string(args[i + 1]));
      added++;
    }
  }
  if (nx && added == 0 && e != nullptr) return 0;
  StorePairs(ctx, key, kv, expire);
  return added;
}

void CmdHSet(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  if (args.size() % 2 != 0) {
    rb.Error(WrongArityError(args[0]));
    return;
  }
  Entry* e;
  if (!LookupHash(ctx, args[1], rb, &e, false)) return;
  int64_t added = SetFields(ctx, args[1], e, args, 2, false);
  NotifyKeyspaceEvent(kNotifyHash, "hset", args[1], ctx.db);  // even when nothing changed
  if (EqualsIgnoreCase(args[0], "hmset")) {
    rb.Ok();
  } else {
    rb.Integer(added);
  }
}

void CmdHSetNx(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  Entry* e;
  if (!LookupHash(ctx, args[1], rb, &e, false)) return;
  int64_t added = SetFields(ctx, args[1], e, args, 2, true);
  if (added == 0) {
    ctx.ks.NoChange(ctx.db, args[1]);  // the field was there (WATCH)
  } else {
    NotifyKeyspaceEvent(kNotifyHash, "hset", args[1], ctx.db);
  }
  rb.Integer(added);
}

void CmdHGet(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  Entry* e;
  if (!LookupHash(ctx, args[1], rb, &e)) return;
  if (e != nullptr && e->IsExternal()) {
    Entry* f = static_cast<HashObject*>(e->Object())->Find(args[2]);
    f == nullptr ? rb.Null() : rb.BulkValue(*f);
    return;
  }
  std::string v;
  if (e == nullptr || !hash_access::Get(e, args[2], &v)) {
    rb.Null();
  } else {
    rb.Bulk(v);
  }
}

void CmdHMGet(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  Entry* e;
  if (!LookupHash(ctx, args[1], rb, &e)) return;
  rb.Array(args.size() - 2);
  std::string v;
  for (size_t i = 2; i < args.size(); i++) {
    if (e != nullptr && hash_access::Get(e, args[i], &v)) {
      rb.Bulk(v);
    } else {
      rb.Null();
    }
  }
}

void CmdHDel(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  Entry* e;
  if (!LookupHash(ctx, args[1], rb, &e, false)) return;
  if (e == nullptr) {
    rb.Integer(0);
    return;
  }
  int64_t removed = 0;
  if (e->IsExternal()) {
    auto* h = static_cast<HashObject*>(e->Object());
    size_t before = h->Bytes();
    for (size_t i = 2; i < args.size(); i++) removed += h->Delete(args[i]) ? 1 : 0;
    // Charge the change first: Delete releases the object's bytes as they are now.
    ctx.ks.Recharge(e, before);
    bool emptied = h->Length() == 0;
    if (emptied) ctx.ks.Delete(ctx.db, args[1]);
    if (removed == 0) {
      ctx.ks.NoChange(ctx.db, args[1]);
    } else {
      NotifyKeyspaceEvent(kNotifyHash, "hdel", args[1], ctx.db);
      if (emptied) NotifyKeyspaceEvent(kNotifyGeneric, "del", args[1], ctx.db);
    }
    rb.Integer(removed);
    return;
  }
  Pairs kv = PackedPairs(e);
  for (size_t i = 2; i < args.size(); i++) {
    for (size_t j = 0; j < kv.size(); j++) {
      if (kv[j].first == args[i]) {
        kv.erase(kv.begin() + static_cast<std::ptrdiff_t>(j));
        removed++;
        break;
      }
    }
  }
  if (removed > 0) {
    StorePairs(ctx, args[1], kv, e->ExpireMs());
    NotifyKeyspaceEvent(kNotifyHash, "hdel", args[1], ctx.db);
    if (kv.empty()) NotifyKeyspaceEvent(kNotifyGeneric, "del", args[1], ctx.db);
  } else {
    ctx.ks.NoChange(ctx.db, args[1]);  // no such field (WATCH)
  }
  rb.Integer(removed);
}

void CmdHLen(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  Entry* e;
  if (!LookupHash(ctx, args[1], rb, &e)) return;
  rb.Integer(e == nullptr ? 0 : static_cast<int64_t>(hash_access::Length(e)));
}

void CmdHStrLen(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  Entry* e;
  if (!LookupHash(ctx, args[1], rb, &e)) return;
  std::string v;
  rb.Integer(e != nullptr && hash_access::Get(e, args[2], &v) ? static_cast<int64_t>(v.size()) : 0);
}

void CmdHExists(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  Entry* e;
  if (!LookupHash(ctx, args[1], rb, &e)) return;
  rb.Integer(e != nullptr && hash_access::Exists(e, args[2]) ? 1 : 0);
}

enum class Part { kKeys, kValues, kBoth };

void ReplyAll(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb, Part part) {
  Entry* e;
  if (!LookupHash(ctx, args[1], rb, &e)) return;
  size_t n = e == nullptr ? 0 : hash_access::Length(e);
  if (part == Part::kBoth) {
    rb.Map(n);
  } else {
    rb.Array(n);
  }
  if (e == nullptr) return;
  hash_access::ForEach(e, [&](std::string_view f, std::string_view v) {
    if (part != Part::kValues) rb.Bulk(f);
    if (part != Part::kKeys) rb.Bulk(v);
  });
}

void CmdHKeys(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  ReplyAll(args, ctx, rb, Part::kKeys);
}
void CmdHVals(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  ReplyAll(args, ctx, rb, Part::kValues);
}
void CmdHGetAll(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  ReplyAll(args, ctx, rb, Part::kBoth);
}

// Writes one field's new value (HINCRBY, HINCRBYFLOAT).
void WriteField(ShardCtx& ctx, std::string_view key, Entry* e, std::string_view field,
                std::string_view value) {
  std::string_view argv[4] = {"hset", key, field, value};
  SetFields(ctx, key, e, CmdArgs(argv, 4), 2, false);
}

void CmdHIncrBy(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  int64_t by = 0;
  if (!ParseInt64(args[3], &by)) {
    rb.Error(errors::kNotInteger);
    return;
  }
  Entry* e;
  if (!LookupHash(ctx, args[1], rb, &e, false)) return;
  int64_t cur = 0;
  std::string v;
  if (e != nullptr && hash_access::Get(e, args[2], &v) && !ParseInt64(v, &cur)) {
    rb.Error("ERR hash value is not an integer");
    return;
  }
  if ((by > 0 && cur > INT64_MAX - by) || (by < 0 && cur < INT64_MIN - by)) {
    rb.Error(errors::kOverflow);
    return;
  }
  cur += by;
  WriteField(ctx, args[1], e, args[2], std::to_string(cur));
  NotifyKeyspaceEvent(kNotifyHash, "hincrby", args[1], ctx.db);
  rb.Integer(cur);
}

void CmdHIncrByFloat(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  long double by = 0;
  if (!ParseLongDouble(args[3], &by)) {
    rb.Error(errors::kNotFloat);
    return;
  }
  if (std::isnan(by) || std::isinf(by)) {
    rb.Error("ERR value is NaN or Infinity");
    return;
  }
  Entry* e;
  if (!LookupHash(ctx, args[1], rb, &e, false)) return;
  long double cur = 0;
  std::string v;
  if (e != nullptr && hash_access::Get(e, args[2], &v) && !ParseLongDouble(v, &cur)) {
    rb.Error("ERR hash value is not a float");
    return;
  }
  long double sum = cur + by;
  if (std::isnan(sum) || std::isinf(sum)) {
    rb.Error("ERR increment would produce NaN or Infinity");
    return;
  }
  std::string s = LongDoubleToHuman(sum);
  WriteField(ctx, args[1], e, args[2], s);
  NotifyKeyspaceEvent(kNotifyHash, "hincrbyfloat", args[1], ctx.db);
  rb.Bulk(s);
}

void CmdHRandField(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  bool with_count = args.size() >= 3;
  int64_t count = 1;
  bool with_values = false;
  if (with_count) {
    if (!ParseInt64(args[2], &count)) {
      rb.Error(errors::kNotInteger);
      return;
    }
    if (args.size() == 4) {
      if (!EqualsIgnoreCase(args[3], "withvalues")) {
        rb.Error(errors::kSyntax);
        return;
      }
      with_values = true;
    } else if (args.size() > 4) {
      rb.Error(errors::kSyntax);
      return;
    }
    if (count == INT64_MIN) {
      rb.Error(
          "ERR value is out of range, value must between -9223372036854775807 and "
          "9223372036854775807");
      return;
    }
    if (with_values && (count < -(INT64_MAX / 2) || count > INT64_MAX / 2)) {
      rb.Error("ERR value is out of range");
      return;
    }
  }
  Entry* e;
  if (!LookupHash(ctx, args[1], rb, &e)) return;
  if (e == nullptr) {
    with_count ? rb.Array(0) : rb.Null();
    return;
  }
  // Hashes are walked once into a vector; HRANDFIELD is not a hot path.
  Pairs all = PackedPairs(e);
  size_t n = all.size();
  auto reply_pair = [&](const std::pair<std::string, std::string>& p) {
    if (with_values && rb.resp() >= 3) rb.Array(2);
    rb.Bulk(p.first);
    if (with_values) rb.Bulk(p.second);
  };
  if (!with_count) {
    rb.Bulk(all[ctx.worker.next_random() % n].first);
    return;
  }
  if (count == 0) {
    rb.Array(0);
    return;
  }
  if (count < 0) {
    size_t want = static_cast<size_t>(-count);
    rb.Array(with_values && rb.resp() < 3 ? want * 2 : want);
    for (size_t i = 0; i < want; i++) reply_pair(all[ctx.worker.next_random() % n]);
    return;
  }
  size_t want = std::min(static_cast<size_t>(count), n);
  // Partial Fisher-Yates: the first `want` positions become a random distinct sample.
  for (size_t i = 0; i < want; i++) {
    size_t j = i + ctx.worker.next_random() % (n - i);
    std::swap(all[i], all[j]);
  }
  rb.Array(with_values && rb.resp() < 3 ? want * 2 : want);
  for (size_t i = 0; i < want; i++) reply_pair(all[i]);
}

void CmdHScan(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  uint64_t cursor = 0;
  if (!ParseUint64(args[2], &cursor)) {
    rb.Error("ERR invalid cursor");
    return;
  }
  std::string_view pattern;
  bool has_pattern = false;
  int64_t count = 10;
  bool no_values = false;
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
    } else if (EqualsIgnoreCase(args[i], "novalues")) {
      no_values = true;
    } else {
      rb.Error(errors::kSyntax);
      return;
    }
  }
  Entry* e;
  if (!LookupHash(ctx, args[1], rb, &e)) return;
  std::vector<std::pair<std::string, std::string>> found;
  uint64_t next = 0;
  auto take = [&](std::string_view f, std::string_view v) {
    if (has_pattern && !GlobMatch(pattern, f)) return;
    found.emplace_back(std::string(f), no_values ? std::string() : std::string(v));
  };
  if (e != nullptr && e->IsExternal()) {
    Table& t = static_cast<HashObject*>(e->Object())->table();
    uint64_t p = cursor < Table::kCursorEnd ? cursor : 0;
    int64_t budget = count * 10;
    std::string scratch;
    do {
      p = t.ScanChunk(p, [&](Entry* f) {
        take(f->Key(), f->Value(&scratch));
        return false;
      });
    } while (p != 0 && static_cast<int64_t>(found.size()) < count && --budget > 0);
    next = p;
  } else if (e != nullptr) {
    hash_access::ForEach(e, take);  // small hashes are returned whole, as Redis does
  }
  rb.Array(2);
  rb.Bulk(std::to_string(next));
  rb.Array(found.size() * (no_values ? 1 : 2));
  for (auto& [f, v] : found) {
    rb.Bulk(f);
    if (!no_values) rb.Bulk(v);
  }
}

}  // namespace

void RegisterHashFamily(CommandRegistry& r) {
  constexpr uint32_t kW = kCmdWrite | kCmdDenyOom | kCmdHash;
  constexpr uint32_t kR = kCmdReadOnly | kCmdHash;
  auto add = [&](const char* name, int arity, uint32_t flags, ShardFn fn, const char* summary) {
    CommandSpec s{name, arity, flags, 1, 1, 1};
    s.shard_fn = fn;
    s.group = "hash";
    s.summary = summary;
    s.since = "2.0.0";
    r.Add(std::move(s));
  };
  add("hset", -4, kW | kCmdFast, CmdHSet, "Creates or modifies the value of a field in a hash.");
  add("hmset", -4, kW | kCmdFast, CmdHSet, "Sets the values of multiple fields.");
  add("hsetnx", 4, kW | kCmdFast, CmdHSetNx,
      "Sets the value of a field only when it does not exist.");
  add("hget", 3, kR | kCmdFast, CmdHGet, "Returns the value of a field in a hash.");
  add("hmget", -3, kR | kCmdFast, CmdHMGet, "Returns the values of all fields in a hash.");
  add("hdel", -3, kCmdWrite | kCmdFast | kCmdHash, CmdHDel,
      "Deletes one or more fields and their values from a hash.");
  add("hlen", 2, kR | kCmdFast, CmdHLen, "Returns the number of fields in a hash.");
  add("hstrlen", 3, kR | kCmdFast, CmdHStrLen, "Returns the length of the value of a field.");
  add("hexists", 3, kR | kCmdFast, CmdHExists, "Determines whether a field exists in a hash.");
  add("hkeys", 2, kR, CmdHKeys, "Returns all fields in a hash.");
  add("hvals", 2, kR, CmdHVals, "Returns all values in a hash.");
  add("hgetall", 2, kR, CmdHGetAll, "Returns all fields and values in a hash.");
  add("hincrby", 4, kW | kCmdFast, CmdHIncrBy,
      "Increments the integer value of a field in a hash by a number.");
  add("hincrbyfloat", 4, kW | kCmdFast, CmdHIncrByFloat,
      "Increments the floating point value of a field by a number.");
  add("hrandfield", -2, kR, CmdHRandField, "Returns one or more random fields from a hash.");
  add("hscan", -3, kR, CmdHScan, "Iterates over fields and values of a hash.");
}

}  // namespace strata
