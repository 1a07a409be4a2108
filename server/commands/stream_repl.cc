#include "server/commands/stream_repl.h"

#include <string>

#include "server/engine/repl_feed.h"
#include "server/engine/worker.h"

namespace strata {

StreamEffects::StreamEffects(Worker& w, uint32_t db, std::string_view key, const StreamGroup& g,
                             EffectPlace place)
    : w_(w), db_(db), key_(key), g_(g), place_(place), on_(w.repl_on()) {}

void StreamEffects::Emit(std::span<const std::string_view> args) {
  if (place_ == EffectPlace::kNow) {
    w_.repl_feed().Effect(db_, args);
  } else {
    w_.repl_feed().EffectAfterCommand(db_, args);
  }
}

void StreamEffects::ConsumerCreated(std::string_view consumer) {
  if (!on_) return;
  std::string_view v[5] = {"XGROUP", "CREATECONSUMER", key_, g_.name, consumer};
  Emit(v);
}

void StreamEffects::Claimed(std::span<const StreamId> ids) {
  if (!on_) return;
  std::string last = g_.last_id.ToString();
  std::string id, time, count;
  for (StreamId x : ids) {
    auto it = g_.pel.find(x);
    if (it == g_.pel.end() || it->second.consumer == nullptr) continue;
    id = x.ToString();
    time = std::to_string(it->second.delivery_ms);
    count = std::to_string(it->second.delivery_count);
    std::string_view v[14] = {"XCLAIM",     key_,  g_.name, it->second.consumer->name,
                              "0",          id,    "TIME",  time,
                              "RETRYCOUNT", count, "FORCE", "JUSTID",
                              "LASTID",     last};
    Emit(v);
  }
}

void StreamEffects::Acked(std::span<const StreamId> ids) {
  if (!on_ || ids.empty()) return;
  std::string id;
  for (StreamId x : ids) {
    id = x.ToString();
    std::string_view v[4] = {"XACK", key_, g_.name, id};
    Emit(v);
  }
}

void StreamEffects::GroupPosition() {
  if (!on_) return;
  std::string last = g_.last_id.ToString();
  std::string read = std::to_string(g_.entries_read);
  std::string_view v[7] = {"XGROUP", "SETID", key_, g_.name, last, "ENTRIESREAD", read};
  Emit(v);
}

}  // namespace strata
