// Cost of the 7-bit value packing against a plain copy, per value size.
#include <benchmark/benchmark.h>

#include <cstring>
#include <random>
#include <string>

#include "core/ascii7.h"

namespace strata {
namespace {

std::string Printable(size_t n) {
  std::mt19937 rng(1);
  std::string s(n, ' ');
  for (char& c : s) c = static_cast<char>(33 + rng() % 94);
  return s;
}

void BM_Copy(benchmark::State& state) {
  std::string s = Printable(static_cast<size_t>(state.range(0)));
  std::string out(s.size(), '\0');
  for (auto _ : state) {
    std::memcpy(out.data(), s.data(), s.size());
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(BM_Copy)->Arg(100)->Arg(1000)->Arg(65536);

void BM_Pack(benchmark::State& state) {
  std::string s = Printable(static_cast<size_t>(state.range(0)));
  std::string out(ascii7::PackedSize(s.size()), '\0');
  for (auto _ : state) {
    bool ok = ascii7::IsAscii(s);
    ascii7::Pack(s, out.data());
    benchmark::DoNotOptimize(ok);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(BM_Pack)->Arg(100)->Arg(1000)->Arg(65536);

void BM_Unpack(benchmark::State& state) {
  std::string s = Printable(static_cast<size_t>(state.range(0)));
  std::string packed(ascii7::PackedSize(s.size()), '\0');
  ascii7::Pack(s, packed.data());
  std::string out(s.size(), '\0');
  for (auto _ : state) {
    ascii7::Unpack(packed.data(), s.size(), out.data());
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(BM_Unpack)->Arg(100)->Arg(1000)->Arg(65536);

}  // namespace
}  // namespace strata

BENCHMARK_MAIN();
