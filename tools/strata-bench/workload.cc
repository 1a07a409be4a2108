#include "tools/strata-bench/workload.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <numbers>

namespace strata::bench {
namespace {

bool PatternFromChar(char c, KeyPattern* out) {
  switch (c) {
    case 'R':
      *out = KeyPattern::kRandom;
      return true;
    case 'S':
      *out = KeyPattern::kSequential;
      return true;
    case 'G':
      *out = KeyPattern::kGaussian;
      return true;
    case 'P':
      *out = KeyPattern::kParallel;
      return true;
    default:
      return false;
  }
}

// Parses the whole of s as an unsigned 32-bit decimal (digits only).
bool ParseU32(std::string_view s, uint32_t* out) {
  if (s.empty() || s.front() < '0' || s.front() > '9') return false;
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, *out);
  return ec == std::errc() && ptr == end;
}

// Splits spec at the first `sep` into two unsigned 32-bit decimals.
bool ParsePair(std::string_view spec, char sep, uint32_t* a, uint32_t* b) {
  const size_t at = spec.find(sep);
  if (at == std::string_view::npos) return false;
  return ParseU32(spec.substr(0, at), a) && ParseU32(spec.substr(at + 1), b);
}

}  // namespace

uint64_t Rng::Next() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t Rng::Uniform(uint64_t n) {
  if (n == 0) return Next();
  // Lemire's multiply-shift: bias at most n / 2^64, negligible for key ranges.
  return static_cast<uint64_t>((static_cast<unsigned __int128>(Next()) * n) >> 64);
}

double Rng::NextDouble() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

bool ParseKeyPattern(std::string_view spec, KeyPattern* set, KeyPattern* get, std::string* error) {
  if (spec.size() != 3 || spec[1] != ':' || !PatternFromChar(spec[0], set) ||
      !PatternFromChar(spec[2], get)) {
    *error = "invalid key pattern '" + std::string(spec) +
             "': expected <set>:<get>, each one of R, S, G, P (e.g. R:R)";
    return false;
  }
  return true;
}

KeyGenerator::KeyGenerator(KeyPattern pattern, KeyRange range, uint32_t client_index,
                           uint32_t client_count, uint64_t seed, double gaussian_stddev,
                           double gaussian_median)
    : pattern_(pattern), lo_(range.min), hi_(std::max(range.min, range.max)), rng_(seed) {
  if (pattern_ == KeyPattern::kParallel && client_count > 1) {
    const unsigned __int128 n = static_cast<unsigned __int128>(hi_ - lo_) + 1;
    const uint32_t i = client_index % client_count;
    if (n < client_count) {
      // Fewer keys than clients: slices of one key, shared round-robin.
      lo_ = hi_ = range.min + static_cast<uint64_t>(i % n);
    } else {
      const uint64_t start = range.min + static_cast<uint64_t>(n * i / client_count);
      const uint64_t end = range.min + static_cast<uint64_t>(n * (i + 1) / client_count - 1);
      lo_ = start;
      hi_ = end;
    }
  }
  next_ = lo_;
  const double width = static_cast<double>(hi_ - lo_);
  stddev_ = gaussian_stddev > 0 ? gaussian_stddev : width / 6;
  median_ = gaussian_median > 0 ? gaussian_median : static_cast<double>(lo_) + width / 2;
}

uint64_t KeyGenerator::Next() {
  switch (pattern_) {
    case KeyPattern::kRandom:
      return lo_ + rng_.Uniform(hi_ - lo_ + 1);  // full range wraps to 0: Next()
    case KeyPattern::kGaussian: {
      // Box-Muller; 1 - u keeps the log argument in (0, 1].
      const double u1 = 1.0 - rng_.NextDouble();
      const double u2 = rng_.NextDouble();
      const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
      const double v = std::round(median_ + z * stddev_);
      if (!(v > static_cast<double>(lo_))) return lo_;
      if (v >= static_cast<double>(hi_)) return hi_;
      return static_cast<uint64_t>(v);
    }
    case KeyPattern::kSequential:
    case KeyPattern::kParallel:
    default: {
      const uint64_t k = next_;
      next_ = k == hi_ ? lo_ : k + 1;
      return k;
    }
  }
}

uint64_t ClientSeed(uint64_t base, uint32_t client_index) {
  Rng mix(base ^ (0xd1b54a32d192ed03ULL * (uint64_t{client_index} + 1)));
  return mix.Next();
}

bool ParseRatio(std::string_view spec, uint32_t* sets, uint32_t* gets, std::string* error) {
  uint32_t s = 0, g = 0;
  if (!ParsePair(spec, ':', &s, &g)) {
    *error = "invalid ratio '" + std::string(spec) +
             "': expected <sets>:<gets>, two non-negative integers below 2^32 (e.g. 1:10)";
    return false;
  }
  if (s == 0 && g == 0) {
    *error = "invalid ratio '" + std::string(spec) + "': sets and gets cannot both be 0";
    return false;
  }
  *sets = s;
  *gets = g;
  return true;
}

bool RatioScheduler::NextIsSet() {
  if (cycle_ == 0) return false;
  const bool is_set = pos_ < sets_;
  pos_ = pos_ + 1 == cycle_ ? 0 : pos_ + 1;
  return is_set;
}

bool ParseExpiryRange(std::string_view spec, uint32_t* lo, uint32_t* hi, std::string* error) {
  uint32_t a = 0, b = 0;
  if (!ParsePair(spec, '-', &a, &b)) {
    *error = "invalid expiry range '" + std::string(spec) +
             "': expected <min>-<max> in seconds, non-negative integers (e.g. 10-20)";
    return false;
  }
  if (a > b) {
    *error = "invalid expiry range '" + std::string(spec) + "': min " + std::to_string(a) +
             " is greater than max " + std::to_string(b);
    return false;
  }
  *lo = a;
  *hi = b;
  return true;
}

uint32_t RandomTtl(uint32_t lo, uint32_t hi, Rng* rng) {
  if (hi <= lo) return lo;
  return lo + static_cast<uint32_t>(rng->Uniform(uint64_t{hi} - lo + 1));
}

void FormatKey(std::string_view prefix, uint64_t index, std::string* out) {
  char digits[std::numeric_limits<uint64_t>::digits10 + 1];
  const auto [end, ec] = std::to_chars(digits, digits + sizeof(digits), index);
  out->append(prefix);
  out->append(digits, end);
}

}  // namespace strata::bench
