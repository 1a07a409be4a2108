// MONITOR's feed: every command the process runs, as Redis 7 shows it, to every client that
// sent MONITOR.
//
// Design. Zero cost while nobody monitors: the feed rides on Worker::CountCall's slow path
// (the one compare every command already makes), whose limit drops to 0 while the
// engine counts any monitor (Worker::RefreshSlowLimits; the MONITOR command refreshes its
// own worker at once, the others at their next loop turn).
//   - Lines are made where the command ran, after it ran, in Redis's form:
//     `+<sec>.<usec> [<db> <client addr>] "arg" "arg"...` (arguments escaped as Redis's
//     sdscatrepr does, secrets as "(redacted)"); admin commands are not shown, as in
//     Redis.
//   - Each worker gathers its turn's lines in one buffer and, at the end of the turn,
//     pushes it to its own monitors and posts a copy to each other worker that has
//     monitors (one task per destination per turn), which pushes it to its monitors.
//     Each worker's commands thus reach every monitor in the order they ran on that
//     worker; lines of different workers interleave by turn.
//   - Causal order across workers, as Pub/Sub messages keep it (pubsub.h): a command a
//     client sends after another one's reply shows after it, wherever each ran. The
//     feed goes out before the turn's replies and its tasks to other workers (a feed is
//     posted as a message, which leaves first, and a worker's own monitors get it at
//     once, not in a later turn), and a receiving worker runs the feeds and messages it
//     took from all its rings in their process-wide order, before its other tasks.
//   - A monitor's output is bounded like a subscriber's: it takes the pubsub class of
//     client-output-buffer-limit (32mb 8mb 60 by default) and is closed past it.
// Commands run inside scripts are not shown (the script's EVAL/FCALL is).
//
// Thread-safety: each function runs on the worker it belongs to; the engine's counts are
// atomics.
#include <sys/time.h>

#include <algorithm>
#include <cstdio>

#include "core/string_util.h"
#include "server/engine/client.h"
#include "server/engine/engine.h"
#include "server/engine/slowlog.h"
#include "server/engine/worker.h"

namespace strata {
namespace {

struct FeedTask {
  std::string bytes;
  uint64_t seq;  // NextDeliverySeq
};

void DeliverFeed(void* p) {
  auto* t = static_cast<FeedTask*>(p);
  Worker::Current()->DeliverMonitorFeed(t->bytes);
  delete t;
}

}  // namespace

bool IsMonitorFeedDelivery(const Task& t) { return t.fn == DeliverFeed; }
uint64_t MonitorFeedSeq(const Task& t) { return static_cast<FeedTask*>(t.arg)->seq; }

void Worker::AddMonitor(Client* c) {
  if (c->monitor) return;
  c->monitor = true;
  c->client_class = ClientClass::kPubSub;
  monitors_.push_back(c->id());
  engine_->CountMonitor(index_, 1);
  RefreshSlowLimits();
}

void Worker::RemoveMonitor(Client* c) {
  if (!c->monitor) return;
  c->monitor = false;
  if (!c->subscribed()) c->client_class = ClientClass::kNormal;
  auto it = std::find(monitors_.begin(), monitors_.end(), c->id());
  if (it != monitors_.end()) {
    monitors_.erase(it);
    engine_->CountMonitor(index_, -1);
  }
}

void Worker::FeedMonitors(const CommandSpec* spec, CmdArgs args, uint32_t db, const Client* who) {
  timeval tv;
  gettimeofday(&tv, nullptr);
  char head[64];
  std::snprintf(head, sizeof(head), "+%ld.%06ld [%u ", static_cast<long>(tv.tv_sec),
                static_cast<long>(tv.tv_usec), db);
  monitor_feed_ += head;
  monitor_feed_ += who != nullptr ? who->addr() : std::string("lua");
  monitor_feed_ += "] ";
  std::vector<bool> secret = SecretArguments(spec, args);
  for (size_t j = 0; j < args.size(); j++) {
    if (j != 0) monitor_feed_.push_back(' ');
    AppendRepr(&monitor_feed_, secret[j] ? kRedactedArgument : args[j]);
  }
  monitor_feed_ += "\r\n";
}

void Worker::FlushMonitorFeed() {
  for (uint32_t w = 0; w < engine_->shard_count(); w++) {
    if (w == index_ || !engine_->monitors_on(w)) continue;
    PostMessage(w, Task{DeliverFeed, new FeedTask{monitor_feed_, NextDeliverySeq()}});
  }
  if (!monitors_.empty()) DeliverMonitorFeed(monitor_feed_);
  monitor_feed_.clear();
}

void Worker::DeliverMonitorFeed(const std::string& bytes) {
  std::vector<uint64_t> over;
  for (size_t i = 0; i < monitors_.size();) {
    auto it = conns_.find(monitors_[i]);
    if (it == conns_.end() || it->second->gone()) {
      // Gone without RESET: forget it here.
      monitors_.erase(monitors_.begin() + static_cast<long>(i));
      engine_->CountMonitor(index_, -1);
      continue;
    }
    Client* c = it->second;
    if (c->Push(bytes)) [[unlikely]]
      over.push_back(c->id());
    i++;
  }
  // Past its limit a monitor is closed, after the loop (closing changes the lists).
  for (uint64_t id : over) {
    auto it = conns_.find(id);
    if (it != conns_.end()) it->second->EnforceOutputLimits();
  }
}

}  // namespace strata
