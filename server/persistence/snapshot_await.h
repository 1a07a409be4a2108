// Awaiting a snapshot from a command's fiber (SAVE, SHUTDOWN).
//   Status s = co_await SnapshotAwait(reason, queue);
// resumes on the fiber's worker when the snapshot is committed or has failed.
// Thread-safety: awaited on the fiber's own worker thread.
#pragma once

#include <coroutine>

#include "server/persistence/snapshot.h"
#include "storage/status.h"

namespace strata {

class SnapshotAwait {
 public:
  SnapshotAwait(SnapshotManager::Reason reason, bool queue);
  bool await_ready() { return false; }
  bool await_suspend(std::coroutine_handle<> h);
  Status await_resume() { return status_; }

 private:
  SnapshotManager::Reason reason_;
  bool queue_;
  std::coroutine_handle<> handle_;
  Status status_;
  bool done_ = false;
  bool suspended_ = false;
};

}  // namespace strata
