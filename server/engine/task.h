// Task and Fiber: the two shapes of work that move between worker threads.
//
// A Task is a function pointer and an argument: 16 bytes, no allocation of its own,
// so it fits in the SPSC rings between workers. MakeTask() wraps a lambda (one heap
// allocation) for code that is not on the per-command hot path.
//
// A Fiber is a fire-and-forget C++20 coroutine. Commands that span shards are written
// as fibers that co_await hops to other workers (see hops.h); the coroutine frame lives
// until the fiber returns. Fibers start eagerly and always resume on the worker that
// started them.
// Thread-safety: a Task is run exactly once by the thread it was posted to.
#pragma once

#include <coroutine>
#include <exception>
#include <utility>

namespace strata {

struct Task {
  void (*fn)(void*) = nullptr;
  void* arg = nullptr;
  void Run() const { fn(arg); }
};

template <class F>
Task MakeTask(F&& f) {
  using Fn = std::decay_t<F>;
  Fn* heap = new Fn(std::forward<F>(f));
  return Task{[](void* p) {
                Fn* fn = static_cast<Fn*>(p);
                (*fn)();
                delete fn;
              },
              heap};
}

struct Fiber {
  struct promise_type {
    Fiber get_return_object() { return {}; }
    std::suspend_never initial_suspend() noexcept { return {}; }
    std::suspend_never final_suspend() noexcept { return {}; }
    void return_void() {}
    void unhandled_exception() { std::terminate(); }
  };
};

inline Task ResumeTask(std::coroutine_handle<> h) {
  return Task{[](void* p) { std::coroutine_handle<>::from_address(p).resume(); }, h.address()};
}

}  // namespace strata
