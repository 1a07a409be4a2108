#include "server/base/cron_schedule.h"

#include <time.h>

#include <climits>
#include <optional>
#include <vector>

namespace strata {
namespace {

constexpr int kSearchYears = 8;

struct FieldSpec {
  const char* name;
  int low;
  int high;
  const char* const* names;  // 3-letter names, or nullptr
  int names_count;
  int names_base;  // value of names[0]
};

constexpr const char* kMonthNames[] = {"jan", "feb", "mar", "apr", "may", "jun",
                                       "jul", "aug", "sep", "oct", "nov", "dec"};
constexpr const char* kDayNames[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat"};

constexpr FieldSpec kFields[5] = {
    {"minute", 0, 59, nullptr, 0, 0},       {"hour", 0, 23, nullptr, 0, 0},
    {"day-of-month", 1, 31, nullptr, 0, 0}, {"month", 1, 12, kMonthNames, 12, 1},
    {"day-of-week", 0, 7, kDayNames, 7, 0},
};

struct Macro {
  const char* name;
  const char* expansion;
};

constexpr Macro kMacros[] = {
    {"@yearly", "0 0 1 1 *"}, {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"},
    {"@weekly", "0 0 * * 0"}, {"@daily", "0 0 * * *"},    {"@midnight", "0 0 * * *"},
    {"@hourly", "0 * * * *"},
};

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

char AsciiLower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool EqualsNoCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); i++) {
    if (AsciiLower(a[i]) != AsciiLower(b[i])) return false;
  }
  return true;
}

// Quotes a token for an error message, shortening very long ones.
std::string Quote(std::string_view token) {
  constexpr size_t kMax = 40;
  std::string out = "'";
  if (token.size() > kMax) {
    out.append(token.substr(0, kMax));
    out.append("...");
  } else {
    out.append(token);
  }
  out.push_back('\'');
  return out;
}

std::string Shorten(std::string_view token) {
  std::string q = Quote(token);
  return q.substr(1, q.size() - 2);
}

// Parses a run of ASCII digits. Values too large for an int saturate at INT_MAX so that
// range checks reject them without overflow.
std::optional<int> ParseNumber(std::string_view s) {
  if (s.empty()) return std::nullopt;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    if (v < INT_MAX) v = v * 10 + (c - '0');
  }
  return v > INT_MAX ? INT_MAX : static_cast<int>(v);
}

class FieldParser {
 public:
  FieldParser(const FieldSpec& spec, std::string* error) : spec_(spec), error_(error) {}

  bool Parse(std::string_view text, uint64_t* mask) {
    uint64_t bits = 0;
    size_t start = 0;
    while (true) {
      size_t comma = text.find(',', start);
      std::string_view elem = text.substr(
          start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
      if (elem.empty()) return Fail("empty list element in " + Quote(text));
      if (!ParseElement(elem, &bits)) return false;
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    *mask = bits;
    return true;
  }

 private:
  bool Fail(const std::string& msg) {
    if (error_) *error_ = std::string(spec_.name) + " field: " + msg;
    return false;
  }

  bool ParseValue(std::string_view token, int* out) {
    if (std::optional<int> n = ParseNumber(token)) {
      if (*n < spec_.low || *n > spec_.high) {
        return Fail("value " + Shorten(token) + " out of range " + std::to_string(spec_.low) + "-" +
                    std::to_string(spec_.high));
      }
      *out = *n;
      return true;
    }
    for (int i = 0; i < spec_.names_count; i++) {
      if (EqualsNoCase(token, spec_.names[i])) {
        *out = spec_.names_base + i;
        return true;
      }
    }
    std::string msg = "invalid value " + Quote(token);
    if (spec_.names) {
      msg += " (expected " + std::to_string(spec_.low) + "-" + std::to_string(spec_.high) +
             " or a name such as " + spec_.names[1] + ")";
    }
    return Fail(msg);
  }

  bool ParseElement(std::string_view elem, uint64_t* bits) {
    std::string_view base = elem;
    int step = 1;
    bool has_step = false;
    size_t slash = elem.find('/');
    if (slash != std::string_view::npos) {
      has_step = true;
      base = elem.substr(0, slash);
      std::string_view step_text = elem.substr(slash + 1);
      if (step_text.empty()) return Fail("missing step after '/' in " + Quote(elem));
      std::optional<int> n = ParseNumber(step_text);
      if (!n) return Fail("invalid step " + Quote(step_text) + " in " + Quote(elem));
      if (*n == 0) return Fail("step 0 is not allowed");
      if (*n > spec_.high) {
        return Fail("step " + Shorten(step_text) + " out of range 1-" + std::to_string(spec_.high));
      }
      step = *n;
      if (base.empty()) return Fail("missing value before '/' in " + Quote(elem));
    }

    int lo = 0;
    int hi = 0;
    if (base == "*") {
      lo = spec_.low;
      hi = spec_.high;
    } else if (base.find('*') != std::string_view::npos) {
      return Fail("'*' must stand alone, got " + Quote(base));
    } else if (size_t dash = base.find('-'); dash != std::string_view::npos) {
      std::string_view a = base.substr(0, dash);
      std::string_view b = base.substr(dash + 1);
      if (a.empty()) return Fail("missing range start in " + Quote(base));
      if (b.empty()) return Fail("missing range end in " + Quote(base));
      if (b.find('-') != std::string_view::npos) return Fail("invalid range " + Quote(base));
      if (!ParseValue(a, &lo) || !ParseValue(b, &hi)) return false;
      if (lo > hi) return Fail("range " + Quote(base) + " has start greater than end");
    } else {
      if (!ParseValue(base, &lo)) return false;
      hi = has_step ? spec_.high : lo;
    }
    for (int v = lo; v <= hi; v += step) *bits |= uint64_t{1} << v;
    return true;
  }

  const FieldSpec& spec_;
  std::string* error_;
};

bool SetError(std::string* error, std::string msg) {
  if (error) *error = std::move(msg);
  return false;
}

// Lowest set bit of `mask` at or above `from`, or -1.
int NextBit(uint64_t mask, int from) {
  if (from > 63) return -1;
  uint64_t m = mask & (~uint64_t{0} << from);
  return m == 0 ? -1 : __builtin_ctzll(m);
}

bool IsLeap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int DaysInMonth(int64_t y, int m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return (m == 2 && IsLeap(y)) ? 29 : kDays[m - 1];
}

// 0 = Sunday. Days-from-civil (proleptic Gregorian), valid for negative years too.
int Weekday(int64_t y, int m, int d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  int64_t days = era * 146097 + doe - 719468;  // days since 1970-01-01, a Thursday
  int64_t wd = (days + 4) % 7;
  return static_cast<int>(wd < 0 ? wd + 7 : wd);
}

// The earliest instant later than `after` whose local time is exactly y-m-d h:mi:00, or
// nullopt if that wall time does not exist (DST gap) or all its occurrences are <= `after`.
std::optional<int64_t> Resolve(int64_t y, int m, int d, int h, int mi, int64_t after) {
  if (y - 1900 > INT_MAX || y - 1900 < INT_MIN) return std::nullopt;
  std::optional<int64_t> best;
  for (int isdst : {-1, 0, 1}) {
    struct tm tm = {};
    tm.tm_year = static_cast<int>(y - 1900);
    tm.tm_mon = m - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_isdst = isdst;
    time_t t = mktime(&tm);
    struct tm check;
    if (localtime_r(&t, &check) == nullptr) continue;
    if (check.tm_year != y - 1900 || check.tm_mon != m - 1 || check.tm_mday != d ||
        check.tm_hour != h || check.tm_min != mi || check.tm_sec != 0) {
      continue;
    }
    int64_t r = static_cast<int64_t>(t);
    if (r > after && (!best || r < *best)) best = r;
  }
  return best;
}

}  // namespace

bool CronSchedule::Parse(std::string_view expr, CronSchedule* out, std::string* error) {
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (i < expr.size()) {
    while (i < expr.size() && IsSpace(expr[i])) i++;
    size_t start = i;
    while (i < expr.size() && !IsSpace(expr[i])) i++;
    if (i > start) fields.push_back(expr.substr(start, i - start));
  }
  if (fields.empty()) return SetError(error, "empty expression");

  std::string_view body[5];
  std::vector<std::string_view> expanded;
  if (fields[0][0] == '@') {
    const Macro* macro = nullptr;
    for (const Macro& m : kMacros) {
      if (EqualsNoCase(fields[0], m.name)) macro = &m;
    }
    if (!macro) return SetError(error, "unknown macro " + Quote(fields[0]));
    if (fields.size() != 1) {
      return SetError(error,
                      "unexpected text " + Quote(fields[1]) + " after macro " + Quote(fields[0]));
    }
    std::string_view exp = macro->expansion;
    size_t pos = 0;
    for (int f = 0; f < 5; f++) {
      size_t sp = exp.find(' ', pos);
      body[f] = exp.substr(pos, sp == std::string_view::npos ? sp : sp - pos);
      pos = sp + 1;
    }
  } else {
    if (fields.size() != 5) {
      return SetError(error, "expected 5 fields, got " + std::to_string(fields.size()));
    }
    for (int f = 0; f < 5; f++) body[f] = fields[f];
  }

  CronSchedule s;
  uint64_t* masks[5] = {&s.minutes_, &s.hours_, &s.days_of_month_, &s.months_, &s.days_of_week_};
  for (int f = 0; f < 5; f++) {
    FieldParser parser(kFields[f], error);
    if (!parser.Parse(body[f], masks[f])) return false;
  }
  if (s.days_of_week_ & (uint64_t{1} << 7)) {
    s.days_of_week_ = (s.days_of_week_ & ~(uint64_t{1} << 7)) | 1;
  }
  s.dom_star_ = body[2][0] == '*';
  s.dow_star_ = body[4][0] == '*';
  s.expr_ = std::string(expr);
  if (out) *out = std::move(s);
  return true;
}

bool CronSchedule::DayMatches(int64_t year, int month, int day) const {
  bool dom = days_of_month_ & (uint64_t{1} << day);
  bool dow = days_of_week_ & (uint64_t{1} << Weekday(year, month, day));
  return (dom_star_ || dow_star_) ? (dom && dow) : (dom || dow);
}

int64_t CronSchedule::NextAfter(int64_t unix_seconds) const {
  if (!minutes_ || !hours_ || !days_of_month_ || !months_ || !days_of_week_) return -1;
  if (unix_seconds > INT64_MAX / 2 || unix_seconds < INT64_MIN / 2) return -1;
  tzset();  // mktime re-reads TZ anyway; keep localtime_r consistent with it
  time_t now = static_cast<time_t>(unix_seconds);
  struct tm tm;
  if (localtime_r(&now, &tm) == nullptr) return -1;

  // Start at the wall-clock minute after the input's.
  int64_t year = int64_t{tm.tm_year} + 1900;
  int month = tm.tm_mon + 1;
  int day = tm.tm_mday;
  int hour = tm.tm_hour;
  int minute = tm.tm_min + 1;
  if (minute > 59) {
    minute = 0;
    hour++;
  }
  if (hour > 23) {
    hour = 0;
    day++;
  }
  const int64_t last_year = year + kSearchYears;

  auto next_month = [&] {
    day = 1;
    hour = 0;
    minute = 0;
    int m = NextBit(months_, month + 1);
    if (m < 0) {
      year++;
      m = NextBit(months_, 1);
    }
    month = m;
  };
  auto next_day = [&] {
    day++;
    hour = 0;
    minute = 0;
  };

  while (year <= last_year) {
    if (!(months_ & (uint64_t{1} << month))) {
      int m = NextBit(months_, month);
      if (m < 0) {
        next_month();  // wraps to the next year
      } else {
        month = m;
        day = 1;
        hour = 0;
        minute = 0;
      }
      continue;
    }
    if (day > DaysInMonth(year, month)) {
      next_month();
      continue;
    }
    if (!DayMatches(year, month, day)) {
      next_day();
      continue;
    }
    int h = NextBit(hours_, hour);
    if (h < 0) {
      next_day();
      continue;
    }
    if (h != hour) {
      hour = h;
      minute = 0;
    }
    int mi = NextBit(minutes_, minute);
    if (mi < 0) {
      minute = 0;
      if (++hour > 23) next_day();
      continue;
    }
    minute = mi;
    if (std::optional<int64_t> t = Resolve(year, month, day, hour, minute, unix_seconds)) {
      return *t;
    }
    // Nonexistent (DST gap) or already passed: try the next minute.
    if (++minute > 59) {
      minute = 0;
      if (++hour > 23) next_day();
    }
  }
  return -1;
}

}  // namespace strata
