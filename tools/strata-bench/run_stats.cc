#include "tools/strata-bench/run_stats.h"

#include <algorithm>

namespace strata::bench {

void TypeStats::Merge(const TypeStats& other) {
  ops += other.ops;
  hits += other.hits;
  misses += other.misses;
  errors += other.errors;
  bytes_tx += other.bytes_tx;
  bytes_rx += other.bytes_rx;
  latency.Merge(other.latency);
}

void NodeStats::Merge(const NodeStats& other) {
  ops += other.ops;
  errors += other.errors;
  moved += other.moved;
  ask += other.ask;
  latency.Merge(other.latency);
}

uint64_t RunStats::moved() const {
  uint64_t n = 0;
  for (const NodeStats& node : nodes) n += node.moved;
  return n;
}

uint64_t RunStats::ask() const {
  uint64_t n = 0;
  for (const NodeStats& node : nodes) n += node.ask;
  return n;
}

void RunStats::Merge(const RunStats& other) {
  sets.Merge(other.sets);
  gets.Merge(other.gets);
  connection_errors += other.connection_errors;
  lost_requests += other.lost_requests;
  slot_map_refreshes += other.slot_map_refreshes;
  slot_map_refresh_failures += other.slot_map_refresh_failures;
  for (const NodeStats& node : other.nodes) {
    auto it = std::find_if(nodes.begin(), nodes.end(),
                           [&](const NodeStats& n) { return n.name == node.name; });
    if (it == nodes.end()) {
      nodes.push_back(node);
    } else {
      it->Merge(node);
    }
  }
  if (first_error_reply.empty()) first_error_reply = other.first_error_reply;
  if (first_connection_error.empty()) first_connection_error = other.first_connection_error;
}

}  // namespace strata::bench
