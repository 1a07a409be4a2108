// SnapshotManager: when and how the process's snapshots are taken, committed and loaded.
//
// A snapshot (docs/ARCHITECTURE.md "Snapshots", docs/FORMAT.md)
//   1. Request: SAVE, BGSAVE, a `save` rule, the `snapshot-cron` schedule or shutdown
//      asks worker 0, which coordinates every snapshot (one at a time; a request made
//      while one runs is refused or queued, as the command says).
//   2. Cut: worker 0 posts a cut task to every worker. Each opens its temporary file,
//      then all of them meet at a barrier: every shard thread is stopped at that instant,
//      so no command is half-way anywhere except a multi-shard write holding locks. If any
//      shard holds an exclusive lock the attempt is abandoned and retried on the next loop
//      turn (such commands finish within a few hops). Otherwise every shard starts its
//      ShardSnapshotJob (storage/snapshot_job.h) before leaving the barrier: the image is
//      the whole process's data at one instant, consistent across shards and with every
//      client's order of writes. The pause is the time for every thread to reach the
//      barrier (one loop turn).
//   3. Write: each shard writes its file a time slice per loop turn (at most about a
//      quarter of the turn while clients are active), capturing segments that commands are
//      about to change first. When done it writes the trailer and reports to worker 0.
//   4. Commit (a helper thread, so no shard waits on the disk): fsync every shard file,
//      rename it to its final name, write the manifest under a temporary name, fsync,
//      rename over the previous manifest, fsync the directory, delete files no manifest
//      names. A failure anywhere (a full disk) deletes the new files and leaves the
//      previous snapshot as it was; the ranges a failed delta held are handed back so
//      the next snapshot writes them.
//   Full or delta: after a committed snapshot, shards track changed ranges
//   (storage/dirty_ranges.h); the next snapshot is a delta on the same chain while
//   snapshot-incremental is on, the thread count and dbfilename are unchanged and fewer
//   than snapshot-max-deltas deltas follow the base; otherwise it is full.
//
// Loading: PrepareLoad() (main thread, before the workers start) reads the manifest and
// checks the files it names - or, when import-rdb names a file or dbfilename holds a
// Redis RDB, checks that file's header (storage/rdb_loader.h); each worker then loads its share a
// slice per loop turn (storage/snapshot_loader.h), all in parallel, while clients get -LOADING. A
// damaged file stops the server with the file and offset, unless snapshot-on-corrupt is start-empty
// (then every shard drops what it loaded and the server starts empty).
//
// Reloading (DEBUG RELOAD), on worker 0: take the loading gate first, so other clients
// get -LOADING from then on; let two rounds of no-op tasks reach every worker, so a
// command dispatched before the gate (a hop still in a worker's inbox) has run, and more
// rounds until one finds no lock held or queued on any shard (a fiber across shards, or
// a command waiting behind one, still writing) and no worker with a batch of commands
// to another shard out (a batch and the save's cut can reach a shard in one pass, the
// cut first): at most kReloadDrainLimitMs; then
// take a snapshot as SAVE does (unless NOSAVE); check the files as at start-up; flush
// every shard (unless NOFLUSH: loaded keys then replace keys of the same name); and
// load on every shard in parallel as at start-up. The gate opens when the last shard
// has loaded, and the caller's `done` gets the result. Nothing is flushed when the save
// or the check fails. A file found damaged mid-load leaves the server empty, as
// snapshot-on-corrupt start-empty would (Redis leaves what it loaded), never exits it.
// Refused while the spill tier is on: spilled values live in its stores, which a
// reload would have to swap under the shards.
//
// With `save ""` and no snapshot-cron, nothing runs unless asked for (SAVE, BGSAVE,
// SHUTDOWN SAVE), and no change tracking is installed.
//
// Thread-safety: coordinator state is touched only on worker 0; per-shard state only on
// its worker; counters read by INFO are atomics or under info_mu_.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "server/base/cron_schedule.h"
#include "server/engine/engine.h"
#include "server/persistence/snapshot_pace.h"
#include "storage/dirty_ranges.h"
#include "storage/manifest.h"
#include "storage/snapshot_job.h"
#include "storage/snapshot_loader.h"
#include "storage/status.h"

namespace strata {

class Worker;
class TierService;

class SnapshotManager final : public ShardService {
 public:
  enum class Reason { kSave, kBgsave, kRule, kCron, kShutdown, kReplica };
  using Done = std::function<void(const Status&)>;

  // Main thread, before the engine starts; the process adds it as a service.
  explicit SnapshotManager(Engine* engine);
  ~SnapshotManager() override;

  // Main thread, before PrepareLoad: the spill tier, when spill-dir is set. Snapshots
  // then commit each shard's spill store as a checkpoint with the manifest, and loading
  // restores it (docs/FORMAT.md "Cold records").
  void set_tier(TierService* t) { tier_ = t; }
  // Main thread, after PrepareLoad: the checkpoint each shard's spill store is restored
  // from (full paths; empty when the snapshot has none).
  std::vector<std::string> ColdCheckpointsToLoad() const;
  // Main thread, before the workers start. Reads the manifest, if any, and checks that
  // the files it names are there with their sizes. A problem is returned (the caller
  // refuses to start) unless snapshot-on-corrupt is start-empty.
  Status PrepareLoad();
  // While a snapshot loads, it holds the engine's loading gate (Engine::loading()).
  bool loading() const { return engine_->loading(); }
  // Set when loading failed and the server must exit with this message.
  std::string fatal_error() const;

  // ShardService hooks, on each worker's thread.
  void OnWorkerStart(Worker& w) override;
  // Steps this shard's load or snapshot job. turn_ns: time the rest of this loop turn
  // took; busy: it ran commands. While clients are served, a snapshot gets at most
  // 1/SnapshotPace::kShareDivisor of the time (snapshot_pace.h).
  void OnWorkerTurn(Worker& w, int64_t turn_ns, bool busy) override;
  // True while this shard has a load to step, or a snapshot job that may step now (the
  // loop must not sleep). A job waiting for its share while clients are served is not
  // work now: the worker may sleep, for at most SleepBoundMs.
  bool HasWork(const Worker& w) const override;
  int64_t SleepBoundMs(const Worker& w) const override;
  // Worker 0's timer: `save` rules and snapshot-cron.
  void OnTimer(Worker& w) override;

  // Any worker: asks for a snapshot. `done` runs on the calling worker with the result.
  // When one is already running: with queue, the request runs after it; otherwise
  // `done` gets an error at once ("Background save already in progress").
  void Request(Reason reason, bool queue, Done done);
  bool in_progress() const { return in_progress_.load(std::memory_order_acquire); }
  // Any thread (main, at SIGTERM): runs a snapshot and waits for it.
  Status SaveAndWait(Reason reason);
  // True when `save` has rules or snapshot-cron is set (SIGTERM then saves).
  bool AutoSaveEnabled() const;
  // Any worker: DEBUG RELOAD, or a replica's load of its master's RDB (see above).
  // `done` runs on the calling worker: Ok, or an error reply's text.
  struct ReloadOptions {
    bool save = true;
    bool flush = true;
    // An RDB file to load instead of dbfilename's data (a replica's full sync; no save).
    std::string rdb;
    // The transaction (Client::txn_owner) whose EXEC runs this reload, or 0. Its locks
    // stay held until the reload ends, so no cut meanwhile (the reload's save, or a
    // snapshot already running that the save waits for) takes them for a half-applied
    // write: the commands it ran before are whole, as in Redis.
    uint64_t owner = 0;
  };
  void Reload(ReloadOptions o, Done done);
  // Worker 0: a full resync's image (persistence/repl_master.h). A full snapshot (it is
  // also the process's newest snapshot) whose cut also reads the replication stream's
  // counter: at_cut(counter) runs on worker 0 right after the cut, before worker 0 does
  // anything else, so no record numbered at or above it has been merged yet. done runs on
  // worker 0 when it is committed: its shard files, opened for reading (the caller closes
  // them; a later snapshot may delete the names), the function libraries it holds, and
  // each database's key count at the cut, summed over the shards (the RDB's RESIZEDB).
  struct Image {
    std::vector<int> fds;
    std::vector<std::string> functions;
    std::vector<uint64_t> db_keys;
  };
  using ImageDone = std::function<void(const Status&, Image)>;
  void RequestImage(std::function<void(uint64_t)> at_cut, ImageDone done);
  int64_t last_save_time() const { return last_save_s_.load(std::memory_order_relaxed); }
  // INFO persistence.
  void AppendInfo(std::string* out) const;

 private:
  struct Shard;
  struct Cut;
  struct Run;
  struct ReloadRun;
  struct Request_ {
    Request_(Reason r, uint32_t o, Done d) : reason(r), origin(o), done(std::move(d)) {}
    Reason reason;
    uint32_t origin;
    Done done;
    std::function<void(uint64_t)> at_cut;  // RequestImage's
    ImageDone image_done;
  };
  // Worker 0.
  void Enqueue(Request_ r);
  void StartNext();
  void PostCut();
  void OnCutAck(uint32_t shard, bool ok, bool conflict, const std::string& error);
  void OnShardWritten(uint32_t shard, Status st, int fd, uint64_t bytes, uint64_t records);
  void Commit();
  void OnCommitted(Status st, Manifest m);
  void Finish(const Status& st);
  // A shard's side of the cut (on every worker).
  void CutOnShard(Worker& w, std::shared_ptr<Cut> cut);
  void StepLoad(Worker& w, Shard& sh);
  std::string FileName(uint64_t seq, uint32_t shard) const;
  // The shard's spill checkpoint directory for snapshot seq.
  std::string ColdName(uint64_t seq, uint32_t shard) const;
  // Posts this shard's written report to worker 0 once its file and its checkpoint are
  // both done.
  void ReportWritten(Worker& w, Shard& sh);
  // Whether the shards track changes from the next cut (or load) on: snapshot-incremental.
  bool WantTracking() const;
  // The width of the dirty ranges this server tracks (RangeSet::BitsFor its databases).
  uint32_t RangeBits() const;
  // Reads the manifest at `path` and checks the files it names in `dir` (sizes, spill
  // checkpoints), restoring its function libraries on the way (replace_all as
  // FunctionStore::RestoreCodes). *found is false when there is no manifest.
  Status CheckManifest(const std::string& dir, const std::string& path, bool replace_functions,
                       Manifest* m, bool* found);
  // Creates this shard's load job for load_rdb_ or load_manifest_ (none when neither).
  void StartLoadJob(Worker& w);
  // Reload steps, on worker 0.
  void ReloadDrain(int rounds);
  // How long a reload waits for the commands that hold locks to finish before it saves.
  static constexpr int64_t kReloadDrainLimitMs = 10000;
  void ReloadLoad();
  void FinishReload(const Status& st);

  Engine* engine_;
  TierService* tier_ = nullptr;
  std::vector<std::unique_ptr<Shard>> shards_;
  std::atomic<bool> in_progress_{false};
  std::atomic<int64_t> last_save_s_{0};
  // Shards still loading, and shards dropping a damaged load; each also holds the
  // engine's loading gate.
  std::atomic<uint32_t> loading_shards_{0};
  // cluster-enabled yes: keys the load put in databases other than 0.
  std::atomic<uint64_t> keys_outside_db0_{0};
  std::atomic<uint32_t> flush_pending_{0};
  std::atomic<int64_t> current_start_ms_{0};

  // Worker 0 only.
  std::unique_ptr<Run> run_;
  std::unique_ptr<ReloadRun> reload_;
  // Set by worker 0 before a reload's load tasks are posted, cleared when it ends: a
  // damaged file then empties the server instead of stopping it.
  std::atomic<bool> reloading_{false};
  std::vector<Request_> queue_;
  std::optional<Manifest> manifest_;  // the committed chain
  std::string manifest_dbfilename_;
  bool tracking_valid_ = false;  // every shard tracked changes since manifest_'s cut
  uint64_t next_seq_ = 1;
  int64_t last_try_ms_ = 0;
  bool last_failed_ = false;
  std::string cron_text_;
  CronSchedule cron_;
  int64_t cron_next_s_ = -1;
  std::thread committer_;

  // The load: set on the main thread before workers start, or by worker 0 for a reload
  // before it posts the load tasks; read-only while shards load.
  std::optional<Manifest> load_manifest_;
  std::string load_rdb_;  // a Redis RDB file to load instead (rdb_loader.h)
  std::string load_dir_;
  int64_t load_start_ms_ = 0;

  mutable std::mutex info_mu_;
  std::vector<std::string> rdb_functions_;  // an RDB's libraries, under info_mu_ until loaded
  struct Info {
    std::string last_status = "ok";
    std::string last_error;
    std::string last_kind = "none";
    int64_t last_duration_s = -1;
    uint64_t saves = 0;
    uint64_t last_bytes = 0;
    uint64_t last_records = 0;
    int64_t last_cut_us = 0;
    uint64_t cut_retries = 0;
    uint64_t chain_length = 0;
    uint64_t loaded = 0, expired = 0, skipped = 0, functions = 0, cold_copied = 0;
    int64_t load_duration_ms = 0;
    std::string fatal;
  } info_;
};

}  // namespace strata
