#include "server/commands/migrate_client.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>

namespace strata {

namespace {
constexpr const char* kConnectError = "IOERR error or timeout connecting to the client";
constexpr const char* kReadError = "IOERR error or timeout reading to target instance";
constexpr const char* kWriteError = "IOERR error or timeout writing to target instance";
// (A connection refused at once is reported as kWriteError, as Redis does.)
constexpr size_t kMaxLine = 64 * 1024;
}  // namespace

MigrateClient::~MigrateClient() {
  if (fd_ >= 0) ::close(fd_);
}

bool MigrateClient::Connect(const std::string& host, int port, int timeout_ms, std::string* error) {
  timeout_ms_ = timeout_ms;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* res = nullptr;
  std::string p = std::to_string(port);
  if (getaddrinfo(host.c_str(), p.c_str(), &hints, &res) != 0) {
    *error = kConnectError;
    return false;
  }
  bool refused = false;
  for (addrinfo* ai = res; ai != nullptr && fd_ < 0; ai = ai->ai_next) {
    int fd =
        ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
    if (fd < 0) continue;
    if (::connect(fd, ai->ai_addr, ai->ai_addrlen) != 0 && errno != EINPROGRESS) {
      ::close(fd);
      continue;
    }
    pollfd pf{fd, POLLOUT, 0};
    int n;
    do {
      n = ::poll(&pf, 1, timeout_ms_);
    } while (n < 0 && errno == EINTR);
    int so_error = 0;
    socklen_t len = sizeof(so_error);
    if (n <= 0) {
      ::close(fd);
      continue;
    }
    if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_error, &len) != 0 || so_error != 0) {
      // Refused at once: Redis sees the socket writable and fails on the first write,
      // so that is the error it reports.
      ::close(fd);
      refused = true;
      continue;
    }
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    fd_ = fd;
  }
  freeaddrinfo(res);
  if (fd_ < 0) {
    *error = refused ? kWriteError : kConnectError;
    return false;
  }
  return true;
}

void MigrateClient::Append(const std::vector<std::string_view>& args) {
  char buf[24];
  auto num = [&](size_t v) {
    auto r = std::to_chars(buf, buf + sizeof(buf), v);
    out_.append(buf, static_cast<size_t>(r.ptr - buf));
  };
  out_ += '*';
  num(args.size());
  out_ += "\r\n";
  for (std::string_view a : args) {
    out_ += '$';
    num(a.size());
    out_ += "\r\n";
    out_.append(a);
    out_ += "\r\n";
  }
}

bool MigrateClient::Wait(short events, std::string* error, const char* what) {
  pollfd pf{fd_, events, 0};
  int n;
  do {
    n = ::poll(&pf, 1, timeout_ms_);
  } while (n < 0 && errno == EINTR);
  if (n <= 0) {
    *error = what;
    return false;
  }
  return true;
}

bool MigrateClient::Flush(std::string* error) {
  size_t sent = 0;
  while (sent < out_.size()) {
    ssize_t n = ::send(fd_, out_.data() + sent, out_.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!Wait(POLLOUT, error, kWriteError)) return false;
      continue;
    }
    *error = kWriteError;
    return false;
  }
  out_.clear();
  return true;
}

bool MigrateClient::ReadLine(std::string* line, std::string* error) {
  while (true) {
    size_t eol = in_.find("\r\n");
    if (eol != std::string::npos) {
      line->assign(in_, 0, eol);
      in_.erase(0, eol + 2);
      return true;
    }
    if (in_.size() > kMaxLine) {
      *error = kReadError;
      return false;
    }
    if (!Wait(POLLIN, error, kReadError)) return false;
    char buf[16384];
    ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) {
      *error = kReadError;
      return false;
    }
    in_.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace strata
