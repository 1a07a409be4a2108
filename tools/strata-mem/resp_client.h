// RespClient: a blocking TCP client for one RESP server, with a timeout on every socket
// operation, and pipelining.
//
// Commands are appended to an output buffer (Append) and sent together (Flush); replies
// are then read one at a time (Read). While sending, whatever the server already answered
// is read into the input buffer, so a large batch cannot deadlock on full socket buffers.
// Each wait (connect, send, receive) is bounded by timeout_ms without progress; a server
// that stops answering fails the call with "timed out", it never hangs. Every failure
// leaves a readable message in *error that names the server ("127.0.0.1:6379: ...").
// Error replies (-ERR ...) are replies, not failures; see CheckReply for turning one
// into the message "server 127.0.0.1:6379 replied: ERR ...".
// Thread-safety: one client per thread.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "tools/strata-mem/reply.h"

namespace strata::mem {

struct Endpoint {
  std::string host = "127.0.0.1";
  int port = 6379;

  // "host:port", "[v6addr]:port" (port 1..65535). Returns false with *error set.
  static bool Parse(std::string_view text, Endpoint* out, std::string* error);
  std::string ToString() const;
};

struct ClientOptions {
  int timeout_ms = 5000;     // bound on each connect/send/receive wait
  std::string password;      // sent with AUTH after connecting when not empty
  std::string user;          // AUTH user password (ACL) when not empty
  ReplyLimits reply_limits;  // see reply.h
};

class RespClient {
 public:
  RespClient() = default;
  ~RespClient();
  RespClient(const RespClient&) = delete;
  RespClient& operator=(const RespClient&) = delete;

  // Connects (and AUTHs when a password is set).
  bool Connect(const Endpoint& endpoint, const ClientOptions& options, std::string* error);
  void Close();

  // Queues one command, encoded as a RESP multibulk request.
  void Append(const std::vector<std::string_view>& args);
  void Append(std::initializer_list<std::string_view> args);
  size_t pending_output() const { return out_.size() - out_sent_; }
  // Queues bytes already encoded as RESP (a caller that builds its commands itself).
  void AppendRaw(std::string_view resp) { out_.append(resp); }

  // Sends everything queued.
  bool Flush(std::string* error);
  // Reads the next reply (flushing first if output is pending).
  bool Read(Reply* reply, std::string* error);
  // Append + Flush + Read.
  bool Call(std::initializer_list<std::string_view> args, Reply* reply, std::string* error);
  // Call that also fails on an error reply, with "server X replied: ...".
  bool CallOk(std::initializer_list<std::string_view> args, Reply* reply, std::string* error);

  // Raw reads, for a protocol that leaves RESP (a replication transfer, whose RDB bulk
  // has no CRLF after it): the next line without its CRLF (at most max_len bytes), and
  // whatever bytes have arrived, up to max (waiting for at least one).
  bool ReadLine(std::string* line, size_t max_len, std::string* error);
  bool ReadRaw(size_t max, std::string* out, std::string* error);
  // Puts bytes back in front of what is still to be read (a raw reader that read past
  // the end of its part).
  void Unread(std::string_view bytes) { in_.insert(in_pos_, bytes); }
  // Waits up to wait_ms for bytes; true (without reading) when some are there.
  bool Poll(int wait_ms, bool* readable, std::string* error);
  // The timeout on each wait, changeable after connecting (a transfer that starts late).
  void set_timeout_ms(int ms) { options_.timeout_ms = ms; }

  // Fills *error with "server <name> replied: <text>" when reply is an error reply.
  bool CheckReply(const Reply& reply, std::string* error) const;

  const std::string& name() const { return name_; }

 private:
  bool Fail(std::string* error, const std::string& what);
  // Waits for `events` on the socket; false on timeout or error.
  bool Wait(short events, short* revents, std::string* error);
  bool ReceiveSome(std::string* error);

  int fd_ = -1;
  std::string name_;
  ClientOptions options_;
  std::string out_;
  size_t out_sent_ = 0;
  std::string in_;
  size_t in_pos_ = 0;
  ReplyParser parser_;
};

}  // namespace strata::mem
