// Awaitables that move a fiber's work between workers.
//
//   co_await RunOn(shards, fn)  runs fn(Worker&) on each listed worker, in parallel,
//                               and resumes when all have finished. A hop to the
//                               fiber's own worker runs inline.
//   co_await LockOn(shard, req) takes the intent locks of `req` on that shard, waiting
//                               in its FIFO queue if needed (see lock_table.h).
//   co_await RunLocked(shard, req, fn)
//                               runs fn(Worker&) on that shard as soon as req's keys
//                               are free there (in the FIFO queue's order), without
//                               taking them: fn runs to its end before anything else on
//                               the shard. One hop there and one back.
// The fiber always resumes on the worker that started it. Functions passed to RunOn
// may write only to state owned by that shard, or to distinct pre-sized result slots.
// Under a SyncHopScope (sync_hop.h: a script that spans shards calling a multi-shard
// command) each awaitable completes at once with synchronous hops instead, the shards
// one after another; the locks it asks for are then already held by its owner.
// Thread-safety: awaited on the fiber's own worker thread.
#pragma once

#include <coroutine>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "server/engine/lock_table.h"
#include "server/engine/pubsub.h"
#include "server/engine/sync_hop.h"
#include "server/engine/task.h"
#include "server/engine/worker.h"

namespace strata {

// Runs one step of a fiber on worker w (the shard it is for), in the scopes every step
// runs in: the fiber's origin, its replication and blocking-key holds, the master's
// calls, and its Pub/Sub messages captured into *capture (when not null) for the fiber
// to publish in order.
template <class F>
void RunFiberStep(const FiberOrigin* fiber, Worker& w, CapturedMessages* capture, F&& fn) {
  PublishCapture publish(capture);
  ExecScope exec(fiber);
  StepReplScope repl(fiber, w.repl_feed());
  HoldReadyScope hold(fiber != nullptr ? fiber->ready_holds.get() : nullptr);
  Keyspace::MasterCallScope master_call(w.keyspace(), fiber != nullptr && fiber->from_master);
  // Remembered before the step reads: a step may release its locks at its end, and a
  // write admitted then runs at once (it must find the keys tracked).
  if (fiber != nullptr && fiber->track != nullptr) [[unlikely]]
    fiber->track->RememberOn(w);
  fn(w);
}

class RunOn {
 public:
  RunOn(std::vector<uint32_t> shards, std::function<void(Worker&)> fn)
      : shards_(std::move(shards)), fn_(std::move(fn)) {}

  bool await_ready() {
    origin_ = Worker::Current();
    fiber_ = t_fiber_origin;
    if (SyncHopScope::Active()) [[unlikely]] {
      // Each hop publishes in order.
      for (size_t i = 0; i < shards_.size(); i++) {
        SyncHop(shards_[i], [this, i](Worker& w) { RunStep(w, i); });
      }
      return true;
    }
    // Messages published by the steps are published from here when all are done, in
    // the steps' order (pubsub.h): one ring per subscriber's worker keeps them in order.
    if (PubSubInUse()) [[unlikely]]
      captured_.resize(shards_.size());
    if (shards_.size() == 1 && shards_[0] == origin_->index()) {
      RunStep(*origin_, 0);
      return true;
    }
    return shards_.empty();
  }

  bool await_suspend(std::coroutine_handle<> h) {
    handle_ = h;
    remaining_ = shards_.size();
    for (size_t i = 0; i < shards_.size(); i++) {
      uint32_t s = shards_[i];
      if (s == origin_->index()) {
        RunStep(*origin_, i);
        remaining_--;
        continue;
      }
      origin_->Post(s, MakeTask([this, i] {
                      Worker* w = Worker::Current();
                      RunStep(*w, i);
                      w->Post(origin_->index(), MakeTask([this] {
                                if (--remaining_ == 0) handle_.resume();
                              }));
                    }));
    }
    return remaining_ != 0;
  }

  void await_resume() {
    if (!captured_.empty()) [[unlikely]] {
      CapturedMessages all;
      for (CapturedMessages& c : captured_) {
        for (CapturedMessage& m : c) all.push_back(std::move(m));
      }
      PublishCaptured(&all);
    }
  }

 private:
  void RunStep(Worker& w, size_t i) {
    RunFiberStep(fiber_, w, captured_.empty() ? nullptr : &captured_[i], fn_);
  }

  const FiberOrigin* fiber_ = nullptr;  // the awaiting fiber's (task.h)
  std::vector<uint32_t> shards_;
  std::function<void(Worker&)> fn_;
  Worker* origin_ = nullptr;
  std::coroutine_handle<> handle_;
  size_t remaining_ = 0;
  std::vector<CapturedMessages> captured_;  // per step, while Pub/Sub is in use
};

class RunLocked {
 public:
  RunLocked(uint32_t shard, LockTable::Request* req, std::function<void(Worker&)> fn)
      : shard_(shard), req_(req), fn_(std::move(fn)) {}

  bool await_ready() {
    origin_ = Worker::Current();
    fiber_ = t_fiber_origin;
    if (SyncHopScope::Active()) [[unlikely]] {
      // The owner holds the shard: nothing to wait for.
      SyncHop(shard_, [this](Worker& w) { RunStep(w); });
      return true;
    }
    capture_ = PubSubInUse();
    if (shard_ == origin_->index() && origin_->locks().CanRun(*req_)) {
      RunStep(*origin_);
      return true;
    }
    return false;
  }

  void await_suspend(std::coroutine_handle<> h) {
    handle_ = h;
    home_ = origin_->index();
    auto run = [this] {
      Worker* w = Worker::Current();
      if (w->locks().CanRun(*req_)) {
        Admitted(this);
        return;
      }
      LockTable::Request r = *req_;
      r.hold = false;
      r.on_admit = Task{Admitted, this};
      w->locks().Enqueue(std::move(r));
    };
    if (shard_ == home_) {
      run();
    } else {
      origin_->Post(shard_, MakeTask(std::move(run)));
    }
  }

  void await_resume() {
    if (!captured_.empty()) [[unlikely]]
      PublishCaptured(&captured_);
  }

 private:
  void RunStep(Worker& w) { RunFiberStep(fiber_, w, capture_ ? &captured_ : nullptr, fn_); }

  const FiberOrigin* fiber_ = nullptr;  // the awaiting fiber's (task.h)
  static void Admitted(void* p) {
    auto* self = static_cast<RunLocked*>(p);
    Worker* w = Worker::Current();
    self->RunStep(*w);
    w->Post(self->home_, ResumeTask(self->handle_));
  }

  bool capture_ = false;
  CapturedMessages captured_;
  uint32_t shard_;
  LockTable::Request* req_;
  std::function<void(Worker&)> fn_;
  Worker* origin_ = nullptr;
  uint32_t home_ = 0;
  std::coroutine_handle<> handle_;
};

class LockOn {
 public:
  LockOn(uint32_t shard, LockTable::Request* req) : shard_(shard), req_(req) {}

  bool await_ready() {
    origin_ = Worker::Current();
    if (SyncHopScope::Active()) [[unlikely]] {
      // The script's owner holds this shard whole, so the request is granted at once as
      // a nested hold (a cold value is then read back by the lookup itself).
      SyncHop(shard_, [this](Worker& w) { w.locks().AcquireNested(*req_); });
      return true;
    }
    // With the spill tier on, the locks are taken through await_suspend, which also
    // waits for the cold values among the keys.
    if (shard_ == origin_->index() && origin_->cold_gate() == nullptr &&
        origin_->locks().CanRun(*req_)) {
      origin_->locks().Acquire(*req_);
      return true;
    }
    return false;
  }

  void await_suspend(std::coroutine_handle<> h) {
    handle_ = h;
    home_ = origin_->index();
    auto grant = [this] {
      Worker* w = Worker::Current();
      LockTable::Request r = *req_;
      r.hold = true;
      r.on_admit = MakeTask([this] { Admitted(); });
      if (w->locks().CanRun(r)) {
        w->locks().Acquire(r);
        r.on_admit.Run();
      } else {
        w->locks().Enqueue(std::move(r));
      }
    };
    if (shard_ == home_) {
      grant();
    } else {
      origin_->Post(shard_, MakeTask(std::move(grant)));
    }
  }

  void await_resume() {}

 private:
  // On the locked shard: the keys' cold values are read back first (the fiber's shard
  // functions then find them in RAM), then the fiber resumes at home.
  void Admitted() {
    Worker* w = Worker::Current();
    if (req_->then_hops) w->PollAfterHop();
    ColdGate* gate = w->cold_gate();
    if (gate != nullptr && !req_->names.empty() && gate->MustWait(req_->db, req_->names)) {
      gate->Hold(req_->db, req_->names, HeldCommand{Resume, ResumeAfterError, this});
      return;
    }
    Resume(this);
  }
  static void Resume(void* p) {
    auto* self = static_cast<LockOn*>(p);
    Worker::Current()->Post(self->home_, ResumeTask(self->handle_));
  }
  // A failed read: the fiber goes on, and its lookup meets the cold value again (and
  // reads it then, or finds the error).
  static void ResumeAfterError(void* p, const std::string&) { Resume(p); }

  uint32_t shard_;
  LockTable::Request* req_;
  Worker* origin_ = nullptr;
  uint32_t home_ = 0;
  std::coroutine_handle<> handle_;
};

}  // namespace strata
