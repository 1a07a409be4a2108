#include "tools/strata-bench/bench_thread.h"

#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <limits>

#include "storage/mono_clock.h"

namespace strata::bench {
namespace {

constexpr int kMaxEvents = 256;
constexpr int kWaitMs = 50;
constexpr uint64_t kHousekeepingNs = 100'000'000;

}  // namespace

std::string MakeValue(uint32_t data_size, bool random, uint64_t seed) {
  std::string v(data_size, 'x');
  if (random) {
    Rng rng(seed);
    static constexpr char kChars[] =
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    for (char& c : v) c = kChars[rng.Uniform(sizeof(kChars) - 1)];
  }
  return v;
}

BenchThread::BenchThread(const Options& options, const sockaddr* addr, socklen_t addr_len,
                         std::string server_name, uint32_t first_client, uint64_t value_seed,
                         const std::atomic<bool>* stop)
    : options_(options),
      value_(MakeValue(options.data_size, options.random_data, value_seed)),
      writer_(options.key_prefix, value_),
      stop_(stop),
      first_client_(first_client) {
  ctx_.options = &options_;
  ctx_.writer = &writer_;
  ctx_.addr = addr;
  ctx_.addr_len = addr_len;
  ctx_.server_name = std::move(server_name);
  ctx_.stats = &stats_;
  ctx_.live = &live_;
  ctx_.last_finish_ns = &last_finish_ns_;
}

BenchThread::~BenchThread() {
  connections_.clear();
  if (ctx_.epoll_fd >= 0) ::close(ctx_.epoll_fd);
}

void BenchThread::Publish() {
  const uint64_t ops = stats_.ops() + stats_.error_replies();
  const double lat = stats_.sets.latency.Mean() * static_cast<double>(stats_.sets.latency.Count()) +
                     stats_.gets.latency.Mean() * static_cast<double>(stats_.gets.latency.Count());
  progress_.ops.store(ops, std::memory_order_relaxed);
  progress_.bytes.store(
      stats_.sets.bytes_tx + stats_.sets.bytes_rx + stats_.gets.bytes_tx + stats_.gets.bytes_rx,
      std::memory_order_relaxed);
  progress_.latency_us_sum.store(static_cast<uint64_t>(lat), std::memory_order_relaxed);
  progress_.active_clients.store(live_, std::memory_order_relaxed);
}

void BenchThread::Run(uint64_t start_ns) {
  last_finish_ns_ = start_ns;
  ctx_.epoll_fd = ::epoll_create1(EPOLL_CLOEXEC);
  if (ctx_.epoll_fd < 0) {
    setup_error_ = std::string("epoll_create1: ") + std::strerror(errno);
    stats_.connection_errors += options_.clients;
    stats_.first_connection_error = setup_error_;
    progress_.finished.store(true, std::memory_order_release);
    return;
  }
  connections_.reserve(options_.clients);
  live_ = options_.clients;
  for (uint32_t i = 0; i < options_.clients; ++i) {
    connections_.push_back(std::make_unique<Connection>(ctx_, first_client_ + i, i));
  }
  uint64_t now = NowNs();
  for (auto& c : connections_) c->Start(now);

  const uint64_t deadline =
      options_.test_time > 0 ? start_ns + uint64_t{options_.test_time} * 1'000'000'000 : 0;
  const uint64_t timeout_ns = uint64_t{options_.reply_timeout_s} * 1'000'000'000;
  bool stopping = false;
  uint64_t next_housekeeping = now + kHousekeepingNs;
  epoll_event events[kMaxEvents];
  while (live_ > 0) {
    // --rate-limiting: wake for the next request due, to the microsecond.
    int64_t wait_ns = int64_t{kWaitMs} * 1'000'000;
    if (options_.rate_limiting > 0) {
      uint64_t due = std::numeric_limits<uint64_t>::max();
      for (auto& c : connections_) due = std::min(due, c->NextSendNs());
      if (due != std::numeric_limits<uint64_t>::max()) {
        const uint64_t at = NowNs();
        wait_ns = due > at ? std::min<int64_t>(wait_ns, static_cast<int64_t>(due - at)) : 0;
      }
    }
    const timespec wait{static_cast<time_t>(wait_ns / 1'000'000'000), wait_ns % 1'000'000'000};
    const int n = ::epoll_pwait2(ctx_.epoll_fd, events, kMaxEvents, &wait, nullptr);
    if (n < 0 && errno != EINTR) {
      // Cannot wait for sockets any more: fail what is left rather than spin.
      const std::string why = std::string("epoll_pwait2: ") + std::strerror(errno);
      for (auto& c : connections_) {
        if (!c->finished()) c->CheckTimeout(UINT64_MAX, 0);
      }
      if (stats_.first_connection_error.empty()) stats_.first_connection_error = why;
      break;
    }
    for (int i = 0; i < n; ++i) connections_[events[i].data.u64]->OnEvents(events[i].events);
    now = NowNs();
    if (options_.rate_limiting > 0) {
      for (auto& c : connections_) c->OnTick(now);
    }
    if (!stopping && ((deadline != 0 && now >= deadline) ||
                      (stop_ != nullptr && stop_->load(std::memory_order_relaxed)))) {
      stopping = true;
      for (auto& c : connections_) c->StopSending(now);
    }
    if (now >= next_housekeeping) {
      next_housekeeping = now + kHousekeepingNs;
      for (auto& c : connections_) c->CheckTimeout(now, timeout_ns);
      Publish();
    }
  }
  Publish();
  progress_.finished.store(true, std::memory_order_release);
}

}  // namespace strata::bench
