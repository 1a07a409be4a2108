#include "storage/snapshot_job.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "core/hash.h"
#include "storage/file_io.h"
#include "storage/mono_clock.h"

namespace strata {

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
  if (e->IsCold()) {
    // The value stays on disk: the snapshot's checkpoint of the spill store holds it.
    if (db >= db_records_.size()) db_records_.resize(db + 1);
    db_records_[db]++;
    writer_->AddCold(db, e->Type(), e->Key(),
                     ColdRecord{e->ValueLen(), e->ColdSeq(), e->ColdDiskLen()},
                     e->HasExpire() ? e->ExpireMs() : Entry::kNoExpire);
    return;
  }
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
  if (db >= db_records_.size()) db_records_.resize(db + 1);
  db_records_[db]++;
  writer_->Add(db, e->Type(), e->Key(), value, e->HasExpire() ? e->ExpireMs() : Entry::kNoExpire);
  if (scratch_.capacity() > (4u << 20)) std::string().swap(scratch_);
}

std::vector<std::pair<uint32_t, uint64_t>> ShardSnapshotJob::db_records() const {
  std::vector<std::pair<uint32_t, uint64_t>> out;
  for (uint32_t db = 0; db < db_records_.size(); db++) {
    if (db_records_[db] != 0) out.emplace_back(db, db_records_[db]);
  }
  return out;
}

void ShardSnapshotJob::CaptureEntry(uint32_t db, const Entry* e) {
  Emit(db, e);
  Drain(false);
}

bool ShardSnapshotJob::NeedsPreImage(uint32_t db, uint64_t hash) const {
  if (done_ || db < db_ || (db == db_ && hash < pos_)) return false;  // passed already
  return !filter_ || ranges_->Contains(db, hash);
}

void ShardSnapshotJob::CaptureRest() {
  while (!Step(INT64_MAX / 4)) {
  }
}

bool ShardSnapshotJob::Step(int64_t budget_ns) {
  if (done_) return true;
  int64_t deadline = MonoNs() + budget_ns;
  auto visit = [&](Entry* e) {
    if (e->SnapSkip()) {
      e->SetSnapSkip(false);  // written already, or created after the cut
    } else {
      Emit(db_, e);
    }
  };
  while (db_ < ks_.db_count()) {
    uint64_t range_last = ~0ull;
    if (filter_) {
      // Deltas jump from one dirty range to the next.
      uint32_t id = 0;
      if (!ranges_->NextAtLeast(ranges_->Id(db_, pos_), &id) || ranges_->DbOf(id) != db_) {
        db_++;
        pos_ = 0;
        continue;
      }
      pos_ = std::max(pos_, ranges_->FirstHash(id));
      range_last = ranges_->LastHash(id);
    }
    // One chunk: 1/64 of the segment holding pos_, or less (about fifty entries).
    Table::Segment* seg = ks_.table(db_).SegmentFor(pos_);
    uint64_t seg_first = Table::SegmentFirstHash(seg, pos_);
    uint64_t seg_last = seg->depth == 0 ? ~0ull : seg_first + (~0ull >> seg->depth);
    uint64_t chunk_last = pos_ | (~0ull >> (seg->depth + kChunkBits));
    uint64_t step_last = std::min(seg_last, chunk_last);
    if (filter_ && range_last < step_last &&
        ranges_->AllIn(ranges_->Id(db_, range_last) + 1, ranges_->Id(db_, step_last))) {
      // The ranges up to the chunk's end are all dirty (a run, as after FLUSHDB): one
      // step takes them all rather than one range at a time.
      range_last = step_last;
    }
    uint64_t last = std::min(step_last, range_last);
    // Tags resolve hash bits [depth, depth + 16): a range narrower than that (tiny
    // tables) needs each key's hash checked.
    if (filter_ && seg->depth + 16 < ranges_->bits()) {
      uint64_t first = pos_;
      Table::ForEachInHashRange(seg, pos_, last, [&](Entry* e) {
        uint64_t h = TableHash(e->Key());
        if (h >= first && h <= last) visit(e);
      });
    } else {
      Table::ForEachInHashRange(seg, pos_, last, visit);
    }
    Drain(false);
    if (last == ~0ull) {
      db_++;
      pos_ = 0;
    } else {
      pos_ = last + 1;
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
