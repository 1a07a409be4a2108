#include "server/base/cron_schedule.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace strata {
namespace {

uint64_t Bits(std::initializer_list<int> values) {
  uint64_t m = 0;
  for (int v : values) m |= uint64_t{1} << v;
  return m;
}

uint64_t Range(int lo, int hi, int step = 1) {
  uint64_t m = 0;
  for (int v = lo; v <= hi; v += step) m |= uint64_t{1} << v;
  return m;
}

// Unix seconds for a UTC calendar time (independent of TZ).
int64_t Utc(int y, int mo, int d, int h = 0, int mi = 0, int s = 0) {
  struct tm tm = {};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  return static_cast<int64_t>(timegm(&tm));
}

CronSchedule MustParse(std::string_view expr) {
  CronSchedule s;
  std::string error;
  EXPECT_TRUE(CronSchedule::Parse(expr, &s, &error)) << expr << ": " << error;
  return s;
}

std::string ParseError(std::string_view expr) {
  CronSchedule s;
  std::string error;
  EXPECT_FALSE(CronSchedule::Parse(expr, &s, &error)) << expr;
  return error;
}

class ScopedTz {
 public:
  explicit ScopedTz(const char* tz) {
    const char* old = getenv("TZ");
    had_old_ = old != nullptr;
    if (had_old_) old_ = old;
    setenv("TZ", tz, 1);
    tzset();
  }
  ~ScopedTz() {
    if (had_old_) {
      setenv("TZ", old_.c_str(), 1);
    } else {
      unsetenv("TZ");
    }
    tzset();
  }

 private:
  bool had_old_ = false;
  std::string old_;
};

class CronScheduleTest : public ::testing::Test {
 protected:
  ScopedTz tz_{"UTC"};
};

TEST_F(CronScheduleTest, StarMatchesEverything) {
  CronSchedule s = MustParse("* * * * *");
  EXPECT_EQ(s.minutes(), Range(0, 59));
  EXPECT_EQ(s.hours(), Range(0, 23));
  EXPECT_EQ(s.days_of_month(), Range(1, 31));
  EXPECT_EQ(s.months(), Range(1, 12));
  EXPECT_EQ(s.days_of_week(), Range(0, 6));
  EXPECT_EQ(s.ToString(), "* * * * *");
}

TEST_F(CronScheduleTest, NumbersListsRangesAndSteps) {
  CronSchedule s = MustParse("5,10,15 1-3 */10 2-11/3 1/2");
  EXPECT_EQ(s.minutes(), Bits({5, 10, 15}));
  EXPECT_EQ(s.hours(), Bits({1, 2, 3}));
  EXPECT_EQ(s.days_of_month(), Bits({1, 11, 21, 31}));
  EXPECT_EQ(s.months(), Bits({2, 5, 8, 11}));
  EXPECT_EQ(s.days_of_week(), Bits({1, 3, 5, 0}));  // 1,3,5,7 and 7 is Sunday

  s = MustParse("*/15 0-23/6 1,15-17 * *");
  EXPECT_EQ(s.minutes(), Bits({0, 15, 30, 45}));
  EXPECT_EQ(s.hours(), Bits({0, 6, 12, 18}));
  EXPECT_EQ(s.days_of_month(), Bits({1, 15, 16, 17}));

  s = MustParse("30/10 12/5 * * *");  // a/n: a through max by n
  EXPECT_EQ(s.minutes(), Bits({30, 40, 50}));
  EXPECT_EQ(s.hours(), Bits({12, 17, 22}));

  s = MustParse("0-59 0-23 1-31 1-12 0-7");
  EXPECT_EQ(s.minutes(), Range(0, 59));
  EXPECT_EQ(s.days_of_week(), Range(0, 6));

  s = MustParse("59 23 31 12 6");
  EXPECT_EQ(s.minutes(), Bits({59}));
  EXPECT_EQ(s.hours(), Bits({23}));
  EXPECT_EQ(s.days_of_month(), Bits({31}));
  EXPECT_EQ(s.months(), Bits({12}));
  EXPECT_EQ(s.days_of_week(), Bits({6}));

  s = MustParse("1-1,3-3/5 * * * *");
  EXPECT_EQ(s.minutes(), Bits({1, 3}));
}

TEST_F(CronScheduleTest, SevenAndZeroAreSunday) {
  EXPECT_EQ(MustParse("0 0 * * 7").days_of_week(), Bits({0}));
  EXPECT_EQ(MustParse("0 0 * * 0").days_of_week(), Bits({0}));
  EXPECT_EQ(MustParse("0 0 * * 5-7").days_of_week(), Bits({5, 6, 0}));
  EXPECT_EQ(MustParse("0 0 * * sun").days_of_week(), Bits({0}));
}

TEST_F(CronScheduleTest, MonthAndDayNamesCaseInsensitive) {
  CronSchedule s = MustParse("0 0 * jan,MAR,Dec mon-FRI");
  EXPECT_EQ(s.months(), Bits({1, 3, 12}));
  EXPECT_EQ(s.days_of_week(), Range(1, 5));
  s = MustParse("0 0 * feb-aug/2 sat,sun");
  EXPECT_EQ(s.months(), Bits({2, 4, 6, 8}));
  EXPECT_EQ(s.days_of_week(), Bits({0, 6}));
  s = MustParse("0 0 * 1-jun tue-6");  // names and numbers mix in ranges
  EXPECT_EQ(s.months(), Range(1, 6));
  EXPECT_EQ(s.days_of_week(), Range(2, 6));
  const char* months[] = {"jan", "feb", "mar", "apr", "may", "jun",
                          "jul", "aug", "sep", "oct", "nov", "dec"};
  for (int i = 0; i < 12; i++) {
    EXPECT_EQ(MustParse(std::string("0 0 1 ") + months[i] + " *").months(), Bits({i + 1}));
  }
  const char* days[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  for (int i = 0; i < 7; i++) {
    EXPECT_EQ(MustParse(std::string("0 0 * * ") + days[i]).days_of_week(), Bits({i}));
  }
}

TEST_F(CronScheduleTest, WhitespaceIsFlexible) {
  CronSchedule s = MustParse("  \t5   4 \t *  *   *  \n");
  EXPECT_EQ(s.minutes(), Bits({5}));
  EXPECT_EQ(s.hours(), Bits({4}));
  EXPECT_EQ(s.ToString(), "  \t5   4 \t *  *   *  \n");
  EXPECT_EQ(MustParse("  @daily  ").minutes(), Bits({0}));
}

TEST_F(CronScheduleTest, Macros) {
  struct Case {
    const char* macro;
    const char* equivalent;
  } cases[] = {
      {"@yearly", "0 0 1 1 *"}, {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"},
      {"@weekly", "0 0 * * 0"}, {"@daily", "0 0 * * *"},    {"@midnight", "0 0 * * *"},
      {"@hourly", "0 * * * *"}, {"@DAILY", "0 0 * * *"},
  };
  for (const Case& c : cases) {
    CronSchedule m = MustParse(c.macro);
    CronSchedule e = MustParse(c.equivalent);
    EXPECT_EQ(m.minutes(), e.minutes()) << c.macro;
    EXPECT_EQ(m.hours(), e.hours()) << c.macro;
    EXPECT_EQ(m.days_of_month(), e.days_of_month()) << c.macro;
    EXPECT_EQ(m.months(), e.months()) << c.macro;
    EXPECT_EQ(m.days_of_week(), e.days_of_week()) << c.macro;
    EXPECT_EQ(m.ToString(), c.macro);
  }
  int64_t t = Utc(2025, 6, 15, 10, 30);  // a Sunday
  EXPECT_EQ(MustParse("@hourly").NextAfter(t), Utc(2025, 6, 15, 11, 0));
  EXPECT_EQ(MustParse("@daily").NextAfter(t), Utc(2025, 6, 16));
  EXPECT_EQ(MustParse("@weekly").NextAfter(t), Utc(2025, 6, 22));
  EXPECT_EQ(MustParse("@monthly").NextAfter(t), Utc(2025, 7, 1));
  EXPECT_EQ(MustParse("@yearly").NextAfter(t), Utc(2026, 1, 1));
}

TEST_F(CronScheduleTest, ErrorMessages) {
  EXPECT_EQ(ParseError("61 * * * *"), "minute field: value 61 out of range 0-59");
  EXPECT_EQ(ParseError("* 24 * * *"), "hour field: value 24 out of range 0-23");
  EXPECT_EQ(ParseError("* * 0 * *"), "day-of-month field: value 0 out of range 1-31");
  EXPECT_EQ(ParseError("* * 32 * *"), "day-of-month field: value 32 out of range 1-31");
  EXPECT_EQ(ParseError("* * * 13 *"), "month field: value 13 out of range 1-12");
  EXPECT_EQ(ParseError("* * * * 8"), "day-of-week field: value 8 out of range 0-7");
  EXPECT_EQ(ParseError("* * * *"), "expected 5 fields, got 4");
  EXPECT_EQ(ParseError("* * * * * *"), "expected 5 fields, got 6");
  EXPECT_EQ(ParseError(""), "empty expression");
  EXPECT_EQ(ParseError(" \t "), "empty expression");
  EXPECT_EQ(ParseError("*/0 * * * *"), "minute field: step 0 is not allowed");
  EXPECT_EQ(ParseError("*/60 * * * *"), "minute field: step 60 out of range 1-59");
  EXPECT_EQ(ParseError("*/ * * * *"), "minute field: missing step after '/' in '*/'");
  EXPECT_EQ(ParseError("*/x * * * *"), "minute field: invalid step 'x' in '*/x'");
  EXPECT_EQ(ParseError("/5 * * * *"), "minute field: missing value before '/' in '/5'");
  EXPECT_EQ(ParseError("1- * * * *"), "minute field: missing range end in '1-'");
  EXPECT_EQ(ParseError("-5 * * * *"), "minute field: missing range start in '-5'");
  EXPECT_EQ(ParseError("1-2-3 * * * *"), "minute field: invalid range '1-2-3'");
  EXPECT_EQ(ParseError("* 5-3 * * *"), "hour field: range '5-3' has start greater than end");
  EXPECT_EQ(ParseError("1,,2 * * * *"), "minute field: empty list element in '1,,2'");
  EXPECT_EQ(ParseError("* * * foo *"),
            "month field: invalid value 'foo' (expected 1-12 or a name such as feb)");
  EXPECT_EQ(ParseError("* * * * monday"),
            "day-of-week field: invalid value 'monday' (expected 0-7 or a name such as mon)");
  EXPECT_EQ(ParseError("* x * * *"), "hour field: invalid value 'x'");
  EXPECT_EQ(ParseError("* * * * jan"),
            "day-of-week field: invalid value 'jan' (expected 0-7 or a name such as mon)");
  EXPECT_EQ(ParseError("99999999999999999999 * * * *"),
            "minute field: value 99999999999999999999 out of range 0-59");
  EXPECT_EQ(ParseError("*-5 * * * *"), "minute field: '*' must stand alone, got '*-5'");
  EXPECT_EQ(ParseError("@often"), "unknown macro '@often'");
  EXPECT_EQ(ParseError("@daily *"), "unexpected text '*' after macro '@daily'");
}

TEST_F(CronScheduleTest, FailedParseLeavesOutputUntouched) {
  CronSchedule s = MustParse("1 2 3 4 5");
  std::string error;
  EXPECT_FALSE(CronSchedule::Parse("1 2 3 4", &s, &error));
  EXPECT_EQ(s.ToString(), "1 2 3 4 5");
  EXPECT_EQ(s.minutes(), Bits({1}));
  // Null out/error pointers are allowed.
  EXPECT_TRUE(CronSchedule::Parse("* * * * *", nullptr, nullptr));
  EXPECT_FALSE(CronSchedule::Parse("bad", nullptr, nullptr));
}

TEST_F(CronScheduleTest, MalformedInputsNeverCrash) {
  const std::string long_list(100000, ',');
  const std::string long_number(5000, '9');
  const char* bad[] = {
      "",
      " ",
      "*",
      "* * * * * * *",
      "99999999999999999999 * * * *",
      "* * * * 99999999999999999999",
      "*/99999999999999999999 * * * *",
      "1-99999999999999999999 * * * *",
      "1- * * * *",
      "-5 * * * *",
      "- * * * *",
      "-- * * * *",
      "*/ * * * *",
      "/ * * * *",
      "// * * * *",
      "*/5/5 * * * *",
      "1/2/3 * * * *",
      ",, * * * *",
      ", * * * *",
      "1, * * * *",
      ",1 * * * *",
      "** * * * *",
      "*1 * * * *",
      "1* * * * *",
      "a-b * * * *",
      "+1 * * * *",
      "0x10 * * * *",
      "1.5 * * * *",
      "\xc3\xa9 * * * *",
      "* * * \xe6\x9c\x88 *",
      "* * * * \xff\xfe",
      "* * * ja *",
      "* * * janu *",
      "* * * * su",
      "@",
      "@ daily",
      "@dailyx",
      "@yearly 0",
      "@reboot",
      "0 0 0 0 0",
      "60 24 32 13 8",
      "5-1 * * * *",
      "* * * dec-jan *",
      "* * * * sat-sun",
      "*/-1 * * * *",
      "*/+1 * * * *",
  };
  for (const char* expr : bad) {
    CronSchedule s;
    std::string error;
    EXPECT_FALSE(CronSchedule::Parse(expr, &s, &error)) << expr;
    EXPECT_FALSE(error.empty()) << expr;
  }
  std::string error;
  EXPECT_FALSE(CronSchedule::Parse(long_list + " * * * *", nullptr, &error));
  EXPECT_FALSE(CronSchedule::Parse(long_number + " * * * *", nullptr, &error));
  EXPECT_LT(error.size(), 200u);  // long tokens are shortened in messages
  std::string with_nul("* * * * *\0", 10);
  EXPECT_FALSE(CronSchedule::Parse(with_nul, nullptr, &error));
}

TEST_F(CronScheduleTest, NextAfterBasics) {
  CronSchedule every = MustParse("* * * * *");
  int64_t t = Utc(2025, 6, 15, 10, 30, 0);
  EXPECT_EQ(every.NextAfter(t), t + 60);  // strictly after, even on a whole minute
  EXPECT_EQ(every.NextAfter(t + 1), t + 60);
  EXPECT_EQ(every.NextAfter(t + 59), t + 60);
  EXPECT_EQ(every.NextAfter(-1), 0);
  EXPECT_EQ(every.NextAfter(-61), -60);

  CronSchedule s = MustParse("*/15 9-17 * * *");
  EXPECT_EQ(s.NextAfter(Utc(2025, 6, 15, 8, 59)), Utc(2025, 6, 15, 9, 0));
  EXPECT_EQ(s.NextAfter(Utc(2025, 6, 15, 9, 0)), Utc(2025, 6, 15, 9, 15));
  EXPECT_EQ(s.NextAfter(Utc(2025, 6, 15, 17, 45)), Utc(2025, 6, 16, 9, 0));
  EXPECT_EQ(s.NextAfter(Utc(2025, 6, 15, 12, 7, 30)), Utc(2025, 6, 15, 12, 15));

  // Successive firings of a multi-field schedule.
  CronSchedule q = MustParse("0,30 8,20 * * mon-fri");
  std::vector<int64_t> got;
  int64_t at = Utc(2025, 6, 13, 12);  // Friday noon
  for (int i = 0; i < 5; i++) got.push_back(at = q.NextAfter(at));
  std::vector<int64_t> want = {Utc(2025, 6, 13, 20, 0), Utc(2025, 6, 13, 20, 30),
                               Utc(2025, 6, 16, 8, 0), Utc(2025, 6, 16, 8, 30),
                               Utc(2025, 6, 16, 20, 0)};
  EXPECT_EQ(got, want);
}

TEST_F(CronScheduleTest, NextAfterCrossesMonthAndYearEnds) {
  CronSchedule s = MustParse("0 0 * * *");
  EXPECT_EQ(s.NextAfter(Utc(2025, 1, 31, 23, 59)), Utc(2025, 2, 1));
  EXPECT_EQ(s.NextAfter(Utc(2025, 12, 31, 12)), Utc(2026, 1, 1));
  EXPECT_EQ(MustParse("59 23 31 12 *").NextAfter(Utc(2025, 12, 31, 23, 59)),
            Utc(2026, 12, 31, 23, 59));
  EXPECT_EQ(MustParse("0 12 31 * *").NextAfter(Utc(2025, 4, 1)), Utc(2025, 5, 31, 12));
  EXPECT_EQ(MustParse("0 0 1 jan *").NextAfter(Utc(2025, 1, 1)), Utc(2026, 1, 1));
  EXPECT_EQ(MustParse("* * * * *").NextAfter(Utc(2025, 12, 31, 23, 59, 30)), Utc(2026, 1, 1));
  EXPECT_EQ(MustParse("0 0 1 */3 *").NextAfter(Utc(2025, 11, 5)), Utc(2026, 1, 1));
}

TEST_F(CronScheduleTest, NextAfterLeapYears) {
  CronSchedule feb29 = MustParse("0 0 29 2 *");
  EXPECT_EQ(feb29.NextAfter(Utc(2027, 3, 1)), Utc(2028, 2, 29));
  EXPECT_EQ(feb29.NextAfter(Utc(2024, 2, 28, 12)), Utc(2024, 2, 29));
  EXPECT_EQ(feb29.NextAfter(Utc(2024, 2, 29)), Utc(2028, 2, 29));
  // 2100 is not a leap year: the next Feb 29 after 2096 is 2104.
  EXPECT_EQ(feb29.NextAfter(Utc(2096, 3, 1)), Utc(2104, 2, 29));
  // 2000 is.
  EXPECT_EQ(feb29.NextAfter(Utc(1997, 1, 1)), Utc(2000, 2, 29));
  EXPECT_EQ(MustParse("0 0 28-31 2 *").NextAfter(Utc(2025, 2, 28)), Utc(2026, 2, 28));
}

TEST_F(CronScheduleTest, NeverMatchingReturnsMinusOne) {
  EXPECT_EQ(MustParse("0 0 30 2 *").NextAfter(Utc(2025, 1, 1)), -1);
  EXPECT_EQ(MustParse("0 0 31 4,6,9,11 *").NextAfter(Utc(2025, 1, 1)), -1);
  EXPECT_EQ(CronSchedule().NextAfter(Utc(2025, 1, 1)), -1);
  // Out-of-range inputs do not crash.
  EXPECT_EQ(MustParse("* * * * *").NextAfter(INT64_MAX), -1);
  EXPECT_EQ(MustParse("* * * * *").NextAfter(INT64_MIN), -1);
}

TEST_F(CronScheduleTest, DayOfMonthOrDayOfWeekRule) {
  // Both restricted: the 13th OR any Friday.
  CronSchedule both = MustParse("0 0 13 * fri");
  int64_t t = Utc(2025, 6, 1);  // a Sunday
  std::vector<int64_t> got;
  for (int i = 0; i < 4; i++) got.push_back(t = both.NextAfter(t));
  std::vector<int64_t> want = {Utc(2025, 6, 6), Utc(2025, 6, 13), Utc(2025, 6, 20),
                               Utc(2025, 6, 27)};
  EXPECT_EQ(got, want);
  EXPECT_EQ(both.NextAfter(Utc(2025, 7, 5)), Utc(2025, 7, 11));
  EXPECT_EQ(both.NextAfter(Utc(2025, 7, 11)), Utc(2025, 7, 13));  // Sunday the 13th

  // Only day-of-week restricted: Fridays only.
  CronSchedule dow = MustParse("0 0 * * fri");
  EXPECT_EQ(dow.NextAfter(Utc(2025, 6, 7)), Utc(2025, 6, 13));
  EXPECT_EQ(dow.NextAfter(Utc(2025, 6, 13)), Utc(2025, 6, 20));

  // Only day-of-month restricted: the 13th only.
  CronSchedule dom = MustParse("0 0 13 * *");
  EXPECT_EQ(dom.NextAfter(Utc(2025, 6, 1)), Utc(2025, 6, 13));

  // A field starting with '*' is unrestricted (Vixie): "*/2" AND Monday.
  CronSchedule step = MustParse("0 0 */2 * mon");
  EXPECT_EQ(step.NextAfter(Utc(2025, 6, 1)), Utc(2025, 6, 9));  // 2nd, 16th are even
  // A full explicit range is still "restricted", so OR with Monday matches every day.
  CronSchedule full = MustParse("0 0 1-31 * mon");
  EXPECT_EQ(full.NextAfter(Utc(2025, 6, 1)), Utc(2025, 6, 2));
  EXPECT_EQ(full.NextAfter(Utc(2025, 6, 3)), Utc(2025, 6, 4));

  // Under OR an impossible day-of-month does not stop the day-of-week from firing.
  EXPECT_EQ(MustParse("0 0 30 2 mon").NextAfter(Utc(2025, 1, 1)), Utc(2025, 2, 3));
}

TEST_F(CronScheduleTest, NextAfterIsFastForSparseSchedules) {
  CronSchedule s = MustParse("0 0 29 2 1");  // OR: Feb 29 or any Monday in February
  CronSchedule never = MustParse("0 0 30 2 *");
  int64_t t = Utc(2000, 1, 1);
  for (int i = 0; i < 2000; i++) {
    int64_t n = s.NextAfter(t);
    ASSERT_GT(n, t);
    t = n;
    ASSERT_EQ(never.NextAfter(t), -1);
  }
}

TEST_F(CronScheduleTest, ResultIsAlwaysAfterInputAndMatches) {
  CronSchedule s = MustParse("7,37 */5 1-10,20 jan,jun-aug sat,3");
  int64_t t = Utc(2024, 1, 1);
  for (int i = 0; i < 500; i++) {
    int64_t n = s.NextAfter(t);
    ASSERT_GT(n, t);
    time_t tt = static_cast<time_t>(n);
    struct tm tm;
    ASSERT_NE(gmtime_r(&tt, &tm), nullptr);
    EXPECT_EQ(tm.tm_sec, 0);
    EXPECT_TRUE(s.minutes() >> tm.tm_min & 1);
    EXPECT_TRUE(s.hours() >> tm.tm_hour & 1);
    EXPECT_TRUE(s.months() >> (tm.tm_mon + 1) & 1);
    EXPECT_TRUE((s.days_of_month() >> tm.tm_mday & 1) || (s.days_of_week() >> tm.tm_wday & 1));
    // Nothing matching was skipped: brute force the minutes in between.
    for (int64_t m = (t / 60 + 1) * 60; m < n; m += 60) {
      time_t mt = static_cast<time_t>(m);
      struct tm mm;
      gmtime_r(&mt, &mm);
      bool match = (s.minutes() >> mm.tm_min & 1) && (s.hours() >> mm.tm_hour & 1) &&
                   (s.months() >> (mm.tm_mon + 1) & 1) &&
                   ((s.days_of_month() >> mm.tm_mday & 1) || (s.days_of_week() >> mm.tm_wday & 1));
      ASSERT_FALSE(match) << m;
    }
    t = n;
  }
}

// Reference matchers in UTC, following the same Vixie day rule.
bool DayMatchesUtc(const CronSchedule& s, bool dom_star, bool dow_star, int64_t t) {
  time_t tt = static_cast<time_t>(t);
  struct tm tm;
  gmtime_r(&tt, &tm);
  if (!(s.months() >> (tm.tm_mon + 1) & 1)) return false;
  bool dom = s.days_of_month() >> tm.tm_mday & 1;
  bool dow = s.days_of_week() >> tm.tm_wday & 1;
  return (dom_star || dow_star) ? (dom && dow) : (dom || dow);
}

bool MatchesUtc(const CronSchedule& s, bool dom_star, bool dow_star, int64_t t) {
  time_t tt = static_cast<time_t>(t);
  struct tm tm;
  gmtime_r(&tt, &tm);
  return (s.minutes() >> tm.tm_min & 1) && (s.hours() >> tm.tm_hour & 1) &&
         DayMatchesUtc(s, dom_star, dow_star, t);
}

std::string RandomField(std::mt19937& rng, int lo, int hi) {
  auto pick = [&](int a, int b) { return std::uniform_int_distribution<int>(a, b)(rng); };
  std::string out;
  int n = pick(1, 3);
  for (int i = 0; i < n; i++) {
    if (i) out += ',';
    int a = pick(lo, hi);
    int b = pick(a, hi);
    switch (pick(0, 5)) {
      case 0:
        out += "*";
        break;
      case 1:
        out += std::to_string(a);
        break;
      case 2:
        out += std::to_string(a) + "-" + std::to_string(b);
        break;
      case 3:
        out += "*/" + std::to_string(pick(1, hi));
        break;
      case 4:
        out += std::to_string(a) + "-" + std::to_string(b) + "/" + std::to_string(pick(1, hi));
        break;
      case 5:
        out += std::to_string(a) + "/" + std::to_string(pick(1, hi));
        break;
    }
  }
  return out;
}

TEST_F(CronScheduleTest, RandomExpressionsAgreeWithBruteForce) {
  std::mt19937 rng(12345);
  for (int iter = 0; iter < 300; iter++) {
    std::string f[5] = {RandomField(rng, 0, 59), RandomField(rng, 0, 23), RandomField(rng, 1, 31),
                        RandomField(rng, 1, 12), RandomField(rng, 0, 7)};
    std::string expr = f[0] + " " + f[1] + " " + f[2] + " " + f[3] + " " + f[4];
    CronSchedule s = MustParse(expr);
    bool dom_star = f[2][0] == '*';
    bool dow_star = f[4][0] == '*';
    int64_t t = Utc(2023, 1, 1) + std::uniform_int_distribution<int>(0, 86400 * 365)(rng);
    for (int k = 0; k < 3; k++) {
      int64_t n = s.NextAfter(t);
      // Brute force: walk minutes, skipping whole days whose date cannot match.
      int64_t want = -1;
      for (int64_t m = (t / 60 + 1) * 60; m < Utc(2032, 1, 1);) {
        if (!DayMatchesUtc(s, dom_star, dow_star, m)) {
          m = m - m % 86400 + 86400;
        } else if (MatchesUtc(s, dom_star, dow_star, m)) {
          want = m;
          break;
        } else {
          m += 60;
        }
      }
      if (want < 0) {
        // Only impossible dates (e.g. 31 in 30-day months) can fail to match.
        EXPECT_EQ(n, -1) << expr;
        break;
      }
      ASSERT_EQ(n, want) << expr << " after " << t;
      t = n;
    }
  }
}

TEST_F(CronScheduleTest, RandomGarbageNeverCrashes) {
  std::mt19937 rng(777);
  const std::string alphabet = "0123456789*/-,@ \tjanmonsunDECx\xff\xc3";
  for (int iter = 0; iter < 20000; iter++) {
    std::string expr;
    int len = std::uniform_int_distribution<int>(0, 30)(rng);
    for (int i = 0; i < len; i++) {
      expr += alphabet[std::uniform_int_distribution<size_t>(0, alphabet.size() - 1)(rng)];
    }
    CronSchedule s;
    std::string error;
    if (CronSchedule::Parse(expr, &s, &error)) {
      int64_t t = Utc(2025, 1, 1);
      int64_t n = s.NextAfter(t);
      EXPECT_TRUE(n == -1 || n > t) << expr;
    } else {
      EXPECT_FALSE(error.empty()) << expr;
    }
  }
}

bool HaveZone(const char* name) {
  return access((std::string("/usr/share/zoneinfo/") + name).c_str(), R_OK) == 0;
}

TEST(CronScheduleLocalTimeTest, UsesLocalTimeZone) {
  if (!HaveZone("Europe/Berlin")) GTEST_SKIP() << "no Europe/Berlin zoneinfo";
  ScopedTz tz("Europe/Berlin");
  CronSchedule nine = MustParse("0 9 * * *");
  // Winter: CET = UTC+1, so 09:00 local is 08:00 UTC.
  EXPECT_EQ(nine.NextAfter(Utc(2025, 1, 15, 12)), Utc(2025, 1, 16, 8));
  // Summer: CEST = UTC+2.
  EXPECT_EQ(nine.NextAfter(Utc(2025, 7, 15, 12)), Utc(2025, 7, 16, 7));
  // Local midnight, not UTC midnight: 23:00 UTC on Dec 31 is already Jan 1 locally.
  EXPECT_EQ(MustParse("0 0 1 1 *").NextAfter(Utc(2025, 12, 31, 22, 30)), Utc(2025, 12, 31, 23));
  EXPECT_EQ(MustParse("30 0 1 1 *").NextAfter(Utc(2025, 12, 31, 22, 30)),
            Utc(2025, 12, 31, 23, 30));
  // Day of week is the local one: 22:00 UTC on Sunday is already Monday locally.
  EXPECT_EQ(MustParse("* * * * mon").NextAfter(Utc(2025, 6, 15, 21, 59)), Utc(2025, 6, 15, 22, 0));
}

TEST(CronScheduleLocalTimeTest, DaylightSavingTransitions) {
  if (!HaveZone("Europe/Berlin")) GTEST_SKIP() << "no Europe/Berlin zoneinfo";
  ScopedTz tz("Europe/Berlin");
  // 2025-03-30: 02:00 CET jumps to 03:00 CEST (01:00 UTC); 02:30 does not exist that day.
  CronSchedule gap = MustParse("30 2 * * *");
  EXPECT_EQ(gap.NextAfter(Utc(2025, 3, 29, 12)), Utc(2025, 3, 31, 0, 30));
  CronSchedule every = MustParse("* * * * *");
  EXPECT_EQ(every.NextAfter(Utc(2025, 3, 30, 0, 59)), Utc(2025, 3, 30, 1, 0));  // 03:00 CEST

  // 2025-10-26: 03:00 CEST falls back to 02:00 CET (01:00 UTC); 02:30 occurs twice.
  CronSchedule twice = MustParse("30 2 * * *");
  int64_t first = twice.NextAfter(Utc(2025, 10, 25, 12));
  EXPECT_EQ(first, Utc(2025, 10, 26, 0, 30));                   // 02:30 CEST
  EXPECT_EQ(twice.NextAfter(first), Utc(2025, 10, 27, 1, 30));  // once, then next day
  EXPECT_EQ(twice.NextAfter(Utc(2025, 10, 26, 1, 10)), Utc(2025, 10, 26, 1, 30));  // 2nd pass

  // Whatever the zone does, results strictly increase.
  int64_t t = Utc(2025, 10, 25, 23);
  for (int i = 0; i < 400; i++) {
    int64_t n = every.NextAfter(t);
    ASSERT_GT(n, t);
    ASSERT_EQ(n % 60, 0);
    t = n;
  }
  t = Utc(2025, 3, 29, 23);
  for (int i = 0; i < 400; i++) {
    int64_t n = every.NextAfter(t);
    ASSERT_GT(n, t);
    t = n;
  }
}

}  // namespace
}  // namespace strata
