// ClusterThread: one strata-bench worker thread under --cluster-mode: an epoll event loop
// over its --clients ClusterClients, each with one connection per cluster master, and its
// own RunStats with one NodeStats per node.
//
// Connection scheme (as memtier_benchmark's --cluster-mode): every thread opens --clients
// connections to EVERY master, so each (client, node) pair has its own pipeline of up to
// --pipeline requests; a master first named by a -MOVED reply or a slot map refresh gets
// its connections when a client first sends to it. Each thread keeps its own ClusterMap,
// built from the CLUSTER SLOTS reply main read at start (cluster_setup.h) and kept up to
// date by the redirects and refreshes this thread sees, so threads share nothing.
//
// The loop is BenchThread's (bench_thread.h): epoll_wait at most 50 ms, dispatch each
// ready socket to its link, every 100 ms check reply timeouts and publish progress; at the
// --test-time deadline or on *stop every client stops sending and drains. It ends when no
// client is live, so Run() always returns.
// Thread-safety: constructed and read by main; Run() on its own thread; progress() may be
// read by any thread at any time; stats() only after Run() returned.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tools/strata-bench/cluster_client.h"
#include "tools/strata-bench/cluster_context.h"
#include "tools/strata-bench/cluster_map.h"
#include "tools/strata-bench/options.h"
#include "tools/strata-bench/request_writer.h"
#include "tools/strata-bench/run_stats.h"

namespace strata::bench {

class ClusterThread {
 public:
  // Clients get the global indexes [first_client, first_client + options.clients).
  // slots: the CLUSTER SLOTS reply read at start (at most ClusterMap::kMaxNodes masters).
  ClusterThread(const Options& options, const std::vector<SlotRange>& slots, uint32_t first_client,
                uint64_t value_seed, const std::atomic<bool>* stop);
  ~ClusterThread();

  // start_ns: the run's common start (monotonic ns), for the --test-time deadline.
  void Run(uint64_t start_ns);

  const RunStats& stats() const { return stats_; }
  const ProgressCounters& progress() const { return progress_; }
  // When the last client finished (monotonic ns); valid after Run().
  uint64_t end_ns() const { return ctx_.last_finish_ns; }
  // Set when the thread could not start its loop (e.g. epoll_create failed).
  const std::string& setup_error() const { return setup_error_; }

 private:
  void Publish();

  const Options& options_;
  std::string value_;
  RequestWriter writer_;
  ClusterContext ctx_;
  const std::atomic<bool>* stop_;
  uint32_t first_client_;
  RunStats stats_;
  ProgressCounters progress_;
  std::string setup_error_;
  std::vector<std::unique_ptr<ClusterClient>> clients_;
};

}  // namespace strata::bench
