#include "server/persistence/failover.h"

#include <cinttypes>
#include <climits>

#include "server/base/config.h"
#include "server/base/log.h"
#include "server/engine/replication_state.h"
#include "server/engine/worker.h"
#include "server/persistence/repl_master.h"
#include "server/persistence/replica_link.h"

namespace strata {

using State = ReplicationState::Failover;

FailoverCoordinator::FailoverCoordinator(Engine* engine, ReplMaster* master, ReplicaLink* link)
    : engine_(engine), master_(master), link_(link) {}

std::string FailoverCoordinator::Begin(const Request& r, int64_t now_ms) {
  ReplicationState& state = engine_->replication();
  std::lock_guard<std::mutex> l(mu_);
  if (state.failover() != State::kNone) return "ERR FAILOVER already in progress.";
  if (state.is_replica()) return "ERR FAILOVER is not valid when server is a replica.";
  std::vector<ReplMaster::ReplicaView> replicas = master_->Replicas();
  if (replicas.empty()) return "ERR FAILOVER requires connected replicas.";
  if (r.force && (r.timeout_ms == 0 || !r.has_target)) {
    return "ERR FAILOVER with force option requires both a timeout and target HOST and IP.";
  }
  if (r.has_target) {
    const ReplMaster::ReplicaView* found = nullptr;
    for (const auto& v : replicas) {
      if (v.ip == r.host && v.port == r.port) found = &v;
    }
    if (found == nullptr) return "ERR FAILOVER target HOST and PORT is not a replica.";
    if (!found->online) return "ERR FAILOVER target replica is not online.";
  }
  has_target_ = r.has_target;
  host_ = r.host;
  port_ = r.port;
  force_ = r.force;
  started_ms_ = now_ms;
  end_ms_ = r.timeout_ms > 0 ? now_ms + r.timeout_ms : 0;
  state.SetFailover(State::kWaitForSync);
  if (has_target_) {
    LogNotice("FAILOVER requested to %s:%d.", host_.c_str(), port_);
  } else {
    LogNotice("FAILOVER requested to any replica.");
  }
  engine_->PauseClients(INT64_MAX, Engine::kPauseWrite, Engine::kPauseForFailover);
  return "";
}

bool FailoverCoordinator::Abort() {
  std::lock_guard<std::mutex> l(mu_);
  if (engine_->replication().failover() == State::kNone) return false;
  AbortLocked("Failover manually aborted");
  return true;
}

void FailoverCoordinator::OnTimer(Worker& w) {
  if (engine_->replication().failover() != State::kWaitForSync) return;
  std::lock_guard<std::mutex> l(mu_);
  if (engine_->replication().failover() != State::kWaitForSync) return;
  int64_t now = w.now_ms();
  if (end_ms_ != 0 && now >= end_ms_) {
    if (force_) {
      LogNotice("FAILOVER to %s:%d time out exceeded, failing over.", host_.c_str(), port_);
      ProceedLocked(host_, port_);
    } else {
      AbortLocked("Replica never caught up before timeout");
    }
    return;
  }
  if (now < started_ms_ + kSettleMs) return;
  int64_t offset = engine_->replication().offset();
  for (const ReplMaster::ReplicaView& v : master_->Replicas()) {
    if (has_target_ && (v.ip != host_ || v.port != port_)) continue;
    if (!v.online || v.ack != offset) continue;
    LogNotice("Failover target %s:%d is synced at offset %" PRId64 ", failing over.", v.ip.c_str(),
              v.port, offset);
    ProceedLocked(v.ip, v.port);
    return;
  }
}

void FailoverCoordinator::ProceedLocked(const std::string& host, int port) {
  has_target_ = true;
  host_ = host;
  port_ = port;
  uint64_t attempt = ++attempt_;
  engine_->replication().SetFailover(State::kInProgress);
  // What CONFIG GET replicaof shows, as after REPLICAOF.
  engine_->config().Set("replicaof", host + " " + std::to_string(port), false);
  Engine* engine = engine_;
  link_->StartFailover(host, port, [this, engine, attempt](bool accepted, const std::string& why) {
    // On the link's thread: the answer is worker 0's to act on.
    engine->worker(0).PostExternal(
        MakeTask([this, attempt, accepted, why] { OnPsyncAnswer(attempt, accepted, why); }));
  });
}

void FailoverCoordinator::OnPsyncAnswer(uint64_t attempt, bool accepted, const std::string& why) {
  std::lock_guard<std::mutex> l(mu_);
  if (attempt != attempt_ || engine_->replication().failover() != State::kInProgress) return;
  if (!accepted) {
    AbortLocked("Failover target rejected psync request: " + why);
    return;
  }
  LogNotice("FAILOVER to %s:%d done: this server is now its replica.", host_.c_str(), port_);
  EndLocked();
}

void FailoverCoordinator::AbortLocked(const std::string& why) {
  LogWarning("FAILOVER to %s aborted: %s", TargetName().c_str(), why.c_str());
  if (engine_->replication().failover() == State::kInProgress) {
    link_->Stop();
    engine_->replication().BecomeMaster();
    engine_->config().Set("replicaof", "", false);
  }
  EndLocked();
}

void FailoverCoordinator::EndLocked() {
  attempt_++;  // an answer still on its way belongs to nothing now
  has_target_ = false;
  host_.clear();
  port_ = 0;
  force_ = false;
  end_ms_ = 0;
  engine_->replication().SetFailover(State::kNone);
  engine_->UnpauseClients(Engine::kPauseForFailover);
}

std::string FailoverCoordinator::TargetName() const {
  return has_target_ ? host_ + ":" + std::to_string(port_) : std::string("any replica");
}

}  // namespace strata
