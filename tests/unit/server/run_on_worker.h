// Test helper: runs a function on a started worker's own thread and waits for it, as
// the process's main thread reaches a worker (Worker::PostExternal).
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <future>
#include <memory>

#include "server/engine/engine.h"
#include "server/engine/task.h"
#include "server/engine/worker.h"

namespace strata {

// Waits at most 10 s; the function may still run later if that passes, so it captures
// what it needs by value or from objects that outlive the test.
inline void RunOnWorker(Engine& engine, uint32_t shard, std::function<void(Worker&)> fn) {
  auto done = std::make_shared<std::promise<void>>();
  std::future<void> finished = done->get_future();
  engine.worker(shard).PostExternal(MakeTask([fn = std::move(fn), done] {
    fn(*Worker::Current());
    done->set_value();
  }));
  ASSERT_EQ(finished.wait_for(std::chrono::seconds(10)), std::future_status::ready);
}

}  // namespace strata
