// Connection: one client socket, owned by one worker for its whole life.
//
// How a request travels
//   Bytes land in the read buffer; the parser yields one request at a time as views
//   into it. Each request is dispatched in order:
//     - connection commands run at once;
//     - a command whose keys all hash to this worker's shard runs inline, writing its
//       reply straight into the output buffer (the fast path: no copy, no message);
//     - a command whose keys all hash to another shard is appended to this turn's
//       RemoteBatch for that shard's worker (remote_batch.h); its reply slot is
//       reserved now and filled when the batch comes back, so pipelined replies keep
//       request order even though later local commands finish first;
//     - a command spanning shards (or the whole keyspace) waits until this client has
//       nothing in flight, then runs as a fiber; input processing resumes when it ends.
//   Replies of one read are written with a single send at the end of the loop turn.
//
// Lifetime: closing stops input at once, but the object lives on until no remote
// command or fiber refers to it (inflight_ == 0) and the loop has released the socket.
// Thread-safety: owned by its worker's thread; other workers never touch it (their
// replies arrive as tasks run on this thread).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "server/blocking.h"
#include "server/command.h"
#include "server/event_loop.h"
#include "server/resp_parser.h"

namespace strata {

class Worker;

// A single command queued behind a lock on its shard (from a batch or a local client).
struct RemoteCommand {
  const CommandSpec* spec;
  Connection* conn;
  uint32_t origin;  // the client's worker
  uint64_t seq;     // reply slot
  uint32_t db;
  int resp;
  std::shared_ptr<OwnedArgs> args;
  std::string reply;
};

class Connection final : public IoConn {
 public:
  static constexpr size_t kReadChunk = 16 * 1024;
  static constexpr size_t kInflightMax = 1024;         // pipelined commands awaiting replies
  static constexpr size_t kHoldOutputMax = 64 * 1024;  // see FlushOutput

  enum class ReplyMode { kOn, kOff, kSkip };

  Connection(Worker* w, int fd, uint64_t id, std::string addr, std::string laddr);
  ~Connection() override;

  void Start();
  // Closes after the pending output is written (QUIT) or at once (CLIENT KILL).
  void CloseAfterReply() { close_after_reply_ = true; }
  void Kill();

  // Worker calls at the end of a turn for connections with new output.
  void FlushOutput();
  // A remote command's reply arrived (this worker's thread).
  void CompleteSlot(uint64_t seq, std::string_view data);
  // A fiber command finished.
  void FinishFiber(std::string&& reply);

  // Queues rc on the current worker's lock table; it runs when its keys are free.
  static void QueueBehindLocks(RemoteCommand* rc, const std::vector<std::string_view>& keys);

  // State visible to commands (this thread only).
  uint64_t id() const { return id_; }
  uint32_t db = 0;
  int resp = 2;
  std::string name;
  std::string lib_name;
  std::string lib_ver;
  bool authenticated = false;
  bool no_evict = false;
  ReplyMode reply_mode = ReplyMode::kOn;
  bool skip_next_reply = false;
  int64_t created_ms = 0;
  int64_t last_interaction_ms = 0;
  const std::string& addr() const { return addr_; }
  const std::string& laddr() const { return laddr_; }
  size_t query_buffer_bytes() const { return rend_ - rstart_; }
  size_t output_bytes() const { return out_.size() + sending_.size(); }
  // One line of CLIENT LIST / CLIENT INFO.
  std::string InfoLine(int64_t now_ms) const;
  // Heap bytes this connection holds: the object, its read and write buffers, reply
  // slots awaiting other shards, and the event loop's state for it (usable sizes).
  size_t MemoryBytes() const;
  size_t charged_bytes() const { return charged_bytes_; }
  // The blocking command this client waits in, if any (blocking.h); a disconnect
  // cancels it.
  void set_blocked(std::shared_ptr<BlockedClient> b) { blocked_ = std::move(b); }
  Worker& worker() { return *worker_; }

 private:
  void OnRecv(ssize_t n) override;
  void OnSendDone(int err) override;
  void OnClosed() override;

  void ProcessInput();
  // Returns false when input processing must pause (a fiber or a barrier).
  bool Dispatch(const CommandSpec* spec, CmdArgs args);
  bool DispatchToShard(const CommandSpec* spec, CmdArgs args, uint32_t shard);
  void StartFiber(const CommandSpec* spec, CmdArgs args);
  void ReplyError(std::string_view msg);
  // Where the next in-order reply goes: straight to the output, or to a ready slot.
  std::string* ReplyTarget(bool* suppress);
  // Reserves the slot of a reply that will arrive later; returns its sequence number.
  uint64_t ReservePendingSlot();
  void CommitReply(std::string* target, bool suppress, size_t start);
  void ArmRead();
  void Dirty();
  void MaybeDestroy();

  struct Slot {
    bool ready = false;
    bool suppress = false;
    std::string data;
  };

  Worker* worker_;
  uint64_t id_;
  std::string addr_;
  std::string laddr_;

  std::string rbuf_;
  size_t rstart_ = 0;
  size_t rend_ = 0;
  RespParser parser_;
  std::vector<std::string_view> args_;

  std::string out_;
  std::string sending_;
  std::deque<Slot> slots_;
  uint64_t slot_base_ = 0;  // seq of slots_.front()

  // The last command, for CLIENT LIST/INFO (the subcommand only for CONFIG, CLIENT...).
  const CommandSpec* last_spec_ = nullptr;
  std::string last_subcommand_;

  // Brings the worker's client-memory total up to date with MemoryBytes(), cheaply
  // skipping the computation when no buffer changed capacity since the last call.
  void Recharge();
  size_t charged_bytes_ = 0;
  std::shared_ptr<BlockedClient> blocked_;
  // Capacities when last charged (SIZE_MAX: never charged yet).
  size_t charged_rbuf_ = SIZE_MAX;
  size_t charged_out_ = SIZE_MAX;
  size_t charged_sending_ = SIZE_MAX;
  size_t charged_args_ = SIZE_MAX;
  bool slots_charged_ = false;

  uint32_t inflight_ = 0;
  bool fiber_running_ = false;
  bool paused_ = false;
  bool reading_ = false;
  bool dirty_ = false;
  bool close_after_reply_ = false;
  bool closing_ = false;
  bool io_closed_ = false;
  bool protocol_error_ = false;
};

}  // namespace strata
