// Argument parsing and reply shapes the sorted-set commands share, with Redis's exact
// rules: scores, score ranges and lex ranges, ranks of a range, the type-checked lookup,
// and the layout of scored replies. Used by the files of the sorted-set family:
//   zset_family.cc    single-member commands, pops, ZMPOP, ZRANDMEMBER, ZSCAN
//   zset_range.cc     ZRANGE and its older forms, ZRANGESTORE, counts and removals by range
//   zset_algebra.cc   ZUNION, ZINTER, ZDIFF, their STORE forms, ZINTERCARD
//   zset_blocking.cc  BZPOPMIN, BZPOPMAX, BZMPOP
//
// Thread-safety: parsing is pure; lookups run on the thread of the key's shard.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/zset_type.h"
#include "server/engine/command.h"

namespace strata {

namespace zset_errors {
inline constexpr std::string_view kMinMaxNotFloat = "ERR min or max is not a float";
inline constexpr std::string_view kNotLexRange = "ERR min or max not valid string range item";
inline constexpr std::string_view kNaN = "ERR resulting score is not a number (NaN)";
inline constexpr std::string_view kNotPositive = "ERR value is out of range, must be positive";
}  // namespace zset_errors

// A score argument as Redis's getDoubleFromObject takes it (no spaces, the whole string,
// no NaN, no overflow to infinity or underflow to zero; "inf" and "-inf" allowed).
bool ParseZScore(std::string_view s, double* out);

// A score range: min and max, each inclusive unless exclusive ("(" prefix).
struct ZScoreRange {
  double min = 0, max = 0;
  bool minex = false, maxex = false;
};
// Redis's zslParseRange (strtod, so leading spaces, hex and "" are taken as it takes them).
bool ParseZScoreRange(std::string_view min, std::string_view max, ZScoreRange* out);

// A lex range bound: "-" and "+" (below and above every member) or "[" / "(" and a value.
struct ZLexBound {
  enum Kind { kMinusInf, kPlusInf, kValue };
  Kind kind = kValue;
  bool ex = false;
  std::string_view value;  // a view of the argument
};
struct ZLexRange {
  ZLexBound min, max;
};
bool ParseZLexRange(std::string_view min, std::string_view max, ZLexRange* out);

// The ranks [first, last) of r's members inside the range (first == last when none).
std::pair<size_t, size_t> ZScoreRanks(const ZSetReader& r, const ZScoreRange& range);
std::pair<size_t, size_t> ZLexRanks(const ZSetReader& r, const ZLexRange& range);

// Redis's getLongFromObjectOrReply (a canonical int64).
bool ParseZLong(std::string_view s, ReplyBuilder& rb, int64_t* out);

// Looks key up: false (WRONGTYPE replied) when it holds another type; *out null when absent.
bool LookupZSet(ShardCtx& ctx, std::string_view key, ReplyBuilder& rb, Entry** out,
                bool read = true);

// ZADD's work once its arguments are checked (GEOADD shares it): adds each member with
// its score under flags (ZAddIn), replies as ZADD does (the count, with ch the count
// changed, with kZAddIncr the new score), publishes zadd/zincr and wakes blocked poppers.
void ZAddParsed(ShardCtx& ctx, ReplyBuilder& rb, std::string_view key, int flags, bool ch,
                const std::vector<ZMember>& items);

// Emits members with optional scores as ZRANGE ... WITHSCORES does: RESP2 a flat array,
// RESP3 an array of [member, score] pairs when withscores.
class ZRangeReply {
 public:
  ZRangeReply(ReplyBuilder& rb, bool withscores) : rb_(rb), withscores_(withscores) {}
  void Begin(size_t n) { rb_.Array(withscores_ && rb_.resp() < 3 ? n * 2 : n); }
  void Add(std::string_view member, double score) {
    if (withscores_ && rb_.resp() >= 3) rb_.Array(2);
    rb_.Bulk(member);
    if (withscores_) rb_.Double(score);
  }

 private:
  ReplyBuilder& rb_;
  bool withscores_;
};

}  // namespace strata
