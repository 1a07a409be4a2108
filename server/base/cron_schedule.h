// CronSchedule: parses a crontab time expression and computes its next firing time.
//
// Syntax is the standard five fields "minute hour day-of-month month day-of-week":
//   minute 0-59, hour 0-23, day-of-month 1-31, month 1-12 or jan..dec,
//   day-of-week 0-7 (0 and 7 are Sunday) or sun..sat; names are case-insensitive.
// Each field is a comma-separated list of "*", "a", "a-b", "*/n", "a-b/n" or "a/n"
// (a through the field's maximum, every n). Macros: @yearly @annually @monthly @weekly
// @daily @midnight @hourly. Errors name the field and the offending token.
//
// Day matching follows Vixie cron: if either day field starts with '*' (so "*/2" counts
// as unrestricted) a day must match both fields; otherwise it matches if either does.
//
// Times are interpreted in the process's local time zone (localtime_r/mktime, so TZ as of
// the last tzset()). NextAfter walks local wall-clock time forward from the minute after
// the input's wall clock: a wall time inside a spring-forward gap does not exist and is
// skipped; a wall time that occurs twice (fall-back) resolves to its earliest occurrence
// later than the input, so the repeated hour is not walked a second time. The result is
// always greater than the input. The search spans 8 years (enough for Feb 29 across a
// non-leap century year such as 2100); -1 means no match in that window ("0 0 30 2 *").
//
// Thread-safety: immutable after Parse; any thread may call NextAfter concurrently.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace strata {

class CronSchedule {
 public:
  // A default-constructed schedule never fires (NextAfter returns -1).
  CronSchedule() = default;

  // Parses `expr` into *out. On failure returns false, sets *error (if non-null) to a
  // message such as "minute field: value 61 out of range 0-59" and leaves *out untouched.
  static bool Parse(std::string_view expr, CronSchedule* out, std::string* error);

  // The first whole local minute strictly after `unix_seconds` that matches, as Unix
  // seconds; -1 if none within the search window or the time is out of range.
  int64_t NextAfter(int64_t unix_seconds) const;

  // The expression as given to Parse.
  std::string ToString() const { return expr_; }

  // Bit i set = value i allowed. Day-of-week uses bits 0-6 (7 is folded into 0).
  uint64_t minutes() const { return minutes_; }
  uint64_t hours() const { return hours_; }
  uint64_t days_of_month() const { return days_of_month_; }
  uint64_t months() const { return months_; }
  uint64_t days_of_week() const { return days_of_week_; }

 private:
  bool DayMatches(int64_t year, int month, int day) const;

  std::string expr_;
  uint64_t minutes_ = 0;
  uint64_t hours_ = 0;
  uint64_t days_of_month_ = 0;
  uint64_t months_ = 0;
  uint64_t days_of_week_ = 0;
  bool dom_star_ = true;
  bool dow_star_ = true;
};

}  // namespace strata
