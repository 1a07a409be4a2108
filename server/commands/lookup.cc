#include "server/commands/lookup.h"

#include "core/object.h"
#include "core/string_util.h"
#include "server/commands/errors.h"
#include "server/engine/notify.h"

namespace strata {

bool LookupTyped(ShardCtx& ctx, std::string_view key, ValueType type, ReplyBuilder& rb, Entry** out,
                 bool read) {
  Entry* e = read ? ctx.ks.FindRead(ctx.db, key, ctx.now_ms) : ctx.ks.Find(ctx.db, key, ctx.now_ms);
  if (e != nullptr && e->Type() != type) {
    if (!read) ctx.ks.NoChange(ctx.db, key);  // refused: the key stays as it is (WATCH)
    rb.Error(errors::kWrongType);
    return false;
  }
  if (read && e == nullptr) NotifyKeyspaceEvent(kNotifyKeyMiss, "keymiss", key, ctx.db);
  *out = e;
  return true;
}

StringOperand StringOperand::Read(Keyspace& ks, uint32_t db, std::string_view key, int64_t now_ms) {
  StringOperand o;
  Entry* e = ks.FindRead(db, key, now_ms);
  if (e == nullptr) return o;
  if (e->Type() != ValueType::kString) {
    o.wrong_type = true;
    return o;
  }
  o.bytes = e->ValueString();
  return o;
}

const char* EncodingOf(const Entry* e) {
  if (e->IsExternal()) return e->Object()->Encoding();
  if (e->Type() != ValueType::kString) {
    std::string scratch;
    return PackedEncodingName(e->Type(), e->Value(&scratch));
  }
  std::string scratch;
  std::string_view v = e->Value(&scratch);
  int64_t n = 0;
  if (v.size() <= 20 && ParseInt64(v, &n)) return "int";
  return v.size() <= 44 ? "embstr" : "raw";
}

}  // namespace strata
