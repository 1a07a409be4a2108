// LCS key1 key2 [LEN] [IDX] [MINMATCHLEN n] [WITHMATCHLEN]: the longest common
// subsequence of two strings, with Redis 7.0's replies, errors and match order.
//
// Cost: the classic table of (len1 + 1) x (len2 + 1) 32-bit lengths, O(len1 * len2) time
// and memory, as in Redis; a table past proto-max-bulk-len bytes is refused (Redis's
// bound and error), which bounds both the memory and the time of one call. LEN alone
// keeps two rows only. Keys on two shards: a fiber reads both under their locks, then computes on
// the client's worker.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "core/string_util.h"
#include "server/base/config.h"
#include "server/commands/errors.h"
#include "server/commands/families.h"
#include "server/commands/lookup.h"
#include "server/engine/client.h"
#include "server/engine/command.h"
#include "server/engine/engine.h"
#include "server/engine/hops.h"
#include "server/engine/shard_groups.h"
#include "server/engine/try_lock_all.h"
#include "server/engine/worker.h"

namespace strata {
namespace {

struct LcsOptions {
  bool len = false, idx = false, withmatchlen = false;
  int64_t minmatchlen = 0;
  // False after replying the error.
  static bool Parse(CmdArgs args, ReplyBuilder& rb, LcsOptions* o) {
    for (size_t j = 3; j < args.size(); j++) {
      std::string_view a = args[j];
      bool more = j + 1 < args.size();
      if (EqualsIgnoreCase(a, "idx")) {
        o->idx = true;
      } else if (EqualsIgnoreCase(a, "len")) {
        o->len = true;
      } else if (EqualsIgnoreCase(a, "withmatchlen")) {
        o->withmatchlen = true;
      } else if (EqualsIgnoreCase(a, "minmatchlen") && more) {
        if (!ParseInt64(args[++j], &o->minmatchlen)) {
          rb.Error(errors::kNotInteger);
          return false;
        }
        if (o->minmatchlen < 0) o->minmatchlen = 0;
      } else {
        rb.Error(errors::kSyntax);
        return false;
      }
    }
    if (o->idx && o->len) {
      rb.Error("ERR If you want both the length and indexes, please just use IDX.");
      return false;
    }
    return true;
  }
};

void Compute(std::string_view a, std::string_view b, const LcsOptions& o, uint64_t max_bytes,
             ReplyBuilder& rb) {
  size_t alen = a.size(), blen = b.size();
  // The bound holds for LEN too, though it keeps two rows: it is what bounds the time.
  unsigned __int128 cells = static_cast<unsigned __int128>(alen + 1) * (blen + 1);
  if (cells * sizeof(uint32_t) > max_bytes) {
    rb.Error("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len");
    return;
  }
  if (o.len && !o.idx) {
    // The length only: two rows.
    std::vector<uint32_t> prev(alen + 1, 0), cur(alen + 1, 0);
    for (size_t j = 1; j <= blen; j++) {
      for (size_t i = 1; i <= alen; i++) {
        cur[i] = a[i - 1] == b[j - 1] ? prev[i - 1] + 1 : std::max(prev[i], cur[i - 1]);
      }
      std::swap(prev, cur);
    }
    rb.Integer(static_cast<int64_t>(prev[alen]));
    return;
  }
  std::vector<uint32_t> t(static_cast<size_t>(cells), 0);
  auto at = [&](size_t i, size_t j) -> uint32_t& { return t[j * (alen + 1) + i]; };
  for (size_t j = 1; j <= blen; j++) {
    for (size_t i = 1; i <= alen; i++) {
      at(i, j) = a[i - 1] == b[j - 1] ? at(i - 1, j - 1) + 1 : std::max(at(i - 1, j), at(i, j - 1));
    }
  }
  uint32_t total = at(alen, blen);
  std::string result(total, '\0');
  // Walk back from the ends, as Redis does: matching bytes extend the current range
  // towards the start; a step that skips a byte ends it. Ranges come out last first.
  struct Match {
    size_t a0, a1, b0, b1;
  };
  std::vector<Match> matches;
  size_t i = alen, j = blen, k = total;
  const size_t none = alen;
  size_t as = none, ae = 0, bs = 0, be = 0;
  while (i > 0 && j > 0) {
    bool emit = false;
    if (a[i - 1] == b[j - 1]) {
      result[k - 1] = a[i - 1];
      if (as == none) {
        as = ae = i - 1;
        bs = be = j - 1;
      } else if (as == i && bs == j) {
        as--;
        bs--;
      } else {
        emit = true;
      }
      if (as == 0 || bs == 0) emit = true;
      k--;
      i--;
      j--;
    } else {
      if (at(i - 1, j) > at(i, j - 1)) {
        i--;
      } else {
        j--;
      }
      if (as != none) emit = true;
    }
    if (emit) {
      size_t n = ae - as + 1;
      if (o.minmatchlen == 0 || n >= static_cast<size_t>(o.minmatchlen))
        matches.push_back({as, ae, bs, be});
      as = none;
    }
  }
  if (!o.idx) {
    rb.Bulk(result);
    return;
  }
  rb.Map(2);
  rb.Bulk("matches");
  rb.Array(matches.size());
  for (const Match& m : matches) {
    rb.Array(o.withmatchlen ? 3 : 2);
    rb.Array(2);
    rb.Integer(static_cast<int64_t>(m.a0));
    rb.Integer(static_cast<int64_t>(m.a1));
    rb.Array(2);
    rb.Integer(static_cast<int64_t>(m.b0));
    rb.Integer(static_cast<int64_t>(m.b1));
    if (o.withmatchlen) rb.Integer(static_cast<int64_t>(m.a1 - m.a0 + 1));
  }
  rb.Bulk("len");
  rb.Integer(total);
}

constexpr std::string_view kNotStrings = "ERR The specified keys must contain string values";

uint64_t MaxTable(Worker& w) {
  return static_cast<uint64_t>(w.engine().config().proto_max_bulk_len().load());
}

void CmdLcs(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  StringOperand a = StringOperand::Read(ctx.ks, ctx.db, args[1], ctx.now_ms);
  StringOperand b = StringOperand::Read(ctx.ks, ctx.db, args[2], ctx.now_ms);
  if (a.wrong_type || b.wrong_type) {
    rb.Error(kNotStrings);
    return;
  }
  LcsOptions o;
  if (!LcsOptions::Parse(args, rb, &o)) return;
  Compute(a.bytes, b.bytes, o, MaxTable(ctx.worker), rb);
}

Fiber LcsFiber(Client* c, std::shared_ptr<OwnedArgs> owned) {
  CmdArgs args = owned->span();
  std::string out;
  ReplyBuilder rb(&out, c->resp);
  uint32_t db = c->db;
  uint32_t n = c->worker().engine().shard_count();
  std::vector<std::string_view> keys = {args[1], args[2]};
  ShardGroups g = GroupByShard(keys, db, n, false, c->txn_owner);
  if (!co_await TryLockAll(g)) {
    for (size_t i = 0; i < g.shards.size(); i++) co_await LockOn(g.shards[i], &g.locks[i]);
  }
  StringOperand ops[2];
  co_await RunOn(g.shards, [&](Worker& w) {
    size_t gi = g.IndexOf(w.index());
    for (size_t p : g.positions[gi])
      ops[p] = StringOperand::Read(w.keyspace(), db, keys[p], w.now_ms());
    w.locks().Release(g.locks[gi].keys, false);
  });
  LcsOptions o;
  if (ops[0].wrong_type || ops[1].wrong_type) {
    rb.Error(kNotStrings);
  } else if (LcsOptions::Parse(args, rb, &o)) {
    Compute(ops[0].bytes, ops[1].bytes, o, MaxTable(c->worker()), rb);
  }
  c->FinishFiber(std::move(out));
}

}  // namespace

void RegisterLcsCommand(CommandRegistry& r) {
  CommandSpec s{"lcs", -3, kCmdReadOnly | kCmdString, 1, 2, 1};
  s.shard_fn = CmdLcs;
  s.fiber_fn = LcsFiber;
  s.group = "string";
  s.since = "7.0.0";
  s.summary = "Finds the longest common substring.";
  r.Add(std::move(s));
}

}  // namespace strata
