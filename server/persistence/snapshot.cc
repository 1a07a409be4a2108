#include "server/persistence/snapshot.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <future>
#include <system_error>

#include "core/split_args.h"
#include "core/string_util.h"
#include "server/base/config.h"
#include "server/base/log.h"
#include "server/engine/engine.h"
#include "server/engine/function_store.h"
#include "server/engine/worker.h"
#include "server/persistence/tier_service.h"
#include "storage/file_io.h"
#include "storage/mono_clock.h"
#include "storage/rdb_loader.h"

namespace strata {

namespace {

// A barrier for the shard threads: each arrives and waits until all have. While waiting
// a worker keeps pushing its outbox, where the cut tasks for the others may still sit
// (a full ring is retried), so the wait cannot depend on a message it holds back; and it
// serves synchronous hops (sync_hop.h): a worker running a script across shards reaches
// the barrier only once its script ends, which may need this worker's shard first.
void Arrive(Worker& w, std::atomic<uint32_t>& a, uint32_t n) {
  a.fetch_add(1, std::memory_order_acq_rel);
  while (a.load(std::memory_order_acquire) < n) {
    w.FlushPosts();
    if (w.RunHops()) continue;
    timespec ts{0, 20 * 1000};
    nanosleep(&ts, nullptr);
  }
}

constexpr int64_t kLoadStepNs = 20 * 1000 * 1000;  // loading: clients only get -LOADING
constexpr int kMaxCutAttempts = 100000;
constexpr int kReportCutAttempts = 10000;       // a cut that keeps conflicting is logged
constexpr int64_t kRetryAfterFailureMs = 5000;  // as Redis's CONFIG_BGSAVE_RETRY_DELAY

}  // namespace

struct SnapshotManager::Shard {
  std::unique_ptr<ShardSnapshotJob> job;
  bool reported = false;
  SnapshotPace pace;  // the traversal's share of the worker's time
  std::unique_ptr<LoadJob> load;
  std::unique_ptr<DirtyRanges> tracker;
  uint64_t changes_at_cut = 0;
  std::vector<uint64_t> db_keys_at_cut;  // each database's keys (written at the cut)
  std::atomic<uint64_t> changes_saved{0};
  std::atomic<uint64_t> changes_now{0};
  std::atomic<uint64_t> bytes_written{0};
  std::atomic<uint64_t> keys_visited{0};
  std::atomic<uint64_t> buffer_bytes{0};
  std::atomic<uint64_t> load_read{0};
  std::atomic<uint64_t> load_total{0};
  // The spill checkpoint of the snapshot being written: pending until the I/O thread
  // has made it; the file's report waits for it.
  bool cold_pending = false;
  uint64_t cold_gen = 0;  // counts checkpoints asked for: an abandoned one is ignored
  Status cold_status;
  std::string cold_name;
  std::function<void()> report;
};

struct SnapshotManager::Cut {
  std::atomic<uint32_t> arrived1{0};
  std::atomic<uint32_t> arrived2{0};
  std::atomic<uint32_t> conflicts{0};
  std::atomic<uint32_t> failures{0};
  std::mutex mu;
  std::string error;
  // Set by worker 0 before posting; read-only afterwards.
  SnapshotHeader header;
  BlockCodec codec = BlockCodec::kLz4;
  bool tracking = false;
  std::vector<std::string> tmp_paths;
  std::string dir;
  std::vector<std::string> cold_names;  // per shard, when the tier is on
  int64_t posted_ns = 0;
  uint64_t repl_counter = 0;  // the replication stream's counter at the cut (shard 0)
  uint64_t owner = 0;         // a waiting transaction, whose locks are not a conflict
  int attempt = 0;            // Run::attempts when posted
};

struct SnapshotManager::Run {
  std::vector<Request_> waiters;
  SnapshotKind kind = SnapshotKind::kFull;
  uint64_t seq = 0;
  int64_t start_ms = 0;
  int64_t created_ms = 0;
  std::string dir;
  std::string dbfilename;
  BlockCodec codec = BlockCodec::kLz4;
  bool tracking = false;
  int attempts = 0;
  uint32_t acks = 0;
  bool ack_conflict = false;
  std::string ack_error;
  int64_t cut_ns = 0;
  uint32_t written = 0;
  Status first_error;
  std::vector<int> fds;
  std::vector<ManifestFile> files;
  std::vector<std::string> functions;  // the libraries' code at the cut
  std::shared_ptr<Cut> cut;
};

struct SnapshotManager::ReloadRun {
  ReloadOptions options;
  uint32_t origin = 0;
  Done done;
  uint32_t acks = 0;
  bool busy = false;  // a shard had locks held or queued, or a worker a batch out, this round
  int64_t drain_start_ms = 0;
  bool loads_hold_gate = false;  // the gate's holds went to the shards' load jobs
};

SnapshotManager::SnapshotManager(Engine* engine) : engine_(engine) {
  last_save_s_.store(WallClockMs() / 1000);
  for (uint32_t i = 0; i < engine->shard_count(); i++) shards_.push_back(std::make_unique<Shard>());
}

SnapshotManager::~SnapshotManager() {
  if (committer_.joinable()) committer_.join();
}

std::string SnapshotManager::FileName(uint64_t seq, uint32_t shard) const {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "-%06" PRIu64 "-%u.snap", seq, shard);
  return run_->dbfilename + buf;
}

std::string SnapshotManager::ColdName(uint64_t seq, uint32_t shard) const {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "-%06" PRIu64 "-%u.cold", seq, shard);
  return run_->dbfilename + buf;
}

bool SnapshotManager::AutoSaveEnabled() const {
  Config& c = engine_->config();
  return !c.String("save").empty() || !c.String("snapshot-cron").empty();
}

uint32_t SnapshotManager::RangeBits() const {
  return RangeSet::BitsFor(static_cast<uint32_t>(engine_->config().Int("databases")));
}

bool SnapshotManager::WantTracking() const {
  // Save rules or not: once a snapshot is taken (or a chain loaded), changes are tracked
  // so that the next one, a manual BGSAVE included, can be a delta.
  return engine_->config().Bool("snapshot-incremental");
}

std::string SnapshotManager::fatal_error() const {
  std::lock_guard<std::mutex> l(info_mu_);
  return info_.fatal;
}

// ---------------------------------------------------------------------------- loading

void SnapshotManager::OnWorkerStart(Worker& w) { StartLoadJob(w); }

void SnapshotManager::StartLoadJob(Worker& w) {
  Shard& sh = *shards_[w.index()];
  if (!load_rdb_.empty()) {
    RdbShardLoadJob::Options o;
    o.skip_modules = engine_->config().Bool("import-rdb-skip-modules");
    o.verify_checksum = engine_->config().Bool("rdbchecksum");
    o.max_string_bytes = static_cast<uint64_t>(engine_->config().Int("proto-max-bulk-len"));
    o.keep_expired_keys = engine_->replication().is_replica();
    sh.load = std::make_unique<RdbShardLoadJob>(w.keyspace(), load_rdb_, w.index(),
                                                engine_->shard_count(), o);
  } else if (load_manifest_) {
    auto job = std::make_unique<ShardLoadJob>(w.keyspace(), load_dir_, *load_manifest_, w.index(),
                                              engine_->shard_count());
    if (tier_ != nullptr && !ColdCheckpointsToLoad().empty()) {
      if (load_manifest_->shard_count == engine_->shard_count()) {
        job->AllowCold();
      } else {
        // Another thread count: the records are copied into the shard's own store.
        TierService* tier = tier_;
        uint32_t shard = w.index();
        job->AllowColdResharded(tier->reshard_sources(), [tier, shard] {
          ShardLoadJob::ColdTarget t;
          ShardTier* st = tier->tier(shard);
          if (st == nullptr) return t;
          t.store = st->store();
          t.take_seqs = [st](size_t n) { return st->TakeSeqs(n); };
          return t;
        });
      }
    }
    sh.load = std::move(job);
    sh.load_total.store(sh.load->stats().bytes_total);
  }
}

void SnapshotManager::StepLoad(Worker& w, Shard& sh) {
  bool done = false;
  Status s = sh.load->Step(kLoadStepNs, w.now_ms(), &done);
  sh.load_read.store(sh.load->stats().bytes_read, std::memory_order_relaxed);
  if (!s.ok()) {
    bool empty = engine_->config().String("snapshot-on-corrupt") == "start-empty";
    LogWarning("Can't load the snapshot: %s", s.message().c_str());
    sh.load.reset();
    bool reload = reloading_.load(std::memory_order_acquire);
    if (!empty && !reload) {
      {
        std::lock_guard<std::mutex> l(info_mu_);
        info_.fatal = s.message();
      }
      LogWarning(
          "Refusing to start with a damaged snapshot (set snapshot-on-corrupt start-empty "
          "to start with no data instead)");
      engine_->RequestExit(1);
      return;
    }
    // Nothing of a partial load is kept: every shard, finished or not, drops its data
    // before loading() turns false.
    uint32_t n = engine_->shard_count();
    engine_->HoldLoading(n);
    flush_pending_.fetch_add(n);
    loading_shards_.fetch_sub(1);
    engine_->ReleaseLoading(1);
    for (uint32_t i = 0; i < n; i++) {
      w.Post(i, MakeTask([this, reload] {
               Worker& x = *Worker::Current();
               Shard& xs = *shards_[x.index()];
               if (xs.load != nullptr) {
                 xs.load.reset();
                 loading_shards_.fetch_sub(1);
                 engine_->ReleaseLoading(1);
               }
               x.keyspace().FlushAll(false);
               bool last = flush_pending_.fetch_sub(1) == 1;
               engine_->ReleaseLoading(1);
               if (!last) return;
               if (!reload) {
                 LogWarning("Started with no data (snapshot-on-corrupt start-empty)");
                 return;
               }
               LogWarning("DEBUG RELOAD: the server is left empty");
               x.Post(0, MakeTask([this] {
                        FinishReload(Status::InvalidArgument(
                            "ERR Error trying to load the RDB dump, check server logs."));
                      }));
             }));
    }
    return;
  }
  if (!done) return;
  {
    std::lock_guard<std::mutex> l(info_mu_);
    info_.loaded += sh.load->stats().keys_loaded;
    info_.cold_copied += sh.load->stats().cold_copied;
    info_.expired += sh.load->stats().keys_expired;
    info_.skipped += sh.load->stats().keys_skipped;
    info_.functions += sh.load->stats().functions;
    for (const std::string& code : sh.load->stats().function_codes) rdb_functions_.push_back(code);
  }
  sh.load.reset();
  if (engine_->process().cluster_yes) {
    // Redis Cluster has database 0 only: keys elsewhere stop the server (below).
    for (uint32_t db = 1; db < w.keyspace().db_count(); db++) {
      keys_outside_db0_.fetch_add(w.keyspace().DbSize(db), std::memory_order_relaxed);
    }
  }
  // Changes after the load are what the next delta on this chain must write (after an
  // RDB the next snapshot is a full one).
  if (load_manifest_ && WantTracking() && load_manifest_->shard_count == engine_->shard_count()) {
    sh.tracker = std::make_unique<DirtyRanges>(RangeBits());
    w.keyspace().set_change_tracker(sh.tracker.get());
  }
  sh.changes_saved.store(w.keyspace().changes());
  bool last = loading_shards_.fetch_sub(1) == 1;
  engine_->ReleaseLoading(1);
  if (last && tier_ != nullptr) tier_->ReleaseReshardSources();  // no load uses them now
  if (last) {
    // A reload's reply comes after the libraries of an RDB are in and after the chain's
    // hand-over (worker 0 runs the tasks in the order they are posted).
    bool reload = reloading_.load(std::memory_order_acquire);
    auto reply_reload = [&] {
      if (reload) w.Post(0, MakeTask([this] { FinishReload(Status::Ok()); }));
    };
    int64_t ms = WallClockMs() - load_start_ms_;
    uint64_t loaded = 0, expired = 0;
    {
      std::lock_guard<std::mutex> l(info_mu_);
      info_.load_duration_ms = ms;
      loaded = info_.loaded;
      expired = info_.expired;
    }
    LogNotice("DB loaded from disk: %.3f seconds (%" PRIu64 " keys, %" PRIu64 " expired)",
              static_cast<double>(ms) / 1000, loaded, expired);
    if (uint64_t outside = keys_outside_db0_.exchange(0); outside > 0) {
      LogWarning("You can't have keys in a DB different than DB 0 when in Cluster mode (%" PRIu64
                 " keys in other DBs). Exiting.",
                 outside);
      engine_->RequestExit(1);
    }
    uint64_t copied = 0;
    {
      std::lock_guard<std::mutex> l(info_mu_);
      copied = info_.cold_copied;
    }
    if (copied > 0) {
      LogNotice("Spill tier: %" PRIu64 " spilled values copied from the stores of %u threads",
                copied, load_manifest_ ? load_manifest_->shard_count : 0);
    }
    if (!load_rdb_.empty()) {
      std::lock_guard<std::mutex> l(info_mu_);
      if (info_.skipped > 0) {
        LogNotice("RDB: %" PRIu64 " empty keys and module values skipped", info_.skipped);
      }
      if (!rdb_functions_.empty()) {
        std::string error;
        if (FunctionStore::Get().RestoreCodes(rdb_functions_, true, &error)) {
          LogNotice("RDB: %zu function libraries loaded", rdb_functions_.size());
        } else {
          LogWarning("RDB: its function libraries were not loaded: %s", error.c_str());
        }
        rdb_functions_.clear();
      }
      reply_reload();
      return;
    }
    // The loaded chain is the one the next snapshot extends.
    Worker& w0 = engine_->worker(0);
    bool same = load_manifest_->shard_count == engine_->shard_count();
    Manifest m = *load_manifest_;
    std::string name = engine_->config().String("dbfilename");
    bool tracking = WantTracking() && same;
    w.Post(0, MakeTask([this, m, name, tracking] {
             manifest_ = m;
             manifest_dbfilename_ = name;
             tracking_valid_ = tracking;
           }));
    (void)w0;
    reply_reload();
  }
}

// ---------------------------------------------------------------------------- per turn

bool SnapshotManager::HasWork(const Worker& w) const {
  const Shard& sh = *shards_[w.index()];
  if (sh.load != nullptr) return true;
  // A traversal waiting for its share while clients are served lets the worker sleep
  // until input comes (SnapshotPace: spinning would spend the time it rations).
  return sh.job != nullptr && !sh.reported && sh.pace.Ready(MonoNs());
}

int64_t SnapshotManager::SleepBoundMs(const Worker& w) const {
  const Shard& sh = *shards_[w.index()];
  if (sh.job == nullptr || sh.reported) return -1;
  return (SnapshotPace::kSleepBoundNs + 999999) / 1000000;
}

void SnapshotManager::OnWorkerTurn(Worker& w, int64_t turn_ns, bool busy) {
  Shard& sh = *shards_[w.index()];
  sh.changes_now.store(w.keyspace().changes(), std::memory_order_relaxed);
  if (sh.load != nullptr) {
    StepLoad(w, sh);
    return;
  }
  if (sh.job == nullptr || sh.reported) return;
  // Idle: a long slice. Busy: a budget earned from the time spent serving clients, so
  // a loop turn that runs only a few commands cannot hand most of its time over.
  // Clients count as active until a while after their last command: between two
  // batches of requests a turn often runs none.
  int64_t t0 = MonoNs();
  int64_t budget = sh.pace.OnTurn(t0, turn_ns, busy);
  if (budget == 0) return;
  bool done = sh.job->Step(budget);
  // A step finishes its chunk past the budget: the overrun is owed by later turns.
  sh.pace.Stepped(MonoNs() - t0);
  sh.bytes_written.store(sh.job->bytes_written(), std::memory_order_relaxed);
  sh.keys_visited.store(sh.job->keys_visited(), std::memory_order_relaxed);
  sh.buffer_bytes.store(sh.job->buffer_bytes(), std::memory_order_relaxed);
  if (!done) return;
  Status st = sh.job->Finish();
  sh.reported = true;
  sh.bytes_written.store(sh.job->bytes_written(), std::memory_order_relaxed);
  sh.buffer_bytes.store(0, std::memory_order_relaxed);
  int fd = sh.job->ReleaseFd();
  uint64_t bytes = sh.job->bytes_written(), records = sh.job->records();
  auto per_db = sh.job->db_records();
  uint32_t index = w.index();
  sh.report = [this, &w, &sh, index, st, fd, bytes, records, per_db] {
    Status s = st.ok() ? sh.cold_status : st;
    std::string cold = sh.cold_name;
    w.Post(0, MakeTask([this, index, s, fd, bytes, records, per_db, cold] {
             run_->files[index].db_records = per_db;
             run_->files[index].cold = cold;
             OnShardWritten(index, s, fd, bytes, records);
           }));
  };
  ReportWritten(w, sh);
}

void SnapshotManager::ReportWritten(Worker& w, Shard& sh) {
  (void)w;
  if (sh.cold_pending || !sh.report) return;
  auto report = std::move(sh.report);
  sh.report = nullptr;
  report();
}

// ---------------------------------------------------------------------------- requests

void SnapshotManager::RequestImage(std::function<void(uint64_t)> at_cut, ImageDone done) {
  Request_ r{Reason::kReplica, 0, [](const Status&) {}};
  r.at_cut = std::move(at_cut);
  r.image_done = std::move(done);
  Enqueue(std::move(r));
}

void SnapshotManager::Request(Reason reason, bool queue, Done done) {
  Worker* w = Worker::Current();
  uint32_t origin = w->index();
  if (loading()) {
    done(Status::InvalidArgument("LOADING Redis is loading the dataset in memory"));
    return;
  }
  if (!queue && in_progress()) {
    done(Status::InvalidArgument("ERR Background save already in progress"));
    return;
  }
  auto task = [this, reason, origin, queue, done = std::move(done)]() mutable {
    if (!queue && run_ != nullptr) {
      Request_ r{reason, origin, std::move(done)};
      Worker::Current()->Post(
          r.origin, MakeTask([r] {
            r.done(Status::InvalidArgument("ERR Background save already in progress"));
          }));
      return;
    }
    Enqueue(Request_{reason, origin, std::move(done)});
  };
  if (origin == 0) {
    task();
  } else {
    w->Post(0, MakeTask(std::move(task)));
  }
}

Status SnapshotManager::SaveAndWait(Reason reason) {
  auto promise = std::make_shared<std::promise<Status>>();
  std::future<Status> f = promise->get_future();
  engine_->worker(0).PostExternal(MakeTask([this, reason, promise] {
    Request(reason, true, [promise](const Status& s) { promise->set_value(s); });
  }));
  return f.get();
}

void SnapshotManager::Enqueue(Request_ r) {
  queue_.push_back(std::move(r));
  if (run_ == nullptr) StartNext();
}

void SnapshotManager::StartNext() {
  if (run_ != nullptr || queue_.empty()) return;
  Config& c = engine_->config();
  run_ = std::make_unique<Run>();
  run_->waiters.swap(queue_);
  run_->start_ms = WallClockMs();
  run_->dir = c.String("dir");
  run_->dbfilename = c.String("dbfilename");
  BlockCodec codec = BlockCodec::kLz4;
  (void)ParseBlockCodec(c.String("snapshot-compression"), &codec);
  run_->codec = codec;
  run_->tracking = WantTracking();
  uint32_t n = engine_->shard_count();
  bool image = false;  // a replica's image must be whole in this snapshot's files
  for (const Request_& r : run_->waiters) image = image || r.image_done != nullptr;
  bool delta = !image && run_->tracking && tracking_valid_ && manifest_.has_value() &&
               manifest_->shard_count == n && manifest_dbfilename_ == run_->dbfilename &&
               manifest_->chain.size() <= static_cast<size_t>(c.Int("snapshot-max-deltas"));
  run_->kind = delta ? SnapshotKind::kDelta : SnapshotKind::kFull;
  run_->seq = next_seq_++;
  run_->fds.assign(n, -1);
  run_->files.assign(n, ManifestFile{});
  in_progress_.store(true, std::memory_order_release);
  current_start_ms_.store(run_->start_ms);
  last_try_ms_ = run_->start_ms;
  static constexpr const char* kWhy[] = {"SAVE",          "BGSAVE",   "save rule",
                                         "snapshot-cron", "shutdown", "replica sync"};
  const char* why = kWhy[static_cast<int>(run_->waiters.front().reason)];
  LogNotice("Snapshot %" PRIu64 " (%s, %s) started", run_->seq, delta ? "incremental" : "full",
            why);
  PostCut();
}

void SnapshotManager::PostCut() {
  uint32_t n = engine_->shard_count();
  auto cut = std::make_shared<Cut>();
  cut->header.kind = run_->kind;
  cut->header.shard_count = n;
  cut->header.seq = run_->seq;
  cut->header.created_ms = WallClockMs();
  run_->created_ms = cut->header.created_ms;
  cut->codec = run_->codec;
  cut->tracking = run_->tracking;
  cut->dir = run_->dir;
  for (uint32_t i = 0; i < n; i++) {
    run_->files[i].name = FileName(run_->seq, i);
    cut->tmp_paths.push_back(JoinPath(run_->dir, run_->files[i].name) + ".tmp");
    if (tier_ != nullptr) cut->cold_names.push_back(ColdName(run_->seq, i));
  }
  // A reload inside EXEC waits for this cut (its save, or the snapshot its save queues
  // behind) while its transaction holds locks: they are not a conflict.
  if (reload_ != nullptr) cut->owner = reload_->options.owner;
  cut->attempt = run_->attempts + 1;
  cut->posted_ns = MonoNs();
  run_->cut = cut;
  // Libraries change only by commands, which do not run while the shards cut; taken as
  // the cut is posted, they are those of every snapshot that commits from it.
  run_->functions = FunctionStore::Get().Codes();
  run_->acks = 0;
  run_->ack_conflict = false;
  run_->ack_error.clear();
  run_->attempts++;
  Worker& w0 = *Worker::Current();
  for (uint32_t i = 0; i < n; i++) {
    w0.Post(i, MakeTask([this, cut] { CutOnShard(*Worker::Current(), cut); }));
  }
}

void SnapshotManager::CutOnShard(Worker& w, std::shared_ptr<Cut> cut) {
  uint32_t n = engine_->shard_count();
  Shard& sh = *shards_[w.index()];
  SnapshotHeader h = cut->header;
  h.shard = w.index();
  auto job =
      std::make_unique<ShardSnapshotJob>(w.keyspace(), cut->tmp_paths[w.index()], cut->codec, h);
  Status open = job->Open();
  if (!open.ok()) {
    cut->failures.fetch_add(1);
    std::lock_guard<std::mutex> l(cut->mu);
    if (cut->error.empty()) cut->error = open.message();
  }
  Arrive(w, cut->arrived1, n);
  // Every shard thread is here: nothing runs anywhere until all pass the second barrier.
  if (w.locks().AnyExclusive(cut->owner)) {
    cut->conflicts.fetch_add(1);
    if (cut->attempt % kReportCutAttempts == 0) {
      LogWarning("Snapshot %" PRIu64
                 ": try %d to cut found shard %u still held by multi-key "
                 "writes (%s)",
                 cut->header.seq, cut->attempt, w.index(), w.locks().DescribeExclusive().c_str());
    }
  }
  if (w.index() == 0) cut->repl_counter = engine_->repl_log().counter();
  Arrive(w, cut->arrived2, n);
  bool conflict = cut->conflicts.load() != 0;
  bool ok = !conflict && cut->failures.load() == 0;
  if (ok) {
    std::unique_ptr<RangeSet> ranges;
    if (sh.tracker != nullptr) ranges = std::make_unique<RangeSet>(sh.tracker->Take());
    if (cut->tracking && sh.tracker == nullptr) {
      sh.tracker = std::make_unique<DirtyRanges>(RangeBits());
      w.keyspace().set_change_tracker(sh.tracker.get());
    } else if (!cut->tracking && sh.tracker != nullptr) {
      w.keyspace().set_change_tracker(nullptr);
      sh.tracker.reset();
    }
    sh.changes_at_cut = w.keyspace().changes();
    sh.db_keys_at_cut.resize(w.keyspace().db_count());
    for (uint32_t db = 0; db < w.keyspace().db_count(); db++) {
      sh.db_keys_at_cut[db] = w.keyspace().DbSize(db);
    }
    job->Start(std::move(ranges));
    sh.job = std::move(job);
    sh.reported = false;
    sh.cold_pending = false;
    sh.cold_status = Status::Ok();
    sh.cold_name.clear();
    sh.report = nullptr;
    if (ShardTier* t = tier_ != nullptr ? tier_->tier(w.index()) : nullptr) {
      // The store at the cut: erases wait until the snapshot ends, so the checkpoint,
      // made after the writes submitted so far, holds every record a cold entry names.
      t->BeginSnapshot();
      sh.cold_pending = true;
      uint64_t gen = ++sh.cold_gen;
      sh.cold_name = cut->cold_names[w.index()];
      Shard* shp = &sh;
      Worker* wp = &w;
      t->Checkpoint(JoinPath(cut->dir, sh.cold_name), [this, shp, wp, gen](const Status& st) {
        if (shp->cold_gen != gen) return;  // an abandoned snapshot's
        shp->cold_pending = false;
        shp->cold_status = st;
        ReportWritten(*wp, *shp);
      });
    }
  } else {
    job->Abort();
  }
  if (ok && w.index() == 0) {
    // Worker 0 is the stream's merger: the cut is registered before it merges again.
    for (Request_& r : run_->waiters) {
      if (r.at_cut) r.at_cut(cut->repl_counter);
    }
  }
  std::string error;
  if (!ok && !conflict) {
    std::lock_guard<std::mutex> l(cut->mu);
    error = cut->error;
  }
  uint32_t index = w.index();
  w.Post(0, MakeTask([this, index, ok, conflict, error] { OnCutAck(index, ok, conflict, error); }));
}

void SnapshotManager::OnCutAck(uint32_t shard, bool ok, bool conflict, const std::string& error) {
  (void)shard;
  (void)ok;
  if (conflict) run_->ack_conflict = true;
  if (!error.empty() && run_->ack_error.empty()) run_->ack_error = error;
  if (++run_->acks < engine_->shard_count()) return;
  if (run_->ack_conflict) {
    {
      std::lock_guard<std::mutex> l(info_mu_);
      info_.cut_retries++;
    }
    if (run_->attempts >= kMaxCutAttempts) {
      Finish(Status::IoError("no consistent cut found: multi-key writes held locks at every try"));
      return;
    }
    // A multi-shard write was half applied somewhere: try again next turn.
    Worker::Current()->Post(0, MakeTask([this] { PostCut(); }));
    return;
  }
  if (!run_->ack_error.empty()) {
    Finish(Status::IoError(run_->ack_error));
    return;
  }
  run_->cut_ns = MonoNs() - run_->cut->posted_ns;
  run_->cut.reset();
}

void SnapshotManager::OnShardWritten(uint32_t shard, Status st, int fd, uint64_t bytes,
                                     uint64_t records) {
  run_->fds[shard] = fd;
  run_->files[shard].bytes = bytes;
  run_->files[shard].records = records;
  if (!st.ok() && run_->first_error.ok()) run_->first_error = st;
  if (++run_->written < engine_->shard_count()) return;
  if (!run_->first_error.ok()) {
    for (int f : run_->fds) {
      if (f >= 0) close(f);
    }
    Finish(run_->first_error);
    return;
  }
  Commit();
}

void SnapshotManager::Commit() {
  Manifest m;
  if (run_->kind == SnapshotKind::kDelta) m = *manifest_;
  if (run_->kind == SnapshotKind::kFull) m.chain.clear();
  m.seq = run_->seq;
  m.created_ms = run_->created_ms;
  m.shard_count = engine_->shard_count();
  m.shard_hash = kShardHashId;
  m.range_bits = RangeBits();
  m.functions = run_->functions;
  ManifestLink link;
  link.kind = run_->kind;
  link.seq = run_->seq;
  link.created_ms = run_->created_ms;
  link.files = run_->files;
  // Only the newest link's checkpoints are needed: each holds every value the chain's
  // cold entries name (erases wait for the snapshot to end).
  for (ManifestLink& old : m.chain) {
    for (ManifestFile& f : old.files) f.cold.clear();
  }
  m.chain.push_back(std::move(link));
  std::vector<int> fds = run_->fds;
  std::string dir = run_->dir, name = run_->dbfilename;
  if (committer_.joinable()) committer_.join();
  committer_ = std::thread([this, fds, dir, name, m]() mutable {
    Status s;
    for (size_t i = 0; i < fds.size(); i++) {
      std::string final_path = JoinPath(dir, m.chain.back().files[i].name);
      Status fs = SyncAndClose(fds[i], final_path + ".tmp");
      if (s.ok()) s = fs;
    }
    for (size_t i = 0; s.ok() && i < fds.size(); i++) {
      std::string final_path = JoinPath(dir, m.chain.back().files[i].name);
      s = RenameFile(final_path + ".tmp", final_path);
    }
    if (s.ok()) s = SyncDir(dir);
    if (s.ok()) s = WriteFileAtomically(dir, name, EncodeManifest(m));
    if (s.ok()) {
      // Files no manifest names any more: older chains and leftovers of failed saves.
      std::vector<std::string> names;
      if (ListDir(dir, &names).ok()) {
        std::string prefix = name + "-";
        for (const std::string& f : names) {
          if (f.compare(0, prefix.size(), prefix) != 0) continue;
          bool cold = f.ends_with(".cold");
          bool ours = f.size() > 5 && (f.ends_with(".snap") || f.ends_with(".snap.tmp") || cold);
          if (!ours) continue;
          bool named = false;
          for (const auto& l : m.chain) {
            for (const auto& mf : l.files) named = named || mf.name == f || mf.cold == f;
          }
          if (named) continue;
          if (cold) {
            std::error_code ec;
            std::filesystem::remove_all(JoinPath(dir, f), ec);
          } else {
            unlink(JoinPath(dir, f).c_str());
          }
        }
      }
    } else {
      for (const auto& mf : m.chain.back().files) {
        unlink(JoinPath(dir, mf.name).c_str());
        unlink((JoinPath(dir, mf.name) + ".tmp").c_str());
        if (!mf.cold.empty()) {
          std::error_code ec;
          std::filesystem::remove_all(JoinPath(dir, mf.cold), ec);
        }
      }
    }
    engine_->worker(0).PostExternal(
        MakeTask([this, s, m]() mutable { OnCommitted(s, std::move(m)); }));
  });
}

void SnapshotManager::OnCommitted(Status st, Manifest m) {
  if (st.ok()) {
    manifest_ = std::move(m);
    manifest_dbfilename_ = run_->dbfilename;
    tracking_valid_ = run_->tracking;
  }
  Finish(st);
}

void SnapshotManager::Finish(const Status& st) {
  uint32_t n = engine_->shard_count();
  bool ok = st.ok();
  Worker& w0 = *Worker::Current();
  // Every shard drops its job; a failed snapshot hands its ranges back.
  for (uint32_t i = 0; i < n; i++) {
    w0.Post(i, MakeTask([this, ok] {
              Worker& w = *Worker::Current();
              Shard& sh = *shards_[w.index()];
              if (tier_ != nullptr && tier_->tier(w.index()) != nullptr) {
                tier_->tier(w.index())->EndSnapshot();
                sh.cold_gen++;
                sh.cold_pending = false;
                sh.report = nullptr;
              }
              if (sh.job == nullptr) return;
              if (ok) {
                sh.changes_saved.store(sh.changes_at_cut);
              } else {
                std::unique_ptr<RangeSet> r = sh.job->TakeRanges();
                if (r != nullptr && sh.tracker != nullptr) sh.tracker->GiveBack(*r);
                sh.job->Abort();
              }
              sh.job.reset();
              sh.reported = false;
              sh.bytes_written.store(0);
              sh.keys_visited.store(0);
            }));
  }
  int64_t now = WallClockMs();
  uint64_t bytes = 0, records = 0;
  for (const auto& f : run_->files) {
    bytes += f.bytes;
    records += f.records;
  }
  {
    std::lock_guard<std::mutex> l(info_mu_);
    info_.last_status = ok ? "ok" : "err";
    info_.last_error = ok ? "" : st.message();
    info_.last_duration_s = (now - run_->start_ms + 500) / 1000;
    if (ok) {
      info_.saves++;
      info_.last_kind = run_->kind == SnapshotKind::kFull ? "full" : "incremental";
      info_.last_bytes = bytes;
      info_.last_records = records;
      info_.last_cut_us = run_->cut_ns / 1000;
      info_.chain_length = manifest_ ? manifest_->chain.size() : 0;
    }
  }
  if (ok) {
    last_save_s_.store(now / 1000);
    LogNotice("Snapshot %" PRIu64 " (%s) saved: %" PRIu64 " keys, %" PRIu64
              " bytes, %.3f seconds, cut pause %" PRId64 " us",
              run_->seq, run_->kind == SnapshotKind::kFull ? "full" : "incremental", records, bytes,
              static_cast<double>(now - run_->start_ms) / 1000, run_->cut_ns / 1000);
  } else {
    LogWarning("Snapshot %" PRIu64 " failed: %s", run_->seq, st.message().c_str());
  }
  last_failed_ = !ok;
  engine_->replication().SetSaveFailed(!ok);  // -MISCONF (stop-writes-on-bgsave-error)
  for (Request_& r : run_->waiters) {
    if (r.image_done) {
      // Opened now, on worker 0, before another snapshot can start (and delete them).
      Image image;
      Status s = st;
      if (s.ok() && manifest_.has_value()) {
        image.functions = manifest_->functions;
        for (const auto& sh : shards_) {  // reported: their cut's counts are final
          if (image.db_keys.size() < sh->db_keys_at_cut.size()) {
            image.db_keys.resize(sh->db_keys_at_cut.size());
          }
          for (size_t db = 0; db < sh->db_keys_at_cut.size(); db++) {
            image.db_keys[db] += sh->db_keys_at_cut[db];
          }
        }
        for (const ManifestFile& f : manifest_->chain.back().files) {
          std::string path = JoinPath(run_->dir, f.name);
          int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
          if (fd < 0) {
            s = Status::FromErrno("open " + path, errno);
            break;
          }
          image.fds.push_back(fd);
        }
      }
      if (!s.ok()) {
        for (int fd : image.fds) close(fd);
        image.fds.clear();
      }
      r.image_done(s, std::move(image));
      continue;
    }
    Done d = std::move(r.done);
    w0.Post(r.origin, MakeTask([d, st] { d(st); }));
  }
  run_.reset();
  in_progress_.store(false, std::memory_order_release);
  current_start_ms_.store(0);
  if (!queue_.empty()) w0.Post(0, MakeTask([this] { StartNext(); }));
}

// ---------------------------------------------------------------------------- reload

void SnapshotManager::Reload(ReloadOptions o, Done done) {
  Worker* w = Worker::Current();
  uint32_t origin = w->index();
  auto task = [this, o, origin, done = std::move(done)]() mutable {
    auto refuse = [&](const char* error) {
      Worker::Current()->Post(origin,
                              MakeTask([done, error] { done(Status::InvalidArgument(error)); }));
    };
    if (reload_ != nullptr) return refuse("ERR DEBUG RELOAD is already in progress");
    if (loading()) return refuse("LOADING Redis is loading the dataset in memory");
    if (tier_ != nullptr) {
      return refuse(
          "ERR DEBUG RELOAD is not available with spill-dir set (spilled values live in the "
          "spill store)");
    }
    reload_ = std::make_unique<ReloadRun>();
    reload_->options = o;
    reload_->origin = origin;
    reload_->done = std::move(done);
    engine_->HoldLoading(engine_->shard_count());
    if (!o.rdb.empty()) o.save = false;
    reload_->options.save = o.save;
    LogNotice("%s: %s", o.rdb.empty() ? "DEBUG RELOAD" : "MASTER <-> REPLICA sync",
              o.save ? "saving, then loading" : "loading");
    ReloadDrain(2);
  };
  if (origin == 0) {
    task();
  } else {
    w->Post(0, MakeTask(std::move(task)));
  }
}

void SnapshotManager::ReloadDrain(int rounds) {
  if (reload_->drain_start_ms == 0) reload_->drain_start_ms = WallClockMs();
  if (rounds == 0 && reload_->busy) {
    // A command that took its locks before the gate is still running (a fiber across
    // shards, or a command queued behind one), or a batch of commands sent to another
    // shard before the gate has not come back (it may reach its shard in the same pass
    // as the save's cut, and run after it): their writes must be in the save, not land
    // between the save and the load. Rounds go on until one finds none anywhere.
    if (WallClockMs() - reload_->drain_start_ms < kReloadDrainLimitMs) return ReloadDrain(1);
    LogWarning(
        "DEBUG RELOAD: commands still hold locks or run on other shards after %lld ms; "
        "going on",
        static_cast<long long>(kReloadDrainLimitMs));
  }
  if (rounds == 0) {
    if (!reload_->options.save) return ReloadLoad();
    Enqueue(Request_{Reason::kSave, 0, [this](const Status& st) {
                       if (!st.ok()) {
                         LogWarning("DEBUG RELOAD: the save failed: %s", st.message().c_str());
                         return FinishReload(Status::InvalidArgument("ERR"));
                       }
                       ReloadLoad();
                     }});
    return;
  }
  uint32_t n = engine_->shard_count();
  reload_->acks = 0;
  reload_->busy = false;
  Worker& w0 = *Worker::Current();
  for (uint32_t i = 0; i < n; i++) {
    uint64_t owner = reload_->options.owner;
    w0.Post(i, MakeTask([this, rounds, n, owner] {
              Worker& w = *Worker::Current();
              bool locked = w.locks().BusyExcept(owner) || w.batches_out() > 0;
              w.Post(0, MakeTask([this, rounds, n, locked] {
                       if (locked) reload_->busy = true;
                       if (++reload_->acks == n) ReloadDrain(rounds - 1);
                     }));
            }));
  }
}

void SnapshotManager::ReloadLoad() {
  Config& c = engine_->config();
  std::string dir = c.String("dir");
  std::string path =
      reload_->options.rdb.empty() ? JoinPath(dir, c.String("dbfilename")) : reload_->options.rdb;
  bool flush = reload_->options.flush;
  Manifest m;
  std::string rdb;
  Status s;
  if (RdbShardLoadJob::LooksLikeRdb(path)) {
    std::string err = RdbShardLoadJob::CheckHeader(path);
    if (!err.empty()) s = Status::Corruption(err);
    rdb = path;
  } else {
    bool found = false;
    s = CheckManifest(dir, path, flush, &m, &found);
    if (s.ok() && !found) s = Status::NotFound(path + " is not there");
  }
  if (!s.ok()) {
    LogWarning("DEBUG RELOAD: nothing loaded, the data is as it was: %s", s.message().c_str());
    return FinishReload(
        Status::InvalidArgument("ERR Error trying to load the RDB dump, check server logs."));
  }
  uint32_t n = engine_->shard_count();
  load_dir_ = dir;
  load_rdb_ = rdb;
  if (rdb.empty()) {
    next_seq_ = std::max(next_seq_, m.seq + 1);
    load_manifest_ = std::move(m);
  } else {
    load_manifest_.reset();
    tracking_valid_ = false;  // the data is the RDB's: the next snapshot is a full one
  }
  {
    std::lock_guard<std::mutex> l(info_mu_);
    info_.loaded = info_.expired = info_.skipped = info_.functions = 0;
  }
  load_start_ms_ = WallClockMs();
  loading_shards_.store(n, std::memory_order_release);
  reloading_.store(true, std::memory_order_release);
  reload_->loads_hold_gate = true;
  Worker& w0 = *Worker::Current();
  for (uint32_t i = 0; i < n; i++) {
    w0.Post(i, MakeTask([this, flush] {
              Worker& w = *Worker::Current();
              if (flush) w.keyspace().FlushAll(false);
              StartLoadJob(w);
              if (shards_[w.index()]->load == nullptr) {  // nothing to load: done at once
                bool last = loading_shards_.fetch_sub(1) == 1;
                engine_->ReleaseLoading(1);
                if (last) w.Post(0, MakeTask([this] { FinishReload(Status::Ok()); }));
              }
            }));
  }
}

void SnapshotManager::FinishReload(const Status& st) {
  if (reload_ == nullptr) return;
  std::unique_ptr<ReloadRun> r = std::move(reload_);
  if (!r->loads_hold_gate) engine_->ReleaseLoading(engine_->shard_count());
  // Kept data is in no snapshot of the chain, and the shards' change tracking restarted
  // at the load: the next snapshot must be a full one.
  if (!r->options.flush) tracking_valid_ = false;
  reloading_.store(false, std::memory_order_release);
  if (st.ok()) {
    LogNotice(r->options.rdb.empty() ? "DB reloaded by DEBUG RELOAD"
                                     : "MASTER <-> REPLICA sync: Finished with success");
  }
  Done done = std::move(r->done);
  Worker::Current()->Post(r->origin, MakeTask([done, st] { done(st); }));
}

// ---------------------------------------------------------------------------- schedules

void SnapshotManager::OnTimer(Worker& w) {
  (void)w;
  if (loading() || run_ != nullptr || !queue_.empty()) return;
  int64_t now_ms = WallClockMs();
  int64_t now_s = now_ms / 1000;
  Config& c = engine_->config();
  // snapshot-cron
  std::string cron = c.String("snapshot-cron");
  if (cron != cron_text_) {
    cron_text_ = cron;
    cron_ = CronSchedule();
    std::string error;
    if (!cron.empty() && !CronSchedule::Parse(cron, &cron_, &error)) cron_ = CronSchedule();
    cron_next_s_ = cron.empty() ? -1 : cron_.NextAfter(now_s);
  }
  if (cron_next_s_ > 0 && now_s >= cron_next_s_) {
    cron_next_s_ = cron_.NextAfter(now_s);
    Enqueue(Request_{Reason::kCron, 0, [](const Status&) {}});
    return;
  }
  // save "<seconds> <changes> ..."
  std::string save = c.String("save");
  if (save.empty()) return;
  if (last_failed_ && now_ms - last_try_ms_ < kRetryAfterFailureMs) return;
  std::vector<std::string> parts;
  if (!SplitArgs(save, &parts)) return;
  uint64_t changes = 0;
  for (const auto& sh : shards_) {
    uint64_t now_c = sh->changes_now.load(std::memory_order_relaxed);
    uint64_t saved = sh->changes_saved.load(std::memory_order_relaxed);
    changes += now_c > saved ? now_c - saved : 0;
  }
  int64_t since = now_s - last_save_s_.load();
  for (size_t i = 0; i + 1 < parts.size(); i += 2) {
    int64_t secs = 0, min_changes = 0;
    if (!ParseInt64(parts[i], &secs) || !ParseInt64(parts[i + 1], &min_changes)) continue;
    if (changes >= static_cast<uint64_t>(min_changes) && since >= secs && min_changes > 0) {
      LogNotice("%" PRId64 " changes in %" PRId64 " seconds. Saving...", min_changes, secs);
      Enqueue(Request_{Reason::kRule, 0, [](const Status&) {}});
      return;
    }
  }
}

// ---------------------------------------------------------------------------- INFO

void SnapshotManager::AppendInfo(std::string* out) const {
  auto line = [&](const char* k, const std::string& v) {
    out->append(k);
    out->push_back(':');
    out->append(v);
    out->append("\r\n");
  };
  uint64_t changes = 0, bytes = 0, keys = 0, buffers = 0, read = 0, total = 0;
  for (const auto& sh : shards_) {
    uint64_t now_c = sh->changes_now.load(std::memory_order_relaxed);
    uint64_t saved = sh->changes_saved.load(std::memory_order_relaxed);
    changes += now_c > saved ? now_c - saved : 0;
    bytes += sh->bytes_written.load(std::memory_order_relaxed);
    keys += sh->keys_visited.load(std::memory_order_relaxed);
    buffers += sh->buffer_bytes.load(std::memory_order_relaxed);
    read += sh->load_read.load(std::memory_order_relaxed);
    total += sh->load_total.load(std::memory_order_relaxed);
  }
  bool is_loading = loading();
  int64_t now = WallClockMs();
  std::lock_guard<std::mutex> l(info_mu_);
  line("loading", is_loading ? "1" : "0");
  line("async_loading", "0");
  if (is_loading) {
    line("loading_start_time", std::to_string(load_start_ms_ / 1000));
    line("loading_total_bytes", std::to_string(total));
    line("loading_loaded_bytes", std::to_string(read));
    double perc = total == 0 ? 0 : 100.0 * static_cast<double>(read) / static_cast<double>(total);
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.2f%%", perc);
    line("loading_loaded_perc", buf);
    int64_t elapsed = std::max<int64_t>(1, now - load_start_ms_);
    int64_t eta =
        read == 0
            ? 1
            : static_cast<int64_t>(static_cast<double>(total - std::min(total, read)) *
                                   static_cast<double>(elapsed) / static_cast<double>(read) / 1000);
    line("loading_eta_seconds", std::to_string(eta));
  }
  line("current_cow_peak", "0");
  line("current_cow_size", "0");
  line("current_cow_size_age", "0");
  line("current_fork_perc", "0.00");
  line("current_save_keys_processed", std::to_string(keys));
  line("current_save_keys_total", "0");
  line("rdb_changes_since_last_save", std::to_string(changes));
  int64_t start = current_start_ms_.load();
  line("rdb_bgsave_in_progress", start != 0 ? "1" : "0");
  line("rdb_last_save_time", std::to_string(last_save_s_.load()));
  line("rdb_last_bgsave_status", info_.last_status);
  line("rdb_last_bgsave_time_sec", std::to_string(info_.last_duration_s));
  line("rdb_current_bgsave_time_sec", start != 0 ? std::to_string((now - start) / 1000) : "-1");
  line("rdb_saves", std::to_string(info_.saves));
  line("rdb_last_cow_size", "0");
  line("rdb_last_load_keys_expired", std::to_string(info_.expired));
  line("rdb_last_load_keys_loaded", std::to_string(info_.loaded));
  line("aof_enabled", "0");
  line("aof_rewrite_in_progress", "0");
  line("aof_rewrite_scheduled", "0");
  line("aof_last_rewrite_time_sec", "-1");
  line("aof_current_rewrite_time_sec", "-1");
  line("aof_last_bgrewrite_status", "ok");
  line("aof_rewrites", "0");
  line("aof_rewrites_consecutive_failures", "0");
  line("aof_last_write_status", "ok");
  line("aof_last_cow_size", "0");
  line("module_fork_in_progress", "0");
  line("module_fork_last_cow_size", "0");
  line("snapshot_in_progress_bytes_written", std::to_string(bytes));
  line("snapshot_buffer_bytes", std::to_string(buffers));
  line("snapshot_last_kind", info_.last_kind);
  line("snapshot_last_bytes", std::to_string(info_.last_bytes));
  line("snapshot_last_keys", std::to_string(info_.last_records));
  line("snapshot_last_cut_pause_us", std::to_string(info_.last_cut_us));
  line("snapshot_cut_retries", std::to_string(info_.cut_retries));
  line("snapshot_chain_length", std::to_string(info_.chain_length));
  line("snapshot_last_error", info_.last_error);
  line("snapshot_last_load_ms", std::to_string(info_.load_duration_ms));
}

}  // namespace strata
