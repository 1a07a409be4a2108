// RunStats: what one strata-bench thread measured, and the merge of all threads.
//
// Each thread owns a RunStats and updates it with plain (non-atomic) increments; after
// the threads are joined, main merges them. While the run goes on, each thread also
// publishes a few running totals in its ProgressCounters (single writer, relaxed atomics)
// for main's once-a-second progress line. With --cluster-mode a RunStats also has one
// NodeStats per cluster node (empty otherwise); threads may list the nodes in different
// orders, so Merge matches them by name.
// Thread-safety: RunStats none (one owner); ProgressCounters one writer, any readers.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "tools/strata-bench/latency_histogram.h"

namespace strata::bench {

// One request type (SET/MSET or GET/MGET).
struct TypeStats {
  uint64_t ops = 0;     // requests answered with a reply that is not an error
  uint64_t hits = 0;    // keys found (GET: a bulk string; MGET: each non-nil element)
  uint64_t misses = 0;  // keys not found (nil)
  uint64_t errors = 0;  // error replies
  uint64_t bytes_tx = 0;
  uint64_t bytes_rx = 0;
  LatencyHistogram latency;  // microseconds, per answered request (errors included)

  void Merge(const TypeStats& other);
};

// One cluster node's share of a --cluster-mode run. A request counts at the node that
// gave its final reply; its latency runs from its first send, across redirects.
struct NodeStats {
  std::string name;          // "host:port", as CLUSTER SLOTS or a redirect named it
  uint64_t ops = 0;          // answered with a reply that is not an error
  uint64_t errors = 0;       // error replies (redirects excepted)
  uint64_t moved = 0;        // -MOVED replies this node sent
  uint64_t ask = 0;          // -ASK replies this node sent
  LatencyHistogram latency;  // microseconds, per answered request (errors included)

  void Merge(const NodeStats& other);
};

struct RunStats {
  TypeStats sets;
  TypeStats gets;
  uint64_t connection_errors = 0;  // connections refused, closed, timed out or garbled
  uint64_t lost_requests = 0;      // requests in flight on a connection that failed
  std::string first_error_reply;   // text of the first error reply
  std::string first_connection_error;
  // --cluster-mode only.
  std::vector<NodeStats> nodes;
  uint64_t slot_map_refreshes = 0;         // CLUSTER SLOTS replies applied after a -MOVED
  uint64_t slot_map_refresh_failures = 0;  // CLUSTER SLOTS replies that were errors or unusable

  uint64_t ops() const { return sets.ops + gets.ops; }
  uint64_t error_replies() const { return sets.errors + gets.errors; }
  uint64_t moved() const;
  uint64_t ask() const;
  void Merge(const RunStats& other);
};

struct alignas(64) ProgressCounters {
  std::atomic<uint64_t> ops{0};
  std::atomic<uint64_t> bytes{0};
  std::atomic<uint64_t> latency_us_sum{0};
  std::atomic<uint32_t> active_clients{0};
  std::atomic<bool> finished{false};
};

}  // namespace strata::bench
