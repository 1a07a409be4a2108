// ClusterContext: what one --cluster-mode thread shares with its clients and their links:
// the thread's ClusterMap, each node's socket address (resolved on first use, then kept),
// the per-node stats, the epoll set with its dispatch table, and the once-a-second limit on
// CLUSTER SLOTS refreshes.
// Thread-safety: owned by one ClusterThread; its clients and links use it on that thread.
#pragma once

#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tools/strata-bench/cluster_map.h"
#include "tools/strata-bench/options.h"
#include "tools/strata-bench/request_writer.h"
#include "tools/strata-bench/run_stats.h"

namespace strata::bench {

class ClusterLink;

// A slot map refresh is sent at most this often per thread.
inline constexpr uint64_t kSlotMapRefreshNs = 1'000'000'000;

class ClusterContext {
 public:
  const Options* options = nullptr;
  const RequestWriter* writer = nullptr;
  ClusterMap map;
  int epoll_fd = -1;
  RunStats* stats = nullptr;        // the thread's
  std::vector<ClusterLink*> links;  // epoll tag -> link (owned by the clients)
  uint32_t live = 0;                // clients not yet finished or failed
  uint64_t last_finish_ns = 0;      // when the last client finished
  uint64_t last_refresh_ns = 0;     // when CLUSTER SLOTS was last sent (0: never)

  // The address of node `node`; false with *error ("cannot resolve ...") when it has none.
  bool Address(uint32_t node, const sockaddr** addr, socklen_t* len, std::string* error);
  // The node's stats, added (named after the map's node) on first use. The reference is
  // valid until the next call.
  NodeStats& StatsOf(uint32_t node);
  // Applies the CLUSTER SLOTS reply data[0, size) that node `node` sent (error: it was an
  // error reply) to the map, counting a refresh or a failed one.
  void ApplySlotsReply(const char* data, size_t size, bool error, uint32_t node);
  bool RefreshDue(uint64_t now_ns) const {
    return last_refresh_ns == 0 || now_ns - last_refresh_ns >= kSlotMapRefreshNs;
  }

 private:
  struct Resolved {
    bool tried = false;
    sockaddr_storage addr{};
    socklen_t len = 0;  // 0: did not resolve
    std::string error;
  };
  std::vector<Resolved> resolved_;  // by node index
};

}  // namespace strata::bench
