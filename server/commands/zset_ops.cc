#include "server/commands/zset_ops.h"

#include "core/zset_type.h"

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
  return out;
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
