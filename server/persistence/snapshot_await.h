// Awaiting a snapshot from a command's fiber (SAVE, SHUTDOWN, DEBUG RELOAD).
//   Status s = co_await SnapshotAwait(reason, queue);
//   Status s = co_await SnapshotAwait::Reload(options);
// resumes on the fiber's worker when the snapshot is committed or has failed (the
// reload: when the data is loaded back, or it has failed).
// Thread-safety: awaited on the fiber's own worker thread.
#pragma once

#include <coroutine>

#include "server/persistence/snapshot.h"
#include "storage/status.h"

namespace strata {

class SnapshotAwait {
 public:
  SnapshotAwait(SnapshotManager::Reason reason, bool queue);
  static SnapshotAwait Reload(SnapshotManager::ReloadOptions options);
  bool await_ready() { return false; }
  bool await_suspend(std::coroutine_handle<> h);
  Status await_resume() { return status_; }

 private:
  SnapshotAwait() = default;
  SnapshotManager::Reason reason_ = SnapshotManager::Reason::kSave;
  bool queue_ = false;
  bool reload_ = false;
  SnapshotManager::ReloadOptions reload_options_;
  std::coroutine_handle<> handle_;
  Status status_;
  bool done_ = false;
  bool suspended_ = false;
};

}  // namespace strata
