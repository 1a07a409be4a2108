#include "server/engine/repl_log.h"

#include <algorithm>
#include <cstring>
#include <iterator>

namespace strata {

// ---------------------------------------------------------------------------- backlog

ReplBacklog::ReplBacklog(size_t capacity) : ring_(capacity) {}

void ReplBacklog::Append(std::string_view bytes) {
  offset_ += static_cast<int64_t>(bytes.size());
  size_t cap = ring_.size();
  if (cap == 0) return;
  if (bytes.size() >= cap) {  // only the newest cap bytes stay
    bytes.remove_prefix(bytes.size() - cap);
    std::memcpy(ring_.data(), bytes.data(), cap);
    start_ = 0;
    held_ = cap;
    return;
  }
  size_t end = (start_ + held_) % cap;
  size_t first = std::min(bytes.size(), cap - end);
  std::memcpy(ring_.data() + end, bytes.data(), first);
  std::memcpy(ring_.data(), bytes.data() + first, bytes.size() - first);
  held_ += bytes.size();
  if (held_ > cap) {
    start_ = (start_ + held_ - cap) % cap;
    held_ = cap;
  }
}

bool ReplBacklog::From(int64_t from, std::string* out) const {
  out->clear();
  if (from < first() || from > offset_) return false;
  size_t skip = static_cast<size_t>(from - first());
  size_t n = held_ - skip;
  size_t cap = ring_.size();
  if (n == 0) return true;
  size_t pos = (start_ + skip) % cap;
  size_t first_part = std::min(n, cap - pos);
  out->append(ring_.data() + pos, first_part);
  out->append(ring_.data(), n - first_part);
  return true;
}

void ReplBacklog::Resize(size_t capacity) {
  std::string keep;
  From(offset_ - static_cast<int64_t>(std::min(held_, capacity)), &keep);
  int64_t offset = offset_;
  ring_.assign(capacity, 0);
  start_ = 0;
  held_ = 0;
  offset_ = offset - static_cast<int64_t>(keep.size());
  Append(keep);
}

// ---------------------------------------------------------------------------- shards

void ReplLog::ShardLog::Append(ReplLog& log, uint32_t db, std::string_view bytes) {
  if (!producing_here_) {
    std::lock_guard<std::mutex> l(mu_);
    producing_ = true;
    mark_ = log.counter_.load(std::memory_order_seq_cst);
    producing_here_ = true;
  }
  uint64_t seq = log.NextSeq();
  pending_.push_back(Record{seq, db, std::string(bytes)});
}

uint64_t ReplLog::ShardLog::Reserve(ReplLog& log) {
  if (!producing_here_) {
    std::lock_guard<std::mutex> l(mu_);
    producing_ = true;
    mark_ = log.counter_.load(std::memory_order_seq_cst);
    producing_here_ = true;
  }
  return log.NextSeq();
}

void ReplLog::ShardLog::AppendAt(uint64_t seq, uint32_t db, std::string_view bytes) {
  // Numbers of one shard stay in order: a later Append took a higher one, so the
  // reserved record goes before any such.
  auto it = pending_.end();
  while (it != pending_.begin() && std::prev(it)->seq > seq) --it;
  pending_.insert(it, Record{seq, db, std::string(bytes)});
}

bool ReplLog::ShardLog::Publish() {
  if (!producing_here_) return false;
  std::lock_guard<std::mutex> l(mu_);
  for (Record& r : pending_) published_.push_back(std::move(r));
  pending_.clear();
  producing_ = false;
  producing_here_ = false;
  return true;
}

// ---------------------------------------------------------------------------- merger

ReplLog::ReplLog(uint32_t shards, size_t backlog_bytes) : inbox_(shards), backlog_(backlog_bytes) {
  for (uint32_t i = 0; i < shards; i++) shards_.push_back(std::make_unique<ShardLog>());
}

size_t ReplLog::Merge(const Sink& sink) {
  uint64_t bound = counter_.load(std::memory_order_seq_cst);
  for (size_t i = 0; i < shards_.size(); i++) {
    ShardLog& s = *shards_[i];
    std::lock_guard<std::mutex> l(s.mu_);
    for (ShardLog::Record& r : s.published_) inbox_[i].push_back(std::move(r));
    s.published_.clear();
    if (s.producing_) bound = std::min(bound, s.mark_);
  }
  size_t emitted = 0;
  auto emit = [&](std::string_view bytes) {
    backlog_.Append(bytes);
    if (sink) sink(bytes);
    emitted += bytes.size();
  };
  while (true) {
    // The lowest-numbered record in hand (shards are few: a scan of the fronts).
    size_t best = inbox_.size();
    for (size_t i = 0; i < inbox_.size(); i++) {
      if (inbox_[i].empty() || inbox_[i].front().seq >= bound) continue;
      if (best == inbox_.size() || inbox_[i].front().seq < inbox_[best].front().seq) best = i;
    }
    if (best == inbox_.size()) break;
    ShardLog::Record& r = inbox_[best].front();
    if (!cuts_.empty()) ResolveCuts(r.seq + 1);
    if (r.db != kNoDb && static_cast<int64_t>(r.db) != last_db_) {
      std::string db = std::to_string(r.db);
      emit(RespCommand({"SELECT", db}));
      last_db_ = r.db;
    }
    emit(r.bytes);
    inbox_[best].pop_front();
  }
  // Nothing numbered below the bound is still to come.
  if (!cuts_.empty()) ResolveCuts(bound + 1);
  merged_bound_ = std::max(merged_bound_, bound);
  return emitted;
}

void ReplLog::ResolveCuts(uint64_t below) {
  // A cut at seq is resolved once every record numbered below seq is out: before the
  // record numbered seq or more (below = its number + 1), or at the bound.
  for (size_t i = 0; i < cuts_.size();) {
    if (cuts_[i].seq < below) {
      resolved_.push_back({cuts_[i].id, backlog_.offset()});
      if (cuts_[i].select_again) last_db_ = -1;
      cuts_[i] = cuts_.back();
      cuts_.pop_back();
    } else {
      i++;
    }
  }
}

std::string RespCommand(const std::vector<std::string_view>& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (std::string_view a : args) {
    out += '$';
    out += std::to_string(a.size());
    out += "\r\n";
    out.append(a);
    out += "\r\n";
  }
  return out;
}

}  // namespace strata
