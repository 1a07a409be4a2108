// Sorted-set algebra: ZUNION, ZINTER, ZDIFF, ZUNIONSTORE, ZINTERSTORE, ZDIFFSTORE and
// ZINTERCARD, on one shard or across several.
//
// The algorithms and their arithmetic are Redis's (zunionInterDiffGenericCommand): inputs
// may be sorted sets or plain sets (every member scored 1); union and intersection visit
// the inputs from the smallest to the largest (a stable order, as glibc's qsort gives
// Redis), weight each score (a NaN product counts as 0) and aggregate with SUM (inf +
// -inf is 0), MIN or MAX; the difference keeps the first input's members that no other
// input has, with their scores. Errors come in Redis's order: numkeys, then WRONGTYPE for
// an input, then the options.
//
// Keys on one shard: the command runs there and reads the entries in place. Keys on
// several shards: a fiber takes the intent locks shard by shard (exclusive on the
// destination's shard), copies the inputs off their shards, computes on the client's
// thread, and writes the destination before the locks are released, so the result is
// that of one instant.
#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/hash.h"
#include "core/set_type.h"
#include "core/string_util.h"
#include "server/commands/errors.h"
#include "server/commands/families.h"
#include "server/commands/zset_args.h"
#include "server/commands/zset_ops.h"
#include "server/engine/client.h"
#include "server/engine/command.h"
#include "server/engine/engine.h"
#include "server/engine/hops.h"
#include "server/engine/shard_groups.h"
#include "server/engine/try_lock_all.h"
#include "server/engine/worker.h"

namespace strata {
namespace {

enum class Aggregate { kSum, kMin, kMax };

struct ZAlgebraCall {
  enum class Op { kUnion, kInter, kDiff };
  Op op = Op::kUnion;
  bool store = false;
  bool card_only = false;
  std::string_view dst;
  std::vector<std::string_view> keys;
  std::vector<double> weights;
  Aggregate aggregate = Aggregate::kSum;
  bool withscores = false;
  int64_t limit = 0;  // ZINTERCARD; 0 = none
  // The first error in the options: replied after the inputs' type checks, as Redis does.
  std::string option_error;
};

// Parses numkeys and the keys (false, error replied, when they are invalid) and the
// options (an error there is kept in option_error).
bool ParseCall(CmdArgs args, ReplyBuilder& rb, ZAlgebraCall* call) {
  std::string name = Lowercase(args[0]);
  call->store = name.ends_with("store");
  call->card_only = name == "zintercard";
  if (name.starts_with("zunion")) {
    call->op = ZAlgebraCall::Op::kUnion;
  } else if (name.starts_with("zinter")) {
    call->op = ZAlgebraCall::Op::kInter;
  } else {
    call->op = ZAlgebraCall::Op::kDiff;
  }
  size_t numkeys_index = call->store ? 2 : 1;
  if (call->store) call->dst = args[1];
  int64_t setnum = 0;
  if (!ParseZLong(args[numkeys_index], rb, &setnum)) return false;
  if (setnum < 1) {
    rb.Error("ERR at least 1 input key is needed for '" + name + "' command");
    return false;
  }
  if (static_cast<uint64_t>(setnum) > args.size() - (numkeys_index + 1)) {
    rb.Error(errors::kSyntax);
    return false;
  }
  size_t n = static_cast<size_t>(setnum);
  size_t j = numkeys_index + 1;
  for (size_t i = 0; i < n; i++) call->keys.push_back(args[j++]);
  call->weights.assign(n, 1.0);
  bool diff = call->op == ZAlgebraCall::Op::kDiff;
  while (j < args.size()) {
    size_t remaining = args.size() - j;
    if (!diff && !call->card_only && remaining >= n + 1 && EqualsIgnoreCase(args[j], "weights")) {
      j++;
      for (size_t i = 0; i < n; i++, j++) {
        if (!ParseZScore(args[j], &call->weights[i])) {
          call->option_error = "ERR weight value is not a float";
          return true;
        }
      }
    } else if (!diff && !call->card_only && remaining >= 2 &&
               EqualsIgnoreCase(args[j], "aggregate")) {
      std::string_view a = args[j + 1];
      if (EqualsIgnoreCase(a, "sum")) {
        call->aggregate = Aggregate::kSum;
      } else if (EqualsIgnoreCase(a, "min")) {
        call->aggregate = Aggregate::kMin;
      } else if (EqualsIgnoreCase(a, "max")) {
        call->aggregate = Aggregate::kMax;
      } else {
        call->option_error = errors::kSyntax;
        return true;
      }
      j += 2;
    } else if (!call->store && !call->card_only && EqualsIgnoreCase(args[j], "withscores")) {
      call->withscores = true;
      j++;
    } else if (call->card_only && remaining >= 2 && EqualsIgnoreCase(args[j], "limit")) {
      if (!ParseInt64(args[j + 1], &call->limit) || call->limit < 0) {
        call->option_error = "ERR LIMIT can't be negative";
        return true;
      }
      j += 2;
    } else {
      call->option_error = errors::kSyntax;
      return true;
    }
  }
  return true;
}

// An input: a sorted set, or a plain set whose members score 1.
class ZSource {
 public:
  virtual ~ZSource() = default;
  virtual size_t Size() const = 0;
  virtual void ForEach(const std::function<void(std::string_view, double)>& fn) const = 0;
  virtual bool Find(std::string_view member, double* score) const = 0;
};

class EntryZSource final : public ZSource {
 public:
  explicit EntryZSource(const Entry* e) : r_(e) {}
  size_t Size() const override { return r_.size(); }
  void ForEach(const std::function<void(std::string_view, double)>& fn) const override {
    if (r_.size() == 0) return;
    r_.Walk(0, false, [&](std::string_view m, double s) {
      fn(m, s);
      return true;
    });
  }
  bool Find(std::string_view member, double* score) const override {
    return r_.Score(member, score);
  }

 private:
  ZSetReader r_;
};

class EntrySetZSource final : public ZSource {
 public:
  explicit EntrySetZSource(const Entry* e) : e_(e) {}
  size_t Size() const override { return set_access::Length(e_); }
  void ForEach(const std::function<void(std::string_view, double)>& fn) const override {
    set_access::ForEach(e_, [&](std::string_view m) { fn(m, 1.0); });
  }
  bool Find(std::string_view member, double* score) const override {
    if (!set_access::Contains(e_, member)) return false;
    *score = 1.0;
    return true;
  }

 private:
  const Entry* e_;
};

// An input copied off its shard.
struct ZSnapshot {
  enum class State { kMissing, kWrongType, kPresent };
  State state = State::kMissing;
  std::vector<std::pair<std::string, double>> members;  // iteration order

  static ZSnapshot Read(Keyspace& ks, uint32_t db, std::string_view key, int64_t now_ms) {
    ZSnapshot s;
    Entry* e = ks.FindRead(db, key, now_ms);
    if (e == nullptr) return s;
    if (e->Type() == ValueType::kZSet) {
      s.state = State::kPresent;
      EntryZSource(e).ForEach(
          [&](std::string_view m, double sc) { s.members.emplace_back(std::string(m), sc); });
    } else if (e->Type() == ValueType::kSet) {
      s.state = State::kPresent;
      set_access::ForEach(e,
                          [&](std::string_view m) { s.members.emplace_back(std::string(m), 1.0); });
    } else {
      s.state = State::kWrongType;
    }
    return s;
  }
};

class SnapshotZSource final : public ZSource {
 public:
  explicit SnapshotZSource(const ZSnapshot* s) : s_(s) {}
  size_t Size() const override { return s_->members.size(); }
  void ForEach(const std::function<void(std::string_view, double)>& fn) const override {
    for (const auto& [m, s] : s_->members) fn(m, s);
  }
  bool Find(std::string_view member, double* score) const override {
    if (index_.empty() && !s_->members.empty()) {
      index_.reserve(s_->members.size());
      for (const auto& [m, s] : s_->members) index_.emplace(m, s);
    }
    auto it = index_.find(member);
    if (it == index_.end()) return false;
    *score = it->second;
    return true;
  }

 private:
  const ZSnapshot* s_;
  mutable std::unordered_map<std::string_view, double> index_;  // built on the first probe
};

void AggregateInto(double* target, double val, Aggregate a) {
  switch (a) {
    case Aggregate::kSum:
      *target += val;
      if (std::isnan(*target)) *target = 0.0;
      break;
    case Aggregate::kMin:
      *target = val < *target ? val : *target;
      break;
    case Aggregate::kMax:
      *target = val > *target ? val : *target;
      break;
  }
}

// Computes the call over its inputs (srcs[i] for keys[i]; null: missing key). The result
// (views into the inputs) is left in *out, sorted by (score, member), except for
// ZINTERCARD, whose count is left in *cardinality.
void Compute(const ZAlgebraCall& call, const std::vector<const ZSource*>& srcs,
             std::vector<ZMember>* out, uint64_t* cardinality) {
  struct Input {
    const ZSource* src;
    double weight;
    size_t size;
  };
  std::vector<Input> in;
  in.reserve(srcs.size());
  for (size_t i = 0; i < srcs.size(); i++) {
    in.push_back(Input{srcs[i], call.weights[i], srcs[i] == nullptr ? 0 : srcs[i]->Size()});
  }
  *cardinality = 0;
  if (call.op == ZAlgebraCall::Op::kDiff) {
    if (in[0].src == nullptr) return;
    in[0].src->ForEach([&](std::string_view m, double s) {
      double unused;
      for (size_t j = 1; j < in.size(); j++) {
        if (in[j].src != nullptr && in[j].src->Find(m, &unused)) return;
      }
      out->push_back(ZMember{m, s});
    });
  } else {
    std::stable_sort(in.begin(), in.end(),
                     [](const Input& a, const Input& b) { return a.size < b.size; });
    if (call.op == ZAlgebraCall::Op::kInter) {
      if (in[0].size == 0) return;
      bool done = false;
      in[0].src->ForEach([&](std::string_view m, double s) {
        if (done) return;
        double score = in[0].weight * s;
        if (std::isnan(score)) score = 0;
        for (size_t j = 1; j < in.size(); j++) {
          double value = 0;
          if (!in[j].src->Find(m, &value)) return;
          AggregateInto(&score, value * in[j].weight, call.aggregate);
        }
        if (call.card_only) {
          (*cardinality)++;
          if (call.limit > 0 && *cardinality >= static_cast<uint64_t>(call.limit)) done = true;
          return;
        }
        out->push_back(ZMember{m, score});
      });
    } else {
      std::unordered_map<std::string_view, double> acc;
      std::vector<std::string_view> order;
      for (const Input& i : in) {
        if (i.size == 0) continue;
        i.src->ForEach([&](std::string_view m, double s) {
          double score = i.weight * s;
          if (std::isnan(score)) score = 0;
          auto [it, inserted] = acc.emplace(m, score);
          if (inserted) {
            order.push_back(m);
          } else {
            AggregateInto(&it->second, score, call.aggregate);
          }
        });
      }
      out->reserve(order.size());
      for (std::string_view m : order) out->push_back(ZMember{m, acc[m]});
    }
  }
  std::sort(out->begin(), out->end(), ZLess);
}

void ReplyResult(const ZAlgebraCall& call, ReplyBuilder& rb, const std::vector<ZMember>& result,
                 uint64_t cardinality) {
  if (call.card_only) {
    rb.Integer(static_cast<int64_t>(cardinality));
    return;
  }
  ZRangeReply out(rb, call.withscores);
  out.Begin(result.size());
  for (const ZMember& m : result) out.Add(m.member, m.score);
}

// Copies the result's members so that the destination can be written over an input.
std::vector<std::string> Own(std::vector<ZMember>* result) {
  std::vector<std::string> owned;
  owned.reserve(result->size());
  for (ZMember& m : *result) {
    owned.emplace_back(m.member);
    m.member = owned.back();
  }
  return owned;
}

void CmdZAlgebra(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  ZAlgebraCall call;
  if (!ParseCall(args, rb, &call)) return;
  std::vector<std::unique_ptr<ZSource>> holders;
  std::vector<const ZSource*> srcs;
  for (std::string_view key : call.keys) {
    Entry* e = ctx.ks.FindRead(ctx.db, key, ctx.now_ms);
    if (e == nullptr) {
      srcs.push_back(nullptr);
      continue;
    }
    if (e->Type() == ValueType::kZSet) {
      holders.push_back(std::make_unique<EntryZSource>(e));
    } else if (e->Type() == ValueType::kSet) {
      holders.push_back(std::make_unique<EntrySetZSource>(e));
    } else {
      rb.Error(errors::kWrongType);
      return;
    }
    srcs.push_back(holders.back().get());
  }
  if (!call.option_error.empty()) {
    rb.Error(call.option_error);
    return;
  }
  std::vector<ZMember> result;
  uint64_t cardinality = 0;
  Compute(call, srcs, &result, &cardinality);
  if (!call.store) {
    ReplyResult(call, rb, result, cardinality);
    return;
  }
  std::vector<std::string> owned = Own(&result);
  holders.clear();
  StoreZSetAndNotify(ctx.ks, ctx.db, Lowercase(args[0]), call.dst, &result, ctx.now_ms);
  rb.Integer(static_cast<int64_t>(result.size()));
  if (!result.empty()) ctx.worker.SignalKeyReady(ctx.db, call.dst);
}

Fiber ZAlgebraFiber(Client* c, std::shared_ptr<OwnedArgs> owned) {
  CmdArgs args = owned->span();
  std::string out;
  ReplyBuilder rb(&out, c->resp);
  ZAlgebraCall call;
  if (!ParseCall(args, rb, &call)) {
    c->FinishFiber(std::move(out));
    co_return;
  }
  uint32_t db = c->db;
  uint32_t n = c->worker().engine().shard_count();
  size_t nsrc = call.keys.size();
  std::vector<std::string_view> keys = call.keys;
  if (call.store) keys.push_back(call.dst);
  ShardGroups g = GroupByShard(keys, db, n, false, c->txn_owner);
  uint32_t dst_shard = call.store ? ShardOfKey(call.dst, n) : 0;
  if (call.store) g.locks[g.IndexOf(dst_shard)].exclusive = true;
  if (!co_await TryLockAll(g)) {
    for (size_t i = 0; i < g.shards.size(); i++) co_await LockOn(g.shards[i], &g.locks[i]);
  }

  // Read every input (a read-only call also releases its locks in the same step), and
  // whether the destination is there.
  std::vector<ZSnapshot> snaps(nsrc);
  bool dst_exists = false;
  co_await RunOn(g.shards, [&](Worker& w) {
    size_t gi = g.IndexOf(w.index());
    for (size_t p : g.positions[gi]) {
      if (p < nsrc) snaps[p] = ZSnapshot::Read(w.keyspace(), db, keys[p], w.now_ms());
    }
    if (!call.store) w.locks().Release(g.locks[gi].keys, false);
    if (call.store && w.index() == dst_shard)
      dst_exists = w.keyspace().FindMeta(db, call.dst, w.now_ms()) != nullptr;
  });

  bool wrong_type = false;
  for (const ZSnapshot& s : snaps) wrong_type |= s.state == ZSnapshot::State::kWrongType;
  bool ok = !wrong_type && call.option_error.empty();
  std::vector<ZMember> result;
  std::vector<std::string> owned_members;
  if (wrong_type) {
    rb.Error(errors::kWrongType);
  } else if (!ok) {
    rb.Error(call.option_error);
  } else {
    std::vector<SnapshotZSource> holders;
    holders.reserve(nsrc);
    std::vector<const ZSource*> srcs(nsrc, nullptr);
    for (size_t i = 0; i < nsrc; i++) {
      if (snaps[i].state != ZSnapshot::State::kPresent) continue;
      holders.emplace_back(&snaps[i]);
      srcs[i] = &holders.back();
    }
    uint64_t cardinality = 0;
    Compute(call, srcs, &result, &cardinality);
    if (call.store) {
      owned_members = Own(&result);
      rb.Integer(static_cast<int64_t>(result.size()));
    } else {
      ReplyResult(call, rb, result, cardinality);
    }
  }

  if (call.store) {
    // An error, or an empty result with no destination to delete, changes nothing.
    if (!ok || (result.empty() && !dst_exists)) FiberChangesNothing();
    // The destination is written and every lock released in one step per shard: a
    // reader of the destination waits for its lock until the new value is there.
    co_await RunOn(g.shards, [&](Worker& w) {
      size_t gi = g.IndexOf(w.index());
      if (w.index() == dst_shard && ok) {
        StoreZSetAndNotify(w.keyspace(), db, Lowercase(args[0]), call.dst, &result, w.now_ms());
        if (!result.empty()) w.SignalKeyReady(db, call.dst);
      }
      w.locks().Release(g.locks[gi].keys, g.locks[gi].exclusive);
    });
  }
  c->FinishFiber(std::move(out));
}

}  // namespace

void RegisterZSetAlgebraCommands(CommandRegistry& r) {
  constexpr uint32_t kR = kCmdReadOnly | kCmdSortedSet;
  constexpr uint32_t kStore = kCmdWrite | kCmdDenyOom | kCmdSortedSet;
  auto add = [&](const char* name, int arity, uint32_t flags, int first, const char* since,
                 const char* summary) {
    // The keys follow numkeys; routing takes every argument from the first key on as a
    // key (options too), which only ever sends a call to the fiber, where the arguments
    // are parsed properly.
    CommandSpec s{name, arity, flags, first, -1, 1};
    s.shard_fn = CmdZAlgebra;
    s.fiber_fn = ZAlgebraFiber;
    s.group = "sorted-set";
    s.since = since;
    s.summary = summary;
    r.Add(std::move(s));
  };
  add("zunion", -3, kR, 2, "6.2.0", "Returns the union of multiple sorted sets.");
  add("zinter", -3, kR, 2, "6.2.0", "Returns the intersect of multiple sorted sets.");
  add("zdiff", -3, kR, 2, "6.2.0", "Returns the difference between multiple sorted sets.");
  add("zunionstore", -4, kStore, 1, "2.0.0", "Stores the union of multiple sorted sets in a key.");
  add("zinterstore", -4, kStore, 1, "2.0.0",
      "Stores the intersect of multiple sorted sets in a key.");
  add("zdiffstore", -4, kStore, 1, "6.2.0",
      "Stores the difference of multiple sorted sets in a key.");
  add("zintercard", -3, kR, 2, "7.0.0",
      "Returns the number of members of the intersect of multiple sorted sets.");
}

}  // namespace strata
