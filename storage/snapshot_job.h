// ShardSnapshotJob: writes one shard's snapshot file while the shard keeps serving.
//
// Design (docs/ARCHITECTURE.md "Snapshots")
//   Start() runs at the snapshot's cut (every shard at one instant; server/persistence/snapshot.h)
//   and calls Keyspace::BeginCapture(this). The job's traversal (Step(), a time slice
//   per loop turn) walks each database's hash space in order, a chunk of a segment at a
//   time; (db_, pos_) is how far it got, whatever splits or growth happen meanwhile. A
//   key that a command is about to change beyond that point is written first, alone, by
//   CaptureEntry() from the keyspace's pre-write hook (core/keyspace.h "Snapshots"). Each key is
//   written exactly once, as it was at the cut, so the file is the shard's point-in-time image and
//   no copy of the data is made: the extra memory is the open block and the output not yet written
//   (a few hundred KiB per shard). A full snapshot writes every key. A delta writes every live key
//   of the ranges that changed since the previous cut (dirty_ranges.h); its traversal jumps from
//   dirty range to dirty range and walks only their slots. Output goes to a temporary file with
//   plain write(2) (the page cache); fsync and the rename happen off the shard thread
//   (server/persistence/snapshot.cc). A write error (a full disk) is kept, the rest of the output
//   is dropped, and Finish() reports it; capture itself goes on so that the keyspace hook stays
//   consistent until Finish().
//
// Thread-safety: owned by the shard's thread; Capture() is called on it by the keyspace.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/keyspace.h"
#include "storage/block.h"
#include "storage/dirty_ranges.h"
#include "storage/shard_snapshot.h"
#include "storage/status.h"

namespace strata {

class ShardSnapshotJob : public SnapshotHook {
 public:
  // Output is written out once this much has accumulated.
  static constexpr size_t kWriteChunkBytes = 256 * 1024;

  ShardSnapshotJob(Keyspace& ks, std::string tmp_path, BlockCodec codec,
                   const SnapshotHeader& header);
  ~ShardSnapshotJob() override;

  // Creates the temporary file. Called before the cut.
  Status Open();
  // At the cut: from now on the keyspace's changes are captured first. `ranges` are the
  // ranges changed since the previous cut (null when not tracked); a delta writes only
  // them, a full snapshot keeps them only to hand back if it fails.
  void Start(std::unique_ptr<RangeSet> ranges);
  // Walks hash space for about budget_ns, a chunk (1/2^kChunkBits of a segment) at a
  // time; returns true when it has passed every key.
  static constexpr int kChunkBits = 6;
  bool Step(int64_t budget_ns);
  bool traversal_done() const { return done_; }
  // Ends capture and writes the trailer. The file stays open (fd()) for the fsync.
  Status Finish();
  // Ends capture and removes the temporary file (a failed or abandoned snapshot).
  void Abort();

  bool NeedsPreImage(uint32_t db, uint64_t hash) const override;
  void CaptureEntry(uint32_t db, const Entry* e) override;
  void CaptureRest() override;

  int fd() const { return fd_; }
  // Gives the open file to whoever fsyncs and closes it.
  int ReleaseFd() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  const std::string& tmp_path() const { return tmp_path_; }
  uint64_t bytes_written() const { return bytes_written_; }
  uint64_t records() const { return writer_ ? writer_->records() : 0; }
  uint64_t keys_visited() const { return keys_visited_; }
  // Records written per database, (db, count) for databases with any.
  std::vector<std::pair<uint32_t, uint64_t>> db_records() const;
  // Serialization buffers held now (open block + output not yet written).
  size_t buffer_bytes() const { return (writer_ ? writer_->pending_bytes() : 0) + out_capacity_; }
  const RangeSet* ranges() const { return ranges_.get(); }
  // Hands the dirty ranges back (the snapshot failed: the next one must write them).
  std::unique_ptr<RangeSet> TakeRanges() { return std::move(ranges_); }

 private:
  void Emit(uint32_t db, const Entry* e);
  void Drain(bool all);
  Keyspace& ks_;
  std::string tmp_path_;
  BlockCodec codec_;
  SnapshotHeader header_;
  std::optional<ShardSnapshotWriter> writer_;
  std::unique_ptr<RangeSet> ranges_;
  bool filter_ = false;  // a delta: only keys of ranges_
  int fd_ = -1;
  Status error_;
  bool started_ = false;
  bool done_ = false;
  bool finished_ = false;
  uint32_t db_ = 0;
  uint64_t pos_ = 0;  // next table hash to visit in db_
  uint64_t bytes_written_ = 0;
  uint64_t keys_visited_ = 0;
  std::vector<uint64_t> db_records_;
  size_t out_capacity_ = 0;
  std::string scratch_;
};

}  // namespace strata
