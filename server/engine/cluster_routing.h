// SlotRouting: what the data path needs to know of a Redis Cluster's layout - which node
// serves each hash slot, where to send a client for a slot served elsewhere, and whether
// the cluster is up (docs/ARCHITECTURE.md "Cluster").
//
// Design
//   The cluster's state (server/cluster/) changes rarely: a slot assigned or moved, a
//   node failing, the cluster going down. Each change builds a new immutable
//   SlotRouting and publishes it on the engine's RoutingBoard (routing_board.h). Every
//   worker holds its own reference, and takes the latest when the board's version moved
//   (Worker::routing: one acquire load, no lock), so no command routes by a layout older
//   than what its client has already seen. A worker keeps the old one alive until the
//   new one replaces it, so a reader never sees it freed.
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
//   -ASK <slot> <ip>:<port>             the slot is migrating from this node (CLUSTER
//                                       SETSLOT MIGRATING) and a key is not here
//   -TRYAGAIN Multiple keys request during rehashing of slot
//                                       the slot is migrating and some keys are here and
//                                       some not; or it is importing, the client asked
//                                       (ASKING) and some of several keys are missing
//   The checks run in Redis's order: slots first (unserved, cross-slot), then the
//   cluster's state, then an open slot, then the owner.
//
// Open slots (resharding): whether a key of a migrating slot is here decides where the
//   command runs, and that must be decided atomically with the command, on the shard
//   that holds the keys. RouteKeys without the keys' presence answers kNeedsPresence;
//   the dispatcher then sends the command to its shard with OpenSlotBits, and the shard
//   asks again with the presence it sees (server/engine/open_slot_check.h) before it
//   runs the command. A slot this node serves and migrates has kMigrating in `owner`,
//   so the one-key fast path (owner == myself) never passes it by.
//   A command whose keys are in several slots and one of them open, or that runs as a
//   fiber (keys on several shards, a blocking command, a script), gets -TRYAGAIN
//   (clients retry it; Redis refuses keys of several slots with -CROSSSLOT in any case).
//   EXEC decides with its keys held (transaction.cc).
//
// Thread-safety: immutable once built; shared by reference between workers.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/key_slot.h"

namespace strata {

struct SlotRouting {
  static constexpr uint16_t kNoOwner = 0xFFFF;
  // In `owner`: this node serves the slot and is migrating it (see migrating_to).
  static constexpr uint16_t kMigrating = 0xFFFE;
  // Per slot: the index in `endpoints` of the master serving it, kMigrating, or
  // kNoOwner.
  std::array<uint16_t, kClusterSlots> owner;
  // Open slots (CLUSTER SETSLOT): slot -> the other node's index in `endpoints`.
  // migrating_to: slots this node serves and moves away; importing_from: slots another
  // node serves and this one takes in.
  std::unordered_map<uint32_t, uint16_t> migrating_to;
  std::unordered_map<uint32_t, uint16_t> importing_from;
  // Per node index: "<ip>:<port>" as MOVED names it.
  std::vector<std::string> endpoints;
  uint16_t myself = 0;
  // A replica: its master's index (READONLY clients read that master's slots here).
  uint16_t my_master = kNoOwner;
  bool ok = false;  // cluster_state:ok
  // myself while ok, else kNeverOwner: a command of one key whose slot's owner equals
  // this is served here with no further check (ClientConnection::Dispatch).
  static constexpr uint16_t kNeverOwner = 0xFFFD;
  uint16_t serve_fast = kNeverOwner;
  bool allow_reads_when_down = false;  // cluster-allow-reads-when-down

  SlotRouting() { owner.fill(kNoOwner); }
};

// How many of a command's keys are in the keyspace (a key named twice counts twice).
struct KeyPresence {
  size_t existing = 0;
  size_t missing = 0;
};

struct RouteQuery {
  bool write = false;     // the command may write
  bool readonly = false;  // READONLY: on a replica, reads of its master's slots run here
  bool asking = false;    // ASKING (or RESTORE-ASKING): an importing slot runs here
  // The keys' presence, on the shard that holds them; null: not known yet.
  const KeyPresence* presence = nullptr;
};

struct RouteDecision {
  enum Kind : uint8_t { kHere, kRedirect, kNeedsPresence };
  Kind kind = kHere;
  std::string error;  // kRedirect: the message as ReplyBuilder::Error takes it
};

// Where a command with these keys must go.
RouteDecision Route(const SlotRouting& r, std::span<const std::string_view> keys,
                    const RouteQuery& q);

// Route's answer for a slot layout with no open slot in play: empty when the command
// runs here, else the error message. (An open slot answers -TRYAGAIN here.)
std::string RouteKeys(const SlotRouting& r, std::span<const std::string_view> keys, bool write,
                      bool readonly = false);

// The bits a command in an open slot carries to its shard.
enum OpenSlotBits : uint8_t {
  kOpenSlotCheck = 1,     // decide there, with the keys' presence
  kOpenSlotAsking = 2,    // the client sent ASKING
  kOpenSlotReadonly = 4,  // the client sent READONLY
};

inline constexpr std::string_view kTryAgainError =
    "TRYAGAIN Multiple keys request during rehashing of slot";

}  // namespace strata
