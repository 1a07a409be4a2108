// Awaitables that move a fiber's work between workers.
//
//   co_await RunOn(shards, fn)  runs fn(Worker&) on each listed worker, in parallel,
//                               and resumes when all have finished. A hop to the
//                               fiber's own worker runs inline.
//   co_await LockOn(shard, req) takes the intent locks of `req` on that shard, waiting
//                               in its FIFO queue if needed (see lock_table.h).
// The fiber always resumes on the worker that started it. Functions passed to RunOn
// may write only to state owned by that shard, or to distinct pre-sized result slots.
// Thread-safety: awaited on the fiber's own worker thread.
#pragma once

#include <coroutine>
#include <cstdint>
#include <functional>
#include <vector>

#include "server/engine/lock_table.h"
#include "server/engine/task.h"
#include "server/engine/worker.h"

namespace strata {

class RunOn {
 public:
  RunOn(std::vector<uint32_t> shards, std::function<void(Worker&)> fn)
      : shards_(std::move(shards)), fn_(std::move(fn)) {}

  bool await_ready() {
    origin_ = Worker::Current();
    if (shards_.size() == 1 && shards_[0] == origin_->index()) {
      fn_(*origin_);
      return true;
    }
    return shards_.empty();
  }

  bool await_suspend(std::coroutine_handle<> h) {
    handle_ = h;
    remaining_ = shards_.size();
    for (uint32_t s : shards_) {
      if (s == origin_->index()) {
        fn_(*origin_);
        remaining_--;
        continue;
      }
      origin_->Post(s, MakeTask([this] {
                      Worker* w = Worker::Current();
                      fn_(*w);
                      w->Post(origin_->index(), MakeTask([this] {
                                if (--remaining_ == 0) handle_.resume();
                              }));
                    }));
    }
    return remaining_ != 0;
  }

  void await_resume() {}

 private:
  std::vector<uint32_t> shards_;
  std::function<void(Worker&)> fn_;
  Worker* origin_ = nullptr;
  std::coroutine_handle<> handle_;
  size_t remaining_ = 0;
};

class LockOn {
 public:
  LockOn(uint32_t shard, LockTable::Request* req) : shard_(shard), req_(req) {}

  bool await_ready() {
    origin_ = Worker::Current();
    if (shard_ == origin_->index() && origin_->locks().CanRun(*req_)) {
      origin_->locks().Acquire(*req_);
      return true;
    }
    return false;
  }

  void await_suspend(std::coroutine_handle<> h) {
    handle_ = h;
    uint32_t home = origin_->index();
    auto grant = [this, home] {
      Worker* w = Worker::Current();
      LockTable::Request r = *req_;
      r.hold = true;
      r.on_admit = MakeTask([this, home] { Worker::Current()->Post(home, ResumeTask(handle_)); });
      if (w->locks().CanRun(r)) {
        w->locks().Acquire(r);
        r.on_admit.Run();
      } else {
        w->locks().Enqueue(std::move(r));
      }
    };
    if (shard_ == home) {
      grant();
    } else {
      origin_->Post(shard_, MakeTask(std::move(grant)));
    }
  }

  void await_resume() {}

 private:
  uint32_t shard_;
  LockTable::Request* req_;
  Worker* origin_ = nullptr;
  std::coroutine_handle<> handle_;
};

}  // namespace strata
