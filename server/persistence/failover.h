// FailoverCoordinator: FAILOVER [TO host port [FORCE]] [TIMEOUT ms] | FAILOVER ABORT, the
// coordinated hand-over of Redis 6.2 from a master to one of its replicas, with no
// acknowledged write lost and no moment with two masters.
//
// The states are ReplicationState::failover() (INFO's master_failover_state):
//   no-failover -> waiting-for-sync: FAILOVER (on the client's worker) pauses clients'
//     writes for the failover's own purpose (Engine::kPauseForFailover; a user's CLIENT
//     PAUSE and UNPAUSE neither end nor extend it), which also keeps PING and GETACK out
//     of the stream, so the master's offset holds still. The command replies once every
//     worker holds writes. New replicas are refused meanwhile (-NOMASTERLINK).
//   waiting-for-sync -> failover-in-progress: worker 0's timer finds the target (TO), or
//     else the first replica, online and acknowledging exactly the master's offset. The
//     check starts kSettleMs after the pause: a write that passed the pause's gate just
//     before it (a command across shards) reaches the stream within a few loop turns,
//     and moves the offset the replica must reach. Replicas acknowledge once a second,
//     so a hand-over takes about a second. With TIMEOUT, a failover still waiting then
//     is aborted, or with FORCE goes to the target anyway.
//     This server then becomes a replica of the target (ReplicaLink::StartFailover), its
//     other replicas dropped as REPLICAOF drops them. Its PSYNC continues its own history
//     and carries FAILOVER: the target (strata's PSYNC, or Redis's) becomes a master for
//     the history it follows and continues it, so the old master's data stays as it is.
//   failover-in-progress -> no-failover: the target answered the PSYNC (+CONTINUE, or a
//     full resync): the pause ends, and the writes it held meet a replica (-READONLY).
//     Refused, or the target not reached before the PSYNC was sent: aborted (Redis 7.0
//     keeps trying to reach it, with no master meanwhile, until FAILOVER ABORT). A link
//     lost after the PSYNC went out, with no answer, is retried with the same PSYNC: the
//     target may have taken over already, and a strata target answers it again.
// Aborting (FAILOVER ABORT, a timeout, a refusal) makes this server a master again if it
// had become a replica (a new history, as REPLICAOF NO ONE; its replicas continue
// through the previous one) and ends the pause.
//
// Not as in Redis: the old master's other replicas are not served through it afterwards
// (strata does not chain replicas); they need REPLICAOF of the new master, or Sentinel.
//
// Thread-safety: the state is under mu_ (ReplicationState's copy is an atomic for INFO);
// Begin and Abort run on any worker, the timer and the link's answer on worker 0.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>

#include "server/engine/engine.h"

namespace strata {

class ReplMaster;
class ReplicaLink;

class FailoverCoordinator final : public ShardService {
 public:
  static constexpr int64_t kSettleMs = 100;

  FailoverCoordinator(Engine* engine, ReplMaster* master, ReplicaLink* link);

  struct Request {
    bool has_target = false;
    std::string host;
    int port = 0;
    bool force = false;
    int64_t timeout_ms = 0;  // 0: none
  };
  // FAILOVER, its arguments parsed: Redis's checks in Redis's order. "" when the failover
  // began (writes are then paused; the caller shows the pause to every worker before it
  // replies), otherwise the error reply.
  std::string Begin(const Request& r, int64_t now_ms);
  // FAILOVER ABORT: false when no failover is in progress.
  bool Abort();

  // ShardService: worker 0's timer.
  void OnTimer(Worker& w) override;

 private:
  void ProceedLocked(const std::string& host, int port);
  void OnPsyncAnswer(uint64_t attempt, bool accepted, const std::string& why);
  void AbortLocked(const std::string& why);
  void EndLocked();
  std::string TargetName() const;

  Engine* engine_;
  ReplMaster* master_;
  ReplicaLink* link_;
  std::mutex mu_;
  bool has_target_ = false;
  std::string host_;
  int port_ = 0;
  bool force_ = false;
  int64_t started_ms_ = 0;
  int64_t end_ms_ = 0;    // 0: no timeout
  uint64_t attempt_ = 0;  // the hand-over a link's answer belongs to
};

}  // namespace strata
