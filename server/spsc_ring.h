// SpscRing: a bounded single-producer single-consumer queue.
//
// Worker i talks to worker j through ring[i][j]: only i pushes and only j pops, so
// the ring needs no locks, just acquire/release on two indexes that sit on their own
// cache lines. Push fails when full; the producer keeps the item and retries on its
// next loop turn (it never blocks, so two full rings cannot deadlock).
// Thread-safety: exactly one producer thread and one consumer thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>

namespace strata {

template <class T>
class SpscRing {
 public:
  explicit SpscRing(size_t capacity_pow2)
      : mask_(capacity_pow2 - 1), slots_(new T[capacity_pow2]) {}

  bool Push(const T& v) {
    size_t tail = tail_.load(std::memory_order_relaxed);
    if (tail - head_cache_ > mask_) {
      head_cache_ = head_.load(std::memory_order_acquire);
      if (tail - head_cache_ > mask_) return false;
    }
    slots_[tail & mask_] = v;
    tail_.store(tail + 1, std::memory_order_release);
    return true;
  }

  bool Pop(T* out) {
    size_t head = head_.load(std::memory_order_relaxed);
    if (head == tail_cache_) {
      tail_cache_ = tail_.load(std::memory_order_acquire);
      if (head == tail_cache_) return false;
    }
    *out = slots_[head & mask_];
    head_.store(head + 1, std::memory_order_release);
    return true;
  }

  bool Empty() const {
    return head_.load(std::memory_order_acquire) == tail_.load(std::memory_order_acquire);
  }

 private:
  const size_t mask_;
  std::unique_ptr<T[]> slots_;
  alignas(64) std::atomic<size_t> head_{0};
  size_t tail_cache_ = 0;  // consumer's view of tail
  alignas(64) std::atomic<size_t> tail_{0};
  size_t head_cache_ = 0;  // producer's view of head
};

}  // namespace strata
