// strata-bench: a memtier_benchmark-compatible load generator for RESP servers.
//
// main parses the options, resolves the server address once, starts --threads
// BenchThreads (each an event loop over its own connections) and, while they run,
// prints a progress line to stderr every second (a carriage-return refresh on a
// terminal, one line per second otherwise). SIGINT/SIGTERM ask the threads to stop
// sending; they drain what is in flight and the report covers what was done. Then the
// threads' stats are merged and reported (text, optional JSON). With --cluster-mode it
// first reads the cluster's slots from the given node and checks every master
// (cluster_setup.h), then runs ClusterThreads instead of BenchThreads.
// Exit status: 0 success; 1 connection errors or error replies (the report still
// prints); 2 bad arguments.
#include <netdb.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <thread>
#include <vector>

#include "storage/mono_clock.h"
#include "tools/strata-bench/bench_thread.h"
#include "tools/strata-bench/cluster_setup.h"
#include "tools/strata-bench/cluster_thread.h"
#include "tools/strata-bench/options.h"
#include "tools/strata-bench/report.h"
#include "tools/strata-bench/run_stats.h"

namespace {

using strata::bench::BenchThread;
using strata::bench::ClusterThread;
using strata::bench::Options;

std::atomic<bool> g_stop{false};

// The first SIGINT/SIGTERM stops sending and lets the run drain and report; a second
// one ends the process at once.
void OnSignal(int sig) {
  if (g_stop.exchange(true, std::memory_order_relaxed)) {
    ::signal(sig, SIG_DFL);
    ::raise(sig);
  }
}

int64_t UnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool Resolve(const Options& o, sockaddr_storage* addr, socklen_t* len, std::string* error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const std::string port = std::to_string(o.port);
  const int rc = ::getaddrinfo(o.server.c_str(), port.c_str(), &hints, &res);
  if (rc != 0 || res == nullptr) {
    *error = "cannot resolve '" + o.server + "': " + ::gai_strerror(rc);
    return false;
  }
  std::memcpy(addr, res->ai_addr, res->ai_addrlen);
  *len = res->ai_addrlen;
  ::freeaddrinfo(res);
  return true;
}

void PrintConfig(const Options& o, std::ostream& err) {
  err << "server " << o.server << ":" << o.port << ", " << o.threads << " threads x " << o.clients
      << " clients, pipeline " << o.pipeline << ", ratio " << strata::bench::RatioText(o)
      << ", data size "
      << (o.data_size_min == o.data_size_max
              ? std::to_string(o.data_size)
              : std::to_string(o.data_size_min) + "-" + std::to_string(o.data_size_max) +
                    (o.data_size_sequential ? " (S)" : " (R)"))
      << ", keys " << o.key_prefix << "[" << o.keys.min << ".." << o.keys.max << "] pattern "
      << strata::bench::KeyPatternText(o);
  if (o.test_time > 0) {
    err << ", " << o.test_time << " s";
  } else if (o.all_keys) {
    err << ", allkeys";
  } else {
    err << ", " << o.requests << " requests per client";
  }
  if (o.expiry_max > 0) err << ", expiry " << o.expiry_min << "-" << o.expiry_max << " s";
  if (o.multi_key_get > 0) err << ", MGET of " << o.multi_key_get;
  if (o.multi_key_set > 0) err << ", MSET of " << o.multi_key_set;
  if (o.rate_limiting > 0) err << ", " << o.rate_limiting << " requests/s per client";
  err << ", seed " << o.seed << (o.distinct_client_seed ? " (distinct per client)" : "");
  if (o.cluster_mode) err << ", cluster mode";
  err << "\n";
}

struct RunResult {
  strata::bench::RunStats total;
  strata::bench::RunTimes times;
};

// Launches the threads (BenchThread or ClusterThread), prints progress to stderr once a
// second until all are done, joins them and merges their stats.
template <typename Thread>
RunResult Drive(const Options& o, std::vector<std::unique_ptr<Thread>>& threads) {
  std::cerr << "[RUN #1] Launching threads now...\n";
  const int64_t start_unix_ms = UnixMs();
  const uint64_t start_ns = static_cast<uint64_t>(strata::MonoNs());
  std::vector<std::thread> running;
  running.reserve(threads.size());
  for (auto& t : threads) running.emplace_back([&t, start_ns] { t->Run(start_ns); });

  // Progress, once a second, until every thread is done.
  const bool tty = ::isatty(STDERR_FILENO) == 1;
  const double total_requests =
      o.test_time > 0 || o.all_keys ? 0 : static_cast<double>(o.requests * o.total_clients());
  uint64_t last_ops = 0, last_bytes = 0, last_lat = 0;
  uint64_t last_ns = start_ns;
  uint64_t next_print = start_ns + 1'000'000'000;
  bool printed = false;
  for (;;) {
    uint32_t active = 0;
    for (auto& t : threads) {
      if (!t->progress().finished.load(std::memory_order_acquire)) ++active;
    }
    if (active == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const uint64_t now = static_cast<uint64_t>(strata::MonoNs());
    if (now < next_print) continue;
    next_print += 1'000'000'000;
    uint64_t ops = 0, bytes = 0, lat = 0;
    for (auto& t : threads) {
      ops += t->progress().ops.load(std::memory_order_relaxed);
      bytes += t->progress().bytes.load(std::memory_order_relaxed);
      lat += t->progress().latency_us_sum.load(std::memory_order_relaxed);
    }
    strata::bench::ProgressSample p;
    p.elapsed_s = static_cast<double>(now - start_ns) / 1e9;
    const double dt = static_cast<double>(now - last_ns) / 1e9;
    p.percent = o.test_time > 0      ? std::min(100.0, 100.0 * p.elapsed_s / o.test_time)
                : total_requests > 0 ? 100.0 * static_cast<double>(ops) / total_requests
                                     : 0;
    p.active_threads = active;
    p.ops = ops;
    p.ops_per_sec_now = dt > 0 ? static_cast<double>(ops - last_ops) / dt : 0;
    p.ops_per_sec_avg = p.elapsed_s > 0 ? static_cast<double>(ops) / p.elapsed_s : 0;
    p.bytes_per_sec_now = dt > 0 ? static_cast<double>(bytes - last_bytes) / dt : 0;
    p.bytes_per_sec_avg = p.elapsed_s > 0 ? static_cast<double>(bytes) / p.elapsed_s : 0;
    p.latency_ms_now = ops > last_ops ? static_cast<double>(lat - last_lat) /
                                            static_cast<double>(ops - last_ops) / 1000.0
                                      : 0;
    p.latency_ms_avg = ops > 0 ? static_cast<double>(lat) / static_cast<double>(ops) / 1000.0 : 0;
    std::cerr << (tty ? "\r" : "") << strata::bench::FormatProgress(p) << (tty ? "" : "\n")
              << std::flush;
    printed = true;
    last_ops = ops;
    last_bytes = bytes;
    last_lat = lat;
    last_ns = now;
  }
  for (auto& r : running) r.join();
  if (printed && tty) std::cerr << "\n";

  RunResult result;
  uint64_t end_ns = start_ns;
  for (auto& t : threads) {
    result.total.Merge(t->stats());
    end_ns = std::max(end_ns, t->end_ns());
  }
  result.times.seconds = static_cast<double>(end_ns - start_ns) / 1e9;
  result.times.start_unix_ms = start_unix_ms;
  result.times.end_unix_ms = start_unix_ms + static_cast<int64_t>(result.times.seconds * 1000.0);
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  const strata::bench::ParseOutcome parsed =
      strata::bench::ParseOptions(argc, argv, &o, std::cout, std::cerr);
  if (!parsed.run) return parsed.exit_code;
  if (o.randomize)
    o.seed = static_cast<uint64_t>(strata::MonoNs()) ^ static_cast<uint64_t>(UnixMs());

  sockaddr_storage addr{};
  socklen_t addr_len = 0;
  std::string error;
  if (!Resolve(o, &addr, &addr_len, &error)) {
    std::cerr << "strata-bench: " << error << "\n";
    return 1;
  }
  std::vector<strata::bench::SlotRange> cluster_slots;
  if (o.cluster_mode) {
    std::string warning;
    if (!strata::bench::DiscoverCluster(o, &cluster_slots, &warning, &error)) {
      std::cerr << "strata-bench: " << error << "\n";
      return 1;
    }
    if (!warning.empty()) std::cerr << "strata-bench: warning: " << warning << "\n";
  }
  std::ofstream out_file;
  if (!o.out_file.empty()) {
    out_file.open(o.out_file);
    if (!out_file) {
      std::cerr << "strata-bench: cannot write " << o.out_file << ": " << std::strerror(errno)
                << "\n";
      return 1;
    }
  }
  std::ostream& out = o.out_file.empty() ? std::cout : out_file;
  if (o.show_config) PrintConfig(o, std::cerr);

  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::signal(SIGPIPE, SIG_IGN);

  std::cerr << "Writing results to " << (o.out_file.empty() ? "stdout" : o.out_file) << "\n";
  std::cerr << "[RUN #1] Preparing benchmark client...\n";
  const std::string server_name = o.server + ":" + std::to_string(o.port);
  RunResult result;
  if (o.cluster_mode) {
    std::vector<std::unique_ptr<ClusterThread>> threads;
    for (uint32_t i = 0; i < o.threads; ++i) {
      threads.push_back(
          std::make_unique<ClusterThread>(o, cluster_slots, i * o.clients, o.seed + i, &g_stop));
    }
    result = Drive(o, threads);
  } else {
    std::vector<std::unique_ptr<BenchThread>> threads;
    for (uint32_t i = 0; i < o.threads; ++i) {
      threads.push_back(std::make_unique<BenchThread>(o, reinterpret_cast<const sockaddr*>(&addr),
                                                      addr_len, server_name, i * o.clients,
                                                      o.seed + i, &g_stop));
    }
    result = Drive(o, threads);
  }
  const strata::bench::RunStats& total = result.total;
  const strata::bench::RunTimes& times = result.times;

  out << "\n";
  strata::bench::WriteTextReport(o, total, times, out);
  out.flush();
  int rc = 0;
  if (!o.json_out_file.empty()) {
    std::ofstream json(o.json_out_file);
    if (json) strata::bench::WriteJsonReport(o, total, times, json);
    json.close();
    if (!json) {
      std::cerr << "strata-bench: cannot write " << o.json_out_file << ": " << std::strerror(errno)
                << "\n";
      rc = 1;
    }
  }
  if (total.connection_errors > 0) {
    std::cerr << "strata-bench: " << total.connection_errors << " connection errors ("
              << total.first_connection_error << ")\n";
    rc = 1;
  }
  if (total.error_replies() > 0) {
    std::cerr << "strata-bench: " << total.error_replies()
              << " error replies (first: " << total.first_error_reply << ")\n";
    rc = 1;
  }
  if (g_stop.load()) std::cerr << "strata-bench: interrupted; the report covers the run so far\n";
  return rc;
}
