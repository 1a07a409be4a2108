#include "tools/strata-bench/cluster_link.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "tools/strata-bench/client_plan.h"
#include "tools/strata-bench/cluster_client.h"
#include "tools/strata-bench/connection.h"
#include "tools/strata-bench/socket_read.h"

namespace strata::bench {
namespace {

constexpr size_t kLinkInitialIn = 64 * 1024;
constexpr size_t kLinkMinReadSpace = 16 * 1024;
// A request followed through more redirects than this counts as an error reply (a
// cluster whose nodes keep pointing at each other).
constexpr uint8_t kMaxRedirects = 16;

constexpr char kAskingCommand[] = "*1\r\n$6\r\nASKING\r\n";
constexpr char kClusterSlotsCommand[] = "*2\r\n$7\r\nCLUSTER\r\n$5\r\nSLOTS\r\n";

std::string LinkErrno(int err) { return std::strerror(err); }

}  // namespace

ClusterLink::ClusterLink(ClusterContext& ctx, ClusterClient& owner, uint32_t node,
                         uint64_t epoll_tag)
    : ctx_(ctx),
      owner_(owner),
      node_(node),
      epoll_tag_(epoll_tag),
      pipeline_(ctx.options->pipeline),
      capacity_(ctx.options->pipeline + 1),
      out_(InitialOutCapacity(*ctx.options, *ctx.writer)),
      in_(kLinkInitialIn),
      ring_(std::make_unique<Entry[]>(capacity_)) {}

ClusterLink::~ClusterLink() { Close(); }

void ClusterLink::Close() {
  if (fd_ >= 0) {
    ::close(fd_);  // also leaves the epoll set
    fd_ = -1;
  }
  state_ = State::kClosed;
}

void ClusterLink::Start(uint64_t now_ns) {
  last_activity_ns_ = now_ns;
  state_ = State::kConnecting;
  const sockaddr* addr = nullptr;
  socklen_t addr_len = 0;
  std::string error;
  if (!ctx_.Address(node_, &addr, &addr_len, &error)) {
    Fail(error);
    return;
  }
  fd_ = ::socket(addr->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd_ < 0) {
    Fail("socket: " + LinkErrno(errno));
    return;
  }
  const int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  epoll_event ev{};
  ev.events = EPOLLOUT;
  ev.data.u64 = epoll_tag_;
  if (::epoll_ctl(ctx_.epoll_fd, EPOLL_CTL_ADD, fd_, &ev) != 0) {
    Fail("epoll_ctl: " + LinkErrno(errno));
    return;
  }
  want_write_ = true;
  if (::connect(fd_, addr, addr_len) != 0 && errno != EINPROGRESS) {
    Fail("connect: " + LinkErrno(errno));
  }
}

void ClusterLink::OnEvents(uint32_t events) {
  if (state_ == State::kClosed || state_ == State::kIdle) return;
  if (state_ == State::kConnecting) {
    if ((events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) != 0) OnConnected(NowNs());
    return;
  }
  if ((events & (EPOLLIN | EPOLLERR | EPOLLHUP | EPOLLRDHUP)) != 0) {
    OnReadable();
    if (state_ == State::kClosed) return;
  }
  if ((events & EPOLLOUT) != 0 && want_write_) Flush(NowNs());
}

void ClusterLink::Append(const char* bytes, size_t size) {
  out_.Ensure(size);
  std::memcpy(out_.write_ptr(), bytes, size);
  out_.Commit(size);
}

void ClusterLink::OnConnected(uint64_t now_ns) {
  int err = 0;
  socklen_t len = sizeof(err);
  if (::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
  if (err != 0) {
    Fail("connect: " + LinkErrno(err));
    return;
  }
  last_activity_ns_ = now_ns;
  SetWantWrite(false);
  if (state_ == State::kClosed) return;
  const Options& o = *ctx_.options;
  if (!o.password.empty()) {
    const std::string auth =
        "*2\r\n$4\r\nAUTH\r\n$" + std::to_string(o.password.size()) + "\r\n" + o.password + "\r\n";
    Append(auth.data(), auth.size());
    ++setup_pending_;
  }
  if (o.select_db != 0) {
    const std::string db = std::to_string(o.select_db);
    const std::string select =
        "*2\r\n$6\r\nSELECT\r\n$" + std::to_string(db.size()) + "\r\n" + db + "\r\n";
    Append(select.data(), select.size());
    ++setup_pending_;
  }
  if (setup_pending_ > 0) {
    state_ = State::kSetup;
    Flush(now_ns);
    return;
  }
  state_ = State::kRunning;
  owner_.Pump(now_ns);
}

void ClusterLink::CheckTimeout(uint64_t now_ns, uint64_t timeout_ns) {
  if (state_ == State::kClosed || state_ == State::kIdle) return;
  const bool waiting =
      state_ == State::kConnecting || state_ == State::kSetup || used_ > 0 || out_.readable() > 0;
  if (!waiting || now_ns - last_activity_ns_ < timeout_ns) return;
  const std::string secs = std::to_string(timeout_ns / 1'000'000'000) + " s";
  if (state_ == State::kConnecting) {
    Fail("connect timed out after " + secs);
  } else if (out_.readable() > 0 && used_ == 0) {
    Fail("server accepted no data for " + secs);
  } else {
    Fail("no reply for " + secs + " (" + std::to_string(used_) + " requests in flight)");
  }
}

void ClusterLink::Push(const Entry& entry) {
  uint32_t at = head_ + used_;
  if (at >= capacity_) at -= capacity_;
  ring_[at] = entry;
  ++used_;
}

void ClusterLink::Send(const ClusterRequest& request, bool asking, uint64_t now_ns) {
  if (asking) {
    Append(kAskingCommand, sizeof(kAskingCommand) - 1);
    Push(Entry{ClusterRequest{}, EntryKind::kAsking});
  }
  Entry entry{request, EntryKind::kRequest};
  if (entry.request.first_sent_ns == 0) entry.request.first_sent_ns = now_ns;
  const uint64_t key = request.key;
  if (request.is_set) {
    ctx_.stats->sets.bytes_tx +=
        ctx_.writer->Write(RequestKind::kSet, &key, 1, request.ttl_s, &out_, request.value_size);
  } else {
    ctx_.stats->gets.bytes_tx += ctx_.writer->Write(RequestKind::kGet, &key, 1, 0, &out_);
  }
  Push(entry);
  ++requests_;
}

bool ClusterLink::SendSlotsRefresh() {
  if (state_ != State::kRunning || used_ >= capacity_) return false;
  Append(kClusterSlotsCommand, sizeof(kClusterSlotsCommand) - 1);
  Push(Entry{ClusterRequest{}, EntryKind::kSlots});
  return true;
}

void ClusterLink::OnReadable() {
  switch (ReadSome(fd_, in_, need_, kLinkMinReadSpace)) {
    case ReadResult::kData:
      break;
    case ReadResult::kAgain:
      return;
    case ReadResult::kClosed:
      Fail(used_ > 0 ? "server closed the connection with " + std::to_string(used_) +
                           " requests in flight"
                     : "server closed the connection");
      return;
    case ReadResult::kError:
      Fail("recv: " + LinkErrno(errno));
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
      if (--setup_pending_ == 0) state_ = State::kRunning;
      continue;
    }
    if (used_ == 0) {
      Fail("reply without a request");
      return;
    }
    const Entry entry = ring_[head_];
    head_ = head_ + 1 == capacity_ ? 0 : head_ + 1;
    --used_;
    switch (entry.kind) {
      case EntryKind::kRequest:
        --requests_;
        OnRequestReply(entry.request, info, consumed, now);
        break;
      case EntryKind::kSlots:
        ctx_.ApplySlotsReply(in_.read_ptr(), consumed, info.error, node_);
        break;
      case EntryKind::kAsking:
        break;  // +OK; a request refused anyway comes back with its own error
    }
    in_.Consume(consumed);
  }
  if (state_ == State::kRunning) owner_.Pump(now);
}

void ClusterLink::OnRequestReply(const ClusterRequest& request, const ReplyInfo& info, size_t bytes,
                                 uint64_t now_ns) {
  TypeStats& t = request.is_set ? ctx_.stats->sets : ctx_.stats->gets;
  t.bytes_rx += bytes;
  if (info.error) {
    const Redirect to = ParseRedirect(info.error_text);
    if (to.kind != RedirectKind::kNone) {
      NodeStats& node = ctx_.StatsOf(node_);
      ++(to.kind == RedirectKind::kMoved ? node.moved : node.ask);
      if (request.redirects < kMaxRedirects && owner_.OnRedirect(request, to, node_)) return;
    }
  }
  const uint64_t us = now_ns > request.first_sent_ns ? (now_ns - request.first_sent_ns) / 1000 : 0;
  t.latency.Record(us);
  NodeStats& node = ctx_.StatsOf(node_);
  node.latency.Record(us);
  if (info.error) {
    ++t.errors;
    ++node.errors;
    if (ctx_.stats->first_error_reply.empty()) {
      ctx_.stats->first_error_reply.assign(info.error_text);
    }
    return;
  }
  ++t.ops;
  ++node.ops;
  if (!request.is_set) {
    t.hits += info.hits;
    t.misses += info.misses;
  }
}

bool ClusterLink::Flush(uint64_t now_ns) {
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
      return state_ != State::kClosed;
    }
    Fail("send: " + LinkErrno(n < 0 ? errno : EPIPE));
    return false;
  }
  SetWantWrite(false);
  return state_ != State::kClosed;
}

void ClusterLink::SetWantWrite(bool want) {
  if (want == want_write_ || fd_ < 0) return;
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP | (want ? EPOLLOUT : 0u);
  ev.data.u64 = epoll_tag_;
  if (::epoll_ctl(ctx_.epoll_fd, EPOLL_CTL_MOD, fd_, &ev) != 0) {
    Fail("epoll_ctl: " + LinkErrno(errno));
    return;
  }
  want_write_ = want;
}

void ClusterLink::Fail(const std::string& why) {
  if (state_ == State::kClosed) return;
  owner_.Fail(node_, why);  // closes every link of the client, this one too
  Close();
}

}  // namespace strata::bench
