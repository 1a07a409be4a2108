// RoutingBoard: the latest cluster slot layout (cluster_routing.h) that any worker routes
// by, under `cluster-enabled yes`.
//
// Design
//   The cluster service builds a new immutable SlotRouting for each layout change, on
//   whichever thread made it (a worker running CLUSTER SETSLOT, the cluster bus's thread,
//   worker 0's timer), under the service's mutex, and publishes it here before it
//   releases that mutex. Publishing bumps a version.
//   A worker keeps its own reference and the version it holds (Worker::routing), and
//   before each use compares that with the board's version: one acquire load of a line
//   that changes only with the layout. When they differ it takes the latest under the
//   board's mutex. So whatever a client has seen of a layout (CLUSTER NODES, SLOTS or
//   INFO read the state under the service's mutex, after the publish) every later
//   command routes by, on whichever worker it runs: the client's next command reaches
//   the worker by a chain of release and acquire (a socket read, a hop), so that worker's
//   load sees the new version. A task to each worker still installs the layout in its
//   next turn, which lets go of the old one on an idle worker.
//
// Thread-safety: Publish and Latest from any thread; version() lock-free.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

namespace strata {

struct SlotRouting;

class RoutingBoard {
 public:
  // The layout every worker routes by from now on.
  void Publish(std::shared_ptr<const SlotRouting> r) {
    std::lock_guard<std::mutex> l(mu_);
    latest_ = std::move(r);
    version_.store(version_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }
  // 0 until the first Publish.
  uint64_t version() const { return version_.load(std::memory_order_acquire); }
  // The latest layout and its version, read together.
  std::shared_ptr<const SlotRouting> Latest(uint64_t* version) const {
    std::lock_guard<std::mutex> l(mu_);
    *version = version_.load(std::memory_order_relaxed);
    return latest_;
  }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const SlotRouting> latest_;
  std::atomic<uint64_t> version_{0};
};

}  // namespace strata
