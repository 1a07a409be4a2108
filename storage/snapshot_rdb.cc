#include "storage/snapshot_rdb.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>

namespace strata {

namespace {
// The mapped file's pages read are given back every this many bytes: they count in the
// master's RSS while a full resync runs (8 MB let it swing by about 7 MB).
constexpr size_t kDropBytes = 2u << 20;
}  // namespace

SnapshotRdbEncoder::SnapshotRdbEncoder(std::vector<int> fds, std::vector<std::string> functions,
                                       const rdb::RdbWriter::Options& opts,
                                       std::string redis_version, std::vector<uint64_t> db_keys)
    : fds_(std::move(fds)),
      functions_(std::move(functions)),
      db_keys_(std::move(db_keys)),
      redis_version_(std::move(redis_version)),
      writer_(opts) {}

SnapshotRdbEncoder::~SnapshotRdbEncoder() {
  CloseFile();
  for (int fd : fds_) {
    if (fd >= 0) close(fd);
  }
}

void SnapshotRdbEncoder::CloseFile() {
  if (map_ != nullptr && map_len_ > 0) munmap(const_cast<char*>(map_), map_len_);
  map_ = nullptr;
  map_len_ = 0;
  dropped_ = 0;
  file_open_ = false;
}

Status SnapshotRdbEncoder::OpenFile(size_t i) {
  std::string name = "snapshot shard file " + std::to_string(i);
  struct stat st {};
  if (fstat(fds_[i], &st) != 0) return Status::FromErrno("fstat " + name, errno);
  map_len_ = static_cast<size_t>(st.st_size);
  if (map_len_ > 0) {
    void* p = mmap(nullptr, map_len_, PROT_READ, MAP_PRIVATE, fds_[i], 0);
    if (p == MAP_FAILED) {
      map_len_ = 0;
      return Status::FromErrno("mmap " + name, errno);
    }
    map_ = static_cast<const char*>(p);
    madvise(p, map_len_, MADV_SEQUENTIAL);
  }
  file_open_ = true;
  reader_ = ShardSnapshotReader();
  return reader_.Open(std::string_view(map_ == nullptr ? "" : map_, map_len_), name);
}

Status SnapshotRdbEncoder::Next(size_t piece, std::string* out, bool* done) {
  *done = false;
  if (finished_) {
    *done = true;
    return Status::Ok();
  }
  if (!started_) {
    started_ = true;
    writer_.Header(redis_version_, static_cast<int64_t>(time(nullptr)), 0);
    for (const std::string& code : functions_) writer_.Function(code);
  }
  auto sink = [this](uint32_t db, ValueType type, std::string_view key, std::string_view value,
                     int64_t expire_ms) -> Status {
    if (static_cast<int64_t>(db) != db_) {
      writer_.SelectDb(db, db < db_keys_.size() ? db_keys_[db] : 0, 0);
      db_ = db;
    }
    writer_.Key(type, key, value, expire_ms);
    return Status::Ok();
  };
  while (writer_.output().size() < piece) {
    if (file_ >= fds_.size()) {
      writer_.End();
      finished_ = true;
      *done = true;
      break;
    }
    if (!file_open_) {
      Status s = OpenFile(file_);
      if (!s.ok()) return s;
    }
    bool file_done = false;
    Status s = reader_.Next(sink, 256, &file_done);
    if (!s.ok()) return s;
    // The pages read are dropped as it goes: the mapping is not the master's memory.
    size_t page = 4096;
    size_t done_to = reader_.offset() / page * page;
    if (map_ != nullptr && done_to > dropped_ + kDropBytes) {
      madvise(const_cast<char*>(map_) + dropped_, done_to - dropped_, MADV_DONTNEED);
      dropped_ = done_to;
    }
    if (file_done) {
      CloseFile();
      file_++;
    }
  }
  out->append(writer_.TakeOutput());
  return Status::Ok();
}

}  // namespace strata
