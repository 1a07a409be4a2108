// The epoll backend: readiness events turned into the completion contract of
// event_loop.h. Connections are registered edge-triggered for both directions once;
// `readable`/`writable` remember edges until the connection drains them.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "server/net/event_loop.h"

namespace strata {
namespace {

enum class Tag : uint8_t { kConn, kListener, kWake };

struct Watch {
  Tag tag;
  int fd;
  IoConn* conn = nullptr;
  EventLoop::AcceptFn on_accept;
  std::function<void()> on_wake;
};

class EpollLoop final : public EventLoop {
 public:
  explicit EpollLoop(int epfd) : epfd_(epfd) {}
  ~EpollLoop() override {
    for (Watch* w : listeners_) delete w;
    delete wake_;
    close(epfd_);
  }

  const char* name() const override { return "epoll"; }

  void AddListener(int fd, AcceptFn on_accept) override {
    Watch* w = new Watch{Tag::kListener, fd, nullptr, std::move(on_accept), nullptr};
    listeners_.push_back(w);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.ptr = w;
    epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev);
  }

  void SetWakeFd(int efd, std::function<void()> on_wake) override {
    wake_ = new Watch{Tag::kWake, efd, nullptr, nullptr, std::move(on_wake)};
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.ptr = wake_;
    epoll_ctl(epfd_, EPOLL_CTL_ADD, efd, &ev);
  }

  void AddConn(IoConn* c) override {
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
    // Tag connections by pointer with the low bit clear; Watch objects are only used
    // for listeners and the wake fd, which are told apart by a lookup below.
    ev.data.u64 = reinterpret_cast<uint64_t>(c) | 1;
    c->readable = false;
    c->writable = true;
    epoll_ctl(epfd_, EPOLL_CTL_ADD, c->fd, &ev);
  }

  void ArmRecv(IoConn* c, char* buf, size_t cap) override {
    c->recv_buf = buf;
    c->recv_cap = cap;
    c->recv_armed = true;
    if (c->readable) MarkReady(c);
  }

  bool Send(IoConn* c, const char* data, size_t len) override {
    c->send_ptr = data;
    c->send_left = len;
    c->send_active = true;
    int err = WriteSome(c);
    if (err == 0 && c->send_left == 0) {
      c->send_active = false;
      return true;
    }
    if (err != 0 && err != EAGAIN) {
      // Report the failure through the callback, after the current call stack.
      send_errors_.push_back({c, err});
    }
    return false;
  }

  void Close(IoConn* c) override {
    if (c->closing) return;
    c->closing = true;
    epoll_ctl(epfd_, EPOLL_CTL_DEL, c->fd, nullptr);
    ::close(c->fd);
    c->fd = -1;
    closed_.push_back(c);
  }

  bool HasReadyWork() const override {
    return !ready_.empty() || !closed_.empty() || !send_errors_.empty();
  }

  void Poll(int timeout_ms) override {
    if (HasReadyWork()) timeout_ms = 0;
    Pass(timeout_ms, &outer_);
    std::vector<IoConn*> closed;
    closed.swap(closed_);
    for (IoConn* c : closed) {
      RemoveReady(c);
      c->OnClosed();
    }
  }

  // First the rest of the enclosing pass's batch (its connections' edges were seen and
  // will not be reported again), then a pass of its own; closed_ is left for the
  // enclosing Poll.
  void PollNested() override {
    RunBatch(&outer_);
    Pass(0, &nested_);
  }

 private:
  // The connections one pass reads from, and how far it got.
  struct Batch {
    std::vector<IoConn*> conns;
    size_t done = 0;
  };

  void Pass(int timeout_ms, Batch* batch) {
    epoll_event events[256];
    int n = epoll_wait(epfd_, events, 256, timeout_ms);
    for (int i = 0; i < n; i++) {
      uint64_t u = events[i].data.u64;
      if (u & 1) {
        IoConn* c = reinterpret_cast<IoConn*>(u & ~uint64_t{1});
        if (c->closing) continue;
        uint32_t ev = events[i].events;
        if (ev & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) c->readable = true;
        if (ev & (EPOLLOUT | EPOLLHUP | EPOLLERR)) c->writable = true;
        if (c->send_active && c->writable) ContinueSend(c);
        if (!c->closing && c->recv_armed && c->readable) MarkReady(c);
        continue;
      }
      Watch* w = static_cast<Watch*>(events[i].data.ptr);
      if (w->tag == Tag::kListener) {
        AcceptAll(w);
      } else {
        uint64_t v;
        while (read(w->fd, &v, sizeof(v)) > 0) {
        }
        w->on_wake();
      }
    }
    batch->conns.clear();
    batch->done = 0;
    batch->conns.swap(ready_);
    RunBatch(batch);
    batch->conns.clear();
    batch->done = 0;
    std::vector<std::pair<IoConn*, int>> errors;
    errors.swap(send_errors_);
    for (auto [c, err] : errors) {
      if (!c->closing && c->send_active) {
        c->send_active = false;
        c->OnSendDone(err);
      }
    }
  }

  // 0 when everything that could be written was written (send_left may be > 0 with
  // EAGAIN returned instead), else an errno.
  int WriteSome(IoConn* c) {
    while (c->send_left > 0) {
      ssize_t w = ::send(c->fd, c->send_ptr, c->send_left, MSG_NOSIGNAL);
      if (w > 0) {
        c->send_ptr += w;
        c->send_left -= static_cast<size_t>(w);
        continue;
      }
      if (w < 0 && errno == EINTR) continue;
      if (w < 0 && errno == EAGAIN) {
        c->writable = false;
        return EAGAIN;
      }
      return w < 0 ? errno : EPIPE;
    }
    return 0;
  }

  void ContinueSend(IoConn* c) {
    int err = WriteSome(c);
    if (err == EAGAIN) return;
    c->send_active = false;
    c->OnSendDone(err);
  }

  void AcceptAll(Watch* w) {
    for (int i = 0; i < 64; i++) {
      int fd = accept4(w->fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) return;
      w->on_accept(fd);
    }
  }

  void MarkReady(IoConn* c) {
    if (c->in_ready_list) return;
    c->in_ready_list = true;
    ready_.push_back(c);
  }

  void RemoveReady(IoConn* c) {
    if (!c->in_ready_list) return;
    for (auto& r : ready_) {
      if (r == c) r = nullptr;
    }
    c->in_ready_list = false;
  }

  // One read per connection per turn keeps a busy client from starving the others;
  // a connection with more data stays in the list for the next turn.
  void RunBatch(Batch* batch) {
    while (batch->done < batch->conns.size()) {
      IoConn* c = batch->conns[batch->done++];
      if (c == nullptr) continue;
      c->in_ready_list = false;
      if (c->closing || !c->recv_armed || !c->readable) continue;
      ssize_t r = ::recv(c->fd, c->recv_buf, c->recv_cap, 0);
      if (r < 0 && (errno == EAGAIN || errno == EINTR)) {
        if (errno == EAGAIN) c->readable = false;
        if (errno == EINTR) MarkReady(c);
        continue;
      }
      c->recv_armed = false;
      if (r > 0 && static_cast<size_t>(r) < c->recv_cap) {
        // A short read usually means the socket is drained; the next edge re-arms.
        c->readable = false;
      }
      c->OnRecv(r < 0 ? -errno : r);
    }
  }

  int epfd_;
  std::vector<Watch*> listeners_;
  Watch* wake_ = nullptr;
  std::vector<IoConn*> ready_;
  Batch outer_;   // Poll's
  Batch nested_;  // PollNested's
  std::vector<IoConn*> closed_;
  std::vector<std::pair<IoConn*, int>> send_errors_;
};

}  // namespace

std::unique_ptr<EventLoop> CreateEpollLoop(std::string* error) {
  int epfd = epoll_create1(EPOLL_CLOEXEC);
  if (epfd < 0) {
    *error = std::string("epoll_create1: ") + std::strerror(errno);
    return nullptr;
  }
  return std::make_unique<EpollLoop>(epfd);
}

std::unique_ptr<EventLoop> CreateEventLoop(IoBackend want, std::string* error, std::string* note) {
  if (want == IoBackend::kEpoll) return CreateEpollLoop(error);
  std::string why;
  if (IoUringAvailable(&why)) {
    auto loop = CreateUringLoop(error);
    if (loop || want == IoBackend::kIoUring) return loop;
    why = *error;
  } else if (want == IoBackend::kIoUring) {
    *error = "io_uring requested but unavailable: " + why;
    return nullptr;
  }
  *note = "io_uring unavailable (" + why + "), using epoll";
  return CreateEpollLoop(error);
}

}  // namespace strata
