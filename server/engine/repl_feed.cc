#include "server/engine/repl_feed.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <string>

#include "core/string_util.h"

namespace strata {

namespace {

// "00" to "99": two digits written at once.
constexpr char kDigitPairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

// Writes n (len = DecimalDigits(n) digits) at p; returns the end.
inline char* PutDecimal(char* p, size_t n, size_t len) {
  switch (len) {
    case 1:
      *p = static_cast<char>('0' + n);
      return p + 1;
    case 2:
      std::memcpy(p, kDigitPairs + 2 * n, 2);
      return p + 2;
    case 3:
      *p = static_cast<char>('0' + n / 100);
      std::memcpy(p + 1, kDigitPairs + 2 * (n % 100), 2);
      return p + 3;
    default:
      break;
  }
  char* end = p + len;
  char* q = end;
  while (n >= 100) {
    q -= 2;
    std::memcpy(q, kDigitPairs + 2 * (n % 100), 2);
    n /= 100;
  }
  if (n >= 10) {
    q -= 2;
    std::memcpy(q, kDigitPairs + 2 * n, 2);
  } else {
    *--q = static_cast<char>('0' + n);
  }
  return end;
}

// The RESP array of args: its size, then the bytes written at p (exactly that many).
// This runs for every propagated write: the size is counted first so the bytes are
// written once, where they stay.
template <class Args>
size_t CommandSize(const Args& args) {
  size_t need = 3 + DecimalDigits(args.size());                                    // *N\r\n
  for (std::string_view a : args) need += a.size() + 5 + DecimalDigits(a.size());  // $L\r\n..\r\n
  return need;
}
template <class Args>
void WriteCommand(char* p, const Args& args) {
  size_t count_len = DecimalDigits(args.size());
  *p++ = '*';
  p = PutDecimal(p, args.size(), count_len);
  *p++ = '\r';
  *p++ = '\n';
  for (std::string_view a : args) {
    *p++ = '$';
    p = PutDecimal(p, a.size(), DecimalDigits(a.size()));
    *p++ = '\r';
    *p++ = '\n';
    if (!a.empty()) std::memcpy(p, a.data(), a.size());
    p += a.size();
    *p++ = '\r';
    *p++ = '\n';
  }
}

// raw is a canonical multibulk request (RespParser::canonical()) whose arguments are
// args: it is their encoding when each bulk is followed by CRLF, which the parser does not
// check, and it ends with the last one.
bool IsEncodingOf(std::string_view raw, CmdArgs args) {
  constexpr uint16_t kCrlf = '\r' | ('\n' << 8);  // as a little-endian load reads it
  static_assert(std::endian::native == std::endian::little);
  uint16_t diff = 0;
  for (std::string_view a : args) {
    uint16_t after;
    std::memcpy(&after, a.data() + a.size(), 2);
    diff |= after ^ kCrlf;
  }
  return diff == 0 && args.back().data() + args.back().size() + 2 == raw.data() + raw.size();
}

template <class Args>
void AppendCommand(std::string* out, const Args& args) {
  size_t start = out->size();
  out->resize(start + CommandSize(args));
  WriteCommand(out->data() + start, args);
}

const std::string kMulti = RespCommand({"MULTI"});
const std::string kExec = RespCommand({"EXEC"});

}  // namespace

void ReplGroup::Add(uint32_t d, std::string_view resp, size_t n) {
  if (d != ReplLog::kNoDb) {
    if (db < 0) {
      db = cur_db = d;
    } else if (static_cast<int64_t>(d) != cur_db) {
      std::string s = std::to_string(d);
      bytes += RespCommand({"SELECT", s});
      commands++;
      cur_db = d;
    }
  }
  bytes.append(resp);
  commands += n;
}

void ReplGroup::Add(const ReplGroup& g) {
  if (g.commands == 0) return;
  // g ends in the database it started in (Finish's rule, kept by every group).
  Add(g.db < 0 ? ReplLog::kNoDb : static_cast<uint32_t>(g.db), g.bytes, g.commands);
  if (g.cur_db != g.db) cur_db = g.cur_db;
}

std::string ReplGroup::Finish(uint32_t* out_db) {
  std::string whole;
  if (commands != 0) {
    if (cur_db != db) {
      std::string s = std::to_string(db);
      bytes += RespCommand({"SELECT", s});
      commands++;
    }
    *out_db = db < 0 ? ReplLog::kNoDb : static_cast<uint32_t>(db);
    if (commands == 1) {
      whole.swap(bytes);
    } else {
      whole.reserve(kMulti.size() + bytes.size() + kExec.size());
      whole += kMulti;
      whole += bytes;
      whole += kExec;
    }
  }
  Clear();
  return whole;
}

void ReplOut::Add(std::initializer_list<std::string_view> args) {
  AppendCommand(&bytes_, args);
  commands_++;
}

void ReplOut::Add(CmdArgs args) {
  AppendCommand(&bytes_, args);
  commands_++;
}

void ReplFeed::Enable(uint64_t changes) {
  on_ = true;
  seen_changes_ = changes;
}

void ReplFeed::Command(const CommandSpec* spec, CmdArgs args, uint32_t db, std::string_view reply,
                       Keyspace& ks, int64_t now_ms, std::string_view raw) {
  uint64_t changes = ks.changes();
  bool changed = changes != seen_changes_;
  seen_changes_ = changes;
  // A script's own call is not propagated: its effects are, as the commands it ran.
  // A may-replicate read that changed its key goes as itself (PFCOUNT filling an HLL's
  // cached count: the replica's bytes must be the master's). PUBLISH and SPUBLISH
  // change nothing but go to replicas (their subscribers), as Redis sends them.
  constexpr uint32_t kPublish = kCmdPubSub | kCmdMayReplicate;
  bool writes = spec->is_write() || (spec->flags & kCmdMayReplicate) != 0;
  bool publish = (spec->flags & kPublish) == kPublish && publish_to_replicas_;
  if ((!changed || !writes || (spec->flags & kCmdScript)) && !publish) {
    if (!after_.empty()) [[unlikely]]
      FlushAfter();
    return;
  }
  out_.Clear();
  bool rewritten = spec->propagate != nullptr &&
                   spec->propagate(args, PropagateCtx{ks, db, now_ms}, reply, &out_);
  if (!rewritten) {
    if (target_ == nullptr) {
      // The common case: the call itself, straight into the shard's batch; copied from
      // the client's bytes when they are already its RESP encoding.
      if (!raw.empty() && IsEncodingOf(raw, args)) {
        log_->shard(shard_).Append(*log_, db, raw);
      } else {
        log_->shard(shard_).AppendWith(*log_, db, CommandSize(args),
                                       [&](char* at) { WriteCommand(at, args); });
      }
      if (!after_.empty()) [[unlikely]]
        FlushAfter();
      return;
    }
    out_.Add(args);
  }
  if (out_.commands() != 0) Append(db, out_.bytes(), out_.commands());
  if (!after_.empty()) [[unlikely]]
    FlushAfter();
}

void ReplFeed::Effect(uint32_t db, CmdArgs args) {
  out_.Clear();
  out_.Add(args);
  Append(db, out_.bytes(), 1);
}

void ReplFeed::EffectAfterCommand(uint32_t db, CmdArgs args) {
  out_.Clear();
  out_.Add(args);
  after_.push_back({db, out_.bytes()});
}

void ReplFeed::FlushAfter() {
  std::vector<After> a;
  a.swap(after_);
  for (const After& x : a) Append(x.db, x.resp, 1);
}

void ReplFeed::KeyDeleted(uint32_t db, std::string_view key, uint64_t changes) {
  out_.Clear();
  out_.Add({"DEL", key});
  Append(db, out_.bytes(), 1);
  // The deletion (one change, counted before this call) is not the running or next
  // command's change - but what that command changed before it still is: a DEL of two
  // keys whose second had expired must still go out. Never ahead of the counter (a key
  // dropped at load may have changed nothing).
  seen_changes_ = std::min(seen_changes_ + 1, changes);
}

void ReplFeed::Record(uint32_t db, std::string_view resp) { Append(db, resp, 1); }

void ReplFeed::Append(uint32_t db, std::string_view resp, size_t commands) {
  if (target_ == nullptr) {
    log_->shard(shard_).Append(*log_, db, resp);
    return;
  }
  target_->Add(db, resp, commands);
}

void ReplFeed::EndGroup() {
  if (--group_depth_ > 0 || target_ != &group_) return;
  target_ = nullptr;
  uint32_t db = ReplLog::kNoDb;
  std::string whole = group_.Finish(&db);
  if (!whole.empty()) log_->shard(shard_).Append(*log_, db, whole);
}

void ReplFeed::FiberReleasing(FiberRepl& f) {
  if (f.captures != nullptr) [[unlikely]] {
    // Inside a transaction: the first release adds the command to its own group; what
    // this step does after it here (pops it served) goes into this shard's after-group.
    if (!f.claimed.exchange(true, std::memory_order_acq_rel)) {
      out_.Clear();
      out_.Add(f.args->span());
      f.captures->command.Add(f.db, out_.bytes(), 1);
    }
    f.captures->released[shard_] = 1;
    target_ = &f.captures->after[shard_];  // until the step's capture scope ends
    if (!after_.empty()) FlushAfter();
    return;
  }
  if (f.capture != nullptr) [[unlikely]] {
    // Its steps run one after another: the first release adds the command to the
    // script's group, after what its steps so far captured there.
    if (!f.claimed.exchange(true, std::memory_order_acq_rel)) {
      out_.Clear();
      out_.Add(f.args->span());
      f.capture->Add(f.db, out_.bytes(), 1);
    }
    if (!after_.empty()) FlushAfter();
    return;
  }
  if (!f.claimed.load(std::memory_order_acquire)) {
    ReplLog::ShardLog& s = log_->shard(shard_);
    // The number first, then the claim: a shard that loses the claim releases its lock
    // only after the winner's number was taken.
    uint64_t seq = s.Reserve(*log_);
    if (!f.claimed.exchange(true, std::memory_order_acq_rel)) {
      out_.Clear();
      out_.Add(f.args->span());
      s.AppendAt(seq, f.db, out_.bytes());
    }
  }
  // Pops this step served (a push that woke a blocked client) come after the command.
  if (!after_.empty()) [[unlikely]]
    FlushAfter();
}

}  // namespace strata
