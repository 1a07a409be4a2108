// ReplicationState: what the process knows of its replication role, shared by the
// dispatcher (a replica refuses its clients' writes), the master client (it counts the
// offset and acknowledges it), the replica link (persistence/replica_link.h) and INFO
// replication / ROLE.
//
// strata as a replica: the link thread connects to the master, runs the handshake and
// takes the RDB, the snapshot manager loads it, and the socket then becomes worker 0's
// master client (Worker::AdoptMasterConnection): a ClientConnection whose commands run
// as any client's, without replies, past replica-read-only and maxmemory, each adding its
// bytes to the offset. When the master client closes, the link is told (on_master_closed)
// and reconnects. (strata as a master: persistence/repl_master.h; FAILOVER:
// persistence/failover.h.)
//
// Thread-safety: the flags and counters are atomics; the strings are under mu_.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

namespace strata {

class Config;

class ReplicationState {
 public:
  enum class Link { kNone, kConnecting, kTransfer, kLoading, kUp, kDown };

  ReplicationState();

  // Read on every command's path: what a replica refuses its clients (not its master).
  static constexpr uint8_t kRefuseWrites = 1;  // replica-read-only yes
  static constexpr uint8_t kRefuseStale = 2;   // link down and replica-serve-stale-data no
  // The last snapshot failed, with save rules and stop-writes-on-bgsave-error yes: writes
  // and PING get -MISCONF (Redis ties it to the same per-command check, so it lives in
  // this byte too).
  static constexpr uint8_t kRefuseMisconf = 4;
  // A master with min-replicas-to-write set has fewer good replicas (online, acknowledged
  // within min-replicas-max-lag seconds): writes get -NOREPLICAS.
  static constexpr uint8_t kRefuseNoReplicas = 8;
  uint8_t dispatch_flags() const { return dispatch_.load(std::memory_order_relaxed); }
  bool refuses_writes() const { return dispatch_flags() & kRefuseWrites; }

  static constexpr const char* kNoReplicasError = "NOREPLICAS Not enough good replicas to write.";
  // Redis 7.0's reply while kRefuseMisconf holds: to a write or PING, to a script's
  // write, and to a script with flags (or a function) that may write.
  static constexpr const char* kMisconfError =
      "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to "
      "persist to disk. Commands that may modify the data set are disabled, because this "
      "instance is configured to report errors during writes if RDB snapshotting fails "
      "(stop-writes-on-bgsave-error option). Please check the Redis logs for details about "
      "the RDB error.";
  // The error a script's write (or a script that may write) gets from its client's
  // side now - a read-only replica, a failed save, too few good replicas - or nullptr.
  const char* ScriptWriteRefusal() const {
    uint8_t f = dispatch_flags();
    if (f == 0) [[likely]]
      return nullptr;
    if (f & kRefuseWrites) return "READONLY You can't write against a read only replica.";
    if (f & kRefuseMisconf) return kMisconfError;
    if (f & kRefuseNoReplicas) return kNoReplicasError;
    return nullptr;
  }
  bool is_replica() const { return is_replica_.load(std::memory_order_acquire); }
  const std::atomic<bool>& replica_flag() const { return is_replica_; }
  Link link() const { return link_.load(std::memory_order_acquire); }

  // The replica link (any thread).
  void BecomeReplica(const std::string& host, int port, bool read_only);
  void BecomeMaster();  // REPLICAOF NO ONE: keeps the data, starts a new history
  // now_ms: when the link went down, for master_link_down_since_seconds.
  void SetLink(Link l, int64_t now_ms);
  // Worker 0's timer and CONFIG SET: replica-read-only, replica-serve-stale-data and
  // whether a failed save stops writes (stop-writes-on-bgsave-error with save rules), as
  // configured now.
  // min_replicas: min-replicas-to-write while min-replicas-max-lag is above 0, else 0.
  void Configure(bool read_only, bool serve_stale, bool stop_writes_on_save_error,
                 int64_t min_replicas = 0);
  void ConfigureFrom(const Config& c);
  // The snapshot manager, after each snapshot: whether it failed (rdb_last_bgsave_status).
  void SetSaveFailed(bool failed);
  // The replicas' owner (worker 0's timer): replicas online that acknowledged within
  // min-replicas-max-lag seconds (INFO's min_slaves_good_slaves).
  void SetGoodReplicas(int64_t n);
  // The master's replication id and the offset of its stream this replica has applied.
  void SetMasterStream(const std::string& replid, int64_t offset);
  bool MasterOf(std::string* host, int* port) const;
  // When the link last went down (wall-clock ms; 0: it was never up).
  int64_t down_since_ms() const;

  // The master client (worker 0): bytes of commands it has run.
  void AddOffset(int64_t n) { offset_.fetch_add(n, std::memory_order_relaxed); }
  int64_t offset() const { return offset_.load(std::memory_order_relaxed); }
  void NoteMasterIo(int64_t now_ms) { last_io_ms_.store(now_ms, std::memory_order_relaxed); }
  // The full sync's transfer so far (INFO's master_sync_* lines): total -1 while the
  // size is unknown (the diskless form).
  void NoteTransfer(int64_t total, int64_t read, int64_t now_ms) {
    transfer_total_.store(total, std::memory_order_relaxed);
    transfer_read_.store(read, std::memory_order_relaxed);
    transfer_io_ms_.store(now_ms, std::memory_order_relaxed);
  }
  int64_t last_io_ms() const { return last_io_ms_.load(std::memory_order_relaxed); }
  // The link thread: bytes of the master's image received (a full sync's transfer),
  // which INFO counts in total_net_repl_input_bytes beside the master client's stream.
  void AddSyncInputBytes(uint64_t n) { sync_input_bytes_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t sync_input_bytes() const { return sync_input_bytes_.load(std::memory_order_relaxed); }
  void ResetSyncInputBytes() { sync_input_bytes_.store(0, std::memory_order_relaxed); }

  std::string replid() const;
  std::string replid2() const;
  int64_t second_offset() const;
  // strata as a master: the stream's offset (master_repl_offset) as the merger reaches it.
  void SetOffset(int64_t offset) { offset_.store(offset, std::memory_order_relaxed); }
  // A master whose history ended (its backlog was freed): a new id, and no second one.
  void NewHistory();
  // INFO's master-side lines, from the replicas' owner (persistence/repl_master.h).
  struct MasterInfo {
    int connected = 0;
    std::string replica_lines;  // slave0:ip=...,port=...,state=...,offset=...,lag=...
    bool backlog_active = false;
    int64_t backlog_size = 1048576;
    int64_t backlog_first = 0;  // repl_backlog_first_byte_offset
    int64_t backlog_histlen = 0;
  };
  std::function<MasterInfo()> master_info;
  // INFO replication's lines (Redis's names), and ROLE's reply fields.
  std::string InfoLines(int64_t now_ms, int64_t replica_priority, bool announced) const;

  // Set by the replica link: runs on worker 0 when the master client closes.
  std::function<void()> on_master_closed;

  // FAILOVER's progress (persistence/failover.h), INFO's master_failover_state.
  enum class Failover : uint8_t { kNone, kWaitForSync, kInProgress };
  Failover failover() const { return failover_.load(std::memory_order_acquire); }
  void SetFailover(Failover f) { failover_.store(f, std::memory_order_release); }

 private:
  void RecomputeLocked();  // dispatch_ from the state (under mu_)
  std::atomic<uint8_t> dispatch_{0};
  std::atomic<bool> is_replica_{false};
  std::atomic<Link> link_{Link::kNone};
  std::atomic<Failover> failover_{Failover::kNone};
  std::atomic<int64_t> offset_{0};
  std::atomic<int64_t> last_io_ms_{0};
  std::atomic<int64_t> transfer_total_{0};
  std::atomic<int64_t> transfer_read_{0};
  std::atomic<int64_t> transfer_io_ms_{0};
  std::atomic<uint64_t> sync_input_bytes_{0};
  mutable std::mutex mu_;
  std::string host_;
  int port_ = 0;
  std::string replid_;   // ours as a master; the master's as a replica
  std::string replid2_;  // the history before the last switch, and where it ended
  int64_t second_offset_ = -1;
  bool read_only_ = true;
  bool serve_stale_ = true;
  bool stop_writes_on_save_error_ = false;
  bool save_failed_ = false;
  int64_t min_replicas_ = 0;
  int64_t good_replicas_ = 0;
  int64_t down_since_ms_ = 0;  // when the link last went down (0: never up)
};

// 40 random hex digits: a replication id (and the run id).
std::string RandomHexId();

}  // namespace strata
