// Cluster setup: what main does before a --cluster-mode run. DiscoverCluster asks the
// node named by --server/--port for CLUSTER SLOTS, then checks that every master the reply
// names accepts a connection and answers PING (after AUTH with -a), so a node that cannot
// be reached stops the run before it starts, with a message naming the node.
// Blocking; every connect, send and receive waits at most --reply-timeout seconds.
// Thread-safety: call from main only.
#pragma once

#include <string>
#include <vector>

#include "tools/strata-bench/cluster_map.h"
#include "tools/strata-bench/options.h"

namespace strata::bench {

// Fills *slots with the reply's ranges; false with a one-line *error naming the node when
// CLUSTER SLOTS fails, lists no slots or more than ClusterMap::kMaxNodes masters, or a
// master does not answer. *warning says when some slots have no master.
bool DiscoverCluster(const Options& o, std::vector<SlotRange>* slots, std::string* warning,
                     std::string* error);

}  // namespace strata::bench
