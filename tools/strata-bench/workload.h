// Workload shape for `strata-bench`, following memtier_benchmark's options: which key each
// request uses (--key-pattern, --key-minimum/--key-maximum, --key-prefix), the SET:GET mix
// (--ratio) and the TTL of each SET (--expiry-range).
//
// Pure logic: parsers return false with a one-line message naming the bad value, and
// nothing throws. Generators are deterministic for a given seed, so a run can be
// reproduced. Thread-safety: value types; each client owns its generators.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace strata::bench {

// A small fast PRNG (splitmix64). Not for cryptography.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}

  uint64_t Next();
  // Uniform in [0, n); n == 0 means the full 64-bit range.
  uint64_t Uniform(uint64_t n);
  // Uniform in [0, 1).
  double NextDouble();

 private:
  uint64_t state_;
};

// Inclusive key-index range; memtier's defaults are --key-minimum 0, --key-maximum 10000000.
struct KeyRange {
  uint64_t min = 0;
  uint64_t max = 10000000;
};

enum class KeyPattern {
  kRandom,      // R: uniform over the range
  kSequential,  // S: min, min+1, ..., max, min, ...
  kGaussian,    // G: normal around a median, clamped to the range
  kParallel,    // P: each client walks its own contiguous slice sequentially
};

// Parses memtier's --key-pattern "<set>:<get>", each one of R, S, G, P (e.g. "R:R", "S:R").
bool ParseKeyPattern(std::string_view spec, KeyPattern* set, KeyPattern* get, std::string* error);

class KeyGenerator {
 public:
  // client_index in [0, client_count) picks the slice for kParallel. The seed is used as
  // given: clients given the same seed draw the same stream (memtier's default; see
  // ClientSeed for --distinct-client-seed). For kGaussian a stddev
  // of 0 picks (max - min) / 6 and a median of 0 picks the middle of the range.
  // A range with max < min is treated as the single key min.
  KeyGenerator(KeyPattern pattern, KeyRange range, uint32_t client_index, uint32_t client_count,
               uint64_t seed, double gaussian_stddev = 0, double gaussian_median = 0);

  uint64_t Next();

  // The range this generator walks: the client's slice for kParallel, else the whole range.
  uint64_t lo() const { return lo_; }
  uint64_t hi() const { return hi_; }

 private:
  KeyPattern pattern_;
  uint64_t lo_;
  uint64_t hi_;
  uint64_t next_;  // kSequential / kParallel cursor
  Rng rng_;
  double stddev_;
  double median_;
};

// The seed of client `client_index` under --distinct-client-seed: distinct per client,
// deterministic for a given base seed.
uint64_t ClientSeed(uint64_t base, uint32_t client_index);

// Parses memtier's --ratio "<sets>:<gets>" (e.g. "1:10"). Both are unsigned 32-bit
// decimals; 0:0, signs, spaces and junk are rejected.
bool ParseRatio(std::string_view spec, uint32_t* sets, uint32_t* gets, std::string* error);

// Yields `sets` SETs then `gets` GETs per cycle, repeating, so over whole cycles the
// counts are exact. With both 0 every request is a GET.
class RatioScheduler {
 public:
  RatioScheduler(uint32_t sets, uint32_t gets) : sets_(sets), cycle_(uint64_t{sets} + gets) {}

  bool NextIsSet();

 private:
  uint64_t sets_;
  uint64_t cycle_;
  uint64_t pos_ = 0;
};

// Parses memtier's --expiry-range "<min>-<max>" in seconds (e.g. "10-20"; "0-0" means no
// expiry). Requires min <= max.
bool ParseExpiryRange(std::string_view spec, uint32_t* lo, uint32_t* hi, std::string* error);

// A TTL in seconds, uniform in [lo, hi] (lo when hi < lo).
uint32_t RandomTtl(uint32_t lo, uint32_t hi, Rng* rng);

// Appends prefix + decimal index to *out (memtier's default prefix is "memtier-").
// Allocates only if *out lacks the capacity.
void FormatKey(std::string_view prefix, uint64_t index, std::string* out);

}  // namespace strata::bench
