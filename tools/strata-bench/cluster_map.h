// ClusterMap: strata-bench's view of a Redis Cluster under --cluster-mode: its master
// nodes (host:port) and which of them owns each of the 16384 slots. It is built from a
// CLUSTER SLOTS reply (ParseClusterSlots + Apply), patched one slot at a time by -MOVED
// replies (SetOwner), and refreshed from later CLUSTER SLOTS replies. Nodes are only ever
// added, so a node's index stays valid for the whole run (connections and per-node stats
// are kept by it); at most kMaxNodes of them.
//
// Also here, the parsing of the redirect errors a cluster sends: "MOVED <slot> <host>:<port>"
// and "ASK <slot> <host>:<port>".
//
// Pure logic, no I/O. Thread-safety: a value type; each ClusterThread owns its own map.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/key_slot.h"
#include "tools/strata-mem/reply.h"

namespace strata::bench {

// One entry of a CLUSTER SLOTS reply: slots [first, last] and their master.
struct SlotRange {
  uint32_t first = 0;
  uint32_t last = 0;
  std::string host;
  int port = 0;
};

// Reads a CLUSTER SLOTS reply: an array of [first, last, [host, port, id, ...], replicas...].
// An empty host, or "?" (an endpoint the node does not know), becomes default_host: the host
// the reply came from, as Redis Cluster clients do. Returns false with a one-line *error
// when the reply is an error or not of that shape; an empty array is a valid reply.
bool ParseClusterSlots(const mem::Reply& reply, std::string_view default_host,
                       std::vector<SlotRange>* out, std::string* error);

enum class RedirectKind { kNone, kMoved, kAsk };

struct Redirect {
  RedirectKind kind = RedirectKind::kNone;
  uint32_t slot = 0;
  std::string_view host;  // points into the parsed text; empty: the replying node's host
  int port = 0;
};

// Parses the text of an error reply (without its '-'). kind is kNone for every other error
// and for a redirect that does not parse (bad slot, no port).
Redirect ParseRedirect(std::string_view error_text);

class ClusterMap {
 public:
  static constexpr uint32_t kNoNode = 0xffff;
  static constexpr uint32_t kMaxNodes = 1000;  // Redis Cluster's own suggested maximum

  struct Node {
    std::string host;
    int port = 0;
    std::string name;  // "host:port" ("[v6]:port"), for messages and reports
  };

  ClusterMap();

  // The index of node host:port, added when new; kNoNode when kMaxNodes are known already.
  uint32_t FindOrAddNode(std::string_view host, int port);
  // Every slot of every range goes to its node; slots in no range keep their owner.
  // Returns false (the map partly updated) only when kMaxNodes would be exceeded.
  bool Apply(const std::vector<SlotRange>& ranges);
  // REQUIRES: slot < kClusterSlots, node < nodes().size().
  void SetOwner(uint32_t slot, uint32_t node) { owner_[slot] = static_cast<uint16_t>(node); }

  // kNoNode when no reply named the slot's owner yet.
  uint32_t OwnerOf(uint32_t slot) const { return owner_[slot]; }
  // Where a request for the slot goes: its owner, or the first node when it has none (that
  // node then answers -MOVED, or an error when the slot is not served at all).
  // REQUIRES: !nodes().empty().
  uint32_t NodeForSlot(uint32_t slot) const {
    const uint32_t owner = owner_[slot];
    return owner == kNoNode ? 0 : owner;
  }
  const std::vector<Node>& nodes() const { return nodes_; }
  // Slots with a known owner.
  uint32_t covered_slots() const;

 private:
  std::vector<Node> nodes_;
  std::array<uint16_t, kClusterSlots> owner_;
};

}  // namespace strata::bench
