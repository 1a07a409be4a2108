#include "server/engine/repl_log.h"

#include <algorithm>
#include <cstring>
#include <iterator>

namespace strata {

// ---------------------------------------------------------------------------- backlog

void ReplBacklog::Append(const ReplSlice& s) {
  offset_ += static_cast<int64_t>(s.len);
  if (s.len != 0) {
    slices_.push_back(s);
    total_ += s.len;
  }
  Trim();
}

void ReplBacklog::Trim() {
  floor_ = std::max(floor_, offset_ - static_cast<int64_t>(capacity_));
  while (!slices_.empty() && total_ - slices_.front().len >= capacity_) {
    total_ -= slices_.front().len;
    slices_.pop_front();
  }
  if (capacity_ == 0) {
    slices_.clear();
    total_ = 0;
  }
}

bool ReplBacklog::From(int64_t from, std::string* out) const {
  out->clear();
  if (from < first() || from > offset_) return false;
  size_t want = static_cast<size_t>(offset_ - from);
  size_t skip = total_ - want;  // bytes of the oldest slices not asked for
  out->reserve(want);
  for (const ReplSlice& s : slices_) {
    std::string_view v = s.view();
    if (skip >= v.size()) {
      skip -= v.size();
      continue;
    }
    out->append(v.substr(skip));
    skip = 0;
  }
  return true;
}

void ReplBacklog::Resize(size_t capacity) {
  capacity_ = capacity;
  Trim();
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
  pending_.bytes.append(bytes);  // not Extend: no zeroing of bytes about to be overwritten
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
  pending_.bytes.append(bytes);  // not Extend: no zeroing of bytes about to be overwritten
}

bool ReplLog::ShardLog::Publish() {
  if (!producing_here_) return false;
  std::lock_guard<std::mutex> l(mu_);
  if (!pending_.records.empty()) {
    last_bytes_ = pending_.bytes.size();
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
  pending_.frozen.reset();
  // A batch's bytes leave with it (the stream shares them): room for a turn like this
  // one, so the next turn's appends do not regrow, and copy, the buffer.
  size_t room = std::min(last_bytes_ + last_bytes_ / 4, kMaxRoomBytes);
  if (pending_.bytes.capacity() < room) pending_.bytes.reserve(room);
  producing_ = false;
  producing_here_ = false;
  return true;
}

// ---------------------------------------------------------------------------- merger

ReplLog::ReplLog(uint32_t shards, size_t backlog_bytes)
    : inbox_(shards), done_(shards), backlog_(backlog_bytes) {
  for (uint32_t i = 0; i < shards; i++) shards_.push_back(std::make_unique<ShardLog>());
}

size_t ReplLog::MergeSlices(const SliceSink& sink) {
  uint64_t bound = counter_.load(std::memory_order_seq_cst);
  for (size_t i = 0; i < shards_.size(); i++) {
    ShardLog& s = *shards_[i];
    std::lock_guard<std::mutex> l(s.mu_);
    for (ShardLog::Batch& b : s.published_) inbox_[i].push_back(std::move(b));
    s.published_.clear();
    // Emptied batches go back for their records' capacity (a couple are enough); their
    // bytes stay with the slices that share them.
    for (ShardLog::Batch& b : done_[i]) {
      b.frozen.reset();
      if (s.spare_.size() < 2) s.spare_.push_back(std::move(b));
    }
    done_[i].clear();
    if (s.producing_) bound = std::min(bound, s.mark_);
  }
  // Batches taken now become shared, read-only buffers (moved, not copied).
  for (auto& q : inbox_) {
    for (ShardLog::Batch& b : q) {
      if (b.frozen == nullptr) b.frozen = std::make_shared<const std::string>(std::move(b.bytes));
    }
  }
  size_t emitted = 0;
  auto emit = [&](const ReplSlice& s) {
    backlog_.Append(s);
    if (sink) sink(s);
    emitted += s.len;
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
      emit(ReplSlice::Own(RespCommand({"SELECT", db})));
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
    emit(ReplSlice{b.frozen, r.offset, bytes_end - r.offset});
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
