#include "server/persistence/snapshot_await.h"

#include "server/engine/engine.h"
#include "server/engine/worker.h"

namespace strata {

SnapshotAwait::SnapshotAwait(SnapshotManager::Reason reason, bool queue)
    : reason_(reason), queue_(queue) {}

SnapshotAwait SnapshotAwait::Reload(SnapshotManager::ReloadOptions options) {
  SnapshotAwait a;
  a.reload_ = true;
  a.reload_options_ = options;
  return a;
}

bool SnapshotAwait::await_suspend(std::coroutine_handle<> h) {
  handle_ = h;
  SnapshotManager& sm = Worker::Current()->engine().Service<SnapshotManager>();
  auto done = [this](const Status& s) {
    status_ = s;
    done_ = true;
    if (suspended_) handle_.resume();
  };
  if (reload_) {
    sm.Reload(reload_options_, done);
  } else {
    sm.Request(reason_, queue_, done);
  }
  if (done_) return false;
  suspended_ = true;
  return true;
}

}  // namespace strata
