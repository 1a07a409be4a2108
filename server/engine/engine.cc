#include "server/engine/engine.h"

#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "server/base/config.h"
#include "server/base/log.h"
#include "server/engine/pubsub.h"
#include "server/engine/slowlog.h"
#include "server/engine/worker.h"

namespace strata {

Engine::Engine(Config* config, uint32_t shard_count)
    : config_(config),
      shard_count_(shard_count),
      pubsub_(std::make_unique<PubSubDirectory>(shard_count)),
      slowlog_(std::make_unique<SlowLog>()),
      monitors_on_(std::make_unique<std::atomic<int32_t>[]>(shard_count)),
      repl_log_(std::make_unique<ReplLog>(shard_count,
                                          static_cast<size_t>(config->Int("repl-backlog-size")))) {}

Engine::~Engine() = default;

std::vector<uint32_t> Engine::AllShards() const {
  std::vector<uint32_t> all(shard_count_);
  for (uint32_t i = 0; i < shard_count_; i++) all[i] = i;
  return all;
}

void Engine::MissingService() {
  static const char kMsg[] =
      "internal error: a command asked for a service the process did not add";
  LogWarning("%s", kMsg);
  std::fprintf(stderr, "%s\n", kMsg);
  std::abort();
}

bool Engine::Start(IoBackend backend, const std::vector<int>& listen_fds,
                   const std::vector<int>& cpus, std::string* error) {
  for (uint32_t i = 0; i < shard_count_; i++) workers_.push_back(std::make_unique<Worker>(this, i));
  if (!cpus.empty() && cpus.size() >= shard_count_) {
    for (uint32_t i = 0; i < shard_count_; i++) workers_[i]->set_cpu(cpus[i]);
  }
  for (uint32_t i = 0; i < shard_count_; i++) {
    std::string worker_note;
    if (!workers_[i]->Start(backend, {}, nullptr, error, &worker_note)) {
      for (uint32_t j = 0; j < i; j++) workers_[j]->RequestStop();
      for (uint32_t j = 0; j < i; j++) workers_[j]->Join();
      return false;
    }
    if (i == 0) {
      if (!worker_note.empty()) LogWarning("%s", worker_note.c_str());
      process_.io_backend = workers_[0]->backend_name();
      LogNotice("I/O backend: %s", workers_[0]->backend_description().c_str());
    }
  }
  if (!listen_fds.empty()) {
    acceptor_wake_fd_ = eventfd(0, EFD_CLOEXEC);
    if (acceptor_wake_fd_ < 0) {
      *error = std::string("eventfd: ") + std::strerror(errno);
      for (auto& w : workers_) w->RequestStop();
      for (auto& w : workers_) w->Join();
      return false;
    }
    acceptor_ = std::thread([this, listen_fds] { AcceptLoop(listen_fds); });
  }
  return true;
}

void Engine::Deal(int fd) {
  uint32_t dest = 0;
  for (uint32_t tries = 0; tries < shard_count_; tries++) {
    dest = next_worker.fetch_add(1, std::memory_order_relaxed) % shard_count_;
    if (!workers_[dest]->script_busy()) break;
  }
  workers_[dest]->PostAdoption(fd);
}

void Engine::AcceptLoop(std::vector<int> listen_fds) {
  std::vector<pollfd> pfds;
  for (int fd : listen_fds) pfds.push_back(pollfd{fd, POLLIN, 0});
  pfds.push_back(pollfd{acceptor_wake_fd_, POLLIN, 0});
  bool warned = false;
  for (;;) {
    int r = poll(pfds.data(), pfds.size(), -1);
    if (r < 0) {
      if (errno == EINTR) continue;
      LogWarning("accept: poll: %s", std::strerror(errno));
      return;
    }
    if (pfds.back().revents != 0) return;  // Stop
    for (size_t i = 0; i + 1 < pfds.size(); i++) {
      if (pfds[i].revents == 0) continue;
      for (;;) {
        int cfd = accept4(pfds[i].fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (cfd >= 0) {
          warned = false;
          Deal(cfd);
          continue;
        }
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno == EMFILE || errno == ENFILE) {
          if (!warned) LogWarning("Error accepting a client connection: %s", std::strerror(errno));
          warned = true;
          std::this_thread::sleep_for(std::chrono::milliseconds(10));  // a descriptor frees
        }
        break;  // EAGAIN, or a pause after an error
      }
    }
  }
}

void Engine::Stop() {
  // Each such thread bounds its own waits (MIGRATE's timeout); give them that long.
  for (int i = 0; i < 60000 && off_threads_.load(std::memory_order_acquire) > 0; i++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (acceptor_.joinable()) {
    uint64_t one = 1;
    ssize_t n = write(acceptor_wake_fd_, &one, sizeof(one));
    (void)n;
    acceptor_.join();
  }
  if (acceptor_wake_fd_ >= 0) close(acceptor_wake_fd_);
  acceptor_wake_fd_ = -1;
  for (auto& w : workers_) w->RequestStop();
  for (auto& w : workers_) w->Join();
}

size_t Engine::UsedMemory() const {
  size_t total = 0;
  for (const auto& w : workers_) total += w->published_used_bytes();
  return total + pubsub_->bytes();
}

size_t Engine::ClientMemory() const {
  size_t total = 0;
  for (const auto& w : workers_) total += w->published_client_bytes();
  return total;
}

size_t Engine::LargestEvictableClientExcept(uint32_t worker) const {
  size_t largest = 0;
  for (const auto& w : workers_) {
    if (w->index() != worker) largest = std::max(largest, w->published_largest_evictable());
  }
  return largest;
}

size_t Engine::UsedMemoryAfterLazyFree() const {
  size_t total = 0;
  for (const auto& w : workers_) {
    size_t used = w->published_used_bytes(), lazy = w->published_lazy_bytes();
    total += used > lazy ? used - lazy : 0;
  }
  return total;
}

bool Engine::EvictionExhausted() const {
  for (const auto& w : workers_) {
    if (!w->eviction().exhausted()) return false;
  }
  return true;
}

size_t Engine::EvictableUsedMemory() const {
  size_t total = 0;
  for (const auto& w : workers_) {
    if (!w->eviction().exhausted()) total += w->published_used_bytes();
  }
  return total;
}

void Engine::NoteOverMemory(bool over, int64_t now_ms) {
  int64_t since = over_since_ms_.load(std::memory_order_relaxed);
  if (over && since == 0) {
    over_since_ms_.store(now_ms, std::memory_order_relaxed);
  } else if (!over && since != 0) {
    over_total_ms_.fetch_add(now_ms - since, std::memory_order_relaxed);
    over_since_ms_.store(0, std::memory_order_relaxed);
  }
}

int64_t Engine::current_eviction_exceeded_ms(int64_t now_ms) const {
  int64_t since = over_since_ms_.load(std::memory_order_relaxed);
  return since == 0 ? 0 : std::max<int64_t>(0, now_ms - since);
}

int64_t Engine::total_eviction_exceeded_ms(int64_t now_ms) const {
  return over_total_ms_.load(std::memory_order_relaxed) + current_eviction_exceeded_ms(now_ms);
}

size_t Engine::StartupMemory() const {
  size_t total = 0;
  for (const auto& w : workers_) total += w->startup_used_bytes();
  return total;
}

void Engine::UpdatePeakMemory(size_t used) {
  size_t peak = peak_memory_.load(std::memory_order_relaxed);
  while (used > peak && !peak_memory_.compare_exchange_weak(peak, used)) {
  }
}

void Engine::RequestShutdown(bool save_done) {
  if (save_done) shutdown_save_done_.store(true);
  kill(getpid(), SIGTERM);
}

void Engine::PauseClients(int64_t end_ms, PauseMode mode, PausePurpose purpose) {
  std::lock_guard<std::mutex> l(pause_mu_);
  Pause& p = pause_[purpose];
  int64_t cur_end = p.end_ms.load(std::memory_order_relaxed);
  uint8_t cur_mode =
      cur_end == 0 ? static_cast<uint8_t>(kPauseNone) : p.mode.load(std::memory_order_relaxed);
  p.mode.store(std::max<uint8_t>(cur_mode, mode), std::memory_order_relaxed);
  p.end_ms.store(std::max(cur_end, end_ms), std::memory_order_release);
}

void Engine::ShowPauseToWorkers() {
  for (auto& w : workers_) {
    w->PostExternal(MakeTask([] { Worker::Current()->SetPauseGate(true); }));
  }
}

void Engine::UnpauseClients(PausePurpose purpose) {
  {
    std::lock_guard<std::mutex> l(pause_mu_);
    pause_[purpose].end_ms.store(0, std::memory_order_release);
    pause_[purpose].mode.store(kPauseNone, std::memory_order_relaxed);
  }
  for (auto& w : workers_) {
    w->PostExternal(MakeTask([] {
      Worker* self = Worker::Current();
      // Another purpose's pause may still hold; the gate stays up for it.
      if (self->engine().PauseModeAt(self->now_ms()) == kPauseNone) self->SetPauseGate(false);
      self->WakePauseWaiters();
    }));
  }
}

Engine::PauseMode Engine::PauseModeAt(int64_t now_ms) {
  uint8_t mode = kPauseNone;
  for (Pause& p : pause_) {
    int64_t end = p.end_ms.load(std::memory_order_acquire);
    if (end == 0) continue;
    if (now_ms < end) {
      mode = std::max(mode, p.mode.load(std::memory_order_relaxed));
      continue;
    }
    std::lock_guard<std::mutex> l(pause_mu_);
    if (p.end_ms.load(std::memory_order_relaxed) == end) {
      p.end_ms.store(0, std::memory_order_release);
      p.mode.store(kPauseNone, std::memory_order_relaxed);
    }
  }
  return static_cast<PauseMode>(mode);
}

int64_t Engine::pause_end_ms() const {
  int64_t next = 0;
  for (const Pause& p : pause_) {
    int64_t end = p.end_ms.load(std::memory_order_relaxed);
    if (end != 0 && (next == 0 || end < next)) next = end;
  }
  return next;
}

void Engine::RequestExit(int code) {
  exit_code_.store(code);
  kill(getpid(), SIGTERM);
}

}  // namespace strata
