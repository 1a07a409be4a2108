// Pub/Sub: channels, patterns and shard channels, and the delivery of messages to the
// subscribers on every worker.
//
// Who knows what
//   - A client's own subscriptions: its ClientSubscriptions (Client::subs), on its
//     worker's thread. The count in each confirmation comes from there.
//   - A worker's subscribers by name: its WorkerPubSub, on its thread, for delivery.
//   - Which workers have subscribers of a name, and how many: the process-wide
//     PubSubDirectory, the one structure threads share. PUBLISH reads it to know what to
//     reply and where to send. It is striped by the name's hash (kStripes stripes, each a
//     shared_mutex over a hash map); patterns sit in one list under their own lock, with
//     an atomic count so that a publish takes no pattern lock while none is subscribed
//     anywhere. A subscription enters the directory before its confirmation is written,
//     and leaves it before the unsubscribe confirmation is: a PUBLISH that starts after a
//     confirmation sees the change, as with Redis.
//
// Publishing (Publish below) runs on whatever worker runs the command - PUBLISH on the
// client's, SPUBLISH on its channel's shard, a keyspace notification on the key's, a
// script's or transaction's call where it runs. The directory gives the reply (every
// subscriber of the channel plus every subscription of each pattern that matches it,
// Redis's count) and the destination workers. This worker's subscribers get the message
// at once, before the publisher's reply is written (so a RESP3 client subscribed to its
// own channel reads the push first, as from Redis). Other workers get one task each,
// carrying one shared copy of the message (reference counted); tasks of one loop turn
// travel in one batch per destination (worker.h). A destination encodes the message once
// per RESP version and appends it to each subscriber's output.
//
// Order: one publisher's messages to one channel arrive in publishing order. Its worker
// sends to each destination through a FIFO ring (or delivers inline), and a channel's
// SPUBLISH always runs on the channel's shard. Messages published on different workers
// arrive in their process-wide publishing order when one led to the other (a client
// reads the reply of a command that published on one shard, then its next command
// publishes on another): each carries a number from one counter, a worker runs the
// deliveries it drains in number order, and a worker's turn pushes its deliveries into
// every destination's ring before any other task of the turn (Worker::PostMessage), so
// a delivery is there before the reply it came with can lead to another message.
//
// Slow subscribers: a subscriber's class is pubsub (client-output-buffer-limit pubsub,
// Redis's 32mb 8mb 60) while it has any subscription. Delivery only appends; a subscriber
// whose output reached a limit is checked later in the same loop turn and closed there
// (logged, counted), so the publisher never waits and nothing is freed under a delivery.
//
// Memory: a client's subscriptions are client memory (ClientConnection::MemoryBytes);
// a worker's table is in its used bytes; the directory's bytes are counted process-wide
// (PubSubDirectory::bytes, INFO memory).
// Thread-safety: PubSubDirectory: any thread. WorkerPubSub, ClientSubscriptions: the
// owning worker's thread. Publish: any worker's thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "server/engine/command.h"
#include "server/engine/string_map.h"
#include "server/engine/task.h"

namespace strata {

class Client;
class Worker;

enum class PubSubKind : uint8_t { kChannel = 0, kPattern = 1, kShard = 2 };
inline constexpr int kPubSubKinds = 3;

// One client's subscriptions: name -> its index in the worker's subscriber list.
struct ClientSubscriptions {
  StringMap<uint32_t> of[kPubSubKinds];
  // Redis's counts: SUBSCRIBE/PSUBSCRIBE confirmations count channels and patterns,
  // SSUBSCRIBE's count shard channels.
  size_t normal() const { return of[0].size() + of[1].size(); }
  size_t shard() const { return of[2].size(); }
  size_t total() const { return normal() + shard(); }
  size_t Bytes() const;
};

// Where a message goes: the receivers PUBLISH replies, the workers with any of them, the
// patterns that matched (each with subscribers somewhere).
struct PubSubRoute {
  size_t receivers = 0;
  std::vector<uint32_t> workers;
  std::vector<std::string> patterns;
  void Clear() {
    receivers = 0;
    workers.clear();
    patterns.clear();
  }
};

class PubSubDirectory {
 public:
  static constexpr size_t kStripes = 64;

  explicit PubSubDirectory(uint32_t workers);

  // Worker w's subscribers of a name went up or down by one.
  void Add(PubSubKind kind, std::string_view name, uint32_t w);
  void Remove(PubSubKind kind, std::string_view name, uint32_t w);

  // Fills *route for a message to `channel` (kChannel or kShard; patterns match
  // kChannel only).
  void Route(PubSubKind kind, std::string_view channel, PubSubRoute* route) const;

  // PUBSUB CHANNELS / SHARDCHANNELS: names with subscribers, matching `pattern` when given.
  std::vector<std::string> Names(PubSubKind kind, const std::string_view* pattern) const;
  // PUBSUB NUMSUB / SHARDNUMSUB: subscribers of one name.
  size_t Subscribers(PubSubKind kind, std::string_view name) const;
  // Distinct names with subscribers (PUBSUB NUMPAT for kPattern; INFO).
  size_t Count(PubSubKind kind) const {
    return counts_[static_cast<int>(kind)].load(std::memory_order_relaxed);
  }
  // Heap bytes of the directory (approximate: entries at their usable sizes).
  size_t bytes() const { return bytes_.load(std::memory_order_relaxed); }

 private:
  // Per worker: subscribers there. Small: usually one or a few workers per name.
  using Counts = std::vector<std::pair<uint32_t, uint32_t>>;
  struct Stripe {
    mutable std::shared_mutex mu;
    StringMap<Counts> names;
  };
  struct Pattern {
    std::string pattern;
    Counts counts;
  };
  Stripe& StripeOf(PubSubKind kind, std::string_view name) const;
  static size_t EntryBytes(std::string_view name);

  uint32_t workers_;
  std::unique_ptr<Stripe[]> stripes_[2];  // kChannel, kShard
  mutable std::shared_mutex patterns_mu_;
  std::vector<Pattern> patterns_;
  StringMap<size_t> pattern_index_;  // pattern -> its place in patterns_
  std::atomic<size_t> counts_[kPubSubKinds] = {};
  std::atomic<size_t> bytes_{0};
};

// A worker's subscribers, and delivery to them.
class WorkerPubSub {
 public:
  explicit WorkerPubSub(Worker& w) : worker_(w) {}

  // SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE (one confirmation per name, into rb).
  void Subscribe(Client& c, PubSubKind kind, CmdArgs names, ReplyBuilder& rb);
  // UNSUBSCRIBE and friends; no names: every subscription of that kind (Redis's reply
  // when there is none is one confirmation with a null name).
  void Unsubscribe(Client& c, PubSubKind kind, CmdArgs names, ReplyBuilder& rb);
  // A closing or RESET client leaves everything, without replies.
  void UnsubscribeAll(Client& c);

  // Delivers a message to this worker's subscribers of `channel` and of `patterns`.
  void Deliver(PubSubKind kind, std::string_view channel, std::string_view message,
               const std::vector<std::string>& patterns);

  // Appends an out-of-band message to c's output (a Pub/Sub message, an invalidation);
  // a client it takes past its output limits is closed later in the turn.
  void Push(Client& c, std::string_view bytes);

  // Heap bytes of this worker's subscriber table.
  size_t bytes() const { return bytes_; }
  // Clients of this worker with at least one subscription (INFO pubsub_clients).
  size_t clients() const { return clients_; }

 private:
  bool Add(Client& c, PubSubKind kind, std::string_view name);
  bool Remove(Client& c, PubSubKind kind, std::string_view name);
  void Confirm(ReplyBuilder& rb, std::string_view verb, const std::string_view* name, size_t count);
  // Closes the subscribers that a delivery took past their output limits, later in
  // the turn (by id: one may have gone meanwhile).
  void CheckLimitsLater();

  Worker& worker_;
  StringMap<std::vector<Client*>> subscribers_[kPubSubKinds];
  size_t bytes_ = 0;
  size_t clients_ = 0;
  std::vector<uint64_t> over_limit_;
};

// Publishes from the current worker: delivers (inline here, by task elsewhere) and
// returns the receivers (PUBLISH's reply). kind: kChannel or kShard.
size_t Publish(PubSubKind kind, std::string_view channel, std::string_view message);

// Order across shards. Messages published on different workers reach a subscriber
// through different rings, so the steps of one fiber, transaction or script that
// publish on several shards (keyspace events of EXEC's calls, say) are captured where
// they run and published by the coordinating worker, in the order of its steps (hops.h
// and sync_hop.cc take the captures; EXEC tags each message with its call's index).
struct CapturedMessage {
  uint64_t tag;
  PubSubKind kind;
  std::string channel;
  std::string message;
};
using CapturedMessages = std::vector<CapturedMessage>;
// While one exists on a thread, Publish there records its messages in *sink (still
// returning the receivers) instead of delivering them. Nests; null sink: no capture.
class PublishCapture {
 public:
  explicit PublishCapture(CapturedMessages* sink);
  ~PublishCapture();
  PublishCapture(const PublishCapture&) = delete;
  PublishCapture& operator=(const PublishCapture&) = delete;

 private:
  CapturedMessages* previous_;
};
// The tag of the messages captured next on this thread (EXEC: the call's index).
void SetCaptureTag(uint64_t tag);
// Publishes captured messages from the current worker, in tag order (stable), and
// empties *msgs.
void PublishCaptured(CapturedMessages* msgs);
// Whether a capture can matter: notifications are on or something is subscribed.
bool PubSubInUse();

// Causal order across rings. A subscriber's worker receives messages from several
// workers' rings. When a client sees one PUBLISH's reply and then causes another
// publish elsewhere, the first message is already in its ring (a worker pushes its
// rings before it writes replies), but the destination might drain the second ring
// first. So a worker drains every ring, then delivers the messages it took in their
// publishing order (a process-wide sequence), and only then runs the other tasks
// (whose own publishes come after, as they happen after in time). These identify the
// delivery tasks and their sequence.
bool IsPubSubDelivery(const Task& t);
uint64_t PubSubDeliverySeq(const Task& t);
// The next number of that process-wide sequence, for other deliveries that keep the
// same causal order (MONITOR's feed, monitor.cc).
uint64_t NextDeliverySeq();

}  // namespace strata
