#include "server/commands/zset_ops.h"

#include "core/zset_type.h"
#include "server/engine/notify.h"

namespace strata {

ZPopped OpZPop(Keyspace& ks, uint32_t db, std::string_view key, bool max, size_t count,
               int64_t now_ms, bool* wrong_type) {
  ZPopped out;
  Entry* e = ks.Find(db, key, now_ms);
  if (e == nullptr) return out;
  if (e->Type() != ValueType::kZSet) {
    *wrong_type = true;
    return out;
  }
  ZSetEditor ed(ks, db, key, e);
  ed.Pop(max, count, &out);
  ed.Commit();
  if (!out.empty()) NotifyZPopped(ks, db, key, max, now_ms);
  return out;
}

void StoreZSetAndNotify(Keyspace& ks, uint32_t db, std::string_view event, std::string_view key,
                        std::vector<ZMember>* items, int64_t now_ms) {
  bool existed = items->empty() && ks.FindMeta(db, key, now_ms, false) != nullptr;
  StoreZSet(ks, db, key, items);
  if (!items->empty()) {
    NotifyKeyspaceEvent(kNotifyZSet, event, key, db);
  } else if (existed) {
    NotifyKeyspaceEvent(kNotifyGeneric, "del", key, db);
  }
}

void NotifyZPopped(Keyspace& ks, uint32_t db, std::string_view key, bool max, int64_t now_ms) {
  NotifyKeyspaceEvent(kNotifyZSet, max ? "zpopmax" : "zpopmin", key, db);
  if (ks.FindMeta(db, key, now_ms, false) == nullptr)
    NotifyKeyspaceEvent(kNotifyGeneric, "del", key, db);
}

int64_t OpZCard(Keyspace& ks, uint32_t db, std::string_view key, int64_t now_ms, bool* wrong_type) {
  Entry* e = ks.Find(db, key, now_ms);
  if (e == nullptr) return 0;
  if (e->Type() != ValueType::kZSet) {
    *wrong_type = true;
    return 0;
  }
  return static_cast<int64_t>(ZSetLength(e));
}

}  // namespace strata
