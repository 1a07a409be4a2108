#include "server/engine/cluster_routing.h"

namespace strata {
namespace {

RouteDecision Redirect(std::string error) {
  return RouteDecision{RouteDecision::kRedirect, std::move(error)};
}

std::string Moved(const char* kind, uint32_t slot, const std::string& endpoint) {
  std::string out = kind;
  out += ' ';
  out += std::to_string(slot);
  out += ' ';
  out += endpoint;
  return out;
}

}  // namespace

RouteDecision Route(const SlotRouting& r, std::span<const std::string_view> keys,
                    const RouteQuery& q) {
  if (keys.empty()) return {};
  uint32_t first_slot = KeySlot(keys[0]);
  auto owner_of = [&](uint32_t slot) {
    uint16_t o = r.owner[slot];
    return o == SlotRouting::kMigrating ? r.myself : o;
  };
  uint16_t first_owner = owner_of(first_slot);
  if (first_owner == SlotRouting::kNoOwner) return Redirect("CLUSTERDOWN Hash slot not served");
  // A READONLY client's read on a replica runs here for the master's slots (Redis).
  uint16_t serves = r.myself;
  if (q.readonly && !q.write && r.my_master != SlotRouting::kNoOwner && first_owner == r.my_master)
    serves = r.my_master;
  bool here = first_owner == serves;
  bool any_open = !r.migrating_to.empty() || !r.importing_from.empty();
  auto open = [&](uint32_t slot) {
    return r.owner[slot] == SlotRouting::kMigrating || r.importing_from.count(slot) != 0;
  };
  bool open_slot = any_open && open(first_slot);
  bool several_slots = false;
  bool several_keys = false;  // Redis's "multiple keys": another key than the first
  for (size_t i = 1; i < keys.size(); i++) {
    if (keys[i] != keys[0]) several_keys = true;
    uint32_t slot = KeySlot(keys[i]);
    if (slot == first_slot) continue;
    several_slots = true;
    // Redis refuses keys of two slots; here they run when this node serves them all.
    if (!here || owner_of(slot) != serves)
      return Redirect("CROSSSLOT Keys in request don't hash to the same slot");
    if (any_open && open(slot)) open_slot = true;
  }
  if (!r.ok) {
    if (!r.allow_reads_when_down) return Redirect("CLUSTERDOWN The cluster is down");
    if (q.write) return Redirect("CLUSTERDOWN The cluster is down and only accepts read commands");
  }
  if (open_slot) [[unlikely]] {
    // Keys of several slots, one of them moving: the client tries again once it has.
    if (several_slots) return Redirect(std::string(kTryAgainError));
    if (r.owner[first_slot] == SlotRouting::kMigrating) {
      // Migrating: keys not here any more (or not yet created) are asked for at the
      // target; some here and some not is retried.
      if (q.presence == nullptr) return RouteDecision{RouteDecision::kNeedsPresence, {}};
      if (q.presence->missing == 0) return {};
      if (q.presence->existing != 0) return Redirect(std::string(kTryAgainError));
      return Redirect(Moved("ASK", first_slot, r.endpoints[r.migrating_to.at(first_slot)]));
    }
    if (q.asking) {
      // Importing, and the client was sent here by ASK: it runs here, unless some of
      // several keys have not arrived yet.
      if (!several_keys) return {};
      if (q.presence == nullptr) return RouteDecision{RouteDecision::kNeedsPresence, {}};
      if (q.presence->missing != 0) return Redirect(std::string(kTryAgainError));
      return {};
    }
  }
  if (here) return {};
  return Redirect(Moved("MOVED", first_slot, r.endpoints[first_owner]));
}

std::string RouteKeys(const SlotRouting& r, std::span<const std::string_view> keys, bool write,
                      bool readonly) {
  RouteDecision d = Route(r, keys, RouteQuery{write, readonly, false, nullptr});
  if (d.kind == RouteDecision::kNeedsPresence) return std::string(kTryAgainError);
  return std::move(d.error);
}

}  // namespace strata
