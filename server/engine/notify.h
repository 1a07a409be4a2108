// Keyspace notifications (Redis's notify-keyspace-events): what happened to a key is
// published on __keyspace@<db>__:<key> (the message is the event) and/or
// __keyevent@<db>__:<event> (the message is the key), through Pub/Sub (pubsub.h), from
// the worker that owns the key - so one key's events keep their order.
//
// Commands call NotifyKeyspaceEvent after each change, with Redis's event names and
// classes (docs/COMMANDS.md lists them). Expiry ("expired") and new keys ("new") come
// from the keyspace through its KeyEventHook (core/keyspace.h), which a worker installs
// only while the setting asks for them; eviction ("evicted") from shard_eviction.cc.
// With notifications off, a call costs one relaxed load and a branch.
// Thread-safety: call on the worker that owns the key.
#pragma once

#include <cstdint>
#include <string_view>

#include "server/base/notify_flags.h"

namespace strata {

// Publishes the event (the slow half of NotifyKeyspaceEvent).
void PublishKeyspaceEvent(uint32_t cls, std::string_view event, std::string_view key, uint32_t db);

inline void NotifyKeyspaceEvent(uint32_t cls, std::string_view event, std::string_view key,
                                uint32_t db) {
  if (g_notify_gate.load(std::memory_order_relaxed) & cls) [[unlikely]]
    PublishKeyspaceEvent(cls, event, key, db);
}

}  // namespace strata
