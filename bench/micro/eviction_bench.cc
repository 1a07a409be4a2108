// Micro-benchmark of choosing and deleting one key (core/eviction.h) per policy, in a
// keyspace kept at a steady size (each evicted key is written back), so the figure is
// the eviction a write pays for when the process is over maxmemory.
//   build/bench/micro/eviction_bench --benchmark_min_time=1
#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>
#include <vector>

#include "core/eviction.h"
#include "core/keyspace.h"

namespace strata {
namespace {

void BM_EvictOne(benchmark::State& state) {
  auto policy = static_cast<EvictionPolicy>(state.range(0));
  const size_t n = static_cast<size_t>(state.range(1));
  Keyspace ks(1);
  access::Mode mode = AccessModeFor(policy);
  ks.SetAccessClock(access::Clock::At(1'000'000, mode, 10, 1));
  std::string value(100, 'v');
  char buf[32];
  bool vol = IsVolatilePolicy(policy);
  for (size_t i = 0; i < n; i++) {
    std::snprintf(buf, sizeof(buf), "key:%012zu", i);
    ks.SetString(0, buf, value, vol ? static_cast<int64_t>(5'000'000 + i) : Entry::kNoExpire);
  }
  Evictor ev;
  size_t freed = 0;
  size_t next = n;
  int64_t now = 1'000'000;
  for (auto _ : state) {
    Evictor::Result r = ev.EvictOne(ks, policy, 5, now, &freed);
    if (r != Evictor::Result::kEvicted) state.SkipWithError("nothing evicted");
    state.PauseTiming();
    std::snprintf(buf, sizeof(buf), "key:%012zu", next++);
    ks.SetString(0, buf, value, vol ? static_cast<int64_t>(5'000'000 + next) : Entry::kNoExpire);
    state.ResumeTiming();
  }
  state.SetLabel(EvictionPolicyName(policy));
}
BENCHMARK(BM_EvictOne)
    ->ArgsProduct({{static_cast<int64_t>(EvictionPolicy::kAllKeysLru),
                    static_cast<int64_t>(EvictionPolicy::kAllKeysLfu),
                    static_cast<int64_t>(EvictionPolicy::kAllKeysRandom),
                    static_cast<int64_t>(EvictionPolicy::kVolatileLru),
                    static_cast<int64_t>(EvictionPolicy::kVolatileTtl)},
                   {100000, 1000000}});

}  // namespace
}  // namespace strata

BENCHMARK_MAIN();
