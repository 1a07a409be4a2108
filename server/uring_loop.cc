// The io_uring backend. Every operation is a submission whose completion carries a
// pointer to a small Op record:
//   - accept: multishot where the kernel supports it (re-armed when the kernel says
//     IORING_CQE_F_MORE is gone), else one accept at a time;
//   - recv / send: one of each at most per connection; partial sends resubmit the rest;
//   - the wake eventfd: a read that is re-armed after each completion.
// Closing a connection shuts the socket down, which completes its pending operations;
// the fd is closed and OnClosed() called when none is left in flight.
// Submissions are batched: they are flushed together when Poll() enters the kernel.
#include <liburing.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "server/event_loop.h"

namespace strata {
namespace {

constexpr unsigned kRingEntries = 1024;

enum class OpKind : uint8_t { kRecv, kSend, kAccept, kWake };

struct Op {
  OpKind kind;
  IoConn* conn = nullptr;
};

struct ConnOps {
  Op recv{OpKind::kRecv};
  Op send{OpKind::kSend};
};

struct ListenerOp {
  Op op{OpKind::kAccept};
  int fd;
  EventLoop::AcceptFn on_accept;
};

class UringLoop final : public EventLoop {
 public:
  UringLoop() = default;
  ~UringLoop() override {
    for (ListenerOp* l : listeners_) delete l;
    io_uring_queue_exit(&ring_);
  }

  // REQUIRES: called on the thread that will run the loop (single-issuer rings).
  bool Init(std::string* error) {
    // Prefer deferred task running (completions are processed only when this thread
    // waits, with no inter-processor interrupts), then cooperative, then plain.
    const unsigned flag_sets[] = {IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
                                  IORING_SETUP_COOP_TASKRUN, 0};
    int r = -EINVAL;
    for (unsigned flags : flag_sets) {
      io_uring_params params{};
      params.flags = flags;
      r = io_uring_queue_init_params(kRingEntries, &ring_, &params);
      if (r == 0) {
        setup_flags_ = flags;
        break;
      }
    }
    if (r < 0) {
      *error = std::string("io_uring_queue_init: ") + std::strerror(-r);
      return false;
    }
    io_uring_probe* probe = io_uring_get_probe_ring(&ring_);
    if (probe == nullptr) {
      *error = "io_uring probe failed";
      io_uring_queue_exit(&ring_);
      return false;
    }
    bool ok = io_uring_opcode_supported(probe, IORING_OP_RECV) &&
              io_uring_opcode_supported(probe, IORING_OP_SEND) &&
              io_uring_opcode_supported(probe, IORING_OP_ACCEPT) &&
              io_uring_opcode_supported(probe, IORING_OP_READ);
    io_uring_free_probe(probe);
    if (!ok) {
      *error = "kernel io_uring lacks RECV/SEND/ACCEPT/READ";
      io_uring_queue_exit(&ring_);
      return false;
    }
    return true;
  }

  const char* name() const override { return "io_uring"; }
  std::string Describe() const override {
    std::string d = "io_uring (";
    if (setup_flags_ & IORING_SETUP_DEFER_TASKRUN) {
      d += "single issuer, deferred task run";
    } else if (setup_flags_ & IORING_SETUP_COOP_TASKRUN) {
      d += "cooperative task run";
    } else {
      d += "default task run";
    }
    d += multishot_accept_ ? ", multishot accept)" : ", single accept)";
    return d;
  }

  void AddListener(int fd, AcceptFn on_accept) override {
    ListenerOp* l = new ListenerOp{};
    l->fd = fd;
    l->on_accept = std::move(on_accept);
    listeners_.push_back(l);
    ArmAccept(l);
  }

  void SetWakeFd(int efd, std::function<void()> on_wake) override {
    wake_fd_ = efd;
    on_wake_ = std::move(on_wake);
    ArmWake();
  }

  void AddConn(IoConn* c) override {
    auto* ops = new ConnOps();
    ops->recv.conn = c;
    ops->send.conn = c;
    c->loop_state = ops;
  }

  void ArmRecv(IoConn* c, char* buf, size_t cap) override {
    if (c->closing) return;
    c->recv_buf = buf;
    c->recv_cap = cap;
    c->recv_armed = true;
    io_uring_sqe* sqe = GetSqe();
    io_uring_prep_recv(sqe, c->fd, buf, cap, 0);
    io_uring_sqe_set_data(sqe, &static_cast<ConnOps*>(c->loop_state)->recv);
    c->ops_in_flight++;
  }

  bool Send(IoConn* c, const char* data, size_t len) override {
    // Most replies fit in the socket buffer: a direct send completes them without a
    // submission and a completion. Only the rest (or all, on EAGAIN) goes to the ring.
    ssize_t w = ::send(c->fd, data, len, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w == static_cast<ssize_t>(len)) return true;
    if (w < 0 && errno != EAGAIN && errno != EINTR) {
      c->send_ptr = data;
      c->send_left = len;
      c->send_active = true;
      failed_sends_.push_back({c, errno});
      return false;
    }
    size_t done = w > 0 ? static_cast<size_t>(w) : 0;
    c->send_ptr = data + done;
    c->send_left = len - done;
    c->send_active = true;
    SubmitSend(c);
    return false;
  }

  void Close(IoConn* c) override {
    if (c->closing) return;
    c->closing = true;
    ::shutdown(c->fd, SHUT_RDWR);
    if (c->ops_in_flight == 0) Finish(c);
  }

  bool HasReadyWork() const override { return !finished_.empty() || !failed_sends_.empty(); }
  unsigned setup_flags() const { return setup_flags_; }

  void Poll(int timeout_ms) override {
    if (!finished_.empty()) timeout_ms = 0;
    io_uring_cqe* cqe = nullptr;
    if (timeout_ms == 0) {
      io_uring_submit(&ring_);
    } else if (timeout_ms < 0) {
      io_uring_submit_and_wait(&ring_, 1);
    } else {
      __kernel_timespec ts{};
      ts.tv_sec = timeout_ms / 1000;
      ts.tv_nsec = static_cast<long>(timeout_ms % 1000) * 1000000L;
      io_uring_submit_and_wait_timeout(&ring_, &cqe, 1, &ts, nullptr);
    }
    unsigned head;
    unsigned seen = 0;
    // Copy out completions first: handlers submit new work, which must not race with
    // iterating the completion queue.
    completions_.clear();
    io_uring_for_each_cqe(&ring_, head, cqe) {
      completions_.push_back({static_cast<Op*>(io_uring_cqe_get_data(cqe)), cqe->res,
                              cqe->flags});
      seen++;
    }
    io_uring_cq_advance(&ring_, seen);
    for (const Completion& done : completions_) Handle(done);
    std::vector<std::pair<IoConn*, int>> failed;
    failed.swap(failed_sends_);
    for (auto [c, err] : failed) {
      if (!c->closing && c->send_active) {
        c->send_active = false;
        c->OnSendDone(err);
      }
    }
    std::vector<IoConn*> finished;
    finished.swap(finished_);
    for (IoConn* c : finished) c->OnClosed();
  }

 private:
  struct Completion {
    Op* op;
    int res;
    unsigned flags;
  };

  io_uring_sqe* GetSqe() {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    while (sqe == nullptr) {
      io_uring_submit(&ring_);
      sqe = io_uring_get_sqe(&ring_);
    }
    return sqe;
  }

  void ArmAccept(ListenerOp* l) {
    io_uring_sqe* sqe = GetSqe();
    if (multishot_accept_) {
      io_uring_prep_multishot_accept(sqe, l->fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    } else {
      io_uring_prep_accept(sqe, l->fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    }
    io_uring_sqe_set_data(sqe, &l->op);
  }

  void ArmWake() {
    io_uring_sqe* sqe = GetSqe();
    io_uring_prep_read(sqe, wake_fd_, &wake_buf_, sizeof(wake_buf_), 0);
    io_uring_sqe_set_data(sqe, &wake_op_);
  }

  void SubmitSend(IoConn* c) {
    io_uring_sqe* sqe = GetSqe();
    io_uring_prep_send(sqe, c->fd, c->send_ptr, c->send_left, MSG_NOSIGNAL);
    io_uring_sqe_set_data(sqe, &static_cast<ConnOps*>(c->loop_state)->send);
    c->ops_in_flight++;
  }

  void Finish(IoConn* c) {
    delete static_cast<ConnOps*>(c->loop_state);
    c->loop_state = nullptr;
    ::close(c->fd);
    c->fd = -1;
    finished_.push_back(c);
  }

  ListenerOp* ListenerOf(Op* op) {
    for (ListenerOp* l : listeners_) {
      if (&l->op == op) return l;
    }
    return nullptr;
  }

  void Handle(const Completion& done) {
    Op* op = done.op;
    switch (op->kind) {
      case OpKind::kWake:
        on_wake_();
        ArmWake();
        return;
      case OpKind::kAccept: {
        ListenerOp* l = ListenerOf(op);
        if (done.res == -EINVAL && multishot_accept_) {
          // Kernel without multishot accept: switch to one accept per completion.
          multishot_accept_ = false;
          ArmAccept(l);
          return;
        }
        if (done.res >= 0) l->on_accept(done.res);
        if (!multishot_accept_ || !(done.flags & IORING_CQE_F_MORE)) ArmAccept(l);
        return;
      }
      case OpKind::kRecv: {
        IoConn* c = op->conn;
        c->ops_in_flight--;
        c->recv_armed = false;
        if (c->closing) {
          if (c->ops_in_flight == 0) Finish(c);
          return;
        }
        c->OnRecv(done.res);
        if (c->closing && c->ops_in_flight == 0 && c->loop_state != nullptr) Finish(c);
        return;
      }
      case OpKind::kSend: {
        IoConn* c = op->conn;
        c->ops_in_flight--;
        if (c->closing) {
          c->send_active = false;
          if (c->ops_in_flight == 0) Finish(c);
          return;
        }
        if (done.res < 0) {
          c->send_active = false;
          c->OnSendDone(-done.res);
        } else {
          c->send_ptr += done.res;
          c->send_left -= static_cast<size_t>(done.res);
          if (c->send_left > 0) {
            SubmitSend(c);
          } else {
            c->send_active = false;
            c->OnSendDone(0);
          }
        }
        if (c->closing && c->ops_in_flight == 0 && c->loop_state != nullptr) Finish(c);
        return;
      }
    }
  }

  io_uring ring_{};
  std::vector<ListenerOp*> listeners_;
  std::vector<IoConn*> finished_;
  std::vector<Completion> completions_;
  std::vector<std::pair<IoConn*, int>> failed_sends_;
  unsigned setup_flags_ = 0;
  bool multishot_accept_ = true;
  int wake_fd_ = -1;
  uint64_t wake_buf_ = 0;
  Op wake_op_{OpKind::kWake};
  std::function<void()> on_wake_;
};

}  // namespace

bool IoUringAvailable(std::string* why_not) {
  io_uring ring;
  int r = io_uring_queue_init(4, &ring, 0);
  if (r < 0) {
    *why_not = std::string("io_uring_setup: ") + std::strerror(-r);
    return false;
  }
  io_uring_queue_exit(&ring);
  return true;
}

std::unique_ptr<EventLoop> CreateUringLoop(std::string* error) {
  auto loop = std::make_unique<UringLoop>();
  if (!loop->Init(error)) return nullptr;
  return loop;
}

}  // namespace strata
