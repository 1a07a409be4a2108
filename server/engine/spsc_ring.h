// SpscRing: a bounded single-producer single-consumer queue.
//
// Worker i talks to worker j through ring[i][j]: only i pushes and only j pops, so
// the ring needs no locks, just acquire/release on two indexes that sit on their own
// cache lines. Push fails when full; the producer keeps the item and retries on its
// next loop turn (it never blocks, so two full rings cannot deadlock).
// Storage comes straight from mmap: the kernel's zero pages cost no memory until a slot
// is first written, so the N x N rings of a many-core server cost only what the busy
// pairs touch.
// Thread-safety: exactly one producer thread and one consumer thread.
#pragma once

#include <sys/mman.h>

#include <atomic>
#include <cstddef>
#include <new>
#include <type_traits>

namespace strata {

template <class T>
class SpscRing {
 public:
  static_assert(std::is_trivially_copyable_v<T>, "slots are raw zero-filled memory");

  explicit SpscRing(size_t capacity_pow2)
      : mask_(capacity_pow2 - 1), bytes_(capacity_pow2 * sizeof(T)) {
    void* mem = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) throw std::bad_alloc();
    slots_ = static_cast<T*>(mem);
  }
  ~SpscRing() { munmap(slots_, bytes_); }
  SpscRing(const SpscRing&) = delete;
  SpscRing& operator=(const SpscRing&) = delete;

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
  const size_t bytes_;
  T* slots_;
  alignas(64) std::atomic<size_t> head_{0};
  size_t tail_cache_ = 0;  // consumer's view of tail
  alignas(64) std::atomic<size_t> tail_{0};
  size_t head_cache_ = 0;  // producer's view of head
};

}  // namespace strata
