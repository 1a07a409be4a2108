// LZF compression of the values DUMP and RDB writers meet: short random values (which
// do not compress, the common case for binary or hashed data), hex text (a few chance
// matches), and repetitive text. Run: build/bench/micro/lzf_bench
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "storage/lzf.h"

namespace {

std::vector<std::string> Values(size_t count, size_t len, int kind) {
  std::mt19937_64 rng(42);
  const char* hex = "0123456789abcdef";
  std::vector<std::string> out;
  for (size_t i = 0; i < count; i++) {
    std::string v(len, '\0');
    for (size_t j = 0; j < len; j++) {
      uint64_t r = rng();
      if (kind == 0) v[j] = static_cast<char>(33 + r % 94);     // printable, random
      if (kind == 1) v[j] = hex[r % 16];                        // hex digits
      if (kind == 2) v[j] = "user:session:"[(j + r % 2) % 13];  // repetitive
    }
    out.push_back(std::move(v));
  }
  return out;
}

void BM_Compress(benchmark::State& state) {
  auto values = Values(1024, static_cast<size_t>(state.range(0)), static_cast<int>(state.range(1)));
  std::string out;
  size_t i = 0, compressed = 0;
  for (auto _ : state) {
    const std::string& v = values[i++ & 1023];
    compressed += strata::lzf::Compress(v, v.size() - 5, &out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
  state.counters["compressed"] = static_cast<double>(compressed) / state.iterations();
}
// Args: value length, kind (0 random printable, 1 hex, 2 repetitive).
BENCHMARK(BM_Compress)
    ->Args({100, 0})
    ->Args({100, 1})
    ->Args({100, 2})
    ->Args({1024, 0})
    ->Args({1024, 2})
    ->Args({16384, 0});

}  // namespace

BENCHMARK_MAIN();
