// Server: the process - the listening sockets, the engine (the workers and what they
// share, engine.h) with its services (the snapshot manager), signals, and systemd
// notification.
//
// Start-up (main thread): load config, pick the I/O backend, open the listening sockets,
// create the engine with N workers (each with its own loop) and the snapshot manager,
// check the snapshot to load, then start the workers; worker 0 accepts and deals
// connections round-robin to all workers. Shutdown: SIGTERM/SIGINT (or SHUTDOWN, which
// raises SIGTERM) wake the main thread, which saves when a schedule asks for it, asks
// every worker to stop, joins them and returns; main() then exits with exit_code().
// Thread-safety: the main thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "server/base/config.h"

namespace strata {

class Engine;
class MetricsServer;
class SnapshotManager;
class TierService;
class ClusterService;
class ClusterBus;
class ReplicaLink;
class ReplMaster;
class FailoverCoordinator;

class Server {
 public:
  explicit Server(Config* config);
  ~Server();

  bool Start(std::string* error);
  // Blocks the calling (main) thread until SIGTERM/SIGINT, then stops the workers.
  void RunUntilSignal();
  int exit_code() const;
  // The snapshot manager (after Start).
  SnapshotManager& snapshots() { return *snapshots_; }
  void set_executable(std::string path) { executable_ = std::move(path); }

 private:
  bool OpenListeners(std::string* error);
  // Listening sockets on every `bind` address at this port (the client port, the
  // cluster bus's).
  bool OpenTcpListeners(int port, std::vector<int>* fds, std::string* error);
  // unixsocket set: a listening Unix socket at that path (unixsocketperm applied).
  bool OpenUnixListener(std::string* error);

  Config* config_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<SnapshotManager> snapshots_;
  std::unique_ptr<ReplicaLink> replica_;
  std::unique_ptr<ReplMaster> repl_master_;
  std::unique_ptr<FailoverCoordinator> failover_;
  std::unique_ptr<TierService> tier_;        // spill-dir set
  std::unique_ptr<ClusterService> cluster_;  // cluster-enabled yes
  std::unique_ptr<ClusterBus> bus_;          // cluster-enabled yes, once started
  std::unique_ptr<MetricsServer> metrics_;   // metrics-port set
  std::vector<int> listen_fds_;
  std::string unix_path_;  // the Unix socket this process made (removed at exit)
  std::string run_id_;
  std::string executable_;
  int port_ = 0;
};

// The CPUs this process may run on (affinity mask and cgroup CPU quota).
uint32_t UsableCpuCount();

}  // namespace strata
