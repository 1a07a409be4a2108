// ColdIo: one shard's I/O thread for its ColdStore (docs/ARCHITECTURE.md "The tier").
//
// The shard's worker never waits on the disk: it submits jobs here and gets each one
// back, done, through the completion callback, which runs on the I/O thread and is
// expected to post the job to the worker (Worker::PostExternal).
//   - kRead: MultiGet of the records a batch of parked commands waits for;
//   - kWrite: a batch of puts (values going cold) and erases (disk copies freed);
//   - kCheckpoint: a snapshot's copy of the store (ColdStore::Checkpoint);
//   - kFlush: the memtables written out (their memory freed);
//   - kGc: the files with many dead records rewritten (ColdStore::CollectGarbage). A
//     rewrite takes as long as reading and writing a file, so these run on a second
//     thread of their own, and reads never wait behind them.
// Reads go before queued writes and checkpoints, so a cold read waits for at most the
// job in progress. That is safe: a record a read names was written before its cold
// entry existed, and an erase that overtakes nothing can only make the read miss, which
// the worker sees as the key having changed.
//
// Bounded: the worker limits the bytes it has in flight (ShardTier); queued_bytes() is
// what is queued here, counted in used_memory.
//
// Thread-safety: Submit() and queued_bytes() from any thread; the callback runs on the
// I/O thread (or the GC thread, for kGc). The destructor finishes the jobs queued, drops
// the GC jobs not started, and joins.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "storage/cold_store.h"
#include "storage/status.h"

namespace strata {

struct ColdJob {
  enum class Kind { kRead, kWrite, kCheckpoint, kFlush, kGc };
  Kind kind = Kind::kRead;
  // kRead: the records to read; values[i] is seqs[i]'s (empty: not in the store).
  std::vector<uint64_t> seqs;
  std::vector<std::optional<std::string>> values;
  bool fill_cache = true;  // kRead: the blocks read go into the cache
  // kWrite.
  std::vector<ColdWrite> writes;
  // kCheckpoint: the directory to create. kFlush (the memtables to disk) takes nothing.
  std::string dir;
  // kGc: the dead fraction that gets a file rewritten; the files asked for.
  double gc_dead_fraction = 0;
  size_t gc_files = 0;
  // Bytes the job holds (charged while queued).
  size_t bytes = 0;
  // Set by the I/O thread.
  Status status;
  // The caller's: what to do when the job is back on its worker.
  uint64_t tag = 0;
};

class ColdIo {
 public:
  using Completion = std::function<void(std::unique_ptr<ColdJob>)>;

  ColdIo(ColdStore* store, std::string thread_name, std::string gc_thread_name, Completion done);
  ~ColdIo();
  ColdIo(const ColdIo&) = delete;
  ColdIo& operator=(const ColdIo&) = delete;

  void Submit(std::unique_ptr<ColdJob> job);
  size_t queued_bytes() const { return queued_bytes_.load(std::memory_order_relaxed); }
  size_t queued_jobs() const { return queued_jobs_.load(std::memory_order_relaxed); }

 private:
  void Run();
  void RunGc();
  void Finish(std::unique_ptr<ColdJob> job);
  void Execute(ColdJob& job);

  ColdStore* store_;
  Completion done_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::unique_ptr<ColdJob>> reads_;
  std::deque<std::unique_ptr<ColdJob>> others_;
  std::deque<std::unique_ptr<ColdJob>> gc_;
  std::condition_variable gc_cv_;
  bool stop_ = false;
  std::atomic<size_t> queued_bytes_{0};
  std::atomic<size_t> queued_jobs_{0};
  std::thread thread_;
  std::thread gc_thread_;
};

}  // namespace strata
