// The io_uring backend. Every operation is a submission whose completion carries a
// pointer to a small Op record:
//   - accept: multishot where the kernel supports it (re-armed when the kernel says
//     IORING_CQE_F_MORE is gone), else one accept at a time;
//   - recv: multishot receive into a ring of provided buffers where the kernel supports
//     it (one submission per connection for its whole life; each completion's bytes are
//     copied into the connection's buffer and the provided buffer is returned at once;
//     bytes that arrive while the connection is not reading wait in a per-connection
//     backlog), else one recv submission per read. The ring starts with a few buffers
//     and grows when a pass's receives took most of them or one found none
//     (recv_buffer_growth.h): every buffer in the ring is used in turn and stays
//     resident, so its size is the memory it costs;
//   - send: a reply of at most 4 KiB is a submission, which goes to the kernel with the
//     loop turn's others in the one io_uring_enter that ends the turn
//     (io-uring-batched-sends yes, the default: no send(2) per connection); a larger one,
//     or any with the setting off, is a direct send() first and the remainder (if any)
//     a submission;
//   - the wake eventfd: a read that is re-armed after each completion.
// The turn's closing io_uring_enter submits and waits in one call. A batched send is
// submitted with MSG_DONTWAIT, so it completes inside that call, before the wait starts:
// sent (in whole or part), or -EAGAIN when the socket is full, never parked on a poll.
// A wait for "one completion" would return at once on those, and every turn would take
// a second io_uring_enter to sleep; so the wait asks for one completion more than the
// batched sends it submits. What a batched send left unsent (a full socket) goes in an
// ordinary send submission, which completes whenever the socket has room.
//
// Wake-up batching (io-uring-wakeup-batch N > 1, off by default): each wake-up of a
// sleeping worker costs a context switch and a system call, which at pipeline 1 is paid
// per request. With N > 1 the wait asks for up to N completions beyond the sends, bounded
// by io-uring-wakeup-batch-usec, so one wake-up serves several clients. What it asks for
// adapts, so that a light load keeps its latency (wakeup_batch_policy.h): never more than
// the arrival rate promises within half the bound, nor than half the clients that are
// sending, nor while other threads wake the loop. The cost is up to the bound in added
// latency when a batch the rate promised does not come.
//
// Busy polling (io-uring-busy-poll-usec N > 0, off by default): a turn that would sleep
// first submits its work and then looks for completions until what the wait would have
// waited for is there, or N microseconds passed; only then does it sleep. It enters the
// kernel (an io_uring_enter that runs the deferred task work and does not wait) only
// when the ring's task-run flag says task work is pending, or on every look where the
// kernel has no such flag. Where a core is the server's alone, the CPU this spends is
// otherwise idle, and it spares the turn the sleep and the wake-up (the scheduler's work,
// and a virtual machine's exits) that cost more than the request itself at pipeline 1.
// Closing a connection shuts the socket down, which completes its pending operations;
// the fd is closed and OnClosed() called when none is left in flight.
// Submissions are batched: they are flushed together when Poll() enters the kernel.
#include <liburing.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "server/base/heap_bytes.h"
#include "server/base/log.h"
#include "server/net/event_loop.h"
#include "server/net/recv_buffer_growth.h"
#include "server/net/wakeup_batch_policy.h"

namespace strata {
namespace {

constexpr unsigned kRingEntries = 1024;
// Provided receive buffers: the most a worker's ring holds (a power of 2, the ring's
// entries), and how many it starts with (recv_buffer_growth.h).
constexpr unsigned kRecvBuffers = 128;
constexpr unsigned kRecvBuffersInitial = 16;
constexpr unsigned kRecvBufferSize = 16 * 1024;
constexpr size_t kRecvBufferBytes = static_cast<size_t>(kRecvBuffers) * kRecvBufferSize;
constexpr int kRecvBufferGroup = 1;
// io-uring-batched-sends: replies up to this size wait for the turn's submission.
constexpr size_t kBatchedSendMaxBytes = 4096;

enum class OpKind : uint8_t { kRecv, kSend, kAccept, kWake };

struct Op {
  OpKind kind;
  IoConn* conn = nullptr;
};

// Bytes received for a connection that was not reading. Consumed from the front by
// advancing an offset (compacted once half is consumed), so a client that sends far
// ahead of the server never makes each read move the whole rest of the backlog.
struct Backlog {
  std::string bytes;
  size_t off = 0;
  bool empty() const { return off == bytes.size(); }
  size_t size() const { return bytes.size() - off; }
  const char* data() const { return bytes.data() + off; }
  void append(const char* p, size_t n) { bytes.append(p, n); }
  void consume(size_t n) {
    off += n;
    if (off == bytes.size()) {
      bytes.clear();
      off = 0;
    } else if (off >= (64u << 10) && off * 2 >= bytes.size()) {
      bytes.erase(0, off);
      off = 0;
    }
  }
};

struct ConnOps {
  Op recv{OpKind::kRecv};
  Op send{OpKind::kSend};
  Backlog backlog;         // received, not yet handed to the connection
  bool multishot = false;  // a multishot recv is armed
  bool eof = false;
  int error = 0;
  bool in_ready = false;
  bool send_nowait = false;   // the send in flight is a batched one (MSG_DONTWAIT)
  uint64_t input_window = 0;  // wake-up batching: the last window this one sent input in
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
    if (buf_ring_ != nullptr) io_uring_unregister_buf_ring(&ring_, kRecvBufferGroup);
    io_uring_queue_exit(&ring_);
    std::free(buf_ring_);
    if (recv_buffers_ != nullptr) munmap(recv_buffers_, kRecvBufferBytes);
  }

  // REQUIRES: called on the thread that will run the loop (single-issuer rings).
  bool Init(std::string* error) {
    // Prefer deferred task running (completions are processed only when this thread
    // waits, with no inter-processor interrupts), then cooperative, then plain; each with
    // the kernel's flag that says task work is pending (busy polling reads it, so it
    // enters the kernel only when there is something to take) where it has it.
    constexpr unsigned kDefer = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
    const unsigned flag_sets[] = {kDefer | IORING_SETUP_TASKRUN_FLAG, kDefer,
                                  IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG,
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
    SetUpProvidedBuffers();
    return true;
  }

  // Registers a ring of provided receive buffers; without it (old kernels) receives
  // are single-shot into the connection's own buffer.
  void SetUpProvidedBuffers() {
    size_t ring_bytes = kRecvBuffers * sizeof(io_uring_buf);
    void* ring_mem = nullptr;
    void* bufs = nullptr;
    if (posix_memalign(&ring_mem, 4096, ring_bytes) != 0) return;
    // Straight from mmap: exactly the bytes asked for, touched only as data arrives.
    bufs =
        mmap(nullptr, kRecvBufferBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (bufs == MAP_FAILED) {
      std::free(ring_mem);
      return;
    }
    std::memset(ring_mem, 0, ring_bytes);
    io_uring_buf_reg reg{};
    reg.ring_addr = reinterpret_cast<uint64_t>(ring_mem);
    reg.ring_entries = kRecvBuffers;
    reg.bgid = kRecvBufferGroup;
    if (io_uring_register_buf_ring(&ring_, &reg, 0) != 0) {
      std::free(ring_mem);
      munmap(bufs, kRecvBufferBytes);
      return;
    }
    buf_ring_ = static_cast<io_uring_buf_ring*>(ring_mem);
    recv_buffers_ = static_cast<char*>(bufs);
    io_uring_buf_ring_init(buf_ring_);
    AddRecvBuffers(recv_growth_.count());
    multishot_recv_ = true;
  }

  // Puts buffers recv_buffers_added_ .. count-1 in the ring (the mmap'd area holds all
  // kRecvBuffers; one never in the ring is never touched).
  void AddRecvBuffers(unsigned count) {
    unsigned n = 0;
    for (unsigned i = recv_buffers_added_; i < count; i++, n++) {
      io_uring_buf_ring_add(buf_ring_, recv_buffers_ + static_cast<size_t>(i) * kRecvBufferSize,
                            kRecvBufferSize, static_cast<unsigned short>(i),
                            io_uring_buf_ring_mask(kRecvBuffers), static_cast<int>(n));
    }
    if (n == 0) return;
    io_uring_buf_ring_advance(buf_ring_, static_cast<int>(n));
    recv_buffers_added_ = count;
  }

  const char* name() const override { return "io_uring"; }
  // The receive buffers are charged by their resident pages: the kernel fills them
  // round-robin, so they become resident gradually, and untouched ones cost nothing.
  size_t BufferBytes() const override {
    return resident_buffer_bytes_ + HeapBytes(static_cast<const void*>(buf_ring_));
  }
  void RefreshBufferBytes() override {
    if (recv_buffers_ == nullptr) return;
    static const size_t kPage = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    size_t pages = kRecvBufferBytes / kPage;
    resident_map_.resize(pages);
    if (mincore(recv_buffers_, kRecvBufferBytes, resident_map_.data()) != 0) {
      resident_buffer_bytes_ = kRecvBufferBytes;  // unknown: charge all of it
      return;
    }
    size_t n = 0;
    for (unsigned char b : resident_map_) n += b & 1;
    resident_buffer_bytes_ = n * kPage;
  }
  size_t ConnBufferBytes(const IoConn* c) const override {
    auto* ops = static_cast<const ConnOps*>(c->loop_state);
    return ops == nullptr
               ? 0
               : HeapBytes(static_cast<const void*>(ops)) + HeapBytes(ops->backlog.bytes);
  }
  std::string Describe() const override {
    std::string d = "io_uring (";
    if (setup_flags_ & IORING_SETUP_DEFER_TASKRUN) {
      d += "single issuer, deferred task run";
    } else if (setup_flags_ & IORING_SETUP_COOP_TASKRUN) {
      d += "cooperative task run";
    } else {
      d += "default task run";
    }
    d += multishot_accept_ ? ", multishot accept" : ", single accept";
    d += multishot_recv_ ? ", multishot recv with provided buffers" : ", single recv";
    d += batched_sends_ ? ", batched sends" : ", direct sends";
    if (batch_policy_.on()) {
      d += ", wake-up batches of up to " + std::to_string(batch_policy_.max_batch()) + " within " +
           std::to_string(batch_policy_.bound_us()) + " us";
    }
    if (busy_poll_us_ > 0) d += ", busy polling for " + std::to_string(busy_poll_us_) + " us";
    d += ")";
    return d;
  }

  void SetBatchedSends(bool on) override { batched_sends_ = on; }
  void SetWakeupBatch(unsigned completions, unsigned usec) override {
    batch_policy_.Configure(std::clamp(completions, 1u, kRingEntries / 2), usec);
  }
  void SetBusyPoll(unsigned usec) override { busy_poll_us_ = usec; }

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
    ConnOps* ops = static_cast<ConnOps*>(c->loop_state);
    if (multishot_recv_) {
      if (!ops->backlog.empty() || ops->eof || ops->error != 0) {
        MarkReady(c, ops);  // delivered from Poll, never from inside the caller
      } else if (!ops->multishot) {
        ArmMultishot(c, ops);
      }
      return;
    }
    io_uring_sqe* sqe = GetSqe();
    io_uring_prep_recv(sqe, c->fd, buf, cap, 0);
    io_uring_sqe_set_data(sqe, &static_cast<ConnOps*>(c->loop_state)->recv);
    c->ops_in_flight++;
  }

  bool Send(IoConn* c, const char* data, size_t len) override {
    if (batched_sends_ && len <= kBatchedSendMaxBytes) {
      // Issued by the turn's closing io_uring_enter; a socket with room completes it
      // there at once, and OnSendDone runs from that Poll's completions. A larger reply
      // (a pipelined run's) goes at once: its system call is shared by many replies
      // already, and held to the turn's end it would sit in memory, charged to
      // used_memory, while the turn goes on.
      c->send_ptr = data;
      c->send_left = len;
      c->send_active = true;
      SubmitBatchedSend(c);
      return false;
    }
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

  bool HasReadyWork() const override {
    return !finished_.empty() || !failed_sends_.empty() || !ready_.empty();
  }
  unsigned setup_flags() const { return setup_flags_; }

  void Poll(int timeout_ms) override {
    if (HasReadyWork()) timeout_ms = 0;
    io_uring_cqe* cqe = nullptr;
    // The batched sends complete before the wait; it waits for one completion more (or
    // a batch of them).
    unsigned want = timeout_ms != 0 && batch_policy_.on() ? BatchWanted() : 1;
    unsigned wait_nr = want + std::min(batched_sends_submitted_, kRingEntries);
    batched_sends_submitted_ = 0;
    if (timeout_ms != 0 && busy_poll_us_ > 0 && BusyPoll(wait_nr, timeout_ms)) {
      // What the wait would have waited for arrived while polling.
    } else if (timeout_ms == 0) {
      // Enter the kernel even with nothing to submit: with deferred task running,
      // completions are only posted on an io_uring_enter that asks for events, so a loop
      // kept busy by other work (a snapshot, loading, lazy freeing) would otherwise
      // never see its sockets.
      io_uring_submit_and_get_events(&ring_);
    } else if (want > 1) {
      long us = batch_policy_.bound_us();
      if (timeout_ms > 0) us = std::min<long>(us, timeout_ms * 1000L);
      __kernel_timespec ts{};
      ts.tv_sec = us / 1000000;
      ts.tv_nsec = (us % 1000000) * 1000L;
      io_uring_submit_and_wait_timeout(&ring_, &cqe, wait_nr, &ts, nullptr);
    } else if (timeout_ms < 0) {
      io_uring_submit_and_wait(&ring_, wait_nr);
    } else {
      __kernel_timespec ts{};
      ts.tv_sec = timeout_ms / 1000;
      ts.tv_nsec = static_cast<long>(timeout_ms % 1000) * 1000000L;
      io_uring_submit_and_wait_timeout(&ring_, &cqe, wait_nr, &ts, nullptr);
    }
    unsigned seen = TakeCompletions(&outer_);
    if (timeout_ms != 0 && batch_policy_.on()) batch_policy_.AfterWait(seen, wait_nr);
    RunPass(&outer_);
    std::vector<IoConn*> finished;
    finished.swap(finished_);
    for (IoConn* c : finished) c->OnClosed();
  }

  void PollNested() override {
    // First what the enclosing Poll took and has not handled yet: input that arrived
    // with the caller's own waits behind it otherwise.
    HandleCompletions(&outer_);
    RunReadyList(&outer_);
    io_uring_submit_and_get_events(&ring_);
    // What this pass submitted has left; the enclosing Poll's wait must not count on
    // those sends' completions (they may be taken here).
    batched_sends_submitted_ = 0;
    TakeCompletions(&nested_);
    RunPass(&nested_);
    // finished_ is left for the enclosing Poll's OnClosed calls.
  }

 private:
  struct Completion {
    Op* op;
    int res;
    unsigned flags;
  };
  // One pass's work: the completions it took and the connections it hands backlog to,
  // each with how far it got. Poll's pass is outer_; a nested pass has its own lists
  // and first finishes what is left of outer_'s (it runs from inside one of them).
  struct PassLists {
    std::vector<Completion> completions;
    size_t completions_done = 0;
    std::vector<IoConn*> ready;
    size_t ready_done = 0;
  };

  // Copies the completion queue out (handlers submit new work, which must not race with
  // iterating the queue); returns how many there were.
  unsigned TakeCompletions(PassLists* p) {
    unsigned head;
    unsigned seen = 0;
    io_uring_cqe* cqe = nullptr;
    p->completions.clear();
    p->completions_done = 0;
    unsigned buffers_used = 0;
    bool ran_out = false;
    io_uring_for_each_cqe(&ring_, head, cqe) {
      p->completions.push_back(
          {static_cast<Op*>(io_uring_cqe_get_data(cqe)), cqe->res, cqe->flags});
      buffers_used += (cqe->flags & IORING_CQE_F_BUFFER) != 0;
      ran_out |= cqe->res == -ENOBUFS;
      seen++;
    }
    io_uring_cq_advance(&ring_, seen);
    // Before the pass: the receives it re-arms find the new buffers.
    if (buf_ring_ != nullptr && (buffers_used > 0 || ran_out))
      AddRecvBuffers(recv_growth_.AfterPass(buffers_used, ran_out));
    return seen;
  }

  void HandleCompletions(PassLists* p) {
    while (p->completions_done < p->completions.size()) {
      Completion done = p->completions[p->completions_done++];
      Handle(done);
    }
  }

  void RunPass(PassLists* p) {
    HandleCompletions(p);
    p->ready.clear();
    p->ready_done = 0;
    p->ready.swap(ready_);
    RunReadyList(p);
    p->ready.clear();
    p->ready_done = 0;
    std::vector<std::pair<IoConn*, int>> failed;
    failed.swap(failed_sends_);
    for (auto [c, err] : failed) {
      if (!c->closing && c->send_active) {
        c->send_active = false;
        c->OnSendDone(err);
      }
    }
  }

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

  void ArmMultishot(IoConn* c, ConnOps* ops) {
    io_uring_sqe* sqe = GetSqe();
    io_uring_prep_recv_multishot(sqe, c->fd, nullptr, 0, 0);
    sqe->flags |= IOSQE_BUFFER_SELECT;
    sqe->buf_group = kRecvBufferGroup;
    io_uring_sqe_set_data(sqe, &ops->recv);
    ops->multishot = true;
    c->ops_in_flight++;
  }

  void MarkReady(IoConn* c, ConnOps* ops) {
    if (ops->in_ready) return;
    ops->in_ready = true;
    ready_.push_back(c);
  }

  // Hands backlog bytes (or end of stream / an error) to connections that are reading.
  void RunReadyList(PassLists* p) {
    while (p->ready_done < p->ready.size()) {
      IoConn* c = p->ready[p->ready_done++];
      auto* ops = static_cast<ConnOps*>(c->loop_state);
      if (ops == nullptr) continue;  // finished meanwhile
      ops->in_ready = false;
      if (c->closing || !c->recv_armed) continue;
      if (!ops->backlog.empty()) {
        size_t n = std::min(ops->backlog.size(), c->recv_cap);
        std::memcpy(c->recv_buf, ops->backlog.data(), n);
        ops->backlog.consume(n);
        c->recv_armed = false;
        c->OnRecv(static_cast<ssize_t>(n));
      } else if (ops->eof || ops->error != 0) {
        c->recv_armed = false;
        c->OnRecv(ops->eof ? 0 : -ops->error);
      } else if (!ops->multishot) {
        ArmMultishot(c, ops);
      }
      if (c->closing && c->ops_in_flight == 0 && c->loop_state != nullptr) Finish(c);
    }
  }

  static int64_t MonoUs() {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<int64_t>(now.tv_sec) * 1000000 + now.tv_nsec / 1000;
  }

  // Wake-up batching: how many completions beyond the sends the next wait asks for.
  unsigned BatchWanted() { return batch_policy_.Wanted(MonoUs()); }

  // Busy polling (see the top): submits the turn's work, then asks for completions
  // without waiting until `wait_nr` are there (true) or the budget, at most the turn's
  // timeout, is spent (false: the caller sleeps for the rest as usual; nothing is left
  // to submit).
  // With the task-run flag the poll reads the ring's flags and enters the kernel only
  // when task work is pending (no system call while nothing arrives); without it, each
  // look is an io_uring_enter.
  bool BusyPoll(unsigned wait_nr, int timeout_ms) {
    int64_t budget = busy_poll_us_;
    if (timeout_ms > 0) budget = std::min<int64_t>(budget, int64_t{timeout_ms} * 1000);
    int64_t end = MonoUs() + budget;
    const bool flag = (setup_flags_ & IORING_SETUP_TASKRUN_FLAG) != 0;
    io_uring_submit_and_get_events(&ring_);
    while (io_uring_cq_ready(&ring_) < wait_nr) {
      if (MonoUs() >= end) return false;
      if (!flag || (IO_URING_READ_ONCE(*ring_.sq.kflags) & IORING_SQ_TASKRUN) != 0) {
        io_uring_get_events(&ring_);
      } else {
        CpuRelax();
      }
    }
    return true;
  }
  // A spin-wait hint to the CPU.
  static void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  }

  void ReturnBuffer(unsigned bid) {
    io_uring_buf_ring_add(buf_ring_, recv_buffers_ + static_cast<size_t>(bid) * kRecvBufferSize,
                          kRecvBufferSize, static_cast<unsigned short>(bid),
                          io_uring_buf_ring_mask(kRecvBuffers), 0);
    io_uring_buf_ring_advance(buf_ring_, 1);
  }

  void HandleMultishotRecv(IoConn* c, const Completion& done) {
    auto* ops = static_cast<ConnOps*>(c->loop_state);
    bool more = done.flags & IORING_CQE_F_MORE;
    if (done.res > 0 && (done.flags & IORING_CQE_F_BUFFER)) {
      if (batch_policy_.on()) batch_policy_.NoteInput(&ops->input_window);
      unsigned bid = done.flags >> IORING_CQE_BUFFER_SHIFT;
      const char* data = recv_buffers_ + static_cast<size_t>(bid) * kRecvBufferSize;
      size_t n = static_cast<size_t>(done.res);
      if (!c->closing) {
        if (c->recv_armed && ops->backlog.empty()) {
          size_t direct = std::min(n, c->recv_cap);
          std::memcpy(c->recv_buf, data, direct);
          if (direct < n) ops->backlog.append(data + direct, n - direct);
          ReturnBuffer(bid);
          if (!more) {
            ops->multishot = false;
            c->ops_in_flight--;
          }
          c->recv_armed = false;
          c->OnRecv(static_cast<ssize_t>(direct));
          if (c->closing && c->ops_in_flight == 0 && c->loop_state != nullptr) Finish(c);
          return;
        }
        ops->backlog.append(data, n);
      }
      ReturnBuffer(bid);
    } else if (done.res == 0) {
      ops->eof = true;
    } else if (done.res == -EINVAL && !more && multishot_recv_ && !ever_multishot_data_) {
      // The kernel rejects multishot receive: use single-shot receives from now on.
      multishot_recv_ = false;
      LogWarning(
          "io_uring: the kernel refused multishot receive; using one receive "
          "submission per read");
    } else if (done.res < 0 && done.res != -ENOBUFS) {
      ops->error = -done.res;
    }
    if (done.res > 0) ever_multishot_data_ = true;
    if (!more) {
      ops->multishot = false;
      c->ops_in_flight--;
    }
    if (c->closing) {
      if (c->ops_in_flight == 0) Finish(c);
      return;
    }
    if (!multishot_recv_ && c->recv_armed) {
      // Fall back for this read too.
      ArmRecv(c, c->recv_buf, c->recv_cap);
      return;
    }
    if (c->recv_armed && (!ops->backlog.empty() || ops->eof || ops->error != 0 || !ops->multishot))
      MarkReady(c, ops);
  }

  void ArmWake() {
    io_uring_sqe* sqe = GetSqe();
    io_uring_prep_read(sqe, wake_fd_, &wake_buf_, sizeof(wake_buf_), 0);
    io_uring_sqe_set_data(sqe, &wake_op_);
  }

  // A send that completes in the io_uring_enter that submits it (see the top).
  void SubmitBatchedSend(IoConn* c) {
    auto* ops = static_cast<ConnOps*>(c->loop_state);
    io_uring_sqe* sqe = GetSqe();
    io_uring_prep_send(sqe, c->fd, c->send_ptr, c->send_left, MSG_NOSIGNAL | MSG_DONTWAIT);
    io_uring_sqe_set_data(sqe, &ops->send);
    ops->send_nowait = true;
    batched_sends_submitted_++;
    c->ops_in_flight++;
  }

  // A send that completes once the socket took it all, or failed.
  void SubmitSend(IoConn* c) {
    auto* ops = static_cast<ConnOps*>(c->loop_state);
    io_uring_sqe* sqe = GetSqe();
    io_uring_prep_send(sqe, c->fd, c->send_ptr, c->send_left, MSG_NOSIGNAL);
    io_uring_sqe_set_data(sqe, &ops->send);
    ops->send_nowait = false;
    c->ops_in_flight++;
  }

  void Finish(IoConn* c) {
    auto* ops = static_cast<ConnOps*>(c->loop_state);
    // A connection waiting in ready_ for the next Poll would be handed bytes after it is
    // gone (it may be deleted once OnClosed runs at the end of this Poll).
    if (ops->in_ready) std::erase(ready_, c);
    delete ops;
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
        batch_policy_.NoteWake();
        on_wake_();
        ArmWake();
        return;
      case OpKind::kAccept: {
        ListenerOp* l = ListenerOf(op);
        if (done.res == -EINVAL && multishot_accept_) {
          // Kernel without multishot accept: switch to one accept per completion.
          multishot_accept_ = false;
          LogWarning(
              "io_uring: the kernel refused multishot accept; using one accept per "
              "completion");
          ArmAccept(l);
          return;
        }
        if (done.res >= 0) l->on_accept(done.res);
        if (!multishot_accept_ || !(done.flags & IORING_CQE_F_MORE)) ArmAccept(l);
        return;
      }
      case OpKind::kRecv: {
        IoConn* c = op->conn;
        if (static_cast<ConnOps*>(c->loop_state)->multishot) {
          HandleMultishotRecv(c, done);
          return;
        }
        c->ops_in_flight--;
        c->recv_armed = false;
        if (c->closing) {
          if (c->ops_in_flight == 0) Finish(c);
          return;
        }
        if (done.res > 0 && batch_policy_.on())
          batch_policy_.NoteInput(&static_cast<ConnOps*>(c->loop_state)->input_window);
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
        if (done.res == -EAGAIN && static_cast<ConnOps*>(c->loop_state)->send_nowait) {
          SubmitSend(c);  // the socket was full: wait for room
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
  PassLists outer_;   // Poll's
  PassLists nested_;  // PollNested's
  std::vector<std::pair<IoConn*, int>> failed_sends_;
  std::vector<IoConn*> ready_;
  io_uring_buf_ring* buf_ring_ = nullptr;
  char* recv_buffers_ = nullptr;
  RecvBufferGrowth recv_growth_{kRecvBuffersInitial, kRecvBuffers};
  unsigned recv_buffers_added_ = 0;  // buffers 0 .. this-1 circulate in the ring
  size_t resident_buffer_bytes_ = 0;
  std::vector<unsigned char> resident_map_;
  bool multishot_recv_ = false;
  bool batched_sends_ = false;
  bool ever_multishot_data_ = false;
  unsigned batched_sends_submitted_ = 0;  // since the last io_uring_enter
  WakeupBatchPolicy batch_policy_;        // wake-up batching (see the top)
  unsigned busy_poll_us_ = 0;             // busy polling (see the top); 0 = off
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
