// EventLoop: one worker thread's I/O, behind a completion-style interface.
//
// Two backends implement it: io_uring (uring_loop.cc) and epoll (epoll_loop.cc). Both
// present the same contract, so connection code is written once:
//   - ArmRecv(conn, buf, cap): read into buf; OnRecv(n) is called once with n > 0 bytes,
//     0 at end of stream, or -errno. Arm again to read more.
//   - Send(conn, data, len): write all of it. Returns true when it completed at once
//     (epoll often can); otherwise OnSendDone(err) is called later and the bytes must
//     stay untouched until then.
//   - Close(conn): stops I/O, closes the fd and calls OnClosed() once no operation can
//     touch the connection any more; only then may it be freed.
// Callbacks run on the loop's thread from inside Poll().
// Thread-safety: all methods are called by the owning worker thread only, except
// that the wake eventfd may be written by any thread.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace strata {

enum class IoBackend { kAuto, kIoUring, kEpoll };

class IoConn {
 public:
  virtual ~IoConn() = default;
  virtual void OnRecv(ssize_t n) = 0;
  virtual void OnSendDone(int err) = 0;
  virtual void OnClosed() = 0;

  int fd = -1;

  // Backend state (owned by the loop).
  char* recv_buf = nullptr;
  size_t recv_cap = 0;
  const char* send_ptr = nullptr;
  size_t send_left = 0;
  uint32_t ops_in_flight = 0;
  bool recv_armed = false;
  bool send_active = false;
  bool readable = false;  // epoll: edge seen, not yet drained
  bool writable = true;
  bool closing = false;
  bool in_ready_list = false;
  void* loop_state = nullptr;
};

class EventLoop {
 public:
  using AcceptFn = std::function<void(int fd)>;

  virtual ~EventLoop() = default;
  virtual const char* name() const = 0;
  // The backend and the features in use, for the start-up log.
  virtual std::string Describe() const { return name(); }
  // Bytes of receive buffers the loop itself holds (charged to used_memory), as of the
  // last RefreshBufferBytes() (the worker calls it on its hz tick and for INFO/MEMORY).
  virtual size_t BufferBytes() const { return 0; }
  virtual void RefreshBufferBytes() {}
  // Bytes the loop holds for one connection (its state and any received backlog).
  virtual size_t ConnBufferBytes(const IoConn* c) const { return 0; }
  // Listens for connections on a bound, listening, non-blocking socket.
  virtual void AddListener(int fd, AcceptFn on_accept) = 0;
  // Registers a new connection (fd is non-blocking).
  virtual void AddConn(IoConn* c) = 0;
  virtual void ArmRecv(IoConn* c, char* buf, size_t cap) = 0;
  virtual bool Send(IoConn* c, const char* data, size_t len) = 0;
  // io_uring: every send is a submission that leaves with the turn's closing
  // io_uring_enter, instead of a send(2) first (io-uring-batched-sends). Set before the
  // first connection; epoll ignores it.
  virtual void SetBatchedSends(bool on) { (void)on; }
  // io_uring: a loop with nothing to do sleeps until `completions` have arrived (requests,
  // mostly), or `usec` passed, rather than waking on the first (io-uring-wakeup-batch,
  // io-uring-wakeup-batch-usec; 1 = wake on the first). Set before the first connection;
  // epoll ignores it.
  virtual void SetWakeupBatch(unsigned completions, unsigned usec) {
    (void)completions;
    (void)usec;
  }
  // io_uring: before it sleeps, a loop with nothing to do asks the kernel for completions
  // for up to `usec` (io-uring-busy-poll-usec; 0 = sleep at once). epoll ignores it.
  virtual void SetBusyPoll(unsigned usec) { (void)usec; }
  virtual void Close(IoConn* c) = 0;
  // An eventfd that other threads write to wake this loop; on_wake runs when it fires.
  virtual void SetWakeFd(int efd, std::function<void()> on_wake) = 0;
  // Waits at most timeout_ms (-1 = no limit, 0 = don't wait) and runs callbacks.
  virtual void Poll(int timeout_ms) = 0;
  // A pass from inside a callback of Poll (or from any code the loop's thread runs
  // between Polls): takes what has completed without waiting and runs the receive and
  // send callbacks, but defers OnClosed to the next Poll, so that no connection the
  // enclosing code holds is freed under it. At most one level deep (the caller ensures
  // it). Used while a long script runs, to answer other clients (Worker::ServeWhileBusy).
  virtual void PollNested() = 0;
  // True when some work is ready without waiting (the loop must poll with 0).
  virtual bool HasReadyWork() const = 0;
};

// Creates the requested backend. kAuto tries io_uring first and, if the kernel refuses
// it, uses epoll and says so in *note. An explicit kIoUring that fails returns nullptr
// with *error set: there is no silent fallback.
std::unique_ptr<EventLoop> CreateEventLoop(IoBackend want, std::string* error, std::string* note);

// Probes once whether io_uring with the operations strata needs works here.
bool IoUringAvailable(std::string* why_not);

std::unique_ptr<EventLoop> CreateEpollLoop(std::string* error);
std::unique_ptr<EventLoop> CreateUringLoop(std::string* error);

}  // namespace strata
