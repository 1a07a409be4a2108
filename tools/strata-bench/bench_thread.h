// BenchThread: one strata-bench worker thread: an epoll event loop over its --clients
// connections, with its own RunStats.
//
// Run() connects every client, then loops: epoll_wait (at most 50 ms, so stop requests
// and deadlines are seen promptly), dispatch each ready socket to its Connection, and
// every 100 ms check reply timeouts and publish progress. At the --test-time deadline, or
// when *stop is set (SIGINT), every connection stops sending and drains what is in flight.
// The loop ends when no connection is live; a server that stops answering is cut off by
// the reply timeout, so Run() always returns.
// Thread-safety: constructed and read by main; Run() on its own thread; progress() may be
// read by any thread at any time; stats() only after Run() returned.
#pragma once

#include <sys/socket.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tools/strata-bench/connection.h"
#include "tools/strata-bench/options.h"
#include "tools/strata-bench/request_writer.h"
#include "tools/strata-bench/run_stats.h"

namespace strata::bench {

class BenchThread {
 public:
  // Clients get the global indexes [first_client, first_client + options.clients).
  BenchThread(const Options& options, const sockaddr* addr, socklen_t addr_len,
              std::string server_name, uint32_t first_client, uint64_t value_seed,
              const std::atomic<bool>* stop);
  ~BenchThread();

  // start_ns: the run's common start (monotonic ns), for the --test-time deadline.
  void Run(uint64_t start_ns);

  const RunStats& stats() const { return stats_; }
  const ProgressCounters& progress() const { return progress_; }
  // When the last connection finished (monotonic ns); valid after Run().
  uint64_t end_ns() const { return last_finish_ns_; }
  // Set when the thread could not start its loop (e.g. epoll_create failed).
  const std::string& setup_error() const { return setup_error_; }

 private:
  void Publish();

  const Options& options_;
  std::string value_;
  RequestWriter writer_;
  ConnectionContext ctx_;
  const std::atomic<bool>* stop_;
  uint32_t first_client_;
  RunStats stats_;
  ProgressCounters progress_;
  uint32_t live_ = 0;
  uint64_t last_finish_ns_ = 0;
  std::string setup_error_;
  std::vector<std::unique_ptr<Connection>> connections_;
};

// The value every SET writes: data_size bytes of a fixed repeating pattern, or random
// printable characters drawn from `seed` when random.
std::string MakeValue(uint32_t data_size, bool random, uint64_t seed);

}  // namespace strata::bench
