// SlotRouting: what the data path needs to know of a Redis Cluster's layout - which node
// serves each hash slot, where to send a client for a slot served elsewhere, and whether
// the cluster is up (docs/ARCHITECTURE.md "Cluster").
//
// Design
//   The cluster's state (server/cluster/) changes rarely: a slot assigned or moved, a
//   node failing, the cluster going down. Each change builds a new immutable
//   SlotRouting and hands every worker its own reference through a task on that worker
//   (Worker::set_routing), so a command reads its worker's routing with no lock and no
//   atomic. A worker keeps the old one alive until the new one replaces it, so a reader
//   never sees it freed.
//   With `cluster-enabled no` or `emulated` a worker has no routing and the dispatcher's
//   check is one predictable branch.
//
// Redirections, as Redis 7 gives them (RouteKeys):
//   -CLUSTERDOWN Hash slot not served   a key's slot has no owner
//   -CLUSTERDOWN The cluster is down    the cluster is down (cluster_state:fail); with
//                                       cluster-allow-reads-when-down, reads are served
//                                       and writes get "... and only accepts read
//                                       commands"
//   -MOVED <slot> <ip>:<port>           every key is in one slot, served by another node
//   -CROSSSLOT ...                      the keys are in several slots and not all served
//                                       here (keys of several slots that are all served
//                                       here work: a strata node holds many slots)
//   The checks run in Redis's order: slots first (unserved, cross-slot), then the
//   cluster's state, then the owner.
//
// Thread-safety: immutable once built; shared by reference between workers.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/key_slot.h"

namespace strata {

struct SlotRouting {
  static constexpr uint16_t kNoOwner = 0xFFFF;
  // Per slot: the index in `endpoints` of the master serving it, or kNoOwner.
  std::array<uint16_t, kClusterSlots> owner;
  // Per node index: "<ip>:<port>" as MOVED names it.
  std::vector<std::string> endpoints;
  uint16_t myself = 0;
  // A replica: its master's index (READONLY clients read that master's slots here).
  uint16_t my_master = kNoOwner;
  bool ok = false;                     // cluster_state:ok
  bool allow_reads_when_down = false;  // cluster-allow-reads-when-down

  SlotRouting() { owner.fill(kNoOwner); }
};

// Where a command with these keys must go: empty when it runs here, else the error
// message as ReplyBuilder::Error takes it. `write`: the command may write. `readonly`:
// the client sent READONLY, so on a replica a read of its master's slots runs here.
std::string RouteKeys(const SlotRouting& r, std::span<const std::string_view> keys, bool write,
                      bool readonly = false);

}  // namespace strata
