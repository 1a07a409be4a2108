// Geo commands: GEOADD, GEODIST, GEOHASH, GEOPOS, GEOSEARCH, GEOSEARCHSTORE,
// GEORADIUS, GEORADIUSBYMEMBER and their _RO forms.
//
// A geo key is a sorted set whose scores are 52-bit geohashes (core/geohash.h), as in
// Redis: GEOADD is ZADD with scores computed from coordinates, and every sorted-set
// command works on a geo key. A search covers its shape with up to nine geohash cells,
// reads each cell as one score range of the sorted set (two O(log n) searches, then a
// walk), keeps the points inside the shape by their exact distance, and sorts them when
// asked. Members are not copied while searching: the points are views into the set, valid
// until the shard's next write, and a reply or a store happens before that.
//
// Arguments are parsed as Redis's georadiusGeneric parses them, in the same order and
// against the source key (FROMMEMBER and GEORADIUSBYMEMBER read the member's position
// while parsing), so the same call fails with the same error. A store (GEOSEARCHSTORE,
// GEORADIUS ... STORE/STOREDIST) whose two keys are on different shards runs as a fiber
// that locks both, searches on the source's shard and writes on the destination's, as
// ZRANGESTORE does.
//
// Thread-safety: shard functions run on the key's shard; the fibers hop.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/geohash.h"
#include "core/string_util.h"
#include "core/zset_type.h"
#include "server/commands/errors.h"
#include "server/commands/families.h"
#include "server/commands/zset_args.h"
#include "server/commands/zset_ops.h"
#include "server/engine/client.h"
#include "server/engine/command.h"
#include "server/engine/engine.h"
#include "server/engine/hops.h"
#include "server/engine/shard_groups.h"
#include "server/engine/try_lock_all.h"
#include "server/engine/worker.h"

namespace strata {
namespace {

constexpr std::string_view kCannotDecodeMember = "ERR could not decode requested zset member";

// ---- argument helpers ----

// A double as Redis's getDoubleFromObjectOrReply takes it; `err` is the reply otherwise.
bool ParseGeoDouble(std::string_view s, std::string_view err, ReplyBuilder& rb, double* out) {
  if (ParseZScore(s, out)) return true;
  rb.Error(err);
  return false;
}

// The unit's metres (m, km, ft, mi, any case).
bool ParseUnit(std::string_view u, ReplyBuilder& rb, double* to_meters) {
  if (EqualsIgnoreCase(u, "m")) {
    *to_meters = 1;
  } else if (EqualsIgnoreCase(u, "km")) {
    *to_meters = 1000;
  } else if (EqualsIgnoreCase(u, "ft")) {
    *to_meters = 0.3048;
  } else if (EqualsIgnoreCase(u, "mi")) {
    *to_meters = 1609.34;
  } else {
    rb.Error("ERR unsupported unit provided. please use M, KM, FT, MI");
    return false;
  }
  return true;
}

// A longitude and a latitude at args[at], args[at + 1], inside the storable range.
bool ParseLonLat(CmdArgs args, size_t at, ReplyBuilder& rb, double* lon, double* lat) {
  if (!ParseGeoDouble(args[at], errors::kNotFloat, rb, lon) ||
      !ParseGeoDouble(args[at + 1], errors::kNotFloat, rb, lat)) {
    return false;
  }
  if (!geo::ValidLonLat(*lon, *lat)) {
    char buf[160];
    std::snprintf(buf, sizeof(buf), "ERR invalid longitude,latitude pair %f,%f", *lon, *lat);
    rb.Error(buf);
    return false;
  }
  return true;
}

// radius unit
bool ParseRadius(CmdArgs args, size_t at, ReplyBuilder& rb, geo::Shape* s) {
  if (!ParseGeoDouble(args[at], "ERR need numeric radius", rb, &s->radius)) return false;
  if (s->radius < 0) {
    rb.Error("ERR radius cannot be negative");
    return false;
  }
  s->box = false;
  return ParseUnit(args[at + 1], rb, &s->to_meters);
}

// width height unit
bool ParseBox(CmdArgs args, size_t at, ReplyBuilder& rb, geo::Shape* s) {
  if (!ParseGeoDouble(args[at], "ERR need numeric width", rb, &s->width) ||
      !ParseGeoDouble(args[at + 1], "ERR need numeric height", rb, &s->height)) {
    return false;
  }
  if (s->height < 0 || s->width < 0) {
    rb.Error("ERR height or width cannot be negative");
    return false;
  }
  s->box = true;
  return ParseUnit(args[at + 2], rb, &s->to_meters);
}

// A member's position; false when it is not in the set.
bool MemberPosition(const ZSetReader& zs, std::string_view member, double* lon, double* lat) {
  double score;
  return zs.Score(member, &score) && geo::DecodeScore(score, lon, lat);
}

// A distance as Redis replies it: four decimals.
void ReplyDistance(ReplyBuilder& rb, double d) {
  char buf[128];
  int n = std::snprintf(buf, sizeof(buf), "%.4f", d);
  rb.Bulk(std::string_view(buf, static_cast<size_t>(n)));
}

// A score as the integer GEOSEARCH ... WITHHASH replies (C's conversion on x86-64).
int64_t ScoreAsInteger(double score) {
  if (!(score >= -9223372036854775808.0 && score < 9223372036854775808.0)) return INT64_MIN;
  return static_cast<int64_t>(score);
}

// ---- GEOADD key [NX|XX] [CH] longitude latitude member [...] ----

void CmdGeoAdd(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  bool nx = false, xx = false, ch = false;
  size_t at = 2;
  for (; at < args.size(); at++) {
    if (EqualsIgnoreCase(args[at], "nx")) {
      nx = true;
    } else if (EqualsIgnoreCase(args[at], "xx")) {
      xx = true;
    } else if (EqualsIgnoreCase(args[at], "ch")) {
      ch = true;
    } else {
      break;
    }
  }
  size_t rest = args.size() - at;
  if (rest % 3 != 0 || rest == 0 || (nx && xx)) {
    rb.Error(errors::kSyntax);
    return;
  }
  std::vector<ZMember> items(rest / 3);
  for (size_t i = 0; i < items.size(); i++) {
    double lon, lat;
    if (!ParseLonLat(args, at + i * 3, rb, &lon, &lat)) return;
    items[i].score = static_cast<double>(geo::Score(lon, lat));
    items[i].member = args[at + i * 3 + 2];
  }
  ZAddParsed(ctx, rb, args[1], (nx ? kZAddNx : 0) | (xx ? kZAddXx : 0), ch, items);
}

// ---- GEODIST key member1 member2 [unit] ----

void CmdGeoDist(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  double to_meters = 1;
  if (args.size() == 5) {
    if (!ParseUnit(args[4], rb, &to_meters)) return;
  } else if (args.size() > 5) {
    rb.Error(errors::kSyntax);
    return;
  }
  Entry* e;
  if (!LookupZSet(ctx, args[1], rb, &e)) return;
  if (e == nullptr) {
    rb.Null();
    return;
  }
  ZSetReader zs(e);
  double lon1, lat1, lon2, lat2;
  if (!MemberPosition(zs, args[2], &lon1, &lat1) || !MemberPosition(zs, args[3], &lon2, &lat2)) {
    rb.Null();
    return;
  }
  ReplyDistance(rb, geo::Distance(lon1, lat1, lon2, lat2) / to_meters);
}

// ---- GEOHASH key [member ...] / GEOPOS key [member ...] ----

void PositionsGeneric(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb, bool text) {
  Entry* e;
  if (!LookupZSet(ctx, args[1], rb, &e)) return;
  std::optional<ZSetReader> zs;
  if (e != nullptr) zs.emplace(e);
  rb.Array(args.size() - 2);
  for (size_t i = 2; i < args.size(); i++) {
    double score, lon, lat;
    if (!zs || !zs->Score(args[i], &score) || !geo::DecodeScore(score, &lon, &lat)) {
      text ? rb.Null() : rb.NullArray();
    } else if (text) {
      rb.Bulk(geo::HashText(score));
    } else {
      rb.Array(2);
      rb.HumanDouble(lon);
      rb.HumanDouble(lat);
    }
  }
}

void CmdGeoHash(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  PositionsGeneric(args, ctx, rb, true);
}
void CmdGeoPos(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  PositionsGeneric(args, ctx, rb, false);
}

// ---- searches ----

enum SearchFlags : int {
  kFromCoords = 1,   // GEORADIUS: key lon lat radius unit
  kFromMember = 2,   // GEORADIUSBYMEMBER: key member radius unit
  kNoStore = 4,      // the _RO forms
  kSearch = 8,       // GEOSEARCH: FROMMEMBER/FROMLONLAT and BYRADIUS/BYBOX options
  kSearchStore = 16  // GEOSEARCHSTORE: dst src, STOREDIST without a key
};

enum class Sort { kNone, kAsc, kDesc };

struct SearchPlan {
  geo::Shape shape;
  bool withdist = false, withhash = false, withcoord = false;
  bool any = false;
  Sort sort = Sort::kNone;
  int64_t count = 0;  // 0: all
  bool store = false;
  bool storedist = false;
  std::string_view store_key;
};

struct GeoPoint {
  std::string_view member;  // a view into the set
  double score, dist, lon, lat;
};

// Parses a search against its source set (null when the key does not exist), replying
// the first error as Redis does. `src` is the source key's index.
bool ParseSearch(CmdArgs args, size_t src, int flags, const ZSetReader* zs, ReplyBuilder& rb,
                 SearchPlan* p) {
  geo::Shape& shape = p->shape;
  size_t base;
  if (flags & kFromCoords) {
    base = 6;
    if (!ParseLonLat(args, 2, rb, &shape.lon, &shape.lat)) return false;
    if (!ParseRadius(args, 4, rb, &shape)) return false;
  } else if ((flags & kFromMember) && zs == nullptr) {
    base = 5;  // parsed on, so that the reply suits the STORE option
  } else if (flags & kFromMember) {
    base = 5;
    if (!MemberPosition(*zs, args[2], &shape.lon, &shape.lat)) {
      rb.Error(kCannotDecodeMember);
      return false;
    }
    if (!ParseRadius(args, 3, rb, &shape)) return false;
  } else {
    base = src + 1;
    if (flags & kSearchStore) {
      p->store = true;
      p->store_key = args[1];
    }
  }
  bool frommember = false, fromloc = false, byradius = false, bybox = false;
  size_t remaining = args.size() - base;
  for (size_t i = 0; i < remaining; i++) {
    std::string_view arg = args[base + i];
    if (EqualsIgnoreCase(arg, "withdist")) {
      p->withdist = true;
    } else if (EqualsIgnoreCase(arg, "withhash")) {
      p->withhash = true;
    } else if (EqualsIgnoreCase(arg, "withcoord")) {
      p->withcoord = true;
    } else if (EqualsIgnoreCase(arg, "any")) {
      p->any = true;
    } else if (EqualsIgnoreCase(arg, "asc")) {
      p->sort = Sort::kAsc;
    } else if (EqualsIgnoreCase(arg, "desc")) {
      p->sort = Sort::kDesc;
    } else if (EqualsIgnoreCase(arg, "count") && i + 1 < remaining) {
      if (!ParseInt64(args[base + i + 1], &p->count)) {
        rb.Error(errors::kNotInteger);
        return false;
      }
      if (p->count <= 0) {
        rb.Error("ERR COUNT must be > 0");
        return false;
      }
      i++;
    } else if ((EqualsIgnoreCase(arg, "store") || EqualsIgnoreCase(arg, "storedist")) &&
               i + 1 < remaining && !(flags & kNoStore) && !(flags & kSearch)) {
      p->store = true;
      p->storedist = arg.size() == 9;
      p->store_key = args[base + i + 1];
      i++;
    } else if (EqualsIgnoreCase(arg, "storedist") && (flags & kSearch) && (flags & kSearchStore)) {
      p->storedist = true;
    } else if (EqualsIgnoreCase(arg, "frommember") && i + 1 < remaining && (flags & kSearch) &&
               !fromloc) {
      // Without a source the member is not looked for; the error comes after parsing.
      if (zs != nullptr && !MemberPosition(*zs, args[base + i + 1], &shape.lon, &shape.lat)) {
        rb.Error(kCannotDecodeMember);
        return false;
      }
      frommember = true;
      i++;
    } else if (EqualsIgnoreCase(arg, "fromlonlat") && i + 2 < remaining && (flags & kSearch) &&
               !frommember) {
      if (!ParseLonLat(args, base + i + 1, rb, &shape.lon, &shape.lat)) return false;
      fromloc = true;
      i += 2;
    } else if (EqualsIgnoreCase(arg, "byradius") && i + 2 < remaining && (flags & kSearch) &&
               !bybox) {
      if (!ParseRadius(args, base + i + 1, rb, &shape)) return false;
      byradius = true;
      i += 2;
    } else if (EqualsIgnoreCase(arg, "bybox") && i + 3 < remaining && (flags & kSearch) &&
               !byradius) {
      if (!ParseBox(args, base + i + 1, rb, &shape)) return false;
      bybox = true;
      i += 3;
    } else {
      rb.Error(errors::kSyntax);
      return false;
    }
  }
  if (p->store && (p->withdist || p->withhash || p->withcoord)) {
    rb.Error(std::string("ERR ") +
             ((flags & kSearchStore) ? "GEOSEARCHSTORE" : "STORE option in GEORADIUS") +
             " is not compatible with WITHDIST, WITHHASH and WITHCOORD options");
    return false;
  }
  if ((flags & kSearch) && !(frommember || fromloc)) {
    rb.Error("ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for " +
             std::string(args[0]));
    return false;
  }
  if ((flags & kSearch) && !(byradius || bybox)) {
    rb.Error("ERR exactly one of BYRADIUS and BYBOX can be specified for " + std::string(args[0]));
    return false;
  }
  if (p->any && p->count == 0) {
    rb.Error("ERR the ANY argument requires COUNT argument");
    return false;
  }
  // The nearest N need an order; ANY takes the first N found.
  if (p->count != 0 && p->sort == Sort::kNone && !p->any) p->sort = Sort::kAsc;
  return true;
}

// The points of the set inside the shape, in Redis's order: cell by cell (centre, then
// the neighbours), ascending score inside each; with ANY, the first `count` found.
void CollectPoints(const ZSetReader& zs, const SearchPlan& p, std::vector<GeoPoint>* out) {
  std::array<geo::Cell, 9> cells = geo::Areas(p.shape);
  size_t limit = p.any ? static_cast<size_t>(p.count) : 0;
  size_t size = zs.size();
  geo::ShapeFilter filter(p.shape);
  int last = -1;
  for (int i = 0; i < 9; i++) {
    const geo::Cell& c = cells[i];
    if (c.none()) continue;
    // A huge radius can make neighbours coincide: a cell equal to the last one read is
    // skipped.
    if (last >= 0 && c.bits == cells[last].bits && c.step == cells[last].step) continue;
    if (limit != 0 && out->size() >= limit) break;
    last = i;
    double min = static_cast<double>(geo::Align52(c));
    double max = static_cast<double>(geo::Align52(geo::Cell{c.bits + 1, c.step}));
    size_t first = zs.CountWhile([&](std::string_view, double s) { return s < min; });
    if (first >= size) continue;
    bool full = false;
    zs.Walk(first, false, [&](std::string_view member, double score) {
      if (!(score < max)) return false;
      GeoPoint g;
      if (geo::DecodeScore(score, &g.lon, &g.lat) && !filter.Excludes(g.lon, g.lat) &&
          geo::InShape(p.shape, g.lon, g.lat, &g.dist)) {
        g.member = member;
        g.score = score;
        out->push_back(g);
        if (limit != 0 && out->size() >= limit) {
          full = true;
          return false;
        }
      }
      return true;
    });
    if (full) break;
  }
}

// Sorts the points as asked and keeps the first `count`. A whole sort is stable, as
// glibc's qsort (a merge sort) is for Redis; a partial one orders ties arbitrarily, as
// Redis's pqsort does.
void OrderPoints(const SearchPlan& p, std::vector<GeoPoint>* pts) {
  size_t n = pts->size();
  size_t keep =
      (p.count == 0 || n < static_cast<size_t>(p.count)) ? n : static_cast<size_t>(p.count);
  if (p.sort != Sort::kNone) {
    auto asc = [](const GeoPoint& a, const GeoPoint& b) { return a.dist < b.dist; };
    auto desc = [](const GeoPoint& a, const GeoPoint& b) { return a.dist > b.dist; };
    if (keep == n) {
      p.sort == Sort::kAsc ? std::stable_sort(pts->begin(), pts->end(), asc)
                           : std::stable_sort(pts->begin(), pts->end(), desc);
    } else {
      auto mid = pts->begin() + static_cast<std::ptrdiff_t>(keep);
      p.sort == Sort::kAsc ? std::partial_sort(pts->begin(), mid, pts->end(), asc)
                           : std::partial_sort(pts->begin(), mid, pts->end(), desc);
    }
  }
  pts->resize(keep);
}

void ReplyPoints(ReplyBuilder& rb, const SearchPlan& p, const std::vector<GeoPoint>& pts) {
  size_t options = (p.withdist ? 1 : 0) + (p.withhash ? 1 : 0) + (p.withcoord ? 1 : 0);
  rb.Array(pts.size());
  for (const GeoPoint& g : pts) {
    if (options != 0) rb.Array(options + 1);
    rb.Bulk(g.member);
    if (p.withdist) ReplyDistance(rb, g.dist / p.shape.to_meters);
    if (p.withhash) rb.Integer(ScoreAsInteger(g.score));
    if (p.withcoord) {
      rb.Array(2);
      rb.HumanDouble(g.lon);
      rb.HumanDouble(g.lat);
    }
  }
}

// The stored set's members (copied: the source may be the destination) and scores.
std::vector<std::pair<std::string, double>> StoreCopies(const SearchPlan& p,
                                                        const std::vector<GeoPoint>& pts) {
  std::vector<std::pair<std::string, double>> out;
  out.reserve(pts.size());
  for (const GeoPoint& g : pts)
    out.emplace_back(std::string(g.member), p.storedist ? g.dist / p.shape.to_meters : g.score);
  return out;
}

void StoreResult(Worker& w, Keyspace& ks, uint32_t db, int flags, std::string_view key,
                 const std::vector<std::pair<std::string, double>>& copies, int64_t now_ms) {
  std::vector<ZMember> items;
  items.reserve(copies.size());
  for (const auto& [m, s] : copies) items.push_back(ZMember{m, s});
  StoreZSetAndNotify(ks, db, (flags & kSearch) ? "geosearchstore" : "georadiusstore", key, &items,
                     now_ms);
  if (!items.empty()) w.SignalKeyReady(db, key);
}

// The search's work on the source's shard: parses against the set and collects the
// result. False when an error was replied. *found is false when the source is absent.
bool RunSearch(CmdArgs args, size_t src, int flags, Keyspace& ks, uint32_t db, int64_t now_ms,
               ReplyBuilder& rb, SearchPlan* p, std::vector<GeoPoint>* pts, bool* found) {
  Entry* e = ks.FindRead(db, args[src], now_ms);
  if (e != nullptr && e->Type() != ValueType::kZSet) {
    rb.Error(errors::kWrongType);
    return false;
  }
  std::optional<ZSetReader> zs;
  if (e != nullptr) zs.emplace(e);
  if (!ParseSearch(args, src, flags, zs ? &*zs : nullptr, rb, p)) return false;
  *found = e != nullptr;
  if (e != nullptr) {
    CollectPoints(*zs, *p, pts);
    OrderPoints(*p, pts);
  }
  return true;
}

template <int kFlags, size_t kSrc>
void CmdSearch(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  SearchPlan p;
  std::vector<GeoPoint> pts;
  bool found = false;
  if (!RunSearch(args, kSrc, kFlags, ctx.ks, ctx.db, ctx.now_ms, rb, &p, &pts, &found)) return;
  if (!p.store) {
    ReplyPoints(rb, p, pts);
    return;
  }
  StoreResult(ctx.worker, ctx.ks, ctx.db, kFlags, p.store_key, StoreCopies(p, pts), ctx.now_ms);
  rb.Integer(static_cast<int64_t>(pts.size()));
}

// GEORADIUS and GEORADIUSBYMEMBER's keys, as Redis 7's key specs find them: the key, then
// the key after each STORE, then the key after each STOREDIST (the options start at the
// sixth argument, or the fifth after a member). A call names at most one of each that
// parses; the one it stores to is always among them.
void GeoRadiusKeys(CmdArgs args, std::vector<std::string_view>* out) {
  out->push_back(args[1]);
  size_t from = args[0].size() > 12 ? 5 : 6;  // GEORADIUSBYMEMBER: 17 characters
  for (std::string_view keyword : {"store", "storedist"}) {
    for (size_t i = from; i + 1 < args.size(); i++) {
      if (EqualsIgnoreCase(args[i], keyword)) out->push_back(args[++i]);
    }
  }
}

// A store whose source and destination are on different shards.
template <int kFlags, size_t kSrc>
Fiber SearchStoreFiber(Client* c, std::shared_ptr<OwnedArgs> owned) {
  CmdArgs args = owned->span();
  std::string out;
  ReplyBuilder rb(&out, c->resp);
  uint32_t db = c->db;
  uint32_t n = c->worker().engine().shard_count();
  std::vector<std::string_view> keys;
  if (kFlags & kSearchStore) {
    keys = {args[1], args[2]};
  } else {
    GeoRadiusKeys(args, &keys);
  }
  ShardGroups g = GroupByShard(keys, db, n, true, c->txn_owner);
  if (!co_await TryLockAll(g)) {
    for (size_t i = 0; i < g.shards.size(); i++) co_await LockOn(g.shards[i], &g.locks[i]);
  }
  bool ok = false;
  SearchPlan p;
  std::vector<std::pair<std::string, double>> copies;
  // The search on the source's shard; on each shard, whether a key other than the source
  // (a destination) is there.
  uint32_t src = ShardOfKey(args[kSrc], n);
  size_t src_pos = (kFlags & kSearchStore) ? 1 : 0;  // the source's place in keys
  std::vector<char> others(g.shards.size(), 0);
  co_await RunOn(g.shards, [&](Worker& w) {
    size_t gi = g.IndexOf(w.index());
    for (size_t i : g.positions[gi]) {
      if (i != src_pos && w.keyspace().FindMeta(db, keys[i], w.now_ms()) != nullptr) others[gi] = 1;
    }
    if (w.index() != src) return;
    std::vector<GeoPoint> pts;
    bool found = false;
    ok = RunSearch(args, kSrc, kFlags, w.keyspace(), db, w.now_ms(), rb, &p, &pts, &found);
    if (ok) copies = StoreCopies(p, pts);
  });
  bool dst_exists = std::find(others.begin(), others.end(), 1) != others.end();
  // The destination is one of the locked keys: the parse finds the same STORE key as
  // GeoRadiusKeys for any call that parses.
  bool store = ok && p.store && std::find(keys.begin(), keys.end(), p.store_key) != keys.end();
  uint32_t dst = store ? ShardOfKey(p.store_key, n) : n;
  // An error, or nothing found with no destination to delete, changes nothing.
  if (!store || (copies.empty() && !dst_exists)) FiberChangesNothing();
  co_await RunOn(g.shards, [&](Worker& w) {
    if (w.index() == dst) StoreResult(w, w.keyspace(), db, kFlags, p.store_key, copies, w.now_ms());
    w.locks().Release(g.locks[g.IndexOf(w.index())].keys, true);
  });
  if (ok && store) {
    rb.Integer(static_cast<int64_t>(copies.size()));
  } else if (ok) {
    rb.Error(errors::kSyntax);  // cannot happen: only a STORE call's keys spread
  }
  c->FinishFiber(std::move(out));
}

}  // namespace

void RegisterGeoFamily(CommandRegistry& r) {
  constexpr uint32_t kW = kCmdWrite | kCmdDenyOom | kCmdGeo;
  constexpr uint32_t kR = kCmdReadOnly | kCmdGeo;
  auto add = [&](const char* name, int arity, uint32_t flags, int first, int last, ShardFn fn,
                 FiberFn fiber, const char* since, const char* summary) {
    CommandSpec s{name, arity, flags, first, last, 1};
    s.shard_fn = fn;
    s.fiber_fn = fiber;
    s.group = "geo";
    s.since = since;
    s.summary = summary;
    r.Add(std::move(s));
    return r.FindMutable(name);
  };
  add("geoadd", -5, kW, 1, 1, CmdGeoAdd, nullptr, "3.2.0",
      "Adds one or more members to a geospatial index. The key is created if it doesn't exist.");
  add("geodist", -4, kR, 1, 1, CmdGeoDist, nullptr, "3.2.0",
      "Returns the distance between two members of a geospatial index.");
  add("geohash", -2, kR, 1, 1, CmdGeoHash, nullptr, "3.2.0",
      "Returns members from a geospatial index as geohash strings.");
  add("geopos", -2, kR, 1, 1, CmdGeoPos, nullptr, "3.2.0",
      "Returns the longitude and latitude of members from a geospatial index.");
  add("georadius", -6, kW, 1, 1, CmdSearch<kFromCoords, 1>, SearchStoreFiber<kFromCoords, 1>,
      "3.2.0",
      "Queries a geospatial index for members within a distance from a coordinate, optionally "
      "stores the result.")
      ->keys_fn = GeoRadiusKeys;
  add("georadiusbymember", -5, kW, 1, 1, CmdSearch<kFromMember, 1>,
      SearchStoreFiber<kFromMember, 1>, "3.2.0",
      "Queries a geospatial index for members within a distance from a member, optionally "
      "stores the result.")
      ->keys_fn = GeoRadiusKeys;
  add("georadius_ro", -6, kR, 1, 1, CmdSearch<kFromCoords | kNoStore, 1>, nullptr, "3.2.10",
      "Returns members from a geospatial index that are within a distance from a coordinate.");
  add("georadiusbymember_ro", -5, kR, 1, 1, CmdSearch<kFromMember | kNoStore, 1>, nullptr, "3.2.10",
      "Returns members from a geospatial index that are within a distance from a member.");
  add("geosearch", -7, kR, 1, 1, CmdSearch<kSearch, 1>, nullptr, "6.2.0",
      "Queries a geospatial index for members inside an area of a box or a circle.");
  add("geosearchstore", -8, kW, 1, 2, CmdSearch<kSearch | kSearchStore, 2>,
      SearchStoreFiber<kSearch | kSearchStore, 2>, "6.2.0",
      "Queries a geospatial index for members inside an area of a box or a circle, optionally "
      "stores the result.");
}

}  // namespace strata
