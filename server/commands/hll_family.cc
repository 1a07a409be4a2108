// HyperLogLog commands: PFADD, PFCOUNT, PFMERGE, PFSELFTEST, PFDEBUG (Redis 7.0's replies and
// errors; the format and the arithmetic are core/hyperloglog.h).
//
// An HLL is a string in Redis's bytes. A dense one (12304 bytes, always the same size)
// is changed in place (Keyspace::StringForWrite), a sparse one (at most
// hll-sparse-max-bytes) is rewritten. PFCOUNT of one key fills the cached count in the
// value's header, as Redis does, so it looks the key up for writing. PFCOUNT and PFMERGE
// over keys of several shards run as fibers that lock their keys: the values are read
// under the locks, merged on the client's worker, and PFMERGE writes the destination
// before any lock is released.
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/hyperloglog.h"
#include "core/string_util.h"
#include "server/base/config.h"
#include "server/commands/errors.h"
#include "server/commands/families.h"
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

constexpr std::string_view kNotHll = "WRONGTYPE Key is not a valid HyperLogLog string value.";
constexpr std::string_view kCorrupt = "INVALIDOBJ Corrupted HLL object detected";

size_t SparseMax(Worker& w) {
  return static_cast<size_t>(w.engine().config().hll_sparse_max_bytes().load());
}

// An HLL read for merging: its bytes, or why it cannot be used. `view` is the value in
// its entry (valid until the shard's next write: the command's own step) or, with
// `copy` (a fiber, which merges after the step), in `bytes`.
struct HllRead {
  enum class State : uint8_t { kMissing, kOk, kWrongType, kNotHll } state = State::kMissing;
  std::string bytes;
  std::string_view view;
  void Read(Keyspace& ks, uint32_t db, std::string_view key, int64_t now_ms, bool copy) {
    Entry* e = ks.FindRead(db, key, now_ms);
    if (e == nullptr) return;
    if (e->Type() != ValueType::kString) {
      state = State::kWrongType;
      return;
    }
    if (copy) {
      bytes = e->ValueString();
      view = bytes;
    } else {
      view = e->Value(&bytes);
    }
    state = hll::LooksValid(view) ? State::kOk : State::kNotHll;
  }
};

// Folds the reads into max[] (in order, stopping at the first problem, as Redis does).
// False after replying the error.
bool MergeReads(const std::vector<HllRead>& reads, uint8_t* max, bool* use_dense,
                ReplyBuilder& rb) {
  for (const HllRead& r : reads) {
    switch (r.state) {
      case HllRead::State::kMissing:
        continue;
      case HllRead::State::kWrongType:
        rb.Error(errors::kWrongType);
        return false;
      case HllRead::State::kNotHll:
        rb.Error(kNotHll);
        return false;
      case HllRead::State::kOk:
        break;
    }
    if (hll::EncodingOf(r.view) == hll::kDense) *use_dense = true;
    if (!hll::MergeInto(r.view, max)) {
      rb.Error(kCorrupt);
      return false;
    }
  }
  return true;
}

// Writes value `v` for key, whose entry (found for writing) is e: in place when it is
// no shorter (a string that grows keeps room, Keyspace::StringForWrite, so a sparse value
// that gains a few bytes per PFADD is mostly written where it is), else as a new value
// keeping its expiry.
void StoreHll(Keyspace& ks, uint32_t db, std::string_view key, Entry* e, const std::string& v) {
  if (e != nullptr && e->ValueLen() <= v.size()) {
    e = ks.StringForWrite(db, key, e, v.size());
    std::memcpy(e->MutableValue(), v.data(), v.size());
    return;
  }
  ks.SetString(db, key, v, e != nullptr ? e->ExpireMs() : Entry::kNoExpire);
}

// PFMERGE's write on the destination's shard: max[] into it (created when missing), in
// register order, dense when any input was. False when the destination is corrupt.
bool MergeStore(Keyspace& ks, uint32_t db, std::string_view dst, const uint8_t* max, bool use_dense,
                size_t sparse_max, int64_t now_ms) {
  Entry* e = ks.Find(db, dst, now_ms);
  std::string v = e != nullptr ? e->ValueString() : hll::Empty();
  if (use_dense && hll::EncodingOf(v) == hll::kSparse && !hll::ToDense(&v)) return false;
  for (int j = 0; j < hll::kRegisters; j++) {
    if (max[j] == 0) continue;
    if (hll::EncodingOf(v) == hll::kDense) {
      hll::DenseRaise(v.data() + hll::kHeaderSize, j, max[j]);
    } else if (hll::SparseRaise(&v, j, max[j], sparse_max) < 0) {
      return false;
    }
  }
  hll::InvalidateCache(v.data());
  StoreHll(ks, db, dst, e, v);
  NotifyKeyspaceEvent(kNotifyString, "pfadd", dst, db);
  return true;
}

void CmdPfAdd(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  std::string_view key = args[1];
  Entry* e = ctx.ks.Find(ctx.db, key, ctx.now_ms);
  if (e != nullptr && e->Type() != ValueType::kString) {
    ctx.ks.NoChange(ctx.db, key);
    rb.Error(errors::kWrongType);
    return;
  }
  int updated = 0;
  std::string scratch;
  if (e == nullptr) {
    e = ctx.ks.SetString(ctx.db, key, hll::Empty(), Entry::kNoExpire);
    updated++;
  } else if (!hll::LooksValid(e->Value(&scratch))) {
    ctx.ks.NoChange(ctx.db, key);
    rb.Error(kNotHll);
    return;
  }
  size_t len = e->ValueLen();
  if (e->ValueRange(4, 5, &scratch)[0] == static_cast<char>(hll::kDense)) {
    // Dense: every register in place.
    e = ctx.ks.StringForWrite(ctx.db, key, e, len);
    char* v = e->MutableValue();
    for (size_t i = 2; i < args.size(); i++) {
      int index, value;
      hll::Hash(args[i], &index, &value);
      if (hll::DenseRaise(v + hll::kHeaderSize, index, value)) updated++;
    }
    if (updated > 0) hll::InvalidateCache(v);
  } else {
    std::string v = e->ValueString();
    size_t sparse_max = SparseMax(ctx.worker);
    for (size_t i = 2; i < args.size(); i++) {
      int index, value;
      hll::Hash(args[i], &index, &value);
      int r = hll::EncodingOf(v) == hll::kDense
                  ? hll::DenseRaise(v.data() + hll::kHeaderSize, index, value)
                  : hll::SparseRaise(&v, index, value, sparse_max);
      if (r < 0) {
        rb.Error(kCorrupt);
        return;
      }
      updated += r;
    }
    if (updated > 0) {
      hll::InvalidateCache(v.data());
      StoreHll(ctx.ks, ctx.db, key, e, v);
    }
  }
  if (updated > 0) {
    NotifyKeyspaceEvent(kNotifyString, "pfadd", key, ctx.db);
  } else {
    ctx.ks.NoChange(ctx.db, key);
  }
  rb.Integer(updated > 0 ? 1 : 0);
}

void CmdPfCount(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  if (args.size() > 2) {
    // Several keys: their union, without touching any cache.
    std::vector<HllRead> reads(args.size() - 1);  // sized once: views point into it
    for (size_t i = 1; i < args.size(); i++)
      reads[i - 1].Read(ctx.ks, ctx.db, args[i], ctx.now_ms, false);
    std::vector<uint8_t> max(hll::kRegisters, 0);
    bool dense = false;
    if (!MergeReads(reads, max.data(), &dense, rb)) return;
    rb.Integer(static_cast<int64_t>(hll::CountRegisters(max.data())));
    return;
  }
  std::string_view key = args[1];
  Entry* e = ctx.ks.Find(ctx.db, key, ctx.now_ms);
  if (e == nullptr) {
    rb.Integer(0);
    return;
  }
  if (e->Type() != ValueType::kString) {
    ctx.ks.NoChange(ctx.db, key);
    rb.Error(errors::kWrongType);
    return;
  }
  std::string scratch;
  std::string_view v = e->Value(&scratch);
  if (!hll::LooksValid(v)) {
    ctx.ks.NoChange(ctx.db, key);
    rb.Error(kNotHll);
    return;
  }
  uint64_t n = 0;
  if (hll::CachedCount(v, &n)) {
    ctx.ks.NoChange(ctx.db, key);
    rb.Integer(static_cast<int64_t>(n));
    return;
  }
  if (!hll::Count(v, &n)) {
    ctx.ks.NoChange(ctx.db, key);
    rb.Error(kCorrupt);
    return;
  }
  // The count goes into the header (Redis does the same, and counts it as a change).
  e = ctx.ks.StringForWrite(ctx.db, key, e, e->ValueLen());
  hll::SetCachedCount(e->MutableValue(), n);
  rb.Integer(static_cast<int64_t>(n));
}

void CmdPfMerge(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  // Views: every read is merged before the destination is written.
  std::vector<HllRead> reads(args.size() - 1);
  for (size_t i = 1; i < args.size(); i++)
    reads[i - 1].Read(ctx.ks, ctx.db, args[i], ctx.now_ms, false);
  std::vector<uint8_t> max(hll::kRegisters, 0);
  bool dense = false;
  if (!MergeReads(reads, max.data(), &dense, rb)) return;
  if (!MergeStore(ctx.ks, ctx.db, args[1], max.data(), dense, SparseMax(ctx.worker), ctx.now_ms)) {
    rb.Error(kCorrupt);
    return;
  }
  rb.Ok();
}

// PFCOUNT of several keys and PFMERGE, over several shards.
Fiber HllFiber(Client* c, std::shared_ptr<OwnedArgs> owned) {
  CmdArgs args = owned->span();
  std::string out;
  ReplyBuilder rb(&out, c->resp);
  bool merge = EqualsIgnoreCase(args[0], "pfmerge");
  uint32_t db = c->db;
  uint32_t n = c->worker().engine().shard_count();
  std::vector<std::string_view> keys(args.begin() + 1, args.end());
  ShardGroups g = GroupByShard(keys, db, n, false, c->txn_owner);
  uint32_t dst_shard = ShardOfKey(keys[0], n);
  if (merge) g.locks[g.IndexOf(dst_shard)].exclusive = true;
  if (!co_await TryLockAll(g)) {
    for (size_t i = 0; i < g.shards.size(); i++) co_await LockOn(g.shards[i], &g.locks[i]);
  }
  std::vector<HllRead> reads(keys.size());
  co_await RunOn(g.shards, [&](Worker& w) {
    size_t gi = g.IndexOf(w.index());
    for (size_t p : g.positions[gi]) reads[p].Read(w.keyspace(), db, keys[p], w.now_ms(), true);
    if (!merge) w.locks().Release(g.locks[gi].keys, false);
  });
  std::vector<uint8_t> max(hll::kRegisters, 0);
  bool dense = false;
  bool ok = MergeReads(reads, max.data(), &dense, rb);
  if (!merge) {
    if (ok) rb.Integer(static_cast<int64_t>(hll::CountRegisters(max.data())));
    c->FinishFiber(std::move(out));
    co_return;
  }
  bool stored = true;
  if (!ok) FiberChangesNothing();
  co_await RunOn(g.shards, [&](Worker& w) {
    size_t gi = g.IndexOf(w.index());
    if (ok && w.index() == dst_shard)
      stored = MergeStore(w.keyspace(), db, keys[0], max.data(), dense, SparseMax(w), w.now_ms());
    w.locks().Release(g.locks[gi].keys, g.locks[gi].exclusive);
  });
  if (ok) {
    if (stored) {
      rb.Ok();
    } else {
      rb.Error(kCorrupt);
    }
  }
  c->FinishFiber(std::move(out));
}

// PFDEBUG GETREG|DECODE|ENCODING|TODENSE key: Redis's debugging view of one HLL.
// GETREG and TODENSE leave the value dense, as in Redis.
void CmdPfDebug(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  std::string sub = Lowercase(args[1]);
  std::string_view key = args[2];
  Entry* e = ctx.ks.Find(ctx.db, key, ctx.now_ms);
  if (e == nullptr) {
    rb.Error("ERR The specified key does not exist");
    return;
  }
  if (e->Type() != ValueType::kString) {
    ctx.ks.NoChange(ctx.db, key);
    rb.Error(errors::kWrongType);
    return;
  }
  std::string v = e->ValueString();
  if (!hll::LooksValid(v)) {
    ctx.ks.NoChange(ctx.db, key);
    rb.Error(kNotHll);
    return;
  }
  bool sparse = hll::EncodingOf(v) == hll::kSparse;
  auto make_dense = [&]() {
    if (!sparse) return true;
    if (!hll::ToDense(&v)) {
      rb.Error(kCorrupt);
      return false;
    }
    StoreHll(ctx.ks, ctx.db, key, e, v);
    return true;
  };
  if (sub == "getreg") {
    if (!make_dense()) return;
    std::vector<uint8_t> regs(hll::kRegisters, 0);
    hll::MergeInto(v, regs.data());
    rb.Array(regs.size());
    for (uint8_t r : regs) rb.Integer(r);
  } else if (sub == "decode") {
    ctx.ks.NoChange(ctx.db, key);
    std::string text;
    if (!sparse) {
      rb.Error("ERR HLL encoding is not sparse");
    } else if (!hll::DescribeSparse(v, &text)) {
      rb.Error(kCorrupt);
    } else {
      rb.Simple(text);
    }
  } else if (sub == "encoding") {
    ctx.ks.NoChange(ctx.db, key);
    rb.Simple(sparse ? "sparse" : "dense");
  } else if (sub == "todense") {
    if (!make_dense()) return;
    rb.Integer(sparse ? 1 : 0);
  } else {
    ctx.ks.NoChange(ctx.db, key);
    rb.Error("ERR Unknown PFDEBUG subcommand '" + std::string(args[1]) + "'");
  }
}

// PFSELFTEST: the register packing, sparse against dense, and the error of the estimate.
std::string SelfTest() {
  std::mt19937_64 rng(12345);
  // Every register of a dense value keeps what is written to it.
  std::string d(hll::kDenseSize, '\0');
  std::vector<uint8_t> want(hll::kRegisters);
  for (int round = 0; round < 2; round++) {
    for (int i = 0; i < hll::kRegisters; i++) {
      want[i] = static_cast<uint8_t>(rng() % 64);
    }
    std::memcpy(d.data(), "HYLL", 4);
    std::memset(d.data() + hll::kHeaderSize, 0, hll::kDenseSize - hll::kHeaderSize);
    for (int i = 0; i < hll::kRegisters; i++) {
      if (want[i] > 0) hll::DenseRaise(d.data() + hll::kHeaderSize, i, want[i]);
    }
    std::vector<uint8_t> got(hll::kRegisters, 0);
    if (!hll::MergeInto(d, got.data()) || got != want) return "TESTFAILED Register error";
  }
  // The same elements, sparse and dense, give the same registers; the estimate stays
  // within five standard errors at every step.
  std::string sparse = hll::Empty();
  std::string dense = hll::Empty();
  hll::ToDense(&dense);
  double error = 1.04 / std::sqrt(static_cast<double>(hll::kRegisters));
  uint64_t checkpoint = 10;
  for (uint64_t j = 1; j <= 100000; j++) {
    std::string ele = std::to_string(rng());
    int index, value;
    hll::Hash(ele, &index, &value);
    if (hll::EncodingOf(sparse) == hll::kDense) {
      hll::DenseRaise(sparse.data() + hll::kHeaderSize, index, value);
    } else if (hll::SparseRaise(&sparse, index, value, 3000) < 0) {
      return "TESTFAILED sparse representation corrupted";
    }
    hll::DenseRaise(dense.data() + hll::kHeaderSize, index, value);
    if (j == checkpoint) {
      uint64_t a = 0, b = 0;
      if (!hll::Count(sparse, &a) || !hll::Count(dense, &b) || a != b)
        return "TESTFAILED sparse and dense counts differ";
      double rel = std::abs(static_cast<double>(b) - static_cast<double>(j)) / j;
      if (rel > 5 * error) return "TESTFAILED too big error. card:" + std::to_string(j);
      checkpoint *= 10;
    }
  }
  return "";
}

void CmdPfSelfTest(Client&, CmdArgs, ReplyBuilder& rb) {
  std::string failure = SelfTest();
  if (failure.empty()) {
    rb.Ok();
  } else {
    rb.Error(failure);
  }
}

}  // namespace

void RegisterHllFamily(CommandRegistry& r) {
  constexpr uint32_t kW = kCmdWrite | kCmdDenyOom | kCmdHyperLogLog;
  auto add = [&](const char* name, int arity, uint32_t flags, int first, int last, ShardFn fn,
                 FiberFn fiber, const char* since, const char* summary) {
    CommandSpec s{name, arity, flags, first, last, 1};
    s.shard_fn = fn;
    s.fiber_fn = fiber;
    s.group = "hyperloglog";
    s.since = since;
    s.summary = summary;
    r.Add(std::move(s));
  };
  add("pfadd", -2, kW | kCmdFast, 1, 1, CmdPfAdd, nullptr, "2.8.9",
      "Adds elements to a HyperLogLog key. Creates the key if it doesn't exist.");
  add("pfcount", -2, kCmdReadOnly | kCmdMayReplicate | kCmdHyperLogLog, 1, -1, CmdPfCount, HllFiber,
      "2.8.9",
      "Returns the approximated cardinality of the set(s) observed by the HyperLogLog key(s).");
  add("pfmerge", -2, kW, 1, -1, CmdPfMerge, HllFiber, "2.8.9",
      "Merges one or more HyperLogLog values into a single key.");
  // PFDEBUG's key is its third argument.
  add("pfdebug", 3, kCmdWrite | kCmdDenyOom | kCmdAdmin, 2, 2, CmdPfDebug, nullptr, "2.8.9",
      "Internal commands for debugging HyperLogLog values.");
  CommandSpec st{"pfselftest", 1, kCmdAdmin, 0, 0, 0};
  st.conn_fn = CmdPfSelfTest;
  st.group = "hyperloglog";
  st.since = "2.8.9";
  st.summary = "An internal command for testing HyperLogLog values.";
  r.Add(std::move(st));
}

}  // namespace strata
