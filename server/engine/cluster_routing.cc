#include "server/engine/cluster_routing.h"

namespace strata {

std::string RouteKeys(const SlotRouting& r, std::span<const std::string_view> keys, bool write,
                      bool readonly) {
  if (keys.empty()) return {};
  uint32_t first_slot = KeySlot(keys[0]);
  uint16_t first_owner = r.owner[first_slot];
  if (first_owner == SlotRouting::kNoOwner) return "CLUSTERDOWN Hash slot not served";
  // A READONLY client's read on a replica runs here for the master's slots (Redis).
  uint16_t serves = r.myself;
  if (readonly && !write && r.my_master != SlotRouting::kNoOwner && first_owner == r.my_master)
    serves = r.my_master;
  bool here = first_owner == serves;
  for (size_t i = 1; i < keys.size(); i++) {
    uint32_t slot = KeySlot(keys[i]);
    if (slot == first_slot) continue;
    // Redis refuses keys of two slots; here they run when this node serves them all.
    if (!here || r.owner[slot] != serves)
      return "CROSSSLOT Keys in request don't hash to the same slot";
  }
  if (!r.ok) {
    if (!r.allow_reads_when_down) return "CLUSTERDOWN The cluster is down";
    if (write) return "CLUSTERDOWN The cluster is down and only accepts read commands";
  }
  if (here) return {};
  std::string out = "MOVED ";
  out += std::to_string(first_slot);
  out += ' ';
  out += r.endpoints[first_owner];
  return out;
}

}  // namespace strata
