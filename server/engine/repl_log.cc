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
  pending_.records.push_back(
      Record{seq, db, static_cast<uint32_t>(bytes.size()), pending_.bytes.size()});
  pending_.bytes.append(bytes);
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
  auto& recs = pending_.records;
  auto it = recs.end();
  while (it != recs.begin() && std::prev(it)->seq > seq) --it;
  recs.insert(it, Record{seq, db, static_cast<uint32_t>(bytes.size()), pending_.bytes.size()});
  pending_.bytes.append(bytes);
}

bool ReplLog::ShardLog::Publish() {
  if (!producing_here_) return false;
  std::lock_guard<std::mutex> l(mu_);
  if (!pending_.records.empty()) {
    published_.push_back(std::move(pending_));
    if (!spare_.empty()) {
      pending_ = std::move(spare_.back());
      spare_.pop_back();
    } else {
      pending_ = Batch();
    }
  }
  pending_.bytes.clear();
  pending_.records.clear();
  pending_.next = 0;
  producing_ = false;
  producing_here_ = false;
  return true;
}

// ---------------------------------------------------------------------------- merger

ReplLog::ReplLog(uint32_t shards, size_t backlog_bytes)
    : inbox_(shards), done_(shards), backlog_(backlog_bytes) {
  for (uint32_t i = 0; i < shards; i++) shards_.push_back(std::make_unique<ShardLog>());
}

size_t ReplLog::Merge(const Sink& sink) {
  uint64_t bound = counter_.load(std::memory_order_seq_cst);
  for (size_t i = 0; i < shards_.size(); i++) {
    ShardLog& s = *shards_[i];
    std::lock_guard<std::mutex> l(s.mu_);
    for (ShardLog::Batch& b : s.published_) inbox_[i].push_back(std::move(b));
    s.published_.clear();
    // Emptied batches go back for reuse (a couple are enough).
    for (ShardLog::Batch& b : done_[i]) {
      if (s.spare_.size() < 2) s.spare_.push_back(std::move(b));
    }
    done_[i].clear();
    if (s.producing_) bound = std::min(bound, s.mark_);
  }
  size_t emitted = 0;
  auto emit = [&](std::string_view bytes) {
    backlog_.Append(bytes);
    if (sink) sink(bytes);
    emitted += bytes.size();
  };
  auto front = [&](size_t i) -> const ShardLog::Record& {
    const ShardLog::Batch& b = inbox_[i].front();
    return b.records[b.next];
  };
  while (true) {
    // The lowest-numbered record in hand (shards are few: a scan of the fronts).
    size_t best = inbox_.size();
    uint64_t best_seq = 0;
    for (size_t i = 0; i < inbox_.size(); i++) {
      if (inbox_[i].empty()) continue;
      uint64_t seq = front(i).seq;
      if (seq >= bound) continue;
      if (best == inbox_.size() || seq < best_seq) {
        best = i;
        best_seq = seq;
      }
    }
    if (best == inbox_.size()) break;
    ShardLog::Batch& b = inbox_[best].front();
    const ShardLog::Record& r = b.records[b.next];
    if (!cuts_.empty()) ResolveCuts(r.seq + 1);
    if (r.db != kNoDb && static_cast<int64_t>(r.db) != last_db_) {
      std::string db = std::to_string(r.db);
      emit(RespCommand({"SELECT", db}));
      last_db_ = r.db;
    }
    // A run of this batch's records goes out at once: those that follow it in the
    // buffer, of the same database, numbered below the bound, below every other shard's
    // next record and below any cut still to resolve.
    uint64_t limit = bound;
    for (size_t i = 0; i < inbox_.size(); i++) {
      if (i != best && !inbox_[i].empty()) limit = std::min(limit, front(i).seq);
    }
    for (const PendingCut& c : cuts_) {
      if (c.seq > r.seq) limit = std::min(limit, c.seq);
    }
    size_t end = b.next + 1;
    size_t bytes_end = r.offset + r.len;
    while (end < b.records.size()) {
      const ShardLog::Record& x = b.records[end];
      if (x.seq >= limit || x.db != r.db || x.offset != bytes_end) break;
      bytes_end += x.len;
      end++;
    }
    emit(std::string_view(b.bytes).substr(r.offset, bytes_end - r.offset));
    b.next = end;
    if (b.next == b.records.size()) {
      done_[best].push_back(std::move(b));
      inbox_[best].pop_front();
    }
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
