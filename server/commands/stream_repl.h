// What consumer-group reads and claims send to replicas: their effects, as Redis 7 sends
// them, never the commands. XREADGROUP, XCLAIM and XAUTOCLAIM depend on the time (idle
// times, delivery times) and on when they run (a blocked XREADGROUP is served by a later
// XADD), so replaying the command on a replica would give it other pending entries:
//   - a consumer the call created:  XGROUP CREATECONSUMER key group consumer
//   - each entry delivered or claimed, or read again from the consumer's history:
//       XCLAIM key group consumer 0 id TIME <delivery ms> RETRYCOUNT <deliveries> FORCE
//              JUSTID LASTID <group's last-delivered-id>
//     (idempotent: the replica's pending entry ends exactly as the master's)
//   - each pending entry dropped because its entry is gone:  XACK key group id
//   - a moved last-delivered-id:  XGROUP SETID key group id ENTRIESREAD n
// The commands' own propagation is then nothing (propagation.cc: PropagateNothing, and
// no_fiber_propagation for XREADGROUP's fiber).
//
// Where the effects go: kNow while the command runs (a shard call, or a fiber's step on
// the shard under its locks), kAfterCommand when a blocked XREADGROUP is served inside
// the XADD that woke it (after the XADD's own record).
// Thread-safety: on the shard that holds the key. Each call costs one flag test when no
// replica is attached.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "core/stream_type.h"

namespace strata {

class Worker;

enum class EffectPlace { kNow, kAfterCommand };

class StreamEffects {
 public:
  StreamEffects(Worker& w, uint32_t db, std::string_view key, const StreamGroup& g,
                EffectPlace place);
  bool on() const { return on_; }
  void ConsumerCreated(std::string_view consumer);
  // ids: pending entries of g (those not pending, or no longer, are skipped).
  void Claimed(std::span<const StreamId> ids);
  void Acked(std::span<const StreamId> ids);
  void GroupPosition();

 private:
  void Emit(std::span<const std::string_view> args);
  Worker& w_;
  uint32_t db_;
  std::string_view key_;
  const StreamGroup& g_;
  EffectPlace place_;
  bool on_;
};

}  // namespace strata
