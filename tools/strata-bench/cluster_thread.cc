#include "tools/strata-bench/cluster_thread.h"

#include <sys/epoll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tools/strata-bench/bench_thread.h"
#include "tools/strata-bench/connection.h"

namespace strata::bench {
namespace {

constexpr int kClusterMaxEvents = 256;
constexpr int kClusterWaitMs = 50;
constexpr uint64_t kClusterHousekeepingNs = 100'000'000;

}  // namespace

ClusterThread::ClusterThread(const Options& options, const std::vector<SlotRange>& slots,
                             uint32_t first_client, uint64_t value_seed,
                             const std::atomic<bool>* stop)
    : options_(options),
      value_(MakeValue(options.data_size, options.random_data, value_seed)),
      writer_(options.key_prefix, value_),
      stop_(stop),
      first_client_(first_client) {
  ctx_.options = &options_;
  ctx_.writer = &writer_;
  ctx_.stats = &stats_;
  ctx_.map.Apply(slots);
  // Every master is listed in the report, also one that answered nothing.
  for (uint32_t node = 0; node < ctx_.map.nodes().size(); ++node) ctx_.StatsOf(node);
}

ClusterThread::~ClusterThread() {
  clients_.clear();
  if (ctx_.epoll_fd >= 0) ::close(ctx_.epoll_fd);
}

void ClusterThread::Publish() {
  const uint64_t ops = stats_.ops() + stats_.error_replies();
  const double lat = stats_.sets.latency.Mean() * static_cast<double>(stats_.sets.latency.Count()) +
                     stats_.gets.latency.Mean() * static_cast<double>(stats_.gets.latency.Count());
  progress_.ops.store(ops, std::memory_order_relaxed);
  progress_.bytes.store(
      stats_.sets.bytes_tx + stats_.sets.bytes_rx + stats_.gets.bytes_tx + stats_.gets.bytes_rx,
      std::memory_order_relaxed);
  progress_.latency_us_sum.store(static_cast<uint64_t>(lat), std::memory_order_relaxed);
  progress_.active_clients.store(ctx_.live, std::memory_order_relaxed);
}

void ClusterThread::Run(uint64_t start_ns) {
  ctx_.last_finish_ns = start_ns;
  ctx_.epoll_fd = ::epoll_create1(EPOLL_CLOEXEC);
  if (ctx_.epoll_fd < 0) {
    setup_error_ = std::string("epoll_create1: ") + std::strerror(errno);
    stats_.connection_errors += options_.clients;
    stats_.first_connection_error = setup_error_;
    progress_.finished.store(true, std::memory_order_release);
    return;
  }
  clients_.reserve(options_.clients);
  ctx_.live = options_.clients;
  for (uint32_t i = 0; i < options_.clients; ++i) {
    clients_.push_back(std::make_unique<ClusterClient>(ctx_, first_client_ + i));
  }
  uint64_t now = NowNs();
  for (auto& c : clients_) c->Start(now);

  const uint64_t deadline =
      options_.test_time > 0 ? start_ns + uint64_t{options_.test_time} * 1'000'000'000 : 0;
  const uint64_t timeout_ns = uint64_t{options_.reply_timeout_s} * 1'000'000'000;
  bool stopping = false;
  uint64_t next_housekeeping = now + kClusterHousekeepingNs;
  epoll_event events[kClusterMaxEvents];
  while (ctx_.live > 0) {
    const int n = ::epoll_wait(ctx_.epoll_fd, events, kClusterMaxEvents, kClusterWaitMs);
    if (n < 0 && errno != EINTR) {
      // Cannot wait for sockets any more: fail what is left rather than spin.
      const std::string why = std::string("epoll_wait: ") + std::strerror(errno);
      for (auto& c : clients_) c->CheckTimeout(UINT64_MAX, 0);
      if (stats_.first_connection_error.empty()) stats_.first_connection_error = why;
      break;
    }
    for (int i = 0; i < n; ++i) ctx_.links[events[i].data.u64]->OnEvents(events[i].events);
    now = NowNs();
    if (!stopping && ((deadline != 0 && now >= deadline) ||
                      (stop_ != nullptr && stop_->load(std::memory_order_relaxed)))) {
      stopping = true;
      for (auto& c : clients_) c->StopSending(now);
    }
    if (now >= next_housekeeping) {
      next_housekeeping = now + kClusterHousekeepingNs;
      for (auto& c : clients_) c->CheckTimeout(now, timeout_ns);
      Publish();
    }
  }
  Publish();
  progress_.finished.store(true, std::memory_order_release);
}

}  // namespace strata::bench
