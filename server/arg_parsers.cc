#include "server/family_util.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/hash.h"
#include "core/string_util.h"

namespace strata {

bool ParseExpireArg(std::string_view arg, ExpireUnit unit, bool absolute, int64_t now_ms,
                    std::string_view cmd, ReplyBuilder& rb, int64_t* out_ms) {
  int64_t v = 0;
  if (!ParseInt64(arg, &v)) {
    rb.Error(errors::kNotInteger);
    return false;
  }
  if (v <= 0 || (unit == ExpireUnit::kSeconds && v > INT64_MAX / 1000)) {
    rb.Error(InvalidExpireError(cmd));
    return false;
  }
  if (unit == ExpireUnit::kSeconds) v *= 1000;
  if (!absolute) {
    if (v > INT64_MAX - now_ms) {
      rb.Error(InvalidExpireError(cmd));
      return false;
    }
    v += now_ms;
  }
  *out_ms = v;
  return true;
}

size_t ShardGroups::IndexOf(uint32_t shard) const {
  return static_cast<size_t>(std::lower_bound(shards.begin(), shards.end(), shard) -
                             shards.begin());
}

ShardGroups GroupByShard(const std::vector<std::string_view>& keys, uint32_t db,
                         uint32_t shard_count, bool exclusive) {
  std::map<uint32_t, std::vector<size_t>> by_shard;
  for (size_t i = 0; i < keys.size(); i++) by_shard[ShardOfKey(keys[i], shard_count)].push_back(i);
  ShardGroups g;
  for (auto& [shard, pos] : by_shard) {
    g.shards.push_back(shard);
    LockTable::Request req;
    req.exclusive = exclusive;
    for (size_t p : pos) {
      std::string k = LockTable::LockKey(db, keys[p]);
      if (std::find(req.keys.begin(), req.keys.end(), k) == req.keys.end())
        req.keys.push_back(std::move(k));
    }
    g.locks.push_back(std::move(req));
    g.positions.push_back(std::move(pos));
  }
  return g;
}

bool LookupTyped(ShardCtx& ctx, std::string_view key, ValueType type, ReplyBuilder& rb, Entry** out,
                 bool read) {
  Entry* e = read ? ctx.ks.FindRead(ctx.db, key, ctx.now_ms) : ctx.ks.Find(ctx.db, key, ctx.now_ms);
  if (e != nullptr && e->Type() != type) {
    rb.Error(errors::kWrongType);
    return false;
  }
  *out = e;
  return true;
}

bool ParseBlockingTimeout(std::string_view s, ReplyBuilder& rb, int64_t* ms) {
  long double t = 0;
  if (!ParseLongDouble(s, &t) || std::isnan(t) || std::isinf(t)) {
    rb.Error("ERR timeout is not a float or out of range");
    return false;
  }
  if (t < 0) {
    rb.Error("ERR timeout is negative");
    return false;
  }
  long double v = t * 1000.0L;
  if (v > static_cast<long double>(INT64_MAX / 2)) {
    rb.Error("ERR timeout is out of range");
    return false;
  }
  *ms = static_cast<int64_t>(std::ceil(v));
  return true;
}

}  // namespace strata
