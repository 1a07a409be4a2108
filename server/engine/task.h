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
#include <cstdint>
#include <exception>
#include <memory>
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

// What a fiber's steps on other shards must know of the command it runs: its client
// (CLIENT TRACKING's NOLOOP) and, for a tracking client's read, the keys to remember
// (tracking.h). A fiber's promise takes it from its first argument when that is a
// client (Client::TakeFiberOrigin); t_fiber_origin points to the running fiber's own
// while its body runs (set at its start and at every resumption), so an awaitable reads
// it in await_ready.
struct TrackedRead;
struct FiberRepl;
struct ReadyHolds;
struct FiberOrigin {
  uint64_t client = 0;
  uint32_t worker = 0;                       // the client's
  uint8_t track_mode = 0;                    // TrackMode (tracking.h)
  std::shared_ptr<const TrackedRead> track;  // for TrackMode::kRead
  // A write's propagation to replicas as one record (repl_feed.h); null when none.
  std::shared_ptr<FiberRepl> repl;
  // A replica's master client runs the command: its steps see expired keys as live
  // (Keyspace::MasterCallScope).
  bool from_master = false;
  // A command run inside a transaction or a script: its steps hold the keys they give
  // elements to, for the transaction or script to serve (blocking.h); null otherwise.
  std::shared_ptr<ReadyHolds> ready_holds;
};
inline thread_local const FiberOrigin* t_fiber_origin = nullptr;

struct Fiber {
  struct promise_type {
    FiberOrigin origin;

    promise_type() = default;
    template <class C, class... Rest>
    explicit promise_type(C* c, Rest&&...) {
      if constexpr (requires { c->TakeFiberOrigin(); }) origin = c->TakeFiberOrigin();
    }

    Fiber get_return_object() { return {}; }
    auto initial_suspend() noexcept {
      struct Start {
        const FiberOrigin* o;
        bool await_ready() const noexcept { return true; }
        void await_suspend(std::coroutine_handle<>) const noexcept {}
        void await_resume() const noexcept { t_fiber_origin = o; }
      };
      return Start{&origin};
    }
    std::suspend_never final_suspend() noexcept { return {}; }
    void return_void() { t_fiber_origin = nullptr; }
    void unhandled_exception() { std::terminate(); }

    // Every co_await in a fiber: t_fiber_origin is this fiber's while the awaitable
    // starts and again when the body resumes.
    template <class A>
    struct Resuming {
      A&& a;
      const FiberOrigin* o;
      bool await_ready() {
        t_fiber_origin = o;
        return a.await_ready();
      }
      template <class H>
      decltype(auto) await_suspend(H h) {
        return a.await_suspend(h);
      }
      decltype(auto) await_resume() {
        t_fiber_origin = o;
        return a.await_resume();
      }
    };
    template <class A>
    Resuming<A> await_transform(A&& a) noexcept {
      return Resuming<A>{std::forward<A>(a), &origin};
    }
  };
};

inline Task ResumeTask(std::coroutine_handle<> h) {
  return Task{[](void* p) { std::coroutine_handle<>::from_address(p).resume(); }, h.address()};
}

}  // namespace strata
