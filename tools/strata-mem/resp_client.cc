#include "tools/strata-mem/resp_client.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

namespace strata::mem {
namespace {

constexpr size_t kReadChunk = 64 * 1024;
// Consumed input is dropped from the front of the buffer once it is this large.
constexpr size_t kCompactAt = 1 << 20;

void AppendDecimal(std::string* out, uint64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, static_cast<size_t>(r.ptr - buf));
}

}  // namespace

bool Endpoint::Parse(std::string_view text, Endpoint* out, std::string* error) {
  std::string_view host;
  std::string_view port;
  if (!text.empty() && text[0] == '[') {
    size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      *error = "invalid server '" + std::string(text) + "': expected [address]:port";
      return false;
    }
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) {
      *error = "invalid server '" + std::string(text) + "': expected host:port";
      return false;
    }
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) {
      *error = "invalid server '" + std::string(text) + "': write IPv6 addresses as [addr]:port";
      return false;
    }
  }
  if (host.empty()) {
    *error = "invalid server '" + std::string(text) + "': empty host";
    return false;
  }
  int64_t p = 0;
  if (!ParseReplyInteger(port, &p) || p < 1 || p > 65535 || port[0] == '-') {
    *error = "invalid server '" + std::string(text) + "': port must be 1..65535";
    return false;
  }
  out->host = std::string(host);
  out->port = static_cast<int>(p);
  return true;
}

std::string Endpoint::ToString() const {
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
  return host + ":" + std::to_string(port);
}

RespClient::~RespClient() { Close(); }

void RespClient::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  out_.clear();
  out_sent_ = 0;
  in_.clear();
  in_pos_ = 0;
}

bool RespClient::Fail(std::string* error, const std::string& what) {
  *error = name_ + ": " + what;
  Close();
  return false;
}

bool RespClient::Connect(const Endpoint& endpoint, const ClientOptions& options,
                         std::string* error) {
  Close();
  options_ = options;
  parser_ = ReplyParser(options.reply_limits);
  name_ = endpoint.ToString();
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* res = nullptr;
  std::string port = std::to_string(endpoint.port);
  int rc = getaddrinfo(endpoint.host.c_str(), port.c_str(), &hints, &res);
  if (rc != 0) return Fail(error, std::string("cannot resolve host: ") + gai_strerror(rc));
  std::string last_error = "no address";
  for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
    int fd =
        ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
    if (fd < 0) {
      last_error = std::string("socket: ") + std::strerror(errno);
      continue;
    }
    if (::connect(fd, ai->ai_addr, ai->ai_addrlen) != 0 && errno != EINPROGRESS) {
      last_error = std::string("cannot connect: ") + std::strerror(errno);
      ::close(fd);
      continue;
    }
    pollfd p{fd, POLLOUT, 0};
    int n;
    do {
      n = ::poll(&p, 1, options_.timeout_ms);
    } while (n < 0 && errno == EINTR);
    if (n == 0) {
      last_error = "cannot connect: timed out after " + std::to_string(options_.timeout_ms) + " ms";
      ::close(fd);
      continue;
    }
    int so_error = 0;
    socklen_t len = sizeof(so_error);
    if (n < 0 || ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_error, &len) != 0 || so_error != 0) {
      last_error = std::string("cannot connect: ") + std::strerror(n < 0 ? errno : so_error);
      ::close(fd);
      continue;
    }
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    fd_ = fd;
    break;
  }
  freeaddrinfo(res);
  if (fd_ < 0) return Fail(error, last_error);
  if (!options_.password.empty()) {
    Reply reply;
    bool ok = options_.user.empty()
                  ? Call({"AUTH", options_.password}, &reply, error)
                  : Call({"AUTH", options_.user, options_.password}, &reply, error);
    if (!ok) return false;
    if (reply.is_error()) {
      std::string text = reply.str;
      return Fail(error, "AUTH failed: " + text);
    }
  }
  return true;
}

void RespClient::Append(const std::vector<std::string_view>& args) {
  out_ += '*';
  AppendDecimal(&out_, args.size());
  out_ += "\r\n";
  for (std::string_view a : args) {
    out_ += '$';
    AppendDecimal(&out_, a.size());
    out_ += "\r\n";
    out_.append(a);
    out_ += "\r\n";
  }
}

void RespClient::Append(std::initializer_list<std::string_view> args) {
  Append(std::vector<std::string_view>(args));
}

bool RespClient::Wait(short events, short* revents, std::string* error) {
  pollfd p{fd_, events, 0};
  int n;
  do {
    n = ::poll(&p, 1, options_.timeout_ms);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return Fail(error, std::string("poll: ") + std::strerror(errno));
  if (n == 0) {
    return Fail(error, "timed out after " + std::to_string(options_.timeout_ms) +
                           " ms waiting for the server (see --timeout-ms)");
  }
  *revents = p.revents;
  return true;
}

bool RespClient::ReceiveSome(std::string* error) {
  if (in_pos_ >= kCompactAt) {
    in_.erase(0, in_pos_);
    in_pos_ = 0;
  }
  size_t old = in_.size();
  in_.resize(old + kReadChunk);
  ssize_t n;
  do {
    n = ::recv(fd_, in_.data() + old, kReadChunk, 0);
  } while (n < 0 && errno == EINTR);
  if (n > 0) {
    in_.resize(old + static_cast<size_t>(n));
    return true;
  }
  in_.resize(old);
  if (n == 0) return Fail(error, "connection closed by the server");
  if (errno == EAGAIN || errno == EWOULDBLOCK) return true;
  return Fail(error, std::string("receive failed: ") + std::strerror(errno));
}

bool RespClient::Flush(std::string* error) {
  if (fd_ < 0) return Fail(error, "not connected");
  while (out_sent_ < out_.size()) {
    short revents = 0;
    if (!Wait(POLLOUT | POLLIN, &revents, error)) return false;
    if (revents & POLLIN) {
      if (!ReceiveSome(error)) return false;
    }
    if (revents & (POLLOUT | POLLERR | POLLHUP)) {
      ssize_t n;
      do {
        n = ::send(fd_, out_.data() + out_sent_, out_.size() - out_sent_, MSG_NOSIGNAL);
      } while (n < 0 && errno == EINTR);
      if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) continue;
        return Fail(error, std::string("send failed: ") + std::strerror(errno));
      }
      out_sent_ += static_cast<size_t>(n);
    }
  }
  out_.clear();
  out_sent_ = 0;
  return true;
}

bool RespClient::Read(Reply* reply, std::string* error) {
  if (fd_ < 0) return Fail(error, "not connected");
  if (pending_output() > 0 && !Flush(error)) return false;
  while (true) {
    std::string_view avail(in_.data() + in_pos_, in_.size() - in_pos_);
    size_t needed = parser_.needed();
    if (needed == 0 || avail.size() >= needed) {
      size_t consumed = 0;
      ReplyParser::Result r = parser_.Parse(avail, &consumed, reply);
      if (r == ReplyParser::Result::kOk) {
        in_pos_ += consumed;
        if (in_pos_ == in_.size()) {
          in_.clear();
          in_pos_ = 0;
        }
        return true;
      }
      if (r == ReplyParser::Result::kError) {
        return Fail(error, "malformed reply: " + parser_.error());
      }
    }
    short revents = 0;
    if (!Wait(POLLIN, &revents, error)) return false;
    if (!ReceiveSome(error)) return false;
  }
}

bool RespClient::ReadLine(std::string* line, size_t max_len, std::string* error) {
  if (fd_ < 0) return Fail(error, "not connected");
  if (pending_output() > 0 && !Flush(error)) return false;
  size_t scanned = 0;
  while (true) {
    std::string_view avail(in_.data() + in_pos_, in_.size() - in_pos_);
    size_t eol = avail.find("\r\n", scanned > 0 ? scanned - 1 : 0);
    if (eol != std::string_view::npos) {
      line->assign(avail.substr(0, eol));
      in_pos_ += eol + 2;
      return true;
    }
    scanned = avail.size();
    if (scanned > max_len) return Fail(error, "a line longer than " + std::to_string(max_len));
    short revents = 0;
    if (!Wait(POLLIN, &revents, error)) return false;
    if (!ReceiveSome(error)) return false;
  }
}

bool RespClient::ReadRaw(size_t max, std::string* out, std::string* error) {
  if (fd_ < 0) return Fail(error, "not connected");
  out->clear();
  while (in_pos_ == in_.size()) {
    short revents = 0;
    if (!Wait(POLLIN, &revents, error)) return false;
    if (!ReceiveSome(error)) return false;
  }
  size_t n = std::min(max, in_.size() - in_pos_);
  out->assign(in_, in_pos_, n);
  in_pos_ += n;
  if (in_pos_ == in_.size()) {
    in_.clear();
    in_pos_ = 0;
  }
  return true;
}

bool RespClient::Poll(int wait_ms, bool* readable, std::string* error) {
  if (fd_ < 0) return Fail(error, "not connected");
  if (in_pos_ < in_.size()) {
    *readable = true;
    return true;
  }
  pollfd p{fd_, POLLIN, 0};
  int r;
  do {
    r = ::poll(&p, 1, wait_ms);
  } while (r < 0 && errno == EINTR);
  if (r < 0) return Fail(error, std::string("poll failed: ") + std::strerror(errno));
  *readable = r > 0;
  return true;
}

bool RespClient::Call(std::initializer_list<std::string_view> args, Reply* reply,
                      std::string* error) {
  Append(args);
  return Flush(error) && Read(reply, error);
}

bool RespClient::CallOk(std::initializer_list<std::string_view> args, Reply* reply,
                        std::string* error) {
  return Call(args, reply, error) && CheckReply(*reply, error);
}

bool RespClient::CheckReply(const Reply& reply, std::string* error) const {
  if (!reply.is_error()) return true;
  *error = "server " + name_ + " replied: " + reply.str;
  return false;
}

}  // namespace strata::mem
