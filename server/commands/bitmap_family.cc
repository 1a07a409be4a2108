// Bitmap commands: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD, BITFIELD_RO
// (Redis 7.0's replies and errors; the bit arithmetic is core/bitmap.h).
//
// A bitmap is a string. Writes change the value in place (Keyspace::StringForWrite): a
// SETBIT inside the string costs O(1) whatever its size, and growing one gets room as
// Redis's strings do. Reads of a packed (7-bit ASCII) value decode only the bytes they
// look at (Entry::ValueRange). BITOP over keys of several shards runs as a fiber that
// locks its keys, as SUNIONSTORE does: it reads the sources, computes, and writes the
// destination while every lock is held, so it is atomic.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "core/bitmap.h"
#include "core/string_util.h"
#include "server/base/config.h"
#include "server/commands/errors.h"
#include "server/commands/families.h"
#include "server/commands/lookup.h"
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

constexpr std::string_view kBadOffset = "ERR bit offset is not an integer or out of range";
constexpr std::string_view kBadBit = "ERR bit is not an integer or out of range";
constexpr std::string_view kRoOnlyGet = "ERR BITFIELD_RO only supports the GET subcommand";

uint64_t ProtoMaxBulkLen(const ShardCtx& ctx) {
  return static_cast<uint64_t>(ctx.worker.engine().config().proto_max_bulk_len().load());
}

// A bit offset (BITFIELD also takes "#N": N fields of `bits` bits). False (with Redis's
// error) when it is not an integer, negative, or past proto-max-bulk-len bytes.
bool ParseBitOffset(std::string_view s, bool hash_ok, int bits, uint64_t max_bytes, uint64_t* out,
                    ReplyBuilder& rb) {
  bool hash = hash_ok && !s.empty() && s[0] == '#';
  int64_t v = 0;
  if (!ParseInt64(hash ? s.substr(1) : s, &v)) {
    rb.Error(kBadOffset);
    return false;
  }
  if (hash) {
    // (Redis multiplies without an overflow check; a product past the range is refused.)
    if (v < 0 || v > INT64_MAX / bits) {
      rb.Error(kBadOffset);
      return false;
    }
    v *= bits;
  }
  if (v < 0 || static_cast<uint64_t>(v >> 3) >= max_bytes) {
    rb.Error(kBadOffset);
    return false;
  }
  *out = static_cast<uint64_t>(v);
  return true;
}

// Looks key up for reading: false after replying WRONGTYPE; *e null when absent.
bool ReadBitmap(ShardCtx& ctx, std::string_view key, ReplyBuilder& rb, Entry** e) {
  *e = ctx.ks.FindRead(ctx.db, key, ctx.now_ms);
  if (*e != nullptr && (*e)->Type() != ValueType::kString) {
    rb.Error(errors::kWrongType);
    return false;
  }
  if (*e == nullptr) NotifyKeyspaceEvent(kNotifyKeyMiss, "keymiss", key, ctx.db);
  return true;
}

// Looks key up for writing and makes its value at least `len` bytes, raw, for changing
// in place. Null after replying WRONGTYPE.
Entry* WritableBitmap(ShardCtx& ctx, std::string_view key, size_t len, ReplyBuilder& rb) {
  Entry* e = ctx.ks.Find(ctx.db, key, ctx.now_ms);
  if (e != nullptr && e->Type() != ValueType::kString) {
    ctx.ks.NoChange(ctx.db, key);
    rb.Error(errors::kWrongType);
    return nullptr;
  }
  return ctx.ks.StringForWrite(ctx.db, key, e, len);
}

void CmdSetBit(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  uint64_t offset = 0;
  if (!ParseBitOffset(args[2], false, 1, ProtoMaxBulkLen(ctx), &offset, rb)) return;
  if (args[3] != "0" && args[3] != "1") {
    rb.Error(kBadBit);
    return;
  }
  bool on = args[3] == "1";
  Entry* e = WritableBitmap(ctx, args[1], bitmap::ByteOf(offset) + 1, rb);
  if (e == nullptr) return;
  char* byte = e->MutableValue() + bitmap::ByteOf(offset);
  uint8_t cur = static_cast<uint8_t>(*byte);
  uint8_t mask = bitmap::MaskOf(offset);
  *byte = static_cast<char>(on ? (cur | mask) : (cur & ~mask));
  NotifyKeyspaceEvent(kNotifyString, "setbit", args[1], ctx.db);
  rb.Integer((cur & mask) != 0 ? 1 : 0);
}

void CmdGetBit(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  uint64_t offset = 0;
  if (!ParseBitOffset(args[2], false, 1, ProtoMaxBulkLen(ctx), &offset, rb)) return;
  Entry* e;
  if (!ReadBitmap(ctx, args[1], rb, &e)) return;
  uint64_t b = bitmap::ByteOf(offset);
  if (e == nullptr || b >= e->ValueLen()) {
    rb.Integer(0);
    return;
  }
  std::string scratch;
  std::string_view byte = e->ValueRange(b, b + 1, &scratch);
  rb.Integer((static_cast<uint8_t>(byte[0]) & bitmap::MaskOf(offset)) != 0 ? 1 : 0);
}

// BITCOUNT and BITPOS's range: [start end] in bytes (or bits with BIT), negative from
// the end, clamped as Redis does, then as bits first..last. False when empty.
// BITCOUNT (not BITPOS) first answers 0 for a range whose ends are both negative and
// reversed (`reversed_is_empty`).
bool BitRange(int64_t start, int64_t end, bool in_bits, uint64_t len_bytes, bool reversed_is_empty,
              uint64_t* first, uint64_t* last) {
  int64_t total = static_cast<int64_t>(in_bits ? len_bytes * 8 : len_bytes);
  if (reversed_is_empty && start < 0 && end < 0 && start > end) return false;
  if (start < 0) start += total;
  if (end < 0) end += total;
  if (start < 0) start = 0;
  if (end < 0) end = 0;
  if (end >= total) end = total - 1;
  if (start > end) return false;
  *first = in_bits ? static_cast<uint64_t>(start) : static_cast<uint64_t>(start) * 8;
  *last = in_bits ? static_cast<uint64_t>(end) : static_cast<uint64_t>(end) * 8 + 7;
  return true;
}

// BYTE or BIT; false after replying a syntax error.
bool ParseUnit(std::string_view s, bool* in_bits, ReplyBuilder& rb) {
  if (EqualsIgnoreCase(s, "bit")) {
    *in_bits = true;
  } else if (EqualsIgnoreCase(s, "byte")) {
    *in_bits = false;
  } else {
    rb.Error(errors::kSyntax);
    return false;
  }
  return true;
}

void CmdBitCount(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  // Redis 7.0 looks the key up first: a missing key counts 0 whatever the arguments.
  Entry* e;
  if (!ReadBitmap(ctx, args[1], rb, &e)) return;
  if (e == nullptr) {
    rb.Integer(0);
    return;
  }
  uint64_t len = e->ValueLen();
  uint64_t first = 0, last = 0;
  bool any = len > 0;
  if (args.size() == 4 || args.size() == 5) {
    int64_t start = 0, end = 0;
    if (!ParseInt64(args[2], &start) || !ParseInt64(args[3], &end)) {
      rb.Error(errors::kNotInteger);
      return;
    }
    bool in_bits = false;
    if (args.size() == 5 && !ParseUnit(args[4], &in_bits, rb)) return;
    any = BitRange(start, end, in_bits, len, true, &first, &last);
  } else if (args.size() != 2) {
    rb.Error(errors::kSyntax);
    return;
  } else if (any) {
    last = len * 8 - 1;
  }
  if (!any) {
    rb.Integer(0);
    return;
  }
  std::string scratch;
  uint64_t fb = bitmap::ByteOf(first);
  std::string_view bytes = e->ValueRange(fb, bitmap::ByteOf(last) + 1, &scratch);
  rb.Integer(static_cast<int64_t>(bitmap::CountRange(bytes, first - fb * 8, last - fb * 8)));
}

void CmdBitPos(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  int64_t bit = 0;
  if (!ParseInt64(args[2], &bit)) {
    rb.Error(errors::kNotInteger);
    return;
  }
  if (bit != 0 && bit != 1) {
    rb.Error("ERR The bit argument must be 1 or 0.");
    return;
  }
  Entry* e;
  if (!ReadBitmap(ctx, args[1], rb, &e)) return;
  if (e == nullptr) {
    // An endless run of zeros.
    rb.Integer(bit == 1 ? -1 : 0);
    return;
  }
  uint64_t len = e->ValueLen();
  bool end_given = false;
  bool in_bits = false;
  int64_t start = 0, end = -1;
  if (args.size() >= 4 && args.size() <= 6) {
    if (!ParseInt64(args[3], &start)) {
      rb.Error(errors::kNotInteger);
      return;
    }
    if (args.size() == 6 && !ParseUnit(args[5], &in_bits, rb)) return;
    if (args.size() >= 5) {
      if (!ParseInt64(args[4], &end)) {
        rb.Error(errors::kNotInteger);
        return;
      }
      end_given = true;
    }
  } else if (args.size() != 3) {
    rb.Error(errors::kSyntax);
    return;
  }
  uint64_t first = 0, last = 0;
  if (!BitRange(start, end, in_bits, len, false, &first, &last)) {
    rb.Integer(-1);
    return;
  }
  std::string scratch;
  uint64_t fb = bitmap::ByteOf(first);
  std::string_view bytes = e->ValueRange(fb, bitmap::ByteOf(last) + 1, &scratch);
  int64_t pos = bitmap::FindRange(bytes, first - fb * 8, last - fb * 8, static_cast<int>(bit));
  if (pos >= 0) {
    rb.Integer(pos + static_cast<int64_t>(fb * 8));
  } else if (bit == 0 && !end_given) {
    // Looking for a clear bit with no end given: the string is taken as zero-padded, so
    // the answer is the first bit after the range.
    rb.Integer(static_cast<int64_t>(last + 1));
  } else {
    rb.Integer(-1);
  }
}

// ---- BITOP ----

struct BitOpCall {
  bitmap::Op op = bitmap::Op::kAnd;
  std::string_view dst;
  std::vector<std::string_view> srcs;
  static bool Parse(CmdArgs args, ReplyBuilder& rb, BitOpCall* out) {
    std::string_view op = args[1];
    if (EqualsIgnoreCase(op, "and")) {
      out->op = bitmap::Op::kAnd;
    } else if (EqualsIgnoreCase(op, "or")) {
      out->op = bitmap::Op::kOr;
    } else if (EqualsIgnoreCase(op, "xor")) {
      out->op = bitmap::Op::kXor;
    } else if (EqualsIgnoreCase(op, "not")) {
      out->op = bitmap::Op::kNot;
    } else {
      rb.Error(errors::kSyntax);
      return false;
    }
    if (out->op == bitmap::Op::kNot && args.size() != 4) {
      rb.Error("ERR BITOP NOT must be called with a single source key.");
      return false;
    }
    out->dst = args[2];
    out->srcs.assign(args.begin() + 3, args.end());
    return true;
  }
};

// Writes the result to dst on its shard: the combined bytes, or (all sources empty) no
// key at all. Returns the result's length.
size_t StoreBitOp(Keyspace& ks, uint32_t db, std::string_view dst, bitmap::Op op,
                  const std::vector<std::string_view>& srcs) {
  size_t n = 0;
  for (std::string_view s : srcs) n = std::max(n, s.size());
  if (n == 0) {
    if (ks.Delete(db, dst)) NotifyKeyspaceEvent(kNotifyGeneric, "del", dst, db);
    return 0;
  }
  std::string out(n, '\0');
  bitmap::Combine(op, srcs, n, out.data());
  ks.SetString(db, dst, out, Entry::kNoExpire);
  NotifyKeyspaceEvent(kNotifyString, "set", dst, db);
  return n;
}

void CmdBitOp(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  BitOpCall call;
  if (!BitOpCall::Parse(args, rb, &call)) return;
  std::vector<StringOperand> sources;
  sources.reserve(call.srcs.size());
  for (std::string_view k : call.srcs) {
    sources.push_back(StringOperand::Read(ctx.ks, ctx.db, k, ctx.now_ms));
    if (sources.back().wrong_type) {
      rb.Error(errors::kWrongType);
      return;
    }
  }
  std::vector<std::string_view> views;
  for (const StringOperand& s : sources) views.push_back(s.bytes);
  size_t n = StoreBitOp(ctx.ks, ctx.db, call.dst, call.op, views);
  rb.Integer(static_cast<int64_t>(n));
}

Fiber BitOpFiber(Client* c, std::shared_ptr<OwnedArgs> owned) {
  CmdArgs args = owned->span();
  std::string out;
  ReplyBuilder rb(&out, c->resp);
  BitOpCall call;
  if (!BitOpCall::Parse(args, rb, &call)) {
    c->FinishFiber(std::move(out));
    co_return;
  }
  uint32_t db = c->db;
  uint32_t n = c->worker().engine().shard_count();
  size_t nsrc = call.srcs.size();
  std::vector<std::string_view> keys = call.srcs;
  keys.push_back(call.dst);
  ShardGroups g = GroupByShard(keys, db, n, false, c->txn_owner);
  uint32_t dst_shard = ShardOfKey(call.dst, n);
  g.locks[g.IndexOf(dst_shard)].exclusive = true;
  if (!co_await TryLockAll(g)) {
    for (size_t i = 0; i < g.shards.size(); i++) co_await LockOn(g.shards[i], &g.locks[i]);
  }

  std::vector<StringOperand> sources(nsrc);
  bool dst_exists = false;
  co_await RunOn(g.shards, [&](Worker& w) {
    size_t gi = g.IndexOf(w.index());
    for (size_t p : g.positions[gi]) {
      if (p < nsrc) sources[p] = StringOperand::Read(w.keyspace(), db, keys[p], w.now_ms());
    }
    if (w.index() == dst_shard)
      dst_exists = w.keyspace().FindMeta(db, call.dst, w.now_ms()) != nullptr;
  });
  bool wrong_type = false;
  bool empty = true;  // so is the result: nothing to store, only a destination to delete
  for (const StringOperand& s : sources) {
    wrong_type |= s.wrong_type;
    empty = empty && s.bytes.empty();
  }
  std::vector<std::string_view> views;
  for (const StringOperand& s : sources) views.push_back(s.bytes);
  size_t result = 0;
  if (wrong_type || (empty && !dst_exists)) FiberChangesNothing();
  // The destination is written and every lock released in one step per shard.
  co_await RunOn(g.shards, [&](Worker& w) {
    size_t gi = g.IndexOf(w.index());
    if (w.index() == dst_shard && !wrong_type)
      result = StoreBitOp(w.keyspace(), db, call.dst, call.op, views);
    w.locks().Release(g.locks[gi].keys, g.locks[gi].exclusive);
  });
  if (wrong_type) {
    rb.Error(errors::kWrongType);
  } else {
    rb.Integer(static_cast<int64_t>(result));
  }
  c->FinishFiber(std::move(out));
}

// ---- BITFIELD ----

struct FieldOp {
  enum Kind : uint8_t { kGet, kSet, kIncrBy } kind = kGet;
  bool is_signed = false;
  int bits = 0;
  uint64_t offset = 0;
  int64_t value = 0;  // SET's value, INCRBY's increment
  bitmap::Overflow overflow = bitmap::Overflow::kWrap;
};

// "i1".."i64" or "u1".."u63".
bool ParseFieldType(std::string_view s, bool* is_signed, int* bits, ReplyBuilder& rb) {
  int64_t n = 0;
  bool ok = s.size() >= 2 && (s[0] == 'i' || s[0] == 'I' || s[0] == 'u' || s[0] == 'U') &&
            ParseInt64(s.substr(1), &n);
  if (ok) {
    *is_signed = s[0] == 'i' || s[0] == 'I';
    ok = n >= 1 && ((*is_signed && n <= 64) || (!*is_signed && n <= 63));
  }
  if (!ok) {
    rb.Error(
        "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported "
        "but i64 is.");
    return false;
  }
  *bits = static_cast<int>(n);
  return true;
}

void BitField(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb, bool read_only) {
  std::vector<FieldOp> ops;
  bitmap::Overflow overflow = bitmap::Overflow::kWrap;
  bool writes = false;
  uint64_t highest = 0;  // the last bit a SET or INCRBY reaches
  uint64_t max_bytes = ProtoMaxBulkLen(ctx);
  for (size_t j = 2; j < args.size(); j++) {
    size_t rest = args.size() - j - 1;
    std::string_view sub = args[j];
    FieldOp op;
    if (EqualsIgnoreCase(sub, "get") && rest >= 2) {
      op.kind = FieldOp::kGet;
    } else if (EqualsIgnoreCase(sub, "set") && rest >= 3) {
      op.kind = FieldOp::kSet;
    } else if (EqualsIgnoreCase(sub, "incrby") && rest >= 3) {
      op.kind = FieldOp::kIncrBy;
    } else if (EqualsIgnoreCase(sub, "overflow") && rest >= 1) {
      std::string_view how = args[++j];
      if (EqualsIgnoreCase(how, "wrap")) {
        overflow = bitmap::Overflow::kWrap;
      } else if (EqualsIgnoreCase(how, "sat")) {
        overflow = bitmap::Overflow::kSat;
      } else if (EqualsIgnoreCase(how, "fail")) {
        overflow = bitmap::Overflow::kFail;
      } else {
        rb.Error("ERR Invalid OVERFLOW type specified");
        return;
      }
      continue;
    } else {
      rb.Error(read_only ? kRoOnlyGet : errors::kSyntax);
      return;
    }
    if (!ParseFieldType(args[j + 1], &op.is_signed, &op.bits, rb)) return;
    if (!ParseBitOffset(args[j + 2], true, op.bits, max_bytes, &op.offset, rb)) return;
    if (op.kind != FieldOp::kGet) {
      if (!ParseInt64(args[j + 3], &op.value)) {
        rb.Error(errors::kNotInteger);
        return;
      }
      writes = true;
      highest = std::max(highest, op.offset + static_cast<uint64_t>(op.bits) - 1);
    }
    op.overflow = overflow;
    ops.push_back(op);
    j += op.kind == FieldOp::kGet ? 2 : 3;
  }
  Entry* e = nullptr;
  if (!writes) {
    if (!ReadBitmap(ctx, args[1], rb, &e)) return;
  } else {
    if (read_only) {
      rb.Error(kRoOnlyGet);
      return;
    }
    e = WritableBitmap(ctx, args[1], bitmap::ByteOf(highest) + 1, rb);
    if (e == nullptr) return;
  }
  rb.Array(ops.size());
  std::string scratch;
  size_t changes = 0;
  for (const FieldOp& op : ops) {
    // The bytes the field spans (at most 9), zero-padded past the value's end.
    uint64_t fb = bitmap::ByteOf(op.offset);
    uint64_t lb = bitmap::ByteOf(op.offset + op.bits - 1);
    std::string_view bytes;
    if (e != nullptr && fb < e->ValueLen()) {
      bytes = e->ValueRange(fb, std::min<uint64_t>(lb + 1, e->ValueLen()), &scratch);
    }
    uint64_t rel = op.offset - fb * 8;
    uint64_t old = bitmap::GetField(bytes, rel, op.bits);
    if (op.kind == FieldOp::kGet) {
      if (op.is_signed) {
        rb.Integer(bitmap::SignExtend(old, op.bits));
      } else {
        rb.Integer(static_cast<int64_t>(old));
      }
      continue;
    }
    uint64_t start =
        op.kind == FieldOp::kIncrBy
            ? (op.is_signed ? static_cast<uint64_t>(bitmap::SignExtend(old, op.bits)) : old)
            : static_cast<uint64_t>(op.value);
    int64_t incr = op.kind == FieldOp::kIncrBy ? op.value : 0;
    uint64_t next = 0;
    bool fits = bitmap::AddField(op.is_signed, op.bits, start, incr, op.overflow, &next);
    changes++;
    if (!fits && op.overflow == bitmap::Overflow::kFail) {
      rb.Null();
      continue;
    }
    uint64_t reply = op.kind == FieldOp::kIncrBy ? next : old;
    if (op.is_signed) {
      rb.Integer(bitmap::SignExtend(reply, op.bits));
    } else {
      rb.Integer(static_cast<int64_t>(reply));
    }
    bitmap::SetField(e->MutableValue() + fb, e->ValueLen() - fb, rel, op.bits, next);
  }
  if (changes > 0) NotifyKeyspaceEvent(kNotifyString, "setbit", args[1], ctx.db);
}

void CmdBitField(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) { BitField(args, ctx, rb, false); }
void CmdBitFieldRo(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) { BitField(args, ctx, rb, true); }

}  // namespace

void RegisterBitmapFamily(CommandRegistry& r) {
  constexpr uint32_t kW = kCmdWrite | kCmdDenyOom | kCmdBitmap;
  constexpr uint32_t kR = kCmdReadOnly | kCmdBitmap;
  auto add = [&](const char* name, int arity, uint32_t flags, int first, int last, ShardFn fn,
                 FiberFn fiber, const char* since, const char* summary) {
    CommandSpec s{name, arity, flags, first, last, 1};
    s.shard_fn = fn;
    s.fiber_fn = fiber;
    s.group = "bitmap";
    s.since = since;
    s.summary = summary;
    r.Add(std::move(s));
  };
  add("setbit", 4, kW, 1, 1, CmdSetBit, nullptr, "2.2.0",
      "Sets or clears the bit at offset of the string value. Creates the key if it doesn't "
      "exist.");
  add("getbit", 3, kR | kCmdFast, 1, 1, CmdGetBit, nullptr, "2.2.0",
      "Returns a bit value by offset.");
  add("bitcount", -2, kR, 1, 1, CmdBitCount, nullptr, "2.6.0",
      "Counts the number of set bits (population counting) in a string.");
  add("bitpos", -3, kR, 1, 1, CmdBitPos, nullptr, "2.8.7",
      "Finds the first set (1) or clear (0) bit in a string.");
  add("bitop", -4, kW, 2, -1, CmdBitOp, BitOpFiber, "2.6.0",
      "Performs bitwise operations on multiple strings, and stores the result.");
  add("bitfield", -2, kW, 1, 1, CmdBitField, nullptr, "3.2.0",
      "Performs arbitrary bitfield integer operations on strings.");
  add("bitfield_ro", -2, kR | kCmdFast, 1, 1, CmdBitFieldRo, nullptr, "6.0.0",
      "Performs arbitrary read-only bitfield integer operations on strings.");
}

}  // namespace strata
