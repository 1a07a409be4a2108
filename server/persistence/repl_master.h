// ReplMaster: strata as a master - its replicas, their full and partial resyncs, the
// stream sent to them, their acknowledgements and WAIT (docs/ARCHITECTURE.md "strata as
// a master").
//
// The stream. Every worker's feed (engine/repl_feed.h) adds the effects of its writes to
// the process's ReplLog; at the end of each loop turn a worker publishes them, and worker
// 0 (the merger) merges them in number order into the backlog. The merged bytes of a turn
// are appended to each replica's pending output (under the replica's mutex) and a task on
// the replica's own worker moves them to its connection, where client-output-buffer-limit
// replica bounds them. The feeds are off until the first replica attaches (nothing is
// numbered or buffered before), and are turned off again repl-backlog-ttl seconds after
// the last replica left; the history then ends (a new replication id), as Redis frees its
// backlog.
//
// PSYNC replid offset / SYNC (on the replica's worker): the connection becomes a replica
// (Client::MakeReplica: no replies, the replica output class) and worker 0 decides:
//   - partial: the id is ours (or our previous one, up to where it ended) and the backlog
//     still holds the offset: +CONTINUE <id>, the backlog's bytes from there, then the
//     stream.
//   - full: +FULLRESYNC <id> <offset>, the image, then the stream from that offset. The
//     image is a full snapshot (SnapshotManager::RequestImage; fork-free, so the master's
//     extra memory is what the shards capture while it is written) whose cut also reads
//     the stream's counter, so the image holds exactly the records numbered below it; the
//     merger reports the stream offset at that number (ReplLog::AddCut). An encoder
//     thread turns the snapshot's files into an RDB (storage/snapshot_rdb.h, version 10)
//     in pieces of kPieceBytes, at most kQueuedPieces ahead of the socket: sent as it is
//     made with `$EOF:<mark>` framing when the replica said `capa eof` and
//     repl-diskless-sync is yes, or written to dir/temp-repl-<pid>-<n>.rdb first and sent
//     with its length otherwise. The replica's worker moves pieces to the connection while
//     its output holds less than kPieceBytes * 2. Stream bytes after the offset wait in the
//     replica's pending buffer meanwhile and follow the image.
// REPLCONF ACK <offset> (the replica's worker) records the replica's offset; WAIT asks worker
// 0 for the stream offset of everything numbered before it, sends REPLCONF GETACK through
// the stream, and is woken when enough replicas have acknowledged that offset (or its
// timeout ends, with the count then). Worker 0's timer adds a PING to the stream every
// repl-ping-replica-period seconds and drops replicas silent for repl-timeout seconds.
//
// Thread-safety: a Peer's connection is touched only on its worker; the peers' list, the
// WAIT list and the stream's bookkeeping on worker 0; a Peer's pending bytes and pieces
// under its mutex; its acknowledged offset is an atomic. Encoder threads touch only their
// peer and post to workers with PostExternal.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "server/engine/engine.h"
#include "server/engine/replication_state.h"
#include "server/persistence/snapshot.h"
#include "storage/status.h"

namespace strata {

class Client;
struct BlockedClient;

class ReplMaster final : public ShardService {
 public:
  static constexpr size_t kPieceBytes = 1 << 20;
  static constexpr size_t kQueuedPieces = 4;

  ReplMaster(Engine* engine, SnapshotManager* snapshots);
  ~ReplMaster() override;
  // Before the workers stop: stops the encoder threads.
  void Shutdown();

  // PSYNC (psync true) or SYNC from client c, on its worker: c becomes a replica.
  // Returns an error reply's text when refused (c is then unchanged).
  std::string Attach(Client& c, std::string_view replid, int64_t offset, bool psync);
  // REPLCONF ACK from a replica, on its worker.
  void Ack(Client& c, int64_t offset);

  // WAIT: the fiber's waiter (a keyless BlockedClient) is woken with the count in
  // *acked once `replicas` replicas acknowledged every write numbered below `counter`
  // (the client's writes; 0: none, every replica counts). Its stream offset is the
  // offset where the records numbered below it end (a cut without SELECT), so PINGs and
  // GETACKs emitted since do not count.
  struct WaitRequest;
  void Wait(uint32_t origin, int64_t replicas, uint64_t counter,
            std::shared_ptr<BlockedClient> waiter, std::shared_ptr<std::atomic<int64_t>> acked);
  // Replicas that acknowledged `offset` (-1: the stream's offset as last merged).
  int64_t CountAcked(int64_t offset) const;
  // ROLE's list: ip, port, acknowledged offset of each online replica.
  struct RoleEntry {
    std::string ip;
    int port;
    int64_t offset;
  };
  std::vector<RoleEntry> RoleReplicas() const;
  // FAILOVER's view: every attached replica, online or not, with its acknowledged offset.
  struct ReplicaView {
    std::string ip;
    int port;
    bool online;
    int64_t ack;
  };
  std::vector<ReplicaView> Replicas() const;
  int64_t connected() const { return connected_.load(std::memory_order_relaxed); }
  // INFO stats: full resyncs served, partial resyncs accepted and refused.
  uint64_t sync_full() const { return sync_full_.load(std::memory_order_relaxed); }
  uint64_t sync_partial_ok() const { return sync_partial_ok_.load(std::memory_order_relaxed); }
  uint64_t sync_partial_err() const { return sync_partial_err_.load(std::memory_order_relaxed); }

  // ShardService.
  void OnWorkerTurn(Worker& w, int64_t turn_ns, bool busy) override;
  bool HasWork(const Worker& w) const override;
  void OnTimer(Worker& w) override;

 private:
  struct Peer;
  // Worker 0.
  void Decide(std::shared_ptr<Peer> p, std::string replid, int64_t offset, bool psync);
  void EnableStream();
  // new_history: the backlog is freed (repl-backlog-ttl): a new replication id.
  void DisableStream(bool new_history);
  void Merge();
  void StartImage(std::shared_ptr<Peer> p);
  void OnImage(std::shared_ptr<Peer> p, const Status& st, SnapshotManager::Image image);
  void Remove(const std::shared_ptr<Peer>& p);
  void CheckWaits();
  // Worker 0's timer: the good replicas min-replicas-to-write counts.
  void CountGoodReplicas(int64_t now_ms);
  void RequestMerge(Worker& from);
  // The replica's worker.
  void Pump(Worker& w, Peer& p);
  void Deliver(Peer& p);
  void Drop(const std::shared_ptr<Peer>& p, const std::string& why);
  // The encoder thread.
  void Encode(std::shared_ptr<Peer> p, SnapshotManager::Image image);
  ReplicationState::MasterInfo Info() const;

  Engine* engine_;
  SnapshotManager* snapshots_;
  // Worker 0's.
  bool stream_on_ = false;
  int64_t no_replicas_since_ms_ = 0;
  int64_t next_ping_ms_ = 0;
  uint64_t next_cut_id_ = 1;
  std::vector<ReplSlice> turn_slices_;  // what the last Merge emitted
  bool getack_due_ = false;
  std::vector<std::shared_ptr<WaitRequest>> waits_;
  // The peers: changed on worker 0, read by INFO and ROLE from any worker.
  mutable std::mutex peers_mu_;
  std::vector<std::shared_ptr<Peer>> peers_;
  std::atomic<int64_t> connected_{0};
  std::atomic<uint64_t> sync_full_{0};
  std::atomic<uint64_t> sync_partial_ok_{0};
  std::atomic<uint64_t> sync_partial_err_{0};
  std::atomic<bool> merge_requested_{false};
  std::atomic<int64_t> merged_offset_{0};
  std::atomic<int64_t> backlog_first_{0};
  // Per worker: its peers (touched on that worker only).
  std::vector<std::vector<std::shared_ptr<Peer>>> local_;
  // The encoder threads, each with its "finished" flag: finished ones are joined when the
  // next starts (a replica that resyncs again and again leaves none behind).
  struct Encoder {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> finished;
  };
  std::mutex threads_mu_;
  std::vector<Encoder> threads_;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> temp_seq_{0};
};

}  // namespace strata
