#include "storage/snapshot_job.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "core/hash.h"
#include "storage/file_io.h"

namespace strata {

namespace {
int64_t MonoNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}
}  // namespace

ShardSnapshotJob::ShardSnapshotJob(Keyspace& ks, std::string tmp_path, BlockCodec codec,
                                   const SnapshotHeader& header)
    : ks_(ks), tmp_path_(std::move(tmp_path)), codec_(codec), header_(header) {}

ShardSnapshotJob::~ShardSnapshotJob() {
  if (started_ && !finished_) ks_.EndCapture();
  if (fd_ >= 0) close(fd_);
}

Status ShardSnapshotJob::Open() {
  fd_ = open(tmp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) return Status::FromErrno("open " + tmp_path_, errno);
  return Status::Ok();
}

void ShardSnapshotJob::Start(std::unique_ptr<RangeSet> ranges) {
  ranges_ = std::move(ranges);
  filter_ = header_.kind == SnapshotKind::kDelta;
  if (filter_ && ranges_ == nullptr) ranges_ = std::make_unique<RangeSet>();
  std::string enc;
  if (filter_) ranges_->Encode(&enc);
  writer_.emplace(codec_, header_, ShardSnapshotWriter::kDefaultBlockBytes, enc);
  ks_.BeginCapture(this);
  started_ = true;
}

void ShardSnapshotJob::Drain(bool all) {
  std::string* out = writer_->output();
  out_capacity_ = out->capacity();
  if (out->empty() || (!all && out->size() < kWriteChunkBytes)) return;
  if (error_.ok()) {
    error_ = WriteAll(fd_, *out, tmp_path_);
    if (error_.ok()) bytes_written_ += out->size();
  }
  out->clear();
}

void ShardSnapshotJob::Emit(uint32_t db, const Entry* e) {
  keys_visited_++;
  std::string_view value;
  if (e->IsExternal()) {
    scratch_.clear();
    e->Object()->Serialize(&scratch_);
    value = scratch_;
  } else {
    value = e->Value(&scratch_);
  }
  if (value.size() + e->Key().size() + 32 > kBlockRawMax) {
    if (error_.ok()) {
      error_ = Status::InvalidArgument("key '" + std::string(e->Key().substr(0, 64)) +
                                       "' holds a value too large for a snapshot block");
    }
    return;
  }
  writer_->Add(db, e->Type(), e->Key(), value, e->HasExpire() ? e->ExpireMs() : Entry::kNoExpire);
  if (scratch_.capacity() > (4u << 20)) std::string().swap(scratch_);
}

void ShardSnapshotJob::CaptureEntry(uint32_t db, const Entry* e) {
  Emit(db, e);
  Drain(false);
}

void ShardSnapshotJob::Capture(uint32_t db, Table::Segment* seg) {
  if (seg->count == 0) return;
  auto visit = [&](Entry* e) {
    if (e->SnapSkip()) {
      e->SetSnapSkip(false);  // written already, or created after the cut
    } else {
      Emit(db, e);
    }
  };
  if (!filter_) {
    Table::ForEachInSegment(seg, visit);
    Drain(false);
    return;
  }
  // A delta: only the dirty ranges that fall in this segment, by their slot runs.
  uint64_t any = 0;
  Table::ForEachInSegment(seg, [&](Entry* e) { any = TableHash(e->Key()); });
  uint64_t seg_first = Table::SegmentFirstHash(seg, any);
  uint64_t seg_last = seg->depth == 0 ? ~0ull : seg_first + (~0ull >> seg->depth);
  uint32_t id_last = RangeSet::Id(db, seg_last);
  uint32_t from = RangeSet::Id(db, seg_first), id = 0;
  // Ranges narrower than a tag need each key's hash checked.
  bool check = seg->depth + 16 < RangeSet::kRangeBits;
  size_t budget = seg->count + 16;
  size_t visited = 0;
  while (ranges_->NextAtLeast(from, &id) && id <= id_last) {
    if (++visited > budget) {
      // Most of the segment is dirty: one pass over it is cheaper than range by range.
      uint32_t done_below = id;
      Table::ForEachInSegment(seg, [&](Entry* e) {
        uint64_t h = TableHash(e->Key());
        if (RangeSet::Id(db, h) >= done_below && ranges_->Contains(db, h)) visit(e);
      });
      break;
    }
    uint64_t first = std::max(seg_first, RangeSet::FirstHash(id));
    uint64_t last = std::min(seg_last, RangeSet::LastHash(id));
    Table::ForEachInHashRange(seg, first, last, [&](Entry* e) {
      if (!check || RangeSet::Id(db, TableHash(e->Key())) == id) visit(e);
    });
    if (id == UINT32_MAX) break;
    from = id + 1;
  }
  Drain(false);
}

bool ShardSnapshotJob::Step(int64_t budget_ns) {
  if (done_) return true;
  int64_t deadline = MonoNs() + budget_ns;
  while (db_ < ks_.db_count()) {
    Table& t = ks_.table(db_);
    if (filter_) {
      // Deltas jump from one dirty range to the next.
      uint32_t id = 0;
      if (!ranges_->NextAtLeast(RangeSet::Id(db_, pos_), &id) || RangeSet::DbOf(id) != db_) {
        db_++;
        pos_ = 0;
        continue;
      }
      if (RangeSet::FirstHash(id) > pos_) pos_ = RangeSet::FirstHash(id);
    }
    Table::Segment* seg = t.SegmentFor(pos_);
    ks_.CaptureSegment(db_, seg);
    uint64_t first = Table::SegmentFirstHash(seg, pos_);
    uint64_t next = seg->depth == 0 ? 0 : first + (~0ull >> seg->depth) + 1;
    if (next == 0) {  // the last segment of hash space
      db_++;
      pos_ = 0;
    } else {
      pos_ = next;
    }
    if (MonoNs() >= deadline) return false;
  }
  done_ = true;
  return true;
}

Status ShardSnapshotJob::Finish() {
  if (!done_) {
    while (!Step(INT64_MAX / 4)) {
    }
  }
  if (started_ && !finished_) ks_.EndCapture();
  finished_ = true;
  if (!writer_) return Status::InvalidArgument("snapshot job finished before it started");
  std::string rest = writer_->Finish();
  if (error_.ok()) {
    error_ = WriteAll(fd_, rest, tmp_path_);
    if (error_.ok()) bytes_written_ += rest.size();
  }
  out_capacity_ = 0;
  return error_;
}

void ShardSnapshotJob::Abort() {
  if (started_ && !finished_) ks_.EndCapture();
  finished_ = true;
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  unlink(tmp_path_.c_str());
}

}  // namespace strata
