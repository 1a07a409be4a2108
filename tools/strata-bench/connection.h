// Connection: one strata-bench client: a non-blocking TCP connection that keeps
// --pipeline requests in flight and measures each one's latency.
//
// Life: Start() begins a non-blocking connect and registers the socket with the thread's
// epoll set (EPOLLOUT until connected, then EPOLLIN, plus EPOLLOUT only while a write is
// short). Once connected it sends AUTH / SELECT when asked and waits for their replies,
// then fills its pipeline: every request is encoded into the out buffer with its send
// time and type pushed on a ring of --pipeline slots. Each read scans every complete
// reply (ReplyScanner), pops the ring in order, records the latency of that request,
// counts hits, misses and error replies, and refills the pipeline in the same turn, so
// one read and one write serve a whole batch. Nothing allocates per request.
//
// It finishes when it has sent its requests (or was told to stop sending) and every reply
// is in. It fails, counting one connection error and losing whatever was in flight, when
// connecting fails, the server closes or resets the connection, a reply is malformed or
// unexpected, or nothing arrives for the reply timeout while it waits. Either way it
// closes its socket and decrements the thread's live count.
// Thread-safety: owned and driven by one BenchThread.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <memory>
#include <string>

#include "storage/mono_clock.h"
#include "tools/strata-bench/byte_buffer.h"
#include "tools/strata-bench/options.h"
#include "tools/strata-bench/request_writer.h"
#include "tools/strata-bench/run_stats.h"
#include "tools/strata-bench/workload.h"

namespace strata::bench {

// The monotonic clock, as the load loop keeps its times.
inline uint64_t NowNs() { return static_cast<uint64_t>(MonoNs()); }

// What a thread shares with its connections.
struct ConnectionContext {
  const Options* options = nullptr;
  const RequestWriter* writer = nullptr;
  const sockaddr* addr = nullptr;
  socklen_t addr_len = 0;
  std::string server_name;  // "host:port" for messages
  int epoll_fd = -1;
  RunStats* stats = nullptr;  // the thread's
  uint32_t* live = nullptr;   // connections not yet finished or failed
  uint64_t* last_finish_ns = nullptr;
};

class Connection {
 public:
  // client_index: this client's number among all threads' clients (for P slices and
  // --distinct-client-seed); epoll_tag: the epoll data value the thread dispatches on.
  Connection(const ConnectionContext& ctx, uint32_t client_index, uint64_t epoll_tag);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  void Start(uint64_t now_ns);
  void OnEvents(uint32_t events);
  // No new requests from now on; finishes once the replies in flight are in.
  void StopSending(uint64_t now_ns);
  // Fails the connection when it has been waiting for longer than timeout_ns.
  void CheckTimeout(uint64_t now_ns, uint64_t timeout_ns);
  // --rate-limiting: when the next request is due (UINT64_MAX: none is waiting for its
  // time), and sending what is due by now.
  uint64_t NextSendNs() const;
  void OnTick(uint64_t now_ns);

  bool finished() const { return state_ == State::kDone || state_ == State::kFailed; }

 private:
  enum class State { kIdle, kConnecting, kSetup, kRunning, kDone, kFailed };

  void OnConnected(uint64_t now_ns);
  void OnReadable();
  bool HandleReply(const char* data, size_t size, uint64_t now_ns, bool* stop);
  void Fill(uint64_t now_ns);
  bool Flush(uint64_t now_ns);
  void SetWantWrite(bool want);
  void Fail(const std::string& why);
  void Finish(uint64_t now_ns);
  void Close();

  const ConnectionContext& ctx_;
  const Options& o_;
  uint64_t epoll_tag_;
  int fd_ = -1;
  State state_ = State::kIdle;
  bool want_write_ = false;
  bool stop_sending_ = false;
  uint32_t setup_pending_ = 0;

  ByteBuffer out_;
  ByteBuffer in_;
  size_t need_ = 0;  // bytes the pending reply needs in in_ before scanning again

  // Ring of the requests in flight, oldest first.
  std::unique_ptr<uint64_t[]> sent_ns_;
  std::unique_ptr<bool[]> is_set_;
  uint32_t head_ = 0;
  uint32_t inflight_ = 0;

  uint64_t sent_ = 0;
  // --rate-limiting: the interval between requests, and when the next one may go. The
  // connections' schedules are spread evenly over one interval.
  uint64_t interval_ns_ = 0;
  uint64_t phase_ns_ = 0;
  uint64_t next_send_ns_ = 0;
  uint64_t target_ = 0;  // requests to send (UINT64_MAX with --test-time)
  uint64_t last_activity_ns_ = 0;

  KeyGenerator set_keys_;
  KeyGenerator get_keys_;
  RatioScheduler ratio_;
  Rng ttl_rng_;
  Rng size_rng_;            // --data-size-range R
  uint32_t next_size_ = 0;  // --data-size-range S: the next size
  uint32_t NextValueSize();
  std::unique_ptr<uint64_t[]> keys_;  // scratch for one request's keys
};

}  // namespace strata::bench
