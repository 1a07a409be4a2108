// ReplicaLink: strata as a replica of a Redis (or strata) master: REPLICAOF host port,
// or `replicaof` in the config.
//
// One link thread per REPLICAOF runs the master link's life:
//   1. connect (repl-timeout bounds it), then the handshake Redis 7's replicas send:
//      PING, AUTH [masteruser] masterauth (when set), REPLCONF listening-port <port>,
//      REPLCONF ip-address <replica-announce-ip> (when set),
//      REPLCONF capa eof capa psync2, and PSYNC <replid> <offset+1> of the history this
//      process holds once it has synced (PSYNC ? -1 before);
//   2. +FULLRESYNC <replid> <offset>: the master's RDB arrives, as `$<length>` or
//      diskless `$EOF:<40-byte mark>` (newlines before it are the master's keep-alives),
//      into dir/temp-<pid>-<n>.rdb; the snapshot manager then flushes every shard and
//      loads the file on all of them in parallel behind the loading gate
//      (SnapshotManager::Reload with an rdb), and the file is removed.
//      +CONTINUE [<new replid>]: the master still holds the stream from our offset; the
//      data stays as it is;
//      While the file loads, the thread reads the stream that follows it (after an ACK
//      of the image's offset, which starts a diskless master's stream) into memory;
//   3. the socket is handed to worker 0 as the master client, with the stream read so
//      far as its first input (ReplicationState has the rest: no replies, ACKs once a
//      second, repl-timeout), and the thread waits;
//   4. when the master client closes, the thread reconnects a second later (step 1,
//      with PSYNC of the replid and offset reached, so a master whose backlog still
//      holds them continues without a full sync).
// A FAILOVER's link (StartFailover) is the same, but its first PSYNC is
// `PSYNC <our replid> <our offset + 1> FAILOVER`, and how that first session ends is
// reported back once.
// A failure at any step is logged and retried a second later, as Redis's replicas do.
// REPLICAOF NO ONE stops the thread (closing its socket or the master client) and keeps
// the data; REPLICAOF of another master also starts a new thread. While the received
// image loads, REPLICAOF in either form is refused with -LOADING, as Redis refuses it
// while it loads: the link marks its load under the run's mutex in the same step that
// reads the stop flag, and StopUnlessLoading reads the mark under that mutex, so a
// REPLICAOF NO ONE either comes first and no load starts, or is refused and changes
// nothing (before, one that came after the decision to load but before the loading
// gate was taken got OK, and clients then saw -LOADING while the load ran). The handshake reads
// byte by byte and the RDB by its length, so the stream that follows starts exactly
// where the load's reading starts.
//
// Thread-safety: Start/Stop from any worker; the link thread touches the engine only by
// posting tasks to worker 0. Threads stopped by REPLICAOF are joined at shutdown.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "server/engine/engine.h"
#include "storage/status.h"

namespace strata {

class SnapshotManager;

class ReplicaLink final : public ShardService {
 public:
  ReplicaLink(Engine* engine, SnapshotManager* snapshots);
  ~ReplicaLink() override;

  // Any thread: follow host:port from now on (a new link thread).
  void Start(const std::string& host, int port);
  // FAILOVER (persistence/failover.h): as Start, and the first PSYNC asks to continue this
  // process's own history with a trailing FAILOVER, which tells the target to become the
  // master. `done` runs once on the link thread: accepted (+CONTINUE or +FULLRESYNC), or
  // not (why: the refusal, or why the target was not reached).
  using FailoverDone = std::function<void(bool accepted, const std::string& why)>;
  void StartFailover(const std::string& host, int port, FailoverDone done);
  // Any thread: stop following (REPLICAOF NO ONE); the data stays.
  void Stop();
  // Any thread: as Stop, unless the link is loading a received image; then nothing
  // changes and it returns false (REPLICAOF answers -LOADING).
  bool StopUnlessLoading();
  // At shutdown, before the workers stop: stops and joins every link thread.
  void Shutdown();

  // ROLE's state word for a replica: connect, connecting, handshake, sync, connected.
  std::string RoleState() const;

 private:
  struct Run;
  bool StopRun(bool unless_loading);
  void StartRun(std::shared_ptr<Run> run);
  // A failover run's first session ended (its PSYNC answered, or the session failed).
  static void ReportFailover(Run& run, bool accepted, const std::string& why);
  void Loop(std::shared_ptr<Run> run);
  // One connection's life; returns when it ended (the reason logged).
  void Session(const std::shared_ptr<Run>& run);
  Status Handshake(Run& run, int fd, bool* full, std::string* replid, int64_t* offset);
  Status ReceiveRdb(Run& run, int fd, const std::string& path);
  // Loads the received image while reading the stream that follows it into *early, as
  // Redis 8's replicas keep it on their side: an ACK of the image's offset at once tells
  // the master to start the stream (a diskless master waits for one), so the master
  // holds little of it meanwhile; one more each second keeps its repl-timeout from
  // dropping a replica that loads for long. Bounded by client-output-buffer-limit
  // replica's hard limit, what the master would have held.
  Status LoadRdbReading(Run& run, int fd, const std::string& path, int64_t offset,
                        std::string* early);

  Engine* engine_;
  SnapshotManager* snapshots_;
  mutable std::mutex mu_;
  // Held by Start() from its Stop() to the new run's start: two Starts on two threads
  // (a worker's CLUSTER REPLICATE, the cluster bus after a failover) cannot both stop
  // the old run and leave two running.
  std::mutex start_mu_;
  bool shut_down_ = false;  // under start_mu_: no Start after Shutdown
  std::shared_ptr<Run> current_;
  std::vector<std::thread> threads_;
  // Set once a sync succeeded: later links ask to continue ReplicationState's replid
  // and offset (PSYNC2) instead of PSYNC ? -1.
  std::atomic<bool> has_history_{false};
  std::atomic<uint64_t> temp_seq_{0};
};

}  // namespace strata
