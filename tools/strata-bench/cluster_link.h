// ClusterLink: one --cluster-mode client's connection to one cluster node.
//
// Like Connection (connection.h) it connects without blocking, sends AUTH / SELECT first
// when asked, keeps its requests in flight on a ring and reads every complete reply per
// wakeup. Unlike Connection it does not choose its requests: its ClusterClient picks the
// node of each request and Send()s it here. At most --pipeline requests are in flight
// (CanSend); the ring has one entry more, for the ASKING that precedes an -ASK re-send or
// for a CLUSTER SLOTS refresh, so what a link holds stays bounded by the pipeline depth.
//
// Per reply it records the request's latency (from its first send, across redirects) in
// its type's and its node's stats. A -MOVED or -ASK reply is counted at this node and
// handed to the client (ClusterClient::OnRedirect), which re-sends the request; a reply to
// CLUSTER SLOTS updates the thread's map. After a wakeup's replies it calls the client's
// Pump, so the pipelines refill in the same turn. A failure (connect, reset, malformed or
// unexpected reply, reply timeout) fails the whole client, naming this node.
// Thread-safety: owned by its ClusterClient and driven by one ClusterThread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "tools/strata-bench/byte_buffer.h"
#include "tools/strata-bench/cluster_context.h"
#include "tools/strata-bench/reply_scanner.h"

namespace strata::bench {

class ClusterClient;

// One SET or GET of a --cluster-mode client, as kept until its final reply: enough to
// send it again after a redirect.
struct ClusterRequest {
  uint64_t key = 0;            // key index (the key is <prefix><key>)
  uint64_t first_sent_ns = 0;  // 0 until first sent
  uint32_t ttl_s = 0;          // SET: EX seconds (0: none)
  uint32_t value_size = 0;     // SET: value bytes
  uint16_t slot = 0;           // the key's slot
  uint8_t redirects = 0;       // times it was re-sent after -MOVED or -ASK
  bool is_set = false;
};

class ClusterLink {
 public:
  ClusterLink(ClusterContext& ctx, ClusterClient& owner, uint32_t node, uint64_t epoll_tag);
  ~ClusterLink();
  ClusterLink(const ClusterLink&) = delete;
  ClusterLink& operator=(const ClusterLink&) = delete;

  // Begins connecting; a failure fails the client at once.
  void Start(uint64_t now_ns);
  void OnEvents(uint32_t events);
  // Fails the client when this link has been waiting for longer than timeout_ns.
  void CheckTimeout(uint64_t now_ns, uint64_t timeout_ns);

  // Whether Send(request, asking) fits now: connected, set up, and room in the pipeline.
  bool CanSend(bool asking) const {
    return state_ == State::kRunning && requests_ < pipeline_ &&
           used_ + (asking ? 2u : 1u) <= capacity_;
  }
  // REQUIRES: CanSend(asking). Encodes the request (after ASKING when asking) into the out
  // buffer; Flush() sends it.
  void Send(const ClusterRequest& request, bool asking, uint64_t now_ns);
  // Queues CLUSTER SLOTS when the ring has a free entry; false when it has none.
  bool SendSlotsRefresh();
  // Sends what is queued; false when that failed the client.
  bool Flush(uint64_t now_ns);
  void Close();

  bool has_output() const { return out_.readable() > 0; }
  // Nothing queued or in flight.
  bool idle() const { return used_ == 0 && out_.readable() == 0; }
  uint32_t requests_in_flight() const { return requests_; }

 private:
  enum class State { kIdle, kConnecting, kSetup, kRunning, kClosed };
  enum class EntryKind : uint8_t { kRequest, kAsking, kSlots };
  struct Entry {
    ClusterRequest request;
    EntryKind kind = EntryKind::kRequest;
  };

  void OnConnected(uint64_t now_ns);
  void OnReadable();
  void OnRequestReply(const ClusterRequest& request, const ReplyInfo& info, size_t bytes,
                      uint64_t now_ns);
  void Push(const Entry& entry);
  void Append(const char* bytes, size_t size);
  void SetWantWrite(bool want);
  void Fail(const std::string& why);

  ClusterContext& ctx_;
  ClusterClient& owner_;
  const uint32_t node_;
  const uint64_t epoll_tag_;
  const uint32_t pipeline_;
  const uint32_t capacity_;  // ring entries: pipeline_ + 1
  int fd_ = -1;
  State state_ = State::kIdle;
  bool want_write_ = false;
  uint32_t setup_pending_ = 0;
  uint64_t last_activity_ns_ = 0;

  ByteBuffer out_;
  ByteBuffer in_;
  size_t need_ = 0;  // bytes the pending reply needs in in_ before scanning again

  // Ring of what is in flight, oldest first: used_ entries from head_, requests_ of them
  // requests.
  std::unique_ptr<Entry[]> ring_;
  uint32_t head_ = 0;
  uint32_t used_ = 0;
  uint32_t requests_ = 0;
};

}  // namespace strata::bench
