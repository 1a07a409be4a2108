#include "server/persistence/snapshot_await.h"

#include "server/engine/engine.h"
#include "server/engine/worker.h"

namespace strata {

SnapshotAwait::SnapshotAwait(SnapshotManager::Reason reason, bool queue)
    : reason_(reason), queue_(queue) {}

bool SnapshotAwait::await_suspend(std::coroutine_handle<> h) {
  handle_ = h;
  Worker::Current()->engine().Service<SnapshotManager>().Request(reason_, queue_,
                                                                 [this](const Status& s) {
                                                                   status_ = s;
                                                                   done_ = true;
                                                                   if (suspended_) handle_.resume();
                                                                 });
  if (done_) return false;
  suspended_ = true;
  return true;
}

}  // namespace strata
