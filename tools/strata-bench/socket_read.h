// ReadSome: one non-blocking read from a socket into a ByteBuffer, as both kinds of
// strata-bench connection (connection.h, cluster_link.h) do it on a readable event.
// Thread-safety: the calling connection's thread.
#pragma once

#include <sys/socket.h>
#include <sys/types.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>

#include "tools/strata-bench/byte_buffer.h"

namespace strata::bench {

enum class ReadResult { kData, kClosed, kAgain, kError };

// Reads what the socket has (at least min_space of room, or what completes `need`
// bytes of unread input); retries EINTR. kError leaves errno set.
inline ReadResult ReadSome(int fd, ByteBuffer& in, size_t need, size_t min_space) {
  for (;;) {
    const size_t want = need > in.readable() ? need - in.readable() : min_space;
    in.Ensure(std::max(want, min_space));
    const ssize_t n = ::recv(fd, in.write_ptr(), in.writable(), MSG_DONTWAIT);
    if (n > 0) {
      in.Commit(static_cast<size_t>(n));
      return ReadResult::kData;
    }
    if (n == 0) return ReadResult::kClosed;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return ReadResult::kAgain;
    return ReadResult::kError;
  }
}

}  // namespace strata::bench
