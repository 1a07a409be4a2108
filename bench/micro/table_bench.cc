// Micro-benchmarks of the core table (Google Benchmark): lookups, inserts with growth,
// overwrites and a full SCAN, over keys named as redis-benchmark names them.
//   build/bench/micro/table_bench --benchmark_min_time=1
#include <benchmark/benchmark.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "core/hash.h"
#include "core/keyspace.h"

namespace strata {
namespace {

std::vector<std::string> MakeKeys(size_t n) {
  std::vector<std::string> keys(n);
  char buf[32];
  for (size_t i = 0; i < n; i++) {
    std::snprintf(buf, sizeof(buf), "key:%012zu", i);
    keys[i] = buf;
  }
  return keys;
}

void Fill(Keyspace* ks, const std::vector<std::string>& keys, std::string_view value) {
  for (auto& k : keys) ks->SetString(0, k, value, Entry::kNoExpire);
}

void BM_Get(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  auto keys = MakeKeys(n);
  Keyspace ks(1);
  Fill(&ks, keys, std::string(100, 'v'));
  std::mt19937_64 rng(1);
  for (auto _ : state) {
    Entry* e = ks.Find(0, keys[rng() % n], 0);
    benchmark::DoNotOptimize(e);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Get)->Arg(100000)->Arg(1000000);

void BM_SetOverwrite(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  auto keys = MakeKeys(n);
  Keyspace ks(1);
  std::string value(100, 'v');
  Fill(&ks, keys, value);
  std::mt19937_64 rng(2);
  for (auto _ : state) ks.SetString(0, keys[rng() % n], value, Entry::kNoExpire);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SetOverwrite)->Arg(100000)->Arg(1000000);

void BM_InsertGrowing(benchmark::State& state) {
  auto keys = MakeKeys(1000000);
  std::string value(100, 'v');
  for (auto _ : state) {
    Keyspace ks(1);
    Fill(&ks, keys, value);
    benchmark::DoNotOptimize(ks.DbSize(0));
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(keys.size()));
}
BENCHMARK(BM_InsertGrowing)->Unit(benchmark::kMillisecond);

void BM_ScanAll(benchmark::State& state) {
  auto keys = MakeKeys(1000000);
  Keyspace ks(1);
  Fill(&ks, keys, "v");
  for (auto _ : state) {
    size_t seen = 0;
    uint64_t cursor = 0;
    do {
      cursor = ks.ScanBucket(0, cursor, 0, [&](Entry*) { seen++; });
    } while (cursor != 0);
    benchmark::DoNotOptimize(seen);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(keys.size()));
}
BENCHMARK(BM_ScanAll)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace strata

BENCHMARK_MAIN();
