#include "tools/strata-bench/connection.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#include "storage/mono_clock.h"
#include "tools/strata-bench/client_plan.h"
#include "tools/strata-bench/reply_scanner.h"
#include "tools/strata-bench/socket_read.h"

namespace strata::bench {
namespace {

constexpr size_t kInitialIn = 64 * 1024;
constexpr size_t kMinReadSpace = 16 * 1024;

std::string Errno(int err) { return std::strerror(err); }

}  // namespace

Connection::Connection(const ConnectionContext& ctx, uint32_t client_index, uint64_t epoll_tag)
    : ctx_(ctx),
      o_(*ctx.options),
      epoll_tag_(epoll_tag),
      out_(InitialOutCapacity(*ctx.options, *ctx.writer)),
      in_(kInitialIn),
      sent_ns_(std::make_unique<uint64_t[]>(o_.pipeline)),
      is_set_(std::make_unique<bool[]>(o_.pipeline)),
      set_keys_(o_.set_pattern, o_.keys, client_index, static_cast<uint32_t>(o_.total_clients()),
                o_.distinct_client_seed ? ClientSeed(o_.seed, client_index) : o_.seed,
                o_.key_stddev, o_.key_median),
      get_keys_(o_.get_pattern, o_.keys, client_index, static_cast<uint32_t>(o_.total_clients()),
                // GETs draw from their own stream, so a 1:1 mix does not GET the key just SET.
                (o_.distinct_client_seed ? ClientSeed(o_.seed, client_index) : o_.seed) ^
                    0x9e3779b97f4a7c15ULL,
                o_.key_stddev, o_.key_median),
      ratio_(o_.ratio_sets, o_.ratio_gets),
      ttl_rng_(ClientSeed(o_.seed, client_index) + 1),
      size_rng_(ClientSeed(o_.seed, client_index) + 2),
      next_size_(o_.data_size_min),
      keys_(std::make_unique<uint64_t[]>(
          std::max<uint32_t>({1, o_.multi_key_get, o_.multi_key_set}))) {
  if (o_.test_time > 0) {
    target_ = std::numeric_limits<uint64_t>::max();
  } else if (o_.all_keys) {
    target_ = AllKeysTarget(o_, client_index, set_keys_, get_keys_);
  } else {
    target_ = o_.requests;
  }
  if (o_.rate_limiting > 0) {
    interval_ns_ = 1'000'000'000 / o_.rate_limiting;
    phase_ns_ = interval_ns_ * client_index / std::max<uint64_t>(1, o_.total_clients());
  }
}

Connection::~Connection() { Close(); }

void Connection::Close() {
  if (fd_ >= 0) {
    ::close(fd_);  // also leaves the epoll set
    fd_ = -1;
  }
}

void Connection::Start(uint64_t now_ns) {
  last_activity_ns_ = now_ns;
  fd_ = ::socket(ctx_.addr->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd_ < 0) {
    state_ = State::kConnecting;  // so Fail() counts it as a live connection
    Fail("socket: " + Errno(errno));
    return;
  }
  const int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  state_ = State::kConnecting;
  epoll_event ev{};
  ev.events = EPOLLOUT;
  ev.data.u64 = epoll_tag_;
  if (::epoll_ctl(ctx_.epoll_fd, EPOLL_CTL_ADD, fd_, &ev) != 0) {
    Fail("epoll_ctl: " + Errno(errno));
    return;
  }
  want_write_ = true;
  if (::connect(fd_, ctx_.addr, ctx_.addr_len) != 0 && errno != EINPROGRESS) {
    Fail("connect: " + Errno(errno));
  }
}

void Connection::OnEvents(uint32_t events) {
  if (finished()) return;
  if (state_ == State::kConnecting) {
    if ((events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) != 0) OnConnected(NowNs());
    return;
  }
  // A read takes its own timestamp after recv; only a pending short write needs one here.
  if ((events & (EPOLLIN | EPOLLERR | EPOLLHUP | EPOLLRDHUP)) != 0) {
    OnReadable();
    if (finished()) return;
  }
  if ((events & EPOLLOUT) != 0 && want_write_) Flush(NowNs());
}

void Connection::OnConnected(uint64_t now_ns) {
  int err = 0;
  socklen_t len = sizeof(err);
  if (::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
  if (err != 0) {
    Fail("connect: " + Errno(err));
    return;
  }
  last_activity_ns_ = now_ns;
  SetWantWrite(false);
  if (!o_.password.empty()) {
    const std::string auth = "*2\r\n$4\r\nAUTH\r\n$" + std::to_string(o_.password.size()) + "\r\n" +
                             o_.password + "\r\n";
    out_.Ensure(auth.size());
    std::memcpy(out_.write_ptr(), auth.data(), auth.size());
    out_.Commit(auth.size());
    ++setup_pending_;
  }
  if (o_.select_db != 0) {
    const std::string db = std::to_string(o_.select_db);
    const std::string select =
        "*2\r\n$6\r\nSELECT\r\n$" + std::to_string(db.size()) + "\r\n" + db + "\r\n";
    out_.Ensure(select.size());
    std::memcpy(out_.write_ptr(), select.data(), select.size());
    out_.Commit(select.size());
    ++setup_pending_;
  }
  if (setup_pending_ > 0) {
    state_ = State::kSetup;
    Flush(now_ns);
    return;
  }
  state_ = State::kRunning;
  next_send_ns_ = now_ns + phase_ns_;
  Fill(now_ns);
}

void Connection::StopSending(uint64_t now_ns) {
  if (finished() || stop_sending_) return;
  stop_sending_ = true;
  if (state_ == State::kRunning && inflight_ == 0 && out_.readable() == 0) {
    Finish(now_ns);
  } else if (state_ == State::kConnecting || state_ == State::kIdle) {
    Finish(now_ns);
  }
}

void Connection::CheckTimeout(uint64_t now_ns, uint64_t timeout_ns) {
  if (finished()) return;
  const bool waiting = state_ == State::kConnecting || state_ == State::kSetup || inflight_ > 0 ||
                       out_.readable() > 0;
  if (!waiting || now_ns - last_activity_ns_ < timeout_ns) return;
  const std::string secs = std::to_string(timeout_ns / 1'000'000'000) + " s";
  if (state_ == State::kConnecting) {
    Fail("connect timed out after " + secs);
  } else if (out_.readable() > 0 && inflight_ == 0) {
    Fail("server accepted no data for " + secs);
  } else {
    Fail("no reply for " + secs + " (" + std::to_string(inflight_) + " requests in flight)");
  }
}

void Connection::OnReadable() {
  switch (ReadSome(fd_, in_, need_, kMinReadSpace)) {
    case ReadResult::kData:
      break;
    case ReadResult::kAgain:
      return;
    case ReadResult::kClosed:
      Fail(inflight_ > 0 ? "server closed the connection with " + std::to_string(inflight_) +
                               " requests in flight"
                         : "server closed the connection");
      return;
    case ReadResult::kError:
      Fail("recv: " + Errno(errno));
      return;
  }
  const uint64_t now = NowNs();
  last_activity_ns_ = now;
  if (in_.readable() < need_) return;
  need_ = 0;
  while (in_.readable() > 0) {
    size_t consumed = 0;
    ReplyInfo info;
    size_t need = 0;
    const ScanResult r = ScanReply(in_.read_ptr(), in_.readable(), &consumed, &info, &need);
    if (r == ScanResult::kNeedMore) {
      need_ = need;
      break;
    }
    if (r == ScanResult::kMalformed) {
      Fail("malformed reply from the server");
      return;
    }
    if (state_ == State::kSetup) {
      if (info.error) {
        Fail("setup command failed: " + std::string(info.error_text));
        return;
      }
      in_.Consume(consumed);
      if (--setup_pending_ == 0) {
        state_ = State::kRunning;
        next_send_ns_ = now + phase_ns_;
        Fill(now);
        if (finished()) return;
      }
      continue;
    }
    if (inflight_ == 0) {
      Fail("reply without a request");
      return;
    }
    const bool is_set = is_set_[head_];
    const uint64_t sent = sent_ns_[head_];
    head_ = head_ + 1 == o_.pipeline ? 0 : head_ + 1;
    --inflight_;
    TypeStats& t = is_set ? ctx_.stats->sets : ctx_.stats->gets;
    t.latency.Record(now > sent ? (now - sent) / 1000 : 0);
    t.bytes_rx += consumed;
    if (info.error) {
      ++t.errors;
      if (ctx_.stats->first_error_reply.empty()) {
        ctx_.stats->first_error_reply.assign(info.error_text);
      }
    } else {
      ++t.ops;
      if (!is_set) {
        t.hits += info.hits;
        t.misses += info.misses;
      }
    }
    in_.Consume(consumed);
  }
  if (state_ == State::kRunning) Fill(now);
}

void Connection::Fill(uint64_t now_ns) {
  const uint32_t set_keys = std::max<uint32_t>(1, o_.multi_key_set);
  const uint32_t get_keys = std::max<uint32_t>(1, o_.multi_key_get);
  const RequestKind set_kind = o_.multi_key_set > 0 ? RequestKind::kMSet : RequestKind::kSet;
  const RequestKind get_kind = o_.multi_key_get > 0 ? RequestKind::kMGet : RequestKind::kGet;
  uint32_t slot = head_ + inflight_;
  if (slot >= o_.pipeline) slot -= o_.pipeline;
  while (inflight_ < o_.pipeline && !stop_sending_ && sent_ < target_ &&
         (interval_ns_ == 0 || now_ns >= next_send_ns_)) {
    const bool is_set = ratio_.NextIsSet();
    size_t bytes = 0;
    if (is_set) {
      for (uint32_t i = 0; i < set_keys; ++i) keys_[i] = set_keys_.Next();
      const uint32_t ttl =
          o_.expiry_max > 0 ? RandomTtl(o_.expiry_min, o_.expiry_max, &ttl_rng_) : 0;
      bytes = ctx_.writer->Write(set_kind, keys_.get(), set_keys, ttl, &out_, NextValueSize());
      ctx_.stats->sets.bytes_tx += bytes;
    } else {
      for (uint32_t i = 0; i < get_keys; ++i) keys_[i] = get_keys_.Next();
      bytes = ctx_.writer->Write(get_kind, keys_.get(), get_keys, 0, &out_);
      ctx_.stats->gets.bytes_tx += bytes;
    }
    sent_ns_[slot] = now_ns;
    is_set_[slot] = is_set;
    slot = slot + 1 == o_.pipeline ? 0 : slot + 1;
    ++inflight_;
    ++sent_;
    if (interval_ns_ != 0) {
      // On schedule; a connection that fell behind (its replies slow) sends the next one
      // at once, without a burst to catch up.
      next_send_ns_ = std::max(next_send_ns_ + interval_ns_, now_ns);
    }
  }
  if (out_.readable() > 0) {
    if (!Flush(now_ns)) return;
  }
  if (inflight_ == 0 && out_.readable() == 0 && (stop_sending_ || sent_ >= target_)) {
    Finish(now_ns);
  }
}

uint64_t Connection::NextSendNs() const {
  if (interval_ns_ == 0 || state_ != State::kRunning || stop_sending_ || sent_ >= target_ ||
      inflight_ >= o_.pipeline) {
    return std::numeric_limits<uint64_t>::max();
  }
  return next_send_ns_;
}

void Connection::OnTick(uint64_t now_ns) {
  if (state_ == State::kRunning && NextSendNs() <= now_ns) Fill(now_ns);
}

uint32_t Connection::NextValueSize() {
  const uint32_t lo = o_.data_size_min, hi = o_.data_size_max;
  if (lo >= hi) return hi;
  if (!o_.data_size_sequential) {
    return lo + static_cast<uint32_t>(size_rng_.Uniform(uint64_t{hi} - lo + 1));
  }
  const uint32_t size = next_size_;
  next_size_ = size >= hi ? lo : size + 1;
  return size;
}

bool Connection::Flush(uint64_t now_ns) {
  while (out_.readable() > 0) {
    const ssize_t n = ::send(fd_, out_.read_ptr(), out_.readable(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      out_.Consume(static_cast<size_t>(n));
      last_activity_ns_ = now_ns;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      SetWantWrite(true);
      return true;
    }
    Fail("send: " + Errno(n < 0 ? errno : EPIPE));
    return false;
  }
  SetWantWrite(false);
  return true;
}

void Connection::SetWantWrite(bool want) {
  if (want == want_write_ || fd_ < 0) return;
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP | (want ? EPOLLOUT : 0u);
  ev.data.u64 = epoll_tag_;
  if (::epoll_ctl(ctx_.epoll_fd, EPOLL_CTL_MOD, fd_, &ev) != 0) {
    Fail("epoll_ctl: " + Errno(errno));
    return;
  }
  want_write_ = want;
}

void Connection::Fail(const std::string& why) {
  if (finished()) return;
  RunStats& s = *ctx_.stats;
  ++s.connection_errors;
  s.lost_requests += inflight_;
  if (s.first_connection_error.empty()) s.first_connection_error = ctx_.server_name + ": " + why;
  inflight_ = 0;
  Close();
  state_ = State::kFailed;
  --*ctx_.live;
  *ctx_.last_finish_ns = std::max(*ctx_.last_finish_ns, NowNs());
}

void Connection::Finish(uint64_t now_ns) {
  if (finished()) return;
  Close();
  state_ = State::kDone;
  --*ctx_.live;
  *ctx_.last_finish_ns = std::max(*ctx_.last_finish_ns, now_ns);
}

}  // namespace strata::bench
