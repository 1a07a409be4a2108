#include "server/engine/repl_feed.h"

#include <charconv>
#include <cstring>
#include <string>

namespace strata {

namespace {

// Writes n in decimal at p; returns the end.
char* PutDecimal(char* p, size_t n) {
  if (n < 10) {
    *p++ = static_cast<char>('0' + n);
    return p;
  }
  if (n < 100) {
    *p++ = static_cast<char>('0' + n / 10);
    *p++ = static_cast<char>('0' + n % 10);
    return p;
  }
  if (n < 1000) {
    *p++ = static_cast<char>('0' + n / 100);
    *p++ = static_cast<char>('0' + n / 10 % 10);
    *p++ = static_cast<char>('0' + n % 10);
    return p;
  }
  return std::to_chars(p, p + 20, n).ptr;
}

// Appends a RESP array of args to *out: its size is counted first, so the buffer grows
// once (this runs for every propagated write).
template <class Args>
void AppendCommand(std::string* out, const Args& args) {
  size_t need = 16;
  for (std::string_view a : args) need += a.size() + 24;
  size_t start = out->size();
  out->resize(start + need);
  char* base = out->data();
  char* p = base + start;
  *p++ = '*';
  p = PutDecimal(p, args.size());
  *p++ = '\r';
  *p++ = '\n';
  for (std::string_view a : args) {
    *p++ = '$';
    p = PutDecimal(p, a.size());
    *p++ = '\r';
    *p++ = '\n';
    if (!a.empty()) std::memcpy(p, a.data(), a.size());
    p += a.size();
    *p++ = '\r';
    *p++ = '\n';
  }
  out->resize(static_cast<size_t>(p - base));
}

const std::string kMulti = RespCommand({"MULTI"});
const std::string kExec = RespCommand({"EXEC"});

}  // namespace

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
                       Keyspace& ks, int64_t now_ms) {
  uint64_t changes = ks.changes();
  bool changed = changes != seen_changes_;
  seen_changes_ = changes;
  // A script's own call is not propagated: its effects are, as the commands it ran.
  // A may-replicate read that changed its key goes as itself (PFCOUNT filling an HLL's
  // cached count: the replica's bytes must be the master's). PUBLISH and SPUBLISH
  // change nothing but go to replicas (their subscribers), as Redis sends them.
  constexpr uint32_t kPublish = kCmdPubSub | kCmdMayReplicate;
  bool writes = spec->is_write() || (spec->flags & kCmdMayReplicate) != 0;
  if ((!changed || !writes || (spec->flags & kCmdScript)) && (spec->flags & kPublish) != kPublish) {
    if (!after_.empty()) [[unlikely]]
      FlushAfter();
    return;
  }
  out_.Clear();
  bool rewritten = spec->propagate != nullptr &&
                   spec->propagate(args, PropagateCtx{ks, db, now_ms}, reply, &out_);
  if (!rewritten) {
    if (group_depth_ == 0) {
      // The common case: the call itself, written straight into the shard's batch.
      log_->shard(shard_).AppendWith(*log_, db,
                                     [&](std::string* buf) { AppendCommand(buf, args); });
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
  // The deletion is not the next command's change.
  seen_changes_ = changes;
}

void ReplFeed::Record(uint32_t db, std::string_view resp) { Append(db, resp, 1); }

void ReplFeed::Append(uint32_t db, std::string_view resp, size_t commands) {
  if (group_depth_ == 0) {
    log_->shard(shard_).Append(*log_, db, resp);
    return;
  }
  if (db != ReplLog::kNoDb) {
    if (group_db_ < 0) {
      group_db_ = group_cur_db_ = db;
    } else if (static_cast<int64_t>(db) != group_cur_db_) {
      std::string d = std::to_string(db);
      group_ += RespCommand({"SELECT", d});
      group_commands_++;
      group_cur_db_ = db;
    }
  }
  group_.append(resp);
  group_commands_ += commands;
}

void ReplFeed::EndGroup() {
  if (--group_depth_ > 0) return;
  if (group_commands_ == 0) {
    group_.clear();
    group_db_ = group_cur_db_ = -1;
    return;
  }
  // The record leaves the replica in the database it started in (the merger's SELECT
  // bookkeeping counts on it).
  if (group_cur_db_ != group_db_) {
    std::string d = std::to_string(group_db_);
    group_ += RespCommand({"SELECT", d});
    group_commands_++;
  }
  uint32_t db = group_db_ < 0 ? ReplLog::kNoDb : static_cast<uint32_t>(group_db_);
  if (group_commands_ == 1) {
    log_->shard(shard_).Append(*log_, db, group_);
  } else {
    std::string whole;
    whole.reserve(kMulti.size() + group_.size() + kExec.size());
    whole += kMulti;
    whole += group_;
    whole += kExec;
    log_->shard(shard_).Append(*log_, db, whole);
  }
  group_.clear();
  group_commands_ = 0;
  group_db_ = group_cur_db_ = -1;
}

void ReplFeed::FiberReleasing(FiberRepl& f) {
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
