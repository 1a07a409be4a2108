// ColdStore: one shard's cold values in RocksDB (docs/ARCHITECTURE.md "The tier").
//
// A record is keyed by the value's spill sequence number (8 bytes, big-endian: records
// are appended in key order, so the files of the tree rarely overlap) and holds its
// canonical serialized form (core/object.h). The cold entry in RAM names its record by
// that number, so RENAME, MOVE, SWAPDB and FLUSHDB never touch the store, and a record
// read back for a key that has since been written is told apart by its number. The
// store holds values whose keys live in RAM: it has no WAL (what survives a crash is
// the last snapshot's checkpoint, Checkpoint()) and is opened empty unless a checkpoint
// is restored into it (RestoreCheckpoint).
//
// Memory: every store of the process charges one ColdCache, an LRU cache that holds the
// data blocks, the index and filter blocks and (through a WriteBufferManager) the
// memtables, so the tier's RAM is one bounded figure, ColdCache::UsageBytes().
//
// Erases: a freed record is not deleted with a tombstone but named dead (a set of
// numbers in RAM, DeadRecordBytes()); a flush or compaction that meets it drops it.
// Records are written once each, with increasing numbers, so without tombstones the
// flushed files do not overlap and sink through the levels without being rewritten: the
// store compacts almost nothing while values come and go. CollectGarbage() rewrites
// the files whose dead share has passed a fraction, so disk space
// follows live data. Reads treat a dead record as absent.
//
// Reads: TryGetCached() reads only the memtables and the block cache and never blocks
// on I/O (it answers kNeedsIo instead); MultiGet() does the I/O and belongs on an I/O
// thread. Writes go in batches (Write). RocksDB is thread-safe: a shard's worker probes
// the cache while its I/O thread reads and writes.
//
// Thread-safety: all methods may be called from any thread; a ColdStore must outlive
// the calls in flight. RocksDB types stay inside cold_store.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "storage/status.h"

namespace strata {

class SeqSet;

// The RAM budget shared by every ColdStore of a process.
class ColdCache {
 public:
  // capacity_bytes: block cache and memtables together; memtables get at most half.
  explicit ColdCache(size_t capacity_bytes);
  ~ColdCache();
  ColdCache(const ColdCache&) = delete;
  ColdCache& operator=(const ColdCache&) = delete;

  size_t capacity_bytes() const;
  // Bytes held now: blocks, index and filter blocks, and memtables (their reservation).
  size_t UsageBytes() const;

  struct Impl;
  Impl* impl() const { return impl_.get(); }

 private:
  std::unique_ptr<Impl> impl_;
};

struct ColdStoreOptions {
  std::string dir;  // created if missing; a store owns its directory
  // Compression of data blocks: "lz4" (default), "zstd" or "none".
  std::string compression = "lz4";
  // Values at least this long go to BlobDB files instead of the LSM tree (0 = never).
  size_t blob_min_bytes = 0;
  // How many stores share the ColdCache: their memtables together take at most half
  // of it (each store's memtable budget is its share).
  size_t stores_sharing_cache = 1;
  // The size of the first level below level 0 (RocksDB's max_bytes_for_level_base);
  // 0 keeps RocksDB's 256 MB. Smaller makes a small store use several levels.
  uint64_t level_base_bytes = 0;
};

// One write of a batch: a value (put) or the removal of a record (erase).
struct ColdWrite {
  uint64_t seq = 0;  // the record's key
  bool erase = false;
  std::string value;  // put: the serialized value
  // erase: every record from seq up to (not including) erase_to, when above seq.
  uint64_t erase_to = 0;
};

class ColdStore {
 public:
  enum class Probe { kFound, kAbsent, kNeedsIo };

  // Opens (creating) the store in options.dir, charging `cache`, which must outlive it.
  // A directory that cannot be created or written is an error naming it.
  static Status Open(const ColdStoreOptions& options, ColdCache* cache,
                     std::unique_ptr<ColdStore>* out);
  ~ColdStore();
  ColdStore(const ColdStore&) = delete;
  ColdStore& operator=(const ColdStore&) = delete;

  // Applies the batch atomically (no WAL: durable once flushed or checkpointed). After a
  // failed write the next one first resumes the store (RocksDB stops writing after a
  // background error such as a full disk), at most once per kResumeIntervalMs: in
  // between, a write fails at once with the last error. Writes must not run
  // concurrently.
  Status Write(const std::vector<ColdWrite>& batch);
  static constexpr uint64_t kResumeIntervalMs = 250;
  // Puts only (erases are refused), in a batch of its own: unlike Write it may run
  // beside another thread's Write. For the records a load copies in (cold_sources.h).
  Status Put(const std::vector<ColdWrite>& batch);
  // Memtables and block cache only; *out is set when kFound. Never waits for the disk.
  Probe TryGetCached(uint64_t seq, std::string* out);
  // Reads every record (I/O allowed); (*out)[i] is empty for one not in the store, and
  // the status is the first error met (then *out is not to be trusted).
  // fill_cache: the blocks read go into the cache (inserting costs about as much as
  // the read when the cache turns over; worth it only when reads come back to them).
  Status MultiGet(const std::vector<uint64_t>& seqs, std::vector<std::optional<std::string>>* out,
                  bool fill_cache = true);
  // The highest record key in the store (0 when empty): a restored store's next
  // sequence number starts above it.
  uint64_t MaxSeq() const;
  // Flushes the memtables and writes a consistent copy of the store into `dir` (which
  // must not exist) by hard-linking its files: cost proportional to what the memtables
  // held, not to the store's size.
  Status Checkpoint(const std::string& dir);
  // Writes the memtables out and waits: their memory (reserved in the ColdCache) is
  // freed. For when nothing is left to spill and that memory is all the store can give.
  Status FlushMemtables();
  // Bytes the memtables take now (active and immutable).
  uint64_t MemtableBytes() const;
  // Replaces the contents of `live_dir` by a copy of checkpoint `from` (SST and blob
  // files hard-linked, the rest copied), so the store opened there never changes the
  // checkpoint. A missing or damaged checkpoint is an error naming it.
  static Status RestoreCheckpoint(const std::string& from, const std::string& live_dir);
  // Rocksdb's cumulative compaction writes, in bytes.
  uint64_t CompactionBytes() const;
  // Compactions running now, and RocksDB's estimate of the bytes left to compact.
  uint64_t CompactionsRunning() const;
  uint64_t PendingCompactionBytes() const;
  // Flushes the memtables and compacts every file (after many deletes: disk space
  // follows live data).
  Status CompactAll();
  // Rewrites (compacts in place, at its level; level 0's to the level below) every file
  // whose dead records are at least min_dead_fraction of it, the deadest first; *files_rewritten
  // says how many. Takes as long as the rewrites: for a thread that serves no reads.
  // Choosing is cheap (per file, a count over the dead set).
  Status CollectGarbage(double min_dead_fraction, size_t* files_rewritten);
  // Dead records not yet dropped, the RAM their set takes (as of the last
  // CollectGarbage), and the records dropped so far.
  uint64_t DeadRecords() const;
  size_t DeadRecordBytes() const;
  uint64_t DroppedRecords() const;
  // After a checkpoint is restored and the snapshot loaded: every record numbered up to
  // max_seq that no cold entry names is dead. The caller (one thread) begins the
  // sweep, names each live record, and ends it; until the end nothing is marked.
  void BeginOrphanSweep(uint64_t max_seq);
  void KeepRecord(uint64_t seq);
  // Returns how many records were marked dead.
  uint64_t EndOrphanSweep();
  // Bytes of the live SST and blob files on disk.
  uint64_t DiskBytes() const;
  // Table readers not held in the cache (RocksDB's estimate; small, counted apart).
  uint64_t TableReaderBytes() const;
  const std::string& dir() const { return dir_; }

  // Free disk space. Below the reserve, nothing more is handed to RocksDB: a write of
  // new records, a flush, a checkpoint or a compaction fails with kNoSpace at once, and a
  // garbage rewrite waits for room. RocksDB itself must not meet a full disk: after a
  // failed file write it may use the failed writer again, which its builds with
  // assertions stop the process for.
  static constexpr uint64_t kFreeSpaceMarginBytes = 1 << 20;
  // 2 x the write buffer (both memtables flushed) + kFreeSpaceMarginBytes.
  static uint64_t FreeSpaceReserve(uint64_t write_buffer_bytes);
  uint64_t FreeBytes() const;

 private:
  struct Impl;
  ColdStore(std::string dir, std::unique_ptr<Impl> impl);
  // Ok with the reserve free, else kNoSpace naming what and the free bytes.
  Status CheckFreeSpace(const std::string& what) const;
  std::string dir_;
  std::unique_ptr<Impl> impl_;
  std::unique_ptr<SeqSet> sweep_;  // BeginOrphanSweep's candidates
};

// The RocksDB key of record seq: its 8 bytes, big-endian.
std::string ColdKey(uint64_t seq);

}  // namespace strata
