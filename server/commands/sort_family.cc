// SORT and SORT_RO.
//
// SORT runs as a fiber on the client's worker: it locks the source key (and the STORE
// destination), reads the source's elements on their shard (a list, a set, or a sorted
// set's members), fetches BY weights and GET values from whatever shards hold the keys
// the patterns name, sorts on the client's thread, and stores the result on the
// destination's shard, all under the per-shard locks of every key involved: the source,
// the destination and every key the BY and GET patterns name (found by reading the
// source, then locked with it; see the loop in SortFiber), so SORT is atomic across
// shards like any multi-key command. Redis Cluster refuses such patterns; strata
// serves them.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/hash.h"
#include "core/hash_type.h"
#include "core/list_type.h"
#include "core/packed_list.h"
#include "core/set_type.h"
#include "core/string_util.h"
#include "server/commands/errors.h"
#include "server/commands/families.h"
#include "server/commands/list_ops.h"
#include "server/engine/client.h"
#include "server/engine/command.h"
#include "server/engine/engine.h"
#include "server/engine/hops.h"
#include "server/engine/notify.h"
#include "server/engine/shard_groups.h"
#include "server/engine/try_lock_all.h"
#include "server/engine/worker.h"

namespace strata {
namespace {

// Rounds of "lock, read the source, find the pattern keys" before SORT goes on with the
// keys it has locked (only when other clients keep changing the source meanwhile).
constexpr int kSortLockAttempts = 8;

struct SortArgs {
  std::string_view by;  // empty: sort by the elements themselves
  bool nosort = false;  // BY pattern without '*'
  int64_t offset = 0;
  int64_t count = -1;
  std::vector<std::string_view> gets;
  bool desc = false;
  bool alpha = false;
  std::string_view store;
  bool has_store = false;
};

bool ParseSort(CmdArgs args, bool read_only, ReplyBuilder& rb, SortArgs* a) {
  for (size_t i = 2; i < args.size(); i++) {
    size_t left = args.size() - i - 1;
    if (EqualsIgnoreCase(args[i], "asc")) {
      a->desc = false;
    } else if (EqualsIgnoreCase(args[i], "desc")) {
      a->desc = true;
    } else if (EqualsIgnoreCase(args[i], "alpha")) {
      a->alpha = true;
    } else if (EqualsIgnoreCase(args[i], "limit") && left >= 2) {
      if (!ParseInt64(args[i + 1], &a->offset) || !ParseInt64(args[i + 2], &a->count)) {
        rb.Error(errors::kNotInteger);
        return false;
      }
      i += 2;
    } else if (EqualsIgnoreCase(args[i], "store") && left >= 1 && !read_only) {
      a->store = args[++i];
      a->has_store = true;
    } else if (EqualsIgnoreCase(args[i], "by") && left >= 1) {
      a->by = args[++i];
      if (a->by.find('*') == std::string_view::npos) a->nosort = true;
    } else if (EqualsIgnoreCase(args[i], "get") && left >= 1) {
      a->gets.push_back(args[++i]);
    } else {
      rb.Error(errors::kSyntax);
      return false;
    }
  }
  return true;
}

// A pattern applied to an element: the key to read and, for "key->field", the field.
struct Lookup {
  std::string key;
  std::string field;
  bool hash = false;
};

std::optional<Lookup> Substitute(std::string_view pattern, std::string_view elem) {
  size_t star = pattern.find('*');
  if (star == std::string_view::npos) return std::nullopt;
  Lookup l;
  std::string_view rest = pattern;
  size_t arrow = pattern.find("->", star + 1);
  if (arrow != std::string_view::npos && arrow + 2 < pattern.size()) {
    l.hash = true;
    l.field.assign(pattern.substr(arrow + 2));
    rest = pattern.substr(0, arrow);
  }
  l.key.assign(rest.substr(0, star));
  l.key.append(elem);
  l.key.append(rest.substr(star + 1));
  return l;
}

// The elements of the source key on its shard; false with *wrong set for other types.
bool ReadElements(Worker& w, uint32_t db, std::string_view key, std::vector<std::string>* out,
                  bool* wrong, bool* sorted_set) {
  Entry* e = w.keyspace().FindRead(db, key, w.now_ms());
  if (e == nullptr) return true;
  switch (e->Type()) {
    case ValueType::kList:
      *out = list_access::Elements(e);
      return true;
    case ValueType::kSet:
      *out = set_access::Members(e);
      return true;
    case ValueType::kZSet: {
      // The canonical form lists member, score pairs in score order.
      std::string ser = Keyspace::Serialize(e);
      size_t i = 0;
      for (packed::Reader r(ser); !r.Done(); r.Next(), i++) {
        if (i % 2 == 0) out->emplace_back(r.Item());
      }
      *sorted_set = true;
      return true;
    }
    default:
      *wrong = true;
      return false;
  }
}

Fiber SortFiber(Client* c, std::shared_ptr<OwnedArgs> owned) {
  CmdArgs args = owned->span();
  std::string out;
  ReplyBuilder rb(&out, c->resp);
  bool read_only = EqualsIgnoreCase(args[0], "sort_ro");
  SortArgs a;
  if (!ParseSort(args, read_only, rb, &a)) {
    c->FinishFiber(std::move(out));
    co_return;
  }
  uint32_t db = c->db;
  uint32_t n = c->worker().engine().shard_count();
  // The keys that BY and GET patterns name are known only once the source is read, and
  // locks are taken in shard order, so: lock the source (and destination) plus the
  // pattern keys found last time, read the source, and if it now names a key outside
  // the locked set, release and start again with the larger set.
  std::vector<std::string> pattern_keys;
  std::vector<std::string> elems;
  bool wrong = false, sorted_set = false;
  ShardGroups g;
  for (int attempt = 0;; attempt++) {
    std::vector<std::string_view> lock_keys = {args[1]};
    if (a.has_store) lock_keys.push_back(a.store);
    for (const std::string& k : pattern_keys) lock_keys.push_back(k);
    std::sort(lock_keys.begin(), lock_keys.end());
    lock_keys.erase(std::unique(lock_keys.begin(), lock_keys.end()), lock_keys.end());
    g = GroupByShard(lock_keys, db, n, true, c->txn_owner);
    if (!co_await TryLockAll(g)) {
      for (size_t i = 0; i < g.shards.size(); i++) co_await LockOn(g.shards[i], &g.locks[i]);
    }
    elems.clear();
    wrong = sorted_set = false;
    co_await RunOn(std::vector<uint32_t>(1, ShardOfKey(args[1], n)),
                   [&](Worker& w) { ReadElements(w, db, args[1], &elems, &wrong, &sorted_set); });
    std::vector<std::string> needed;
    if (!wrong) {
      for (const std::string& e : elems) {
        if (!a.by.empty() && !a.nosort) needed.push_back(Substitute(a.by, e)->key);
        for (std::string_view pat : a.gets) {
          std::optional<Lookup> l = pat == "#" ? std::nullopt : Substitute(pat, e);
          if (l) needed.push_back(std::move(l->key));
        }
      }
      std::sort(needed.begin(), needed.end());
      needed.erase(std::unique(needed.begin(), needed.end()), needed.end());
    }
    bool covered =
        std::includes(pattern_keys.begin(), pattern_keys.end(), needed.begin(), needed.end());
    if (wrong || covered || attempt >= kSortLockAttempts) break;
    co_await RunOn(g.shards, [&](Worker& w) {
      ReleaseUnnumbered not_yet;
      w.locks().Release(g.locks[g.IndexOf(w.index())].keys, true);
    });
    pattern_keys.swap(needed);
  }

  // Lookups for BY weights and GET values, fetched shard by shard.
  auto fetch = [&](const std::vector<Lookup>& lookups,
                   std::vector<std::optional<std::string>>* values) -> std::vector<uint32_t> {
    values->assign(lookups.size(), std::nullopt);
    std::vector<uint32_t> shards;
    for (const Lookup& l : lookups) shards.push_back(ShardOfKey(l.key, n));
    std::sort(shards.begin(), shards.end());
    shards.erase(std::unique(shards.begin(), shards.end()), shards.end());
    return shards;
  };
  auto read_on = [&](Worker& w, const std::vector<Lookup>& lookups,
                     std::vector<std::optional<std::string>>* values) {
    for (size_t i = 0; i < lookups.size(); i++) {
      const Lookup& l = lookups[i];
      if (ShardOfKey(l.key, n) != w.index()) continue;
      Entry* e = w.keyspace().FindRead(db, l.key, w.now_ms());
      if (e == nullptr) continue;
      if (l.hash) {
        std::string v;
        if (e->Type() == ValueType::kHash && hash_access::Get(e, l.field, &v)) (*values)[i] = v;
      } else if (e->Type() == ValueType::kString) {
        (*values)[i] = e->ValueString();
      }
    }
  };

  std::string error;
  bool stored = false;  // the destination was written or deleted
  if (!wrong) {
    // Weights.
    bool dontsort = a.nosort && !sorted_set;
    std::vector<std::optional<std::string>> weights;
    if (!a.by.empty() && !a.nosort) {
      std::vector<Lookup> lookups;
      for (const std::string& e : elems) lookups.push_back(*Substitute(a.by, e));
      std::vector<uint32_t> shards = fetch(lookups, &weights);
      co_await RunOn(shards, [&](Worker& w) { read_on(w, lookups, &weights); });
    }
    std::vector<size_t> order(elems.size());
    for (size_t i = 0; i < order.size(); i++) order[i] = i;
    if (!dontsort && !(a.nosort && sorted_set)) {
      std::vector<double> num(elems.size(), 0.0);
      if (!a.alpha) {
        for (size_t i = 0; i < elems.size() && error.empty(); i++) {
          const std::string* src = a.by.empty() ? &elems[i] : (weights[i] ? &*weights[i] : nullptr);
          if (src == nullptr) continue;  // missing weight: 0
          long double d = 0;
          if (!ParseLongDouble(*src, &d) || std::isnan(d)) {
            error = "ERR One or more scores can't be converted into double";
          } else {
            num[i] = static_cast<double>(d);
          }
        }
      }
      if (error.empty()) {
        auto key_of = [&](size_t i) -> std::string_view {
          if (a.by.empty()) return elems[i];
          return weights[i] ? std::string_view(*weights[i]) : std::string_view();
        };
        std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
          int cmp;
          if (a.alpha) {
            cmp = key_of(x).compare(key_of(y));
          } else {
            cmp = num[x] < num[y] ? -1 : (num[x] > num[y] ? 1 : 0);
          }
          if (cmp == 0) cmp = elems[x].compare(elems[y]);  // as Redis: ties by element
          return a.desc ? cmp > 0 : cmp < 0;
        });
      }
    } else if (a.desc && sorted_set) {
      std::reverse(order.begin(), order.end());
    }
    // LIMIT
    int64_t total = static_cast<int64_t>(order.size());
    int64_t start = std::max<int64_t>(0, a.offset);
    int64_t cnt = a.count < 0 ? total : a.count;
    if (start > total) start = total;
    if (cnt > total - start) cnt = total - start;
    std::vector<size_t> picked(order.begin() + start, order.begin() + start + cnt);

    // GET values.
    std::vector<std::optional<std::string>> result;
    if (error.empty()) {
      if (a.gets.empty()) {
        for (size_t i : picked) result.emplace_back(elems[i]);
      } else {
        std::vector<Lookup> lookups;
        std::vector<int> slot;  // per (element, get): index into lookups or -1 for '#'
        for (size_t i : picked) {
          for (std::string_view pat : a.gets) {
            if (pat == "#") {
              slot.push_back(-1);
              continue;
            }
            std::optional<Lookup> l = Substitute(pat, elems[i]);
            if (!l) {
              slot.push_back(-2);  // no '*': Redis returns nil
              continue;
            }
            slot.push_back(static_cast<int>(lookups.size()));
            lookups.push_back(std::move(*l));
          }
        }
        std::vector<std::optional<std::string>> values;
        std::vector<uint32_t> shards = fetch(lookups, &values);
        if (!lookups.empty())
          co_await RunOn(shards, [&](Worker& w) { read_on(w, lookups, &values); });
        size_t k = 0;
        for (size_t i : picked) {
          for (size_t gi = 0; gi < a.gets.size(); gi++, k++) {
            if (slot[k] == -1) {
              result.emplace_back(elems[i]);
            } else if (slot[k] == -2) {
              result.emplace_back(std::nullopt);
            } else {
              result.push_back(values[static_cast<size_t>(slot[k])]);
            }
          }
        }
      }
    }

    if (error.empty() && a.has_store) {
      std::vector<std::string> list;
      for (auto& v : result) list.push_back(v ? *v : std::string());
      co_await RunOn(std::vector<uint32_t>(1, ShardOfKey(a.store, n)), [&](Worker& w) {
        bool existed = w.keyspace().Delete(db, a.store);
        stored = existed || !list.empty();
        if (!list.empty()) {
          std::vector<std::string_view> views(list.begin(), list.end());
          bool unused = false;
          OpPush(w.keyspace(), db, a.store, false, views, false, w.now_ms(), &unused, false);
          NotifyKeyspaceEvent(kNotifyList, "sortstore", a.store, db);
          w.SignalKeyReady(db, a.store);
        } else if (existed) {
          NotifyKeyspaceEvent(kNotifyGeneric, "del", a.store, db);
        }
      });
      rb.Integer(static_cast<int64_t>(list.size()));
    } else if (error.empty()) {
      rb.Array(result.size());
      for (auto& v : result) v ? rb.Bulk(*v) : rb.Null();
    }
  }
  // A SORT without STORE, or one that stored nothing over no key, is not propagated.
  if (!stored) FiberChangesNothing();
  co_await RunOn(g.shards,
                 [&](Worker& w) { w.locks().Release(g.locks[g.IndexOf(w.index())].keys, true); });
  if (wrong) {
    rb.Error(errors::kWrongType);
  } else if (!error.empty()) {
    rb.Error(error);
  }
  c->FinishFiber(std::move(out));
}

}  // namespace

void RegisterSortFamily(CommandRegistry& r) {
  CommandSpec s{"sort", -2, kCmdWrite | kCmdDenyOom | kCmdList | kCmdSet, 1, 1, 1};
  s.fiber_fn = SortFiber;
  s.group = "generic";
  s.since = "1.0.0";
  s.summary =
      "Sorts the elements in a list, a set, or a sorted set, optionally storing the result.";
  r.Add(s);
  CommandSpec ro{"sort_ro", -2, kCmdReadOnly | kCmdList | kCmdSet, 1, 1, 1};
  ro.fiber_fn = SortFiber;
  ro.group = "generic";
  ro.since = "7.0.0";
  ro.summary = "Returns the sorted elements of a list, a set, or a sorted set.";
  r.Add(ro);
}

}  // namespace strata
