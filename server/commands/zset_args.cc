#include "server/commands/zset_args.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

#include "core/string_util.h"
#include "server/commands/errors.h"
#include "server/commands/lookup.h"

namespace strata {

bool ParseZScore(std::string_view s, double* out) {
  if (s.empty() || std::isspace(static_cast<unsigned char>(s[0]))) return false;
  std::string buf(s);
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(buf.c_str(), &end);
  if (end != buf.c_str() + buf.size()) return false;
  if (errno == ERANGE && (std::isinf(v) || v == 0)) return false;
  if (std::isnan(v)) return false;
  *out = v;
  return true;
}

namespace {

// One bound of zslParseRange: strtod up to the first NUL, which must end the number.
bool ParseRangeBound(std::string_view s, double* v, bool* ex) {
  *ex = !s.empty() && s[0] == '(';
  std::string buf(*ex ? s.substr(1) : s);
  char* end = nullptr;
  *v = std::strtod(buf.c_str(), &end);
  return *end == '\0' && !std::isnan(*v);
}

bool ParseLexBound(std::string_view s, ZLexBound* b) {
  if (s.empty()) return false;
  switch (s[0]) {
    case '+':
    case '-':
      if (s.size() > 1 && s[1] != '\0') return false;
      b->kind = s[0] == '+' ? ZLexBound::kPlusInf : ZLexBound::kMinusInf;
      b->ex = true;
      return true;
    case '(':
    case '[':
      b->kind = ZLexBound::kValue;
      b->ex = s[0] == '(';
      b->value = s.substr(1);
      return true;
    default:
      return false;
  }
}

}  // namespace

bool ParseZScoreRange(std::string_view min, std::string_view max, ZScoreRange* out) {
  return ParseRangeBound(min, &out->min, &out->minex) &&
         ParseRangeBound(max, &out->max, &out->maxex);
}

bool ParseZLexRange(std::string_view min, std::string_view max, ZLexRange* out) {
  return ParseLexBound(min, &out->min) && ParseLexBound(max, &out->max);
}

std::pair<size_t, size_t> ZScoreRanks(const ZSetReader& r, const ZScoreRange& range) {
  size_t first = r.CountWhile(
      [&](std::string_view, double s) { return range.minex ? s <= range.min : s < range.min; });
  size_t last = r.CountWhile(
      [&](std::string_view, double s) { return range.maxex ? s < range.max : s <= range.max; });
  return {first, std::max(first, last)};
}

std::pair<size_t, size_t> ZLexRanks(const ZSetReader& r, const ZLexRange& range) {
  const ZLexBound& lo = range.min;
  const ZLexBound& hi = range.max;
  size_t first = r.CountWhile([&](std::string_view m, double) {
    if (lo.kind != ZLexBound::kValue) return lo.kind == ZLexBound::kPlusInf;
    return lo.ex ? m <= lo.value : m < lo.value;
  });
  size_t last = r.CountWhile([&](std::string_view m, double) {
    if (hi.kind != ZLexBound::kValue) return hi.kind == ZLexBound::kPlusInf;
    return hi.ex ? m < hi.value : m <= hi.value;
  });
  return {first, std::max(first, last)};
}

bool ParseZLong(std::string_view s, ReplyBuilder& rb, int64_t* out) {
  if (ParseInt64(s, out)) return true;
  rb.Error(errors::kNotInteger);
  return false;
}

bool LookupZSet(ShardCtx& ctx, std::string_view key, ReplyBuilder& rb, Entry** out, bool read) {
  return LookupTyped(ctx, key, ValueType::kZSet, rb, out, read);
}

}  // namespace strata
