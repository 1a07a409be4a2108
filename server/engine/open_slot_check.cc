#include "server/engine/open_slot_check.h"

#include <vector>

#include "server/engine/cluster_routing.h"
#include "server/engine/worker.h"

namespace strata {

bool OpenSlotRefuses(const CommandSpec* spec, CmdArgs args, Worker& w, uint32_t db, uint8_t bits,
                     std::string* error) {
  const SlotRouting* r = w.routing();
  if (r == nullptr) return false;
  thread_local std::vector<std::string_view> keys;
  keys.clear();
  spec->Keys(args, &keys);
  KeyPresence presence;
  for (std::string_view k : keys) {
    if (w.keyspace().FindMeta(db, k, w.now_ms()) != nullptr) {
      presence.existing++;
    } else {
      presence.missing++;
    }
  }
  RouteQuery q{spec->is_write(), (bits & kOpenSlotReadonly) != 0, (bits & kOpenSlotAsking) != 0,
               &presence};
  RouteDecision d = Route(*r, keys, q);
  if (d.kind == RouteDecision::kHere) return false;
  *error = d.kind == RouteDecision::kRedirect ? std::move(d.error) : std::string(kTryAgainError);
  w.stats().commands[spec->stat_id].rejected_calls++;
  return true;
}

}  // namespace strata
