#include "tools/strata-bench/run_stats.h"

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

void RunStats::Merge(const RunStats& other) {
  sets.Merge(other.sets);
  gets.Merge(other.gets);
  connection_errors += other.connection_errors;
  lost_requests += other.lost_requests;
  if (first_error_reply.empty()) first_error_reply = other.first_error_reply;
  if (first_connection_error.empty()) first_connection_error = other.first_connection_error;
}

}  // namespace strata::bench
