// ClusterClient: one strata-bench client under --cluster-mode: the workload of one
// Connection (key patterns, --ratio mix, TTLs, value sizes, -n / --test-time), with one
// ClusterLink to each cluster master instead of one socket, so every node has its own
// pipeline of up to --pipeline requests.
//
// Pump() moves requests into the links: first the ones a node redirected (oldest first),
// then new ones. Each new request's key is hashed to its slot (core/key_slot.h: CRC16 of
// the key's hash tag, as Redis Cluster does) and goes to the link of the slot's owner in
// the thread's ClusterMap, opening it when the node is new. A request whose link has no
// room waits (at most one new request waits per client, and while it or a redirected one
// waits, nothing newer is sent), so a slow node slows its clients instead of growing
// anything. Then every link with output is flushed.
//
// OnRedirect(): -MOVED moves the slot to the named node in the map, asks for a CLUSTER SLOTS
// refresh (sent at most once per second per thread, on a link to that node), and queues
// the request for that node; -ASK queues it for the named node once, preceded by ASKING,
// and leaves the map alone. Queued requests were all in flight before, so the queue holds
// at most the sum of the client's pipelines.
//
// The client finishes when it has sent its requests (or was told to stop) and nothing is
// queued or in flight; it fails, as one connection error naming the node, when any of its
// links fails, and then every request it had in flight is lost. Either way it closes its
// links and decrements the thread's live count.
// Thread-safety: owned and driven by one ClusterThread.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "tools/strata-bench/cluster_context.h"
#include "tools/strata-bench/cluster_link.h"
#include "tools/strata-bench/cluster_map.h"
#include "tools/strata-bench/workload.h"

namespace strata::bench {

class ClusterClient {
 public:
  // client_index: this client's number among all threads' clients (for P slices and
  // --distinct-client-seed, as with Connection).
  ClusterClient(ClusterContext& ctx, uint32_t client_index);
  ~ClusterClient();
  ClusterClient(const ClusterClient&) = delete;
  ClusterClient& operator=(const ClusterClient&) = delete;

  // Opens a link to every node the map knows, then pumps.
  void Start(uint64_t now_ns);
  void Pump(uint64_t now_ns);
  // No new requests from now on; finishes once what is queued and in flight is answered.
  void StopSending(uint64_t now_ns);
  void CheckTimeout(uint64_t now_ns, uint64_t timeout_ns);

  // Called by a link for a -MOVED or -ASK reply from node `from_node` to `request`:
  // queues it again (see above). False when the named node cannot be added to the map
  // (it has kMaxNodes), so the reply counts as an error.
  bool OnRedirect(const ClusterRequest& request, const Redirect& to, uint32_t from_node);
  // Called by a link that failed: fails the client (see above).
  void Fail(uint32_t node, const std::string& why);

  bool finished() const { return state_ != State::kRunning; }

 private:
  enum class State { kRunning, kDone, kFailed };
  struct Queued {
    ClusterRequest request;
    uint32_t node = 0;
    bool asking = false;
  };

  // The link to `node`, opened (and started) on first use; check finished() after.
  ClusterLink* LinkTo(uint32_t node, uint64_t now_ns);
  void NextRequest(ClusterRequest* request);
  uint32_t NextValueSize();
  bool Idle() const;
  void CloseLinks();
  void Finish(uint64_t now_ns);

  ClusterContext& ctx_;
  const Options& o_;
  State state_ = State::kRunning;
  bool stop_sending_ = false;
  std::vector<std::unique_ptr<ClusterLink>> links_;  // by node index; null until used

  std::deque<Queued> redirected_;  // bounded by the sum of the links' pipelines
  ClusterRequest waiting_;         // the next new request, when has_waiting_
  bool has_waiting_ = false;
  uint32_t refresh_node_ = ClusterMap::kNoNode;  // a node to ask for CLUSTER SLOTS

  uint64_t sent_ = 0;    // new requests taken from the workload
  uint64_t target_ = 0;  // requests to send (UINT64_MAX with --test-time)
  KeyGenerator set_keys_;
  KeyGenerator get_keys_;
  RatioScheduler ratio_;
  Rng ttl_rng_;
  Rng size_rng_;            // --data-size-range R
  uint32_t next_size_ = 0;  // --data-size-range S: the next size
  std::string key_;         // scratch: the key's name, for its slot
};

}  // namespace strata::bench
