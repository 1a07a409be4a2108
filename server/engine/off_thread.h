// OffThread: runs blocking work (a command's outbound connection: MIGRATE) on a thread
// of its own and resumes the fiber on its worker when it is done.
//   co_await OffThread(engine, [&] { ...blocking calls, each with a timeout... });
// The work must bound its own time (every wait with a timeout). The engine counts the
// threads in flight and Engine::Stop waits for them before stopping the workers, so a
// finished thread always has a live worker to post its resumption to.
// Thread-safety: awaited on a worker thread; fn runs on the new thread and must touch
// no shard data (the fiber holds its keys' locks meanwhile, so nothing else does).
#pragma once

#include <coroutine>
#include <functional>
#include <thread>

#include "server/engine/engine.h"
#include "server/engine/task.h"
#include "server/engine/worker.h"

namespace strata {

class OffThread {
 public:
  OffThread(Engine& engine, std::function<void()> fn) : engine_(engine), fn_(std::move(fn)) {}
  bool await_ready() { return false; }
  void await_suspend(std::coroutine_handle<> h) {
    Worker* w = Worker::Current();
    engine_.BeginOffThread();
    std::thread([this, w, h] {
      fn_();
      Engine& e = engine_;
      w->PostExternal(MakeTask([h] { h.resume(); }));
      e.EndOffThread();
    }).detach();
  }
  void await_resume() {}

 private:
  Engine& engine_;
  std::function<void()> fn_;
};

}  // namespace strata
