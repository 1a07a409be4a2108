// MigrateClient: MIGRATE's blocking connection to the target server, used from an
// OffThread thread (server/engine/off_thread.h), never from a worker. Every wait
// (connect, send, receive) is bounded by the command's timeout. Replies are read as
// lines (+OK, -ERR ..., :n), which is all that AUTH, SELECT and RESTORE answer.
// Thread-safety: one thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace strata {

class MigrateClient {
 public:
  ~MigrateClient();
  // False with *error set to Redis's text: "IOERR error or timeout connecting to the
  // client" (a timeout, an unknown host), or "... writing to target instance" (refused).
  bool Connect(const std::string& host, int port, int timeout_ms, std::string* error);
  // Appends one command in RESP.
  void Append(const std::vector<std::string_view>& args);
  bool Flush(std::string* error);
  // The next reply line (without CRLF); false on a timeout or a closed connection.
  bool ReadLine(std::string* line, std::string* error);

 private:
  bool Wait(short events, std::string* error, const char* what);
  int fd_ = -1;
  int timeout_ms_ = 1000;
  std::string out_;
  std::string in_;
};

}  // namespace strata
