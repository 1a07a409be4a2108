// Engine: the shard runtime as one object - the workers, the state they share (config,
// shard count, client counters, memory totals, the loading gate), the services that
// take a slice of every worker's loop turn, and the process's stop requests.
//
// The process (server/server.h) creates one Engine, adds its services (the snapshot
// manager) and starts it. Command families reach it through Worker::engine(). It knows
// no command by name and no socket: the listening sockets arrive as file descriptors.
//
// Services (ShardService) are how work that is not a command runs on the shard
// threads: a snapshot being written or loaded today; eviction, spill and replication
// later. Each worker calls every service's hooks from its loop, so a service owns
// per-shard state without locks, as commands do.
//
// Thread-safety: services are added and ProcessInfo is filled before Start(); after it
// everything here is immutable or atomic, and may be read from any thread.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "server/engine/repl_log.h"
#include "server/engine/replication_state.h"
#include "server/engine/routing_board.h"
#include "server/engine/tracking.h"

namespace strata {

class Config;
class PubSubDirectory;
class SlowLog;
class Worker;
enum class IoBackend;

// Work that runs on the shard threads between I/O (see above). Every hook runs on the
// thread of the worker it is given.
class ShardService {
 public:
  virtual ~ShardService() = default;
  // Once per worker, before its loop serves clients.
  virtual void OnWorkerStart(Worker& w) {}
  // True when this worker has work for the service now (its loop must not sleep).
  virtual bool HasWork(const Worker& w) const { return false; }
  // The longest this worker may sleep in its loop for the service's sake, in ms; -1 for
  // no bound (work that cannot wait says so with HasWork instead).
  virtual int64_t SleepBoundMs(const Worker& w) const { return -1; }
  // Once per loop turn. turn_ns: what the rest of the turn took; busy: it ran commands.
  virtual void OnWorkerTurn(Worker& w, int64_t turn_ns, bool busy) {}
  // Worker 0's timer (hz): schedules that belong to the whole process.
  virtual void OnTimer(Worker& w) {}
};

// Facts about the process that INFO reports (filled by the process before Start).
struct ProcessInfo {
  std::string run_id;
  // cluster-enabled emulated: the node's id and its shard's (40 hex digits each, new at
  // each start), for the cluster commands (server/commands/cluster_family.cc).
  bool cluster_emulated = false;
  // cluster-enabled yes: a node of a real cluster (server/cluster/).
  bool cluster_yes = false;
  // Any cluster mode: only database 0, and each shard keeps a slot index (SlotIndex).
  bool cluster_mode() const { return cluster_emulated || cluster_yes; }
  std::string cluster_node_id;
  std::string cluster_shard_id;
  std::string executable;
  std::string io_backend;  // set by Start
  int port = 0;
  int64_t start_time_ms = 0;
};

class Engine {
 public:
  Engine(Config* config, uint32_t shard_count);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  Config& config() { return *config_; }
  const Config& config() const { return *config_; }
  uint32_t shard_count() const { return shard_count_; }
  Worker& worker(uint32_t i) { return *workers_[i]; }
  // 0 .. shard_count()-1, for hops to every shard.
  std::vector<uint32_t> AllShards() const;
  ProcessInfo& process() { return process_; }
  const ProcessInfo& process() const { return process_; }
  // DEBUG SET-ACTIVE-EXPIRE: whether workers run the expiry cycle (any thread).
  bool active_expire() const { return active_expire_.load(std::memory_order_relaxed); }
  void set_active_expire(bool on) { active_expire_.store(on, std::memory_order_relaxed); }
  // MONITOR: whether any client monitors, and which workers have monitors (any thread).
  bool monitoring() const { return monitor_total_.load(std::memory_order_relaxed) > 0; }
  bool monitors_on(uint32_t worker) const {
    return monitors_on_[worker].load(std::memory_order_relaxed) > 0;
  }
  void CountMonitor(uint32_t worker, int delta) {
    monitors_on_[worker].fetch_add(delta, std::memory_order_relaxed);
    monitor_total_.fetch_add(delta, std::memory_order_relaxed);
  }
  // SLOWLOG and LATENCY's records, process-wide (slowlog.h).
  SlowLog& slowlog() { return *slowlog_; }

  // Before Start. The engine does not own services.
  void AddService(ShardService* s) { services_.push_back(s); }
  const std::vector<ShardService*>& services() const { return services_; }
  // The service of type T (a command's way to its manager, e.g. the snapshot manager).
  // Aborts when none was added: that is a wiring error of the process.
  template <class T>
  T* FindService() const {
    for (ShardService* s : services_) {
      if (T* t = dynamic_cast<T*>(s)) return t;
    }
    return nullptr;
  }
  template <class T>
  T& Service() const {
    for (ShardService* s : services_) {
      if (T* t = dynamic_cast<T*>(s)) return *t;
    }
    MissingService();
  }

  // Creates the workers, each with its event loop, and starts their threads; a thread of
  // its own accepts on `listen_fds` and deals connections round-robin to the workers,
  // passing over a worker kept busy by a long script (Worker::script_busy), so that a
  // script on one worker never holds back new connections. `cpus`
  // pins worker i to cpus[i] when it has one per worker. Logs the backend in use (and
  // why, when auto chose epoll). On failure stops what started and returns false with
  // *error set.
  bool Start(IoBackend backend, const std::vector<int>& listen_fds, const std::vector<int>& cpus,
             std::string* error);
  // Asks every worker to stop and joins them (main thread), after the threads of
  // OffThread (off_thread.h) have finished.
  void Stop();
  // OffThread's count of threads in flight (any thread).
  void BeginOffThread() { off_threads_.fetch_add(1, std::memory_order_acq_rel); }
  void EndOffThread() { off_threads_.fetch_sub(1, std::memory_order_acq_rel); }

  // Process-wide used_memory: the sum of what every worker published at the end of its
  // last loop turn (any thread; at most one turn old).
  size_t UsedMemory() const;
  // Every worker's clients' buffers together, as of each one's last loop turn.
  size_t ClientMemory() const;
  // True when the process is over maxmemory and every worker has found nothing its
  // policy may evict (then writes get the OOM error; see shard_eviction.h).
  bool EvictionExhausted() const;
  // The published used bytes of the workers that still have keys to evict.
  size_t EvictableUsedMemory() const;
  // UsedMemory() less what lazy freeing is about to return: what eviction aims at.
  size_t UsedMemoryAfterLazyFree() const;
  // Time over maxmemory (INFO stats *_eviction_exceeded_time), kept by worker 0.
  void NoteOverMemory(bool over, int64_t now_ms);
  int64_t total_eviction_exceeded_ms(int64_t now_ms) const;
  int64_t current_eviction_exceeded_ms(int64_t now_ms) const;
  // The biggest evictable client any worker but `worker` published while over
  // maxmemory-clients, or Worker::kLargestUnknown while one of them has not yet
  // published (see Worker::EvictClientsOverLimit).
  size_t LargestEvictableClientExcept(uint32_t worker) const;
  // used_memory when every worker had started (used_memory_startup).
  size_t StartupMemory() const;
  size_t PeakMemory() const { return peak_memory_.load(std::memory_order_relaxed); }
  void UpdatePeakMemory(size_t used);  // any thread

  // The loading gate: while a hold is taken, commands without kCmdLoading get -LOADING.
  // A service that loads data takes one hold per shard still loading (any thread).
  bool loading() const { return loading_holds_.load(std::memory_order_acquire) > 0; }
  void HoldLoading(uint32_t n) { loading_holds_.fetch_add(n, std::memory_order_acq_rel); }
  void ReleaseLoading(uint32_t n) { loading_holds_.fetch_sub(n, std::memory_order_acq_rel); }

  // Any thread: ask for a clean shutdown (SHUTDOWN). With save_done, the snapshot a
  // shutdown takes (when `save` or snapshot-cron is set) was already taken or declined.
  void RequestShutdown(bool save_done = false);
  // Any thread: stop with this exit status, taking no snapshot (a failed load).
  void RequestExit(int code);
  int exit_code() const { return exit_code_.load(); }
  bool shutdown_save_done() const { return shutdown_save_done_.load(); }

  // Scripts (and of those, functions) running past busy-reply-threshold: while any does,
  // other clients get -BUSY (any thread; the script's thread counts itself in and out).
  int busy_scripts() const { return busy_scripts_.load(std::memory_order_relaxed); }
  int busy_functions() const { return busy_functions_.load(std::memory_order_relaxed); }
  void NoteBusyScript(bool function, int delta) {
    busy_scripts_.fetch_add(delta, std::memory_order_relaxed);
    if (function) busy_functions_.fetch_add(delta, std::memory_order_relaxed);
  }
  // Redis's -BUSY text while one is (without the '-'): it names FUNCTION KILL when every
  // busy script is a function, else SCRIPT KILL.
  const char* BusyScriptError() const {
    return busy_functions() == busy_scripts()
               ? "BUSY Redis is busy running a script. You can only call FUNCTION KILL or "
                 "SHUTDOWN NOSAVE."
               : "BUSY Redis is busy running a script. You can only call SCRIPT KILL or "
                 "SHUTDOWN NOSAVE.";
  }

  // CLIENT PAUSE (any thread): until end_ms (wall clock), clients' commands that may
  // write or replicate (kPauseWrite) or all of them (kPauseAll) wait, and keys are not
  // expired actively. As in Redis, each purpose keeps its own pause (CLIENT PAUSE's, a
  // cluster manual failover's), and the most restrictive one in force applies; within a
  // purpose, overlapping pauses keep the later end and the stronger mode. Replicas and
  // the master's stream never wait.
  enum PauseMode : uint8_t { kPauseNone = 0, kPauseWrite = 1, kPauseAll = 2 };
  // kPauseForFailover: a manual failover's (the master then sends its replicas no PING,
  // which would move the offset the replica waits for, as in Redis).
  enum PausePurpose : uint8_t { kPauseByClient = 0, kPauseForFailover = 1 };
  static constexpr size_t kPausePurposes = 2;
  void PauseClients(int64_t end_ms, PauseMode mode, PausePurpose purpose = kPauseByClient);
  bool paused_for_failover(int64_t now_ms) const {
    int64_t end = pause_[kPauseForFailover].end_ms.load(std::memory_order_relaxed);
    return end != 0 && now_ms < end;
  }
  // Every worker looks at the pause from its next turn on (Worker::SetPauseGate, by a
  // task to each; CLIENT PAUSE sets them itself, with a hop to each, before it replies).
  void ShowPauseToWorkers();
  // CLIENT UNPAUSE (or the failover's end): that purpose's pause ends now, and every
  // worker wakes its waiting clients (who wait on if another purpose's pause holds them).
  void UnpauseClients(PausePurpose purpose = kPauseByClient);
  // The pause in force at now_ms; kPauseNone once every end has passed (a purpose's
  // pause is cleared by the first to see it end).
  PauseMode PauseModeAt(int64_t now_ms);
  // When the pause in force may next weaken: the earliest end among the purposes'
  // pauses (0: none).
  int64_t pause_end_ms() const;

  // Replication: the role, the master link's state and the offset (replication_state.h).
  ReplicationState& replication() { return replication_; }
  // strata as a master: the stream in one order across shards and its backlog
  // (repl_log.h); each worker's feed adds to it (repl_feed.h).
  ReplLog& repl_log() { return *repl_log_; }

  // cluster-enabled yes: the latest slot layout, which every worker routes by
  // (routing_board.h; the cluster service publishes it).
  RoutingBoard& routing_board() { return routing_board_; }

  // Which workers have subscribers of each channel and pattern (pubsub.h).
  PubSubDirectory& pubsub() { return *pubsub_; }
  // Client-side caching: BCAST prefixes, and how many clients track (tracking.h).
  BcastRegistry& bcast() { return bcast_; }
  std::atomic<int64_t> tracking_clients{0};
  // Tracking clients plus shards whose tables hold keys: while non-zero, every change
  // reaches the tables (notify_flags.h's gate), so a key read before a client turned
  // tracking off is still consumed by its next change, as in Redis.
  std::atomic<int64_t> tracking_gate_refs{0};

  std::atomic<int64_t> connected_clients{0};
  std::atomic<uint64_t> next_client_id{1};
  std::atomic<uint32_t> next_worker{0};

 private:
  std::atomic<int> off_threads_{0};
  std::atomic<int> busy_scripts_{0};
  std::mutex pause_mu_;  // serialises PauseClients, UnpauseClients and the clearing
  struct Pause {
    std::atomic<int64_t> end_ms{0};  // 0: no pause
    std::atomic<uint8_t> mode{kPauseNone};
  };
  std::array<Pause, kPausePurposes> pause_;
  std::atomic<int> busy_functions_{0};
  [[noreturn]] static void MissingService();
  // The acceptor thread (Start, Stop).
  void AcceptLoop(std::vector<int> listen_fds);
  void Deal(int fd);
  std::thread acceptor_;
  int acceptor_wake_fd_ = -1;

  Config* config_;
  uint32_t shard_count_;
  std::unique_ptr<PubSubDirectory> pubsub_;
  RoutingBoard routing_board_;
  BcastRegistry bcast_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<ShardService*> services_;
  ProcessInfo process_;
  std::unique_ptr<SlowLog> slowlog_;
  std::atomic<bool> active_expire_{true};
  std::atomic<int32_t> monitor_total_{0};
  std::unique_ptr<std::atomic<int32_t>[]> monitors_on_;
  std::atomic<size_t> peak_memory_{0};
  std::atomic<int64_t> over_since_ms_{0};  // 0: under maxmemory
  std::atomic<int64_t> over_total_ms_{0};  // finished spells over it
  std::atomic<uint32_t> loading_holds_{0};
  ReplicationState replication_;
  std::unique_ptr<ReplLog> repl_log_;
  std::atomic<bool> shutdown_save_done_{false};
  std::atomic<int> exit_code_{0};
};

}  // namespace strata
