// The spill store's random-read cost against the disk's own: one store of `records`
// 1 KB values (storage/cold_store.h, as the server opens it: LZ4, a 20 MB cache), read
// at random
//   - by MultiGet in batches of 16, as a shard's I/O thread reads, with the blocks put in
//     the cache or not (BM_ColdMultiGet/1, /0);
//   - by the worker's cache probe, which never waits for the disk (BM_ColdProbe);
// and the files under it read at random with pread(2) in 4 KB blocks, the floor any
// store on this disk pays per read (BM_RawPread4k: fio's randread, one job, queue depth
// one; with the store in the page cache, as on a machine with RAM to spare, it measures
// the page cache).
//   build/bench/micro/cold_read_bench --benchmark_min_time=2 [--records=N] [--dir=PATH]
// The store is written once per run into --dir (default: a directory under /tmp).
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "storage/cold_store.h"

namespace strata {
namespace {

size_t g_records = 500000;
std::string g_dir;
std::unique_ptr<ColdCache> g_cache;
std::unique_ptr<ColdStore> g_store;

void OpenStore() {
  if (g_store != nullptr) return;
  std::filesystem::remove_all(g_dir);
  g_cache = std::make_unique<ColdCache>(20 << 20);
  ColdStoreOptions o;
  o.dir = g_dir;
  if (!ColdStore::Open(o, g_cache.get(), &g_store).ok()) {
    std::fprintf(stderr, "cannot open %s\n", g_dir.c_str());
    std::exit(1);
  }
  std::mt19937_64 rng(1);
  std::string value(1024, ' ');
  for (size_t i = 0; i < g_records; i += 512) {
    std::vector<ColdWrite> batch;
    for (size_t j = i; j < std::min(g_records, i + 512); j++) {
      for (size_t k = 0; k < value.size(); k += 8) {
        uint64_t r = rng();
        std::memcpy(value.data() + k, &r, 8);
      }
      batch.push_back(ColdWrite{j + 1, false, value, 0});
    }
    if (!g_store->Write(batch).ok()) std::exit(1);
  }
  if (!g_store->FlushMemtables().ok()) std::exit(1);
}

void BM_ColdMultiGet(benchmark::State& state) {
  OpenStore();
  std::mt19937_64 rng(2);
  std::vector<uint64_t> seqs(16);
  std::vector<std::optional<std::string>> out;
  for (auto _ : state) {
    for (uint64_t& s : seqs) s = rng() % g_records + 1;
    if (!g_store->MultiGet(seqs, &out, state.range(0) != 0).ok()) {
      state.SkipWithError("read failed");
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * 16);
}
BENCHMARK(BM_ColdMultiGet)->Arg(1)->Arg(0)->UseRealTime();

void BM_ColdProbe(benchmark::State& state) {
  OpenStore();
  std::mt19937_64 rng(3);
  std::string v;
  for (auto _ : state) {
    benchmark::DoNotOptimize(g_store->TryGetCached(rng() % g_records + 1, &v));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ColdProbe)->UseRealTime();

void BM_RawPread4k(benchmark::State& state) {
  OpenStore();
  std::vector<std::pair<int, off_t>> files;
  for (const auto& f : std::filesystem::directory_iterator(g_dir)) {
    if (f.path().extension() != ".sst") continue;
    int fd = open(f.path().c_str(), O_RDONLY);
    off_t size = static_cast<off_t>(f.file_size());
    if (fd >= 0 && size >= 4096) files.emplace_back(fd, size);
  }
  if (files.empty()) {
    state.SkipWithError("no table files");
    return;
  }
  std::mt19937_64 rng(4);
  char buf[4096];
  for (auto _ : state) {
    auto& [fd, size] = files[rng() % files.size()];
    off_t at = static_cast<off_t>(rng() % static_cast<uint64_t>(size / 4096)) * 4096;
    benchmark::DoNotOptimize(pread(fd, buf, sizeof(buf), at));
  }
  for (auto& [fd, size] : files) close(fd);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RawPread4k)->UseRealTime();

}  // namespace
}  // namespace strata

int main(int argc, char** argv) {
  strata::g_dir = "/tmp/strata-cold-read-bench-" + std::to_string(getpid());
  std::vector<char*> rest;
  for (int i = 0; i < argc; i++) {
    std::string a = argv[i];
    if (a.rfind("--records=", 0) == 0) {
      strata::g_records = std::stoull(a.substr(10));
    } else if (a.rfind("--dir=", 0) == 0) {
      strata::g_dir = a.substr(6);
    } else {
      rest.push_back(argv[i]);
    }
  }
  int n = static_cast<int>(rest.size());
  benchmark::Initialize(&n, rest.data());
  benchmark::RunSpecifiedBenchmarks();
  strata::g_store.reset();
  std::filesystem::remove_all(strata::g_dir);
  return 0;
}
