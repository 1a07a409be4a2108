// ReplLog: a master's replication stream in one order across shards, and its backlog
// (docs/ARCHITECTURE.md "strata as a master").
//
// Producers: a shard's worker appends each propagated write as a record - its number
// from the process-wide counter (NextSeq: one fetch_add), its database and its RESP
// bytes (a whole MULTI ... EXEC group is one record) - to its ShardLog during a loop
// turn, and publishes them at the turn's end. When it starts a turn's records it notes,
// under its lock, that it is producing and a mark: the counter's value then, which none
// of its numbers can be below.
//
// Merger (one thread at a time; worker 0): Merge() reads the counter (C), then takes
// each shard's published records under its lock, noting the mark of every shard still
// producing. It emits, in number order, the records numbered below C and below every
// such mark, with SELECT before a record of another database than the last, into the
// backlog and to the sink (the replicas' outputs); the rest wait for the next Merge.
// Why nothing is missed: a record numbered below C had its number taken before C was
// read. When the merger took that shard's records, either the record was among them, or
// the shard was still producing it - and then its mark, no higher than the record's
// number, holds everything at or above it back. Records of one shard are numbered in
// the order they were made, so the merge keeps each shard's order too.
//
// Backlog: the last `capacity` bytes of the stream and where they start. The stream's
// offset counts every byte ever emitted (master_repl_offset). From(offset) gives the
// bytes from an offset still held - what a partial resync (PSYNC of offset+1) sends.
//
// One copy: the merger emits slices - views into the shards' batch buffers, which it
// takes over as shared, read-only buffers - so the backlog and every replica's output
// share the bytes the shards wrote (Redis's shared replication buffer). The backlog
// holds slices, not a copy; a replica's connection sends a big slice as it is and
// copies only small ones (Connection::AppendSharedBlock).
//
// A record of database kNoDb (PING, REPLCONF GETACK) needs no SELECT before it.
//
// Cuts (a full resync): the snapshot's cut reads the counter (C) while every shard is
// stopped, so the image holds exactly the records numbered below C. AddCut(C, id) asks
// the merger for the stream offset at that point: it is resolved when the merger is about
// to emit the first record numbered C or more, or when it knows none below C can come;
// the next record then starts with SELECT (the replica's database is unknown).
//
// Reserve (a command across shards): a number taken now, under the shard's producing
// mark, for a record appended later in the same turn (AppendAt); a number reserved and
// never used leaves a gap, which the merge does not mind.
//
// Thread-safety: ShardLog::Append and Publish on the shard's own worker; Merge and the
// backlog's readers on the merger's thread; the queues between them are under a mutex
// per shard, taken once per turn by each side. AddCut on the merger's thread.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace strata {

// A piece of the stream: len bytes at off in a buffer it shares.
struct ReplSlice {
  std::shared_ptr<const std::string> buf;
  size_t off = 0;
  size_t len = 0;
  std::string_view view() const { return std::string_view(*buf).substr(off, len); }
  static ReplSlice Own(std::string bytes) {
    size_t n = bytes.size();
    return ReplSlice{std::make_shared<const std::string>(std::move(bytes)), 0, n};
  }
};

// The stream's last bytes, as the slices that hold them.
class ReplBacklog {
 public:
  explicit ReplBacklog(size_t capacity) : capacity_(capacity) {}
  void Append(const ReplSlice& s);
  void Append(std::string_view bytes) { Append(ReplSlice::Own(std::string(bytes))); }
  // The stream offset: every byte ever appended (Redis's master_repl_offset).
  int64_t offset() const { return offset_; }
  // The first offset still held (repl_backlog_first_byte_offset is this + 1, as Redis
  // counts from 1), and how many bytes are held (repl_backlog_histlen).
  int64_t first() const { return std::max(floor_, offset_ - static_cast<int64_t>(total_)); }
  size_t held() const { return static_cast<size_t>(offset_ - first()); }
  size_t capacity() const { return capacity_; }
  // Bytes [from, offset()) when the backlog still holds them; false otherwise.
  bool From(int64_t from, std::string* out) const;
  // A new size keeps the newest bytes that fit.
  void Resize(size_t capacity);
  // Holds nothing, and the stream goes on from `offset` (a new history).
  void Reset(int64_t offset) {
    slices_.clear();
    total_ = 0;
    offset_ = offset;
    floor_ = offset;
  }

 private:
  // Drops the oldest slices while the rest still hold capacity_ bytes.
  void Trim();
  std::deque<ReplSlice> slices_;
  size_t total_ = 0;  // their bytes: held() and a little more (the oldest slice's rest)
  size_t capacity_ = 0;
  int64_t offset_ = 0;
  // Bytes below it are gone even if a slice still holds them: the last `capacity` bytes
  // at any time since are all that is kept (a shrink is not undone by growing again).
  int64_t floor_ = 0;
};

class ReplLog {
 public:
  static constexpr uint64_t kNoMark = std::numeric_limits<uint64_t>::max();
  static constexpr uint32_t kNoDb = std::numeric_limits<uint32_t>::max();
  using Sink = std::function<void(std::string_view bytes)>;
  using SliceSink = std::function<void(const ReplSlice& slice)>;

  ReplLog(uint32_t shards, size_t backlog_bytes);

  class ShardLog {
   public:
    // Appends one record: its bytes are a whole command (or MULTI ... EXEC group).
    void Append(ReplLog& log, uint32_t db, std::string_view bytes);
    // Append of `len` bytes that `write(char* at)` writes into the batch itself.
    template <class Write>
    void AppendWith(ReplLog& log, uint32_t db, size_t len, Write&& write) {
      StartProducing(log);
      uint64_t seq = log.NextSeq();
      size_t offset = pending_.bytes.size();
      write(Extend(len));
      pending_.records.push_back(Record{seq, db, static_cast<uint32_t>(len), offset});
    }
    // A number for a record this shard appends later in this turn (see above).
    uint64_t Reserve(ReplLog& log);
    void AppendAt(uint64_t seq, uint32_t db, std::string_view bytes);
    // The turn's end: hands the records to the merger and clears the mark. True when it
    // handed any (the merger should run).
    bool Publish();

   private:
    friend class ReplLog;
    void StartProducing(ReplLog& log) {
      if (producing_here_) return;
      std::lock_guard<std::mutex> l(mu_);
      producing_ = true;
      mark_ = log.counter_.load(std::memory_order_seq_cst);
      producing_here_ = true;
    }
    // A turn's records: their bytes one after another in one buffer (no allocation per
    // record), in number order.
    struct Record {
      uint64_t seq;
      uint32_t db;
      uint32_t len;
      size_t offset;
    };
    struct Batch {
      std::string bytes;
      std::vector<Record> records;
      size_t next = 0;  // the merger's: the first record not yet emitted
      // The merger's: bytes, moved into a buffer the stream's slices share.
      std::shared_ptr<const std::string> frozen;
    };
    // n more bytes at the end of the turn's batch: where they go. Within the room
    // Publish reserved nothing moves; only the new bytes are zeroed first (a large
    // zeroing is a rep stosb, which costs an instruction per byte under callgrind).
    char* Extend(size_t n) {
      size_t at = pending_.bytes.size();
      pending_.bytes.resize(at + n);
      return pending_.bytes.data() + at;
    }
    Batch pending_;                // the shard's own
    bool producing_here_ = false;  // the shard's own copy of producing_
    std::mutex mu_;
    bool producing_ = false;       // under mu_: records not yet published
    uint64_t mark_ = 0;            // under mu_: no record of this turn is numbered below
    std::deque<Batch> published_;  // under mu_
    std::vector<Batch> spare_;     // under mu_: emptied batches, kept for their capacity
    size_t last_bytes_ = 0;        // the last published batch's size: the next one's room
    static constexpr size_t kMaxRoomBytes = 1 << 20;
  };

  ShardLog& shard(uint32_t i) { return *shards_[i]; }
  uint32_t shard_count() const { return static_cast<uint32_t>(shards_.size()); }
  uint64_t NextSeq() { return counter_.fetch_add(1, std::memory_order_seq_cst); }

  // The merger: emits what it may (see above) to the backlog and the sink; returns the
  // bytes emitted.
  size_t MergeSlices(const SliceSink& sink);
  // MergeSlices with the bytes of each slice.
  size_t Merge(const Sink& sink) {
    return MergeSlices([&](const ReplSlice& s) {
      if (sink) sink(s.view());
    });
  }
  // The database the next record is compared with: -1 makes the next record start with
  // SELECT (a replica that has just had a full sync).
  void ForgetDb() { last_db_ = -1; }
  // The merger: asks for the offset at number `seq` (see "Cuts" above).
  // select_again: a replica's full resync (its database is unknown after the image);
  // false for a WAIT, which only needs the offset.
  void AddCut(uint64_t seq, uint64_t id, bool select_again = true) {
    cuts_.push_back({seq, id, select_again});
  }
  // Cuts resolved by the Merge calls so far: (id, offset), taken.
  std::vector<std::pair<uint64_t, int64_t>> TakeResolvedCuts() {
    std::vector<std::pair<uint64_t, int64_t>> r;
    r.swap(resolved_);
    return r;
  }
  // The counter now (any thread): every number taken so far is below it.
  uint64_t counter() const { return counter_.load(std::memory_order_seq_cst); }
  // The highest bound a Merge has reached: every record numbered below it is emitted.
  uint64_t merged_bound() const { return merged_bound_; }

  ReplBacklog& backlog() { return backlog_; }

 private:
  friend class ShardLog;
  std::atomic<uint64_t> counter_{0};
  std::vector<std::unique_ptr<ShardLog>> shards_;
  std::vector<std::deque<ShardLog::Batch>> inbox_;  // the merger's: taken, not emitted
  std::vector<std::vector<ShardLog::Batch>> done_;  // the merger's: emptied, to give back
  ReplBacklog backlog_;
  int64_t last_db_ = -1;
  struct PendingCut {
    uint64_t seq;
    uint64_t id;
    bool select_again;
  };
  std::vector<PendingCut> cuts_;
  std::vector<std::pair<uint64_t, int64_t>> resolved_;
  uint64_t merged_bound_ = 0;
  void ResolveCuts(uint64_t below);
};

// The RESP array of a command.
std::string RespCommand(const std::vector<std::string_view>& args);

}  // namespace strata
