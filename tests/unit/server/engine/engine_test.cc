// The engine on its own: workers started with no command registered and no listener,
// services driven from every worker's loop, the loading gate, typed service lookup, and
// blocking queues serving waiters that only the test knows.
#include "server/engine/engine.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "server/base/config.h"
#include "server/engine/blocking.h"
#include "server/engine/cluster_routing.h"
#include "server/engine/worker.h"
#include "server/net/event_loop.h"  // IoBackend, as the process chooses it
#include "tests/unit/server/run_on_worker.h"

namespace strata {
namespace {

// Counts the hooks each worker calls.
class CountingService final : public ShardService {
 public:
  explicit CountingService(uint32_t shards) : starts(shards), turns(shards) {}
  void OnWorkerStart(Worker& w) override { starts[w.index()]++; }
  bool HasWork(const Worker& w) const override { return false; }
  void OnWorkerTurn(Worker& w, int64_t, bool) override { turns[w.index()]++; }
  void OnTimer(Worker& w) override {
    if (w.index() == 0) timers++;
  }
  std::vector<std::atomic<int>> starts;
  std::vector<std::atomic<int>> turns;
  std::atomic<int> timers{0};
};

class OtherService final : public ShardService {};

bool WaitFor(const std::function<bool()>& cond) {
  for (int i = 0; i < 1000 && !cond(); i++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return cond();
}

TEST(EngineTest, StartsWorkersAndDrivesServicesWithoutCommands) {
  Config config;
  ASSERT_EQ(config.Set("hz", "100", false), "");
  Engine engine(&config, 2);
  CountingService service(2);
  engine.AddService(&service);
  std::string error;
  ASSERT_TRUE(engine.Start(IoBackend::kEpoll, {}, {}, &error)) << error;
  EXPECT_EQ(engine.process().io_backend, "epoll");
  EXPECT_TRUE(WaitFor([&] { return service.turns[1] > 0 && service.timers > 0; }));
  engine.Stop();
  EXPECT_EQ(service.starts[0], 1);
  EXPECT_EQ(service.starts[1], 1);
  EXPECT_GT(service.turns[0], 0);
  EXPECT_EQ(engine.AllShards(), (std::vector<uint32_t>{0, 1}));
}

TEST(EngineTest, ServiceLookupByType) {
  Config config;
  Engine engine(&config, 1);
  CountingService counting(1);
  OtherService other;
  engine.AddService(&other);
  engine.AddService(&counting);
  EXPECT_EQ(&engine.Service<CountingService>(), &counting);
  EXPECT_EQ(&engine.Service<OtherService>(), &other);
  EXPECT_EQ(engine.services().size(), 2u);
}

TEST(EngineDeathTest, MissingServiceAborts) {
  Config config;
  Engine engine(&config, 1);
  EXPECT_DEATH(engine.Service<OtherService>(), "did not add");
}

// A worker's Pub/Sub deliveries are in every destination's ring before any other task
// of its turn (Worker::PostMessage). While one does not fit (the ring is full), the
// turn's other tasks wait too: a reply must not reach its client, whose next command may
// publish on another worker, before the message it came with reaches the subscriber's.
TEST(EngineTest, DeliveriesGoOutBeforeTheTurnsOtherTasks) {
  Config config;
  Engine engine(&config, 3);
  std::string error;
  ASSERT_TRUE(engine.Start(IoBackend::kEpoll, {}, {}, &error)) << error;
  // Worker 1, the subscriber's, is kept busy, so its ring from worker 0 fills.
  std::promise<void> release;
  std::shared_future<void> go = release.get_future().share();
  std::atomic<bool> busy{false};
  engine.worker(1).PostExternal(MakeTask([go, &busy] {
    busy = true;
    go.wait();
  }));
  ASSERT_TRUE(WaitFor([&] { return busy.load(); }));
  std::atomic<size_t> delivered{0};
  std::atomic<bool> other_ran{false};
  RunOnWorker(engine, 0, [&](Worker& w) {
    for (size_t i = 0; i < Worker::kRingCapacity + 1; i++)
      w.PostMessage(1, MakeTask([&delivered] { delivered++; }));
    w.Post(2, MakeTask([&other_ran] { other_ran = true; }));  // a reply, say
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(other_ran.load()) << "a task went out while a delivery waited for room";
  release.set_value();
  EXPECT_TRUE(WaitFor([&] { return other_ran.load(); }));
  EXPECT_TRUE(WaitFor([&] { return delivered.load() == Worker::kRingCapacity + 1; }));
  engine.Stop();
}

// Installs the published slot layout at each worker's start, as the cluster service does.
class RoutingService final : public ShardService {
 public:
  void OnWorkerStart(Worker& w) override { w.TakeLatestRouting(); }
};

std::shared_ptr<const SlotRouting> LayoutServedBy(uint16_t owner) {
  auto r = std::make_shared<SlotRouting>();
  r->owner.fill(owner);
  return r;
}

// A layout published on the board is what every worker routes by from its next use, with
// no task to install it: the cluster bus publishes a change under the cluster state's
// mutex, and a client that read the state (CLUSTER NODES) then sent a command to a
// worker that had not yet run its install task was routed by the old layout.
TEST(EngineTest, AWorkerRoutesByTheLatestPublishedLayoutWithoutATask) {
  Config config;
  Engine engine(&config, 2);
  RoutingService service;
  engine.AddService(&service);
  engine.routing_board().Publish(LayoutServedBy(1));
  std::string error;
  ASSERT_TRUE(engine.Start(IoBackend::kEpoll, {}, {}, &error)) << error;
  std::atomic<int> seen[2] = {-1, -1};
  for (uint32_t i = 0; i < 2; i++)
    RunOnWorker(engine, i, [&seen, i](Worker& w) { seen[i] = w.routing()->owner[0]; });
  EXPECT_EQ(seen[0], 1);
  EXPECT_EQ(seen[1], 1);
  // Worker 1 is busy when the layout changes; the first thing it does after is route.
  std::promise<void> release;
  std::shared_future<void> go = release.get_future().share();
  std::atomic<bool> busy{false};
  engine.worker(1).PostExternal(MakeTask([go, &busy, &seen] {
    busy = true;
    go.wait();
    seen[1] = Worker::Current()->routing()->owner[0];
  }));
  ASSERT_TRUE(WaitFor([&] { return busy.load(); }));
  engine.routing_board().Publish(LayoutServedBy(2));
  release.set_value();
  EXPECT_TRUE(WaitFor([&] { return seen[1].load() == 2; })) << seen[1].load();
  RunOnWorker(engine, 0, [&seen](Worker& w) { seen[0] = w.routing()->owner[0]; });
  EXPECT_EQ(seen[0], 2);
  engine.Stop();
}

// Without a cluster there is no layout, whatever the board holds.
TEST(EngineTest, AWorkerWithoutAClusterHasNoRouting) {
  Config config;
  Engine engine(&config, 1);
  std::string error;
  ASSERT_TRUE(engine.Start(IoBackend::kEpoll, {}, {}, &error)) << error;
  engine.routing_board().Publish(LayoutServedBy(1));
  std::atomic<bool> none{false};
  RunOnWorker(engine, 0, [&none](Worker& w) { none = w.routing() == nullptr; });
  EXPECT_TRUE(none.load());
  engine.Stop();
}

TEST(EngineTest, LoadingGateHoldsUntilEveryHoldIsReleased) {
  Config config;
  Engine engine(&config, 2);
  EXPECT_FALSE(engine.loading());
  engine.HoldLoading(2);
  engine.ReleaseLoading(1);
  EXPECT_TRUE(engine.loading());
  engine.HoldLoading(1);
  engine.ReleaseLoading(2);
  EXPECT_FALSE(engine.loading());
}

// A waiter as a command would write one: a key holds "elements" while the test says so.
struct FakeWaiter final : BlockedClient {
  Readiness readiness = Readiness::kReady;
  std::vector<std::string>* log = nullptr;
  std::string name;
  Readiness Check(Worker&, std::string_view) override { return readiness; }
  void Take(Worker&, std::string_view key) override {
    log->push_back(name + " took " + std::string(key) + " as " + served_key);
  }
};

std::shared_ptr<FakeWaiter> Waiter(std::string name, std::vector<std::string>* log) {
  auto w = std::make_shared<FakeWaiter>();
  w->name = std::move(name);
  w->log = log;
  w->keys = {"k"};
  return w;
}

TEST(BlockingQueuesTest, ServesWaitersInOrderSkippingOtherTypesAndCancelled) {
  Config config;
  Engine engine(&config, 1);
  std::string error;
  ASSERT_TRUE(engine.Start(IoBackend::kEpoll, {}, {}, &error)) << error;
  std::vector<std::string> log;
  auto a = Waiter("a", &log), b = Waiter("b", &log), c = Waiter("c", &log), d = Waiter("d", &log);
  b->readiness = BlockedClient::Readiness::kOtherType;  // waits for another type
  c->state = BlockedClient::kCancelled;                 // timed out or left
  RunOnWorker(engine, 0, [&](Worker& w) {
    for (auto& x : {a, b, c, d}) w.blocking().Add(0, "k", x);
    EXPECT_EQ(w.blocking().waiting_keys(), 1u);
    w.blocking().Serve(w, 0, "k");
  });
  EXPECT_EQ(log, (std::vector<std::string>{"a took k as k", "d took k as k"}));
  EXPECT_EQ(a->state.load(), BlockedClient::kServed);
  EXPECT_EQ(b->state.load(), BlockedClient::kWaiting);
  EXPECT_EQ(d->state.load(), BlockedClient::kServed);
  // b keeps its place; once the key holds its type it is served, and the queue empties.
  b->readiness = BlockedClient::Readiness::kReady;
  RunOnWorker(engine, 0, [&](Worker& w) {
    w.blocking().Serve(w, 0, "k");
    EXPECT_EQ(w.blocking().waiting_keys(), 0u);
  });
  EXPECT_EQ(log.back(), "b took k as k");
  engine.Stop();
}

TEST(BlockingQueuesTest, AnEmptyKeyServesNobodyAndAClaimedWaiterIsServedOnce) {
  Config config;
  Engine engine(&config, 1);
  std::string error;
  ASSERT_TRUE(engine.Start(IoBackend::kEpoll, {}, {}, &error)) << error;
  std::vector<std::string> log;
  auto a = Waiter("a", &log), b = Waiter("b", &log);
  a->readiness = BlockedClient::Readiness::kEmpty;
  RunOnWorker(engine, 0, [&](Worker& w) {
    w.blocking().Add(0, "k", a);
    w.blocking().Add(0, "k", b);
    w.blocking().Serve(w, 0, "k");  // the key is empty for its first waiter: stop there
  });
  EXPECT_TRUE(log.empty());
  a->readiness = BlockedClient::Readiness::kReady;
  RunOnWorker(engine, 0, [&](Worker& w) {
    w.blocking().Serve(w, 0, "k");
    w.blocking().Serve(w, 0, "k");  // nobody is left to serve
  });
  EXPECT_EQ(log, (std::vector<std::string>{"a took k as k", "b took k as k"}));
  engine.Stop();
}

}  // namespace
}  // namespace strata
