// ClusterService: this node's Redis Cluster state under `cluster-enabled yes`
// (docs/ARCHITECTURE.md "Cluster"), an engine service.
//
// It owns the ClusterState (cluster_state.h) and its file, cluster-config-file
// (nodes.conf, in `dir` unless the path is absolute):
//   - Load(), on the main thread before the workers start: reads the file, or creates it
//     for a new node (a random 40-character id, a master with no slots). A file that does
//     not parse stops the server, naming the line. The file is locked for the life of
//     the process (flock of <file>.lock beside it: the file itself is replaced at each
//     save), so two servers cannot share one, as in Redis.
//   - Change(fn), from any worker: runs fn on the state under the service's mutex; when
//     fn changed it, writes the file (a temporary file, fsync, rename, fsync of the
//     directory) and builds and publishes the new routing (routing_board.h), before the
//     mutex is released: from then on every worker routes by it. The command then
//     installs it on every worker (InstallLatest, through a hop to each) before it
//     replies. The file is written on the calling worker: layout changes are rare and
//     small (Redis writes it on its one thread too).
//   - Read(fn): runs fn on the state under the mutex (CLUSTER NODES, SLOTS, INFO...).
//   - cluster-require-full-coverage and cluster-allow-reads-when-down are read when the
//     routing is built; worker 0's timer rebuilds it when either changed by CONFIG SET,
//     and applies a changed cluster-announce-ip, -port or -hostname to this node (saved).
//
//   - BusUpdate(fn), from the cluster bus's thread: what the bus learns (cluster_bus.h,
//     cluster_gossip.h) goes into the state the same way. The routing is published
//     before the mutex is released, so a client that saw the change (CLUSTER NODES)
//     is routed by it on every worker; a task posted to each installs it too.
//
// Thread-safety: Load() on the main thread before Start; the rest from any worker.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "server/cluster/cluster_gossip.h"
#include "server/cluster/cluster_state.h"
#include "server/engine/cluster_routing.h"
#include "server/engine/engine.h"

namespace strata {

class ClusterBus;

class ClusterService final : public ShardService {
 public:
  explicit ClusterService(Engine* engine);
  ~ClusterService() override;

  // Main thread, before the engine starts. False with *error when the file cannot be
  // read, written, locked or parsed.
  bool Load(std::string* error);

  // Runs fn(state, &error) under the mutex. fn returns false with error set to refuse
  // (nothing changed), or true; *changed (when given) says whether it changed the
  // layout, which is then saved and a new routing built. Returns "" or the error
  // (fn's, or the file's when it could not be saved: the change stays in memory).
  std::string Change(const std::function<bool(ClusterState&, std::string*)>& fn,
                     bool changed = true);
  // Runs fn(state) under the mutex.
  void Read(const std::function<void(const ClusterState&)>& fn) const;
  // The cluster bus's thread: runs fn(state) under the mutex. fn returns the gossip's
  // effects, or null for none: when they say so, the file is saved, and a new routing
  // is built and published (every worker routes by it from its next command; a task
  // posted to each installs it too).
  void BusUpdate(const std::function<GossipEffects*(ClusterState&)>& fn);
  // Writes the file now (CLUSTER SAVECONFIG); "" or the error.
  std::string Save();

  // On w's thread: installs the latest routing there.
  void InstallLatest(Worker& w);
  // The bus's thread: slots this master lost to another by a newer config epoch while it
  // held keys in them. Every worker deletes its keys of those slots (in its next turn),
  // as Redis does, with a DEL to the replicas and a "del" event for each.
  void DropKeysInSlots(std::vector<uint32_t> slots);
  // The bus's thread: a replica's manual failover pauses this master's clients' writes
  // until end_ms (CLIENT PAUSE WRITE), and its end lets them go on.
  void PauseWrites(int64_t end_ms) {
    engine_->PauseClients(end_ms, Engine::kPauseWrite, Engine::kPauseForFailover);
    engine_->ShowPauseToWorkers();
  }
  // Ends the failover's pause only: a CLIENT PAUSE of the user's holds on.
  void Unpause() { engine_->UnpauseClients(Engine::kPauseForFailover); }

  const std::string& config_path() const { return path_; }
  // The bus's end of this node, once the Server has started it (null before).
  void set_bus(const ClusterBus* b) { bus_.store(b, std::memory_order_release); }
  const ClusterBus* bus() const { return bus_.load(std::memory_order_acquire); }

  void OnWorkerStart(Worker& w) override { InstallLatest(w); }
  void OnTimer(Worker& w) override;

 private:
  std::string SaveLocked();
  // Sets this node's ports, address and hostname from the settings; true when any
  // changed.
  bool ApplyAnnouncedLocked();
  void RebuildLocked();

  Engine* engine_;
  mutable std::mutex mu_;
  std::unique_ptr<ClusterState> state_;
  bool built_full_coverage_ = true;
  bool built_reads_when_down_ = false;
  std::string dir_;
  std::string name_;
  std::string path_;
  int lock_fd_ = -1;
  std::atomic<const ClusterBus*> bus_{nullptr};
};

// A random node id: 40 characters of [0-9a-f].
std::string NewNodeId();

}  // namespace strata
