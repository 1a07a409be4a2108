// Server: the process-wide parts - config, the workers, the listening sockets, and the
// counters that belong to no shard (clients connected, client ids).
//
// Start-up (main thread): load config, pick the I/O backend, create N workers (each
// with its own loop), open the listening sockets and hand them to worker 0, which
// accepts and deals connections round-robin to all workers. Shutdown: SIGTERM/SIGINT
// (or SHUTDOWN, which raises SIGTERM) wake the main thread, which asks every worker to
// stop, joins them and returns; main() then exits 0.
// Thread-safety: immutable after Start() except the atomics.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "server/config.h"
#include "server/event_loop.h"
#include "server/snapshot.h"

namespace strata {

class Worker;

class Server {
 public:
  explicit Server(Config* config);
  ~Server();

  bool Start(std::string* error);
  // Blocks the calling (main) thread until SIGTERM/SIGINT, then stops the workers.
  void RunUntilSignal();
  // Any thread: ask for a clean shutdown (SHUTDOWN). With save_done, the snapshot a
  // shutdown takes (when `save` or snapshot-cron is set) was already taken or declined.
  void RequestShutdown(bool save_done = false);
  // Any thread: stop with this exit status, taking no snapshot (a failed load).
  void RequestExit(int code);
  int exit_code() const { return exit_code_.load(); }
  SnapshotManager& snapshots() { return *snapshots_; }

  Config& config() { return *config_; }
  uint32_t shard_count() const { return thread_count_; }
  Worker& worker(uint32_t i) { return *workers_[i]; }
  const std::string& io_backend() const { return io_backend_; }
  const std::string& run_id() const { return run_id_; }
  int64_t start_time_ms() const { return start_time_ms_; }
  int port() const { return port_; }
  const std::string& executable() const { return executable_; }
  void set_executable(std::string path) { executable_ = std::move(path); }

  // Process-wide used_memory: the sum of what every worker published at the end of its
  // last loop turn (any thread; at most one turn old).
  size_t UsedMemory() const;
  // used_memory when every worker had started (used_memory_startup).
  size_t StartupMemory() const;
  size_t PeakMemory() const { return peak_memory_.load(std::memory_order_relaxed); }
  void UpdatePeakMemory(size_t used);  // any thread

  std::atomic<int64_t> connected_clients{0};
  std::atomic<uint64_t> next_client_id{1};
  std::atomic<uint32_t> next_worker{0};

 private:
  bool OpenListeners(std::string* error);

  Config* config_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<int> listen_fds_;
  std::string io_backend_;
  std::string run_id_;
  std::string executable_;
  uint32_t thread_count_ = 0;
  int64_t start_time_ms_ = 0;
  int port_ = 0;
  std::atomic<size_t> peak_memory_{0};
  std::unique_ptr<SnapshotManager> snapshots_;
  std::atomic<bool> shutdown_save_done_{false};
  std::atomic<int> exit_code_{0};
};

// The CPUs this process may run on (affinity mask and cgroup CPU quota).
uint32_t UsableCpuCount();

}  // namespace strata
