// The snapshot manager as an engine service, with no command registered: a snapshot
// taken from the main thread (as SIGTERM does) and loaded at the next start behind the
// engine's loading gate, also with another thread count.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <future>
#include <string>
#include <thread>

#include "core/hash.h"
#include "server/base/config.h"
#include "server/engine/engine.h"
#include "server/engine/worker.h"
#include "server/net/event_loop.h"  // IoBackend, as the process chooses it
#include "server/persistence/snapshot.h"
#include "tests/unit/server/run_on_worker.h"

namespace strata {
namespace {

class SnapshotServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/strata-snapshot-service-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    ASSERT_EQ(config_.Set("dir", dir_, false), "");
    ASSERT_EQ(config_.Set("save", "", false), "");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Writes `keys` keys on their shards, then snapshots from this (the main) thread.
  void SaveWith(uint32_t threads, int keys) {
    Engine engine(&config_, threads);
    SnapshotManager snapshots(&engine);
    engine.AddService(&snapshots);
    ASSERT_TRUE(snapshots.PrepareLoad().ok());
    EXPECT_FALSE(engine.loading());
    std::string error;
    ASSERT_TRUE(engine.Start(IoBackend::kEpoll, {}, {}, &error)) << error;
    for (int i = 0; i < keys; i++) {
      std::string key = "key:" + std::to_string(i);
      RunOnWorker(engine, ShardOfKey(key, threads), [&](Worker& w) {
        w.keyspace().SetString(0, key, "value:" + std::to_string(i), 0);
      });
    }
    Status s = snapshots.SaveAndWait(SnapshotManager::Reason::kSave);
    EXPECT_TRUE(s.ok()) << s.message();
    EXPECT_GT(snapshots.last_save_time(), 0);
    engine.Stop();
  }

  // Starts with `threads` workers on the saved snapshot and checks every key.
  void LoadWith(uint32_t threads, int keys) {
    Engine engine(&config_, threads);
    SnapshotManager snapshots(&engine);
    engine.AddService(&snapshots);
    ASSERT_TRUE(snapshots.PrepareLoad().ok());
    EXPECT_TRUE(engine.loading());  // held from before the workers start
    std::string error;
    ASSERT_TRUE(engine.Start(IoBackend::kEpoll, {}, {}, &error)) << error;
    for (int i = 0; i < 2000 && engine.loading(); i++) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    EXPECT_FALSE(engine.loading());
    for (int i = 0; i < keys; i++) {
      std::string key = "key:" + std::to_string(i);
      RunOnWorker(engine, ShardOfKey(key, threads), [&](Worker& w) {
        Entry* e = w.keyspace().Find(0, key, w.now_ms());
        ASSERT_NE(e, nullptr) << key;
        EXPECT_EQ(e->ValueString(), "value:" + std::to_string(i));
      });
    }
    engine.Stop();
  }

  Config config_;
  std::string dir_;
};

TEST_F(SnapshotServiceTest, SavesAndLoadsWithoutCommands) {
  SaveWith(2, 200);
  LoadWith(2, 200);
}

TEST_F(SnapshotServiceTest, LoadsWithAnotherThreadCount) {
  SaveWith(3, 200);
  LoadWith(1, 200);
}

TEST_F(SnapshotServiceTest, NoSnapshotNoLoading) {
  Engine engine(&config_, 1);
  SnapshotManager snapshots(&engine);
  engine.AddService(&snapshots);
  ASSERT_TRUE(snapshots.PrepareLoad().ok());
  EXPECT_FALSE(engine.loading());
  EXPECT_FALSE(snapshots.AutoSaveEnabled());
}

}  // namespace
}  // namespace strata
