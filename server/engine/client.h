// Client: a connected client as commands see it - its settings (database, protocol,
// name, authentication, CLIENT REPLY mode) and the few things a command may ask of it.
//
// The engine's ClientConnection (client_connection.h) is the one implementation: it
// joins this to the socket's I/O, which commands never touch. Fiber commands finish
// with FinishFiber(reply); connection commands (CommandSpec::conn_fn) reply through
// the ReplyBuilder they are given.
// Thread-safety: owned by its worker's thread; other workers never touch it (CLIENT LIST
// and CLIENT KILL reach each worker's clients with a hop to that worker).
#pragma once

#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/base/output_limits.h"
#include "server/engine/acl.h"
#include "server/engine/pubsub.h"
#include "server/engine/task.h"
#include "server/engine/tracking.h"

namespace strata {

class Worker;
struct BlockedClient;

class Client {
 public:
  enum class ReplyMode { kOn, kOff, kSkip };

  // Settings that commands read and change (this worker's thread only).
  uint32_t db = 0;
  int resp = 2;
  std::string name;
  std::string lib_name;
  std::string lib_ver;
  // Authenticated (AUTH, or a default user that takes any password), and whether its ACL
  // user is restricted at all: the dispatcher checks each command of a restricted client
  // against its user (acl.h). Both live in one byte, `access_gate()`, which the
  // dispatcher reads once per command: 0 for an authenticated, unrestricted client.
  static constexpr uint8_t kGateNotAuthenticated = 1;
  static constexpr uint8_t kGateAclRestricted = 2;
  uint8_t access_gate() const { return access_gate_; }
  bool authenticated() const { return !(access_gate_ & kGateNotAuthenticated); }
  void SetAuthenticated(bool on) {
    access_gate_ = static_cast<uint8_t>(on ? access_gate_ & ~kGateNotAuthenticated
                                           : access_gate_ | kGateNotAuthenticated);
  }
  bool acl_restricted() const { return access_gate_ & kGateAclRestricted; }
  // The ACL user it authenticated as: the default user until AUTH names another.
  AclUserPtr acl_user;
  void SetAclUser(AclUserPtr u) {
    bool restricted = u != nullptr && !u->unrestricted();
    access_gate_ = static_cast<uint8_t>(restricted ? access_gate_ | kGateAclRestricted
                                                   : access_gate_ & ~kGateAclRestricted);
    acl_user = std::move(u);
  }
  // CLIENT LIST's user=, ACL WHOAMI: "default" until AUTH names another.
  const std::string& acl_user_name() const {
    static const std::string kDefault = "default";
    return acl_user != nullptr ? acl_user->name() : kDefault;
  }
  bool no_evict = false;
  bool cluster_readonly = false;  // READONLY (cluster): reads of a replica's master's slots
  // ASKING (cluster): the next command (or the transaction it opens) may run in a slot
  // this node imports.
  bool cluster_asking = false;
  bool monitor = false;  // sent MONITOR (Worker::AddMonitor)
  ReplyMode reply_mode = ReplyMode::kOn;
  bool skip_next_reply = false;
  // Which client-output-buffer-limit applies: pubsub while the client has any
  // subscription (pubsub.h), normal otherwise.
  ClientClass client_class = ClientClass::kNormal;
  // Its channels, patterns and shard channels (null until the first SUBSCRIBE).
  std::unique_ptr<ClientSubscriptions> subs;
  // In RESP2 a subscribed client may run only the subscribe commands, PING, QUIT and
  // RESET (Redis's "context" rule); in RESP3 anything.
  bool subscribed() const { return subs != nullptr && subs->total() > 0; }
  // CLIENT TRACKING's settings (tracking.h).
  ClientTracking tracking;
  // How this client's call of spec is tracked: kRead for a read-only command (OPTIN
  // right after CLIENT CACHING yes, OPTOUT unless right after CLIENT CACHING no), kScript
  // for a script under the same conditions, kNone otherwise.
  TrackMode TrackModeFor(const CommandSpec* spec) const;
  // The origin the next fiber started for this client takes (task.h): set by the
  // dispatcher before it calls a fiber function; a fiber started otherwise gets the
  // client alone.
  FiberOrigin next_fiber_origin;
  FiberOrigin TakeFiberOrigin() {
    FiberOrigin o = std::move(next_fiber_origin);
    next_fiber_origin = FiberOrigin{};
    o.client = id_;
    return o;
  }
  int64_t created_ms = 0;
  int64_t last_interaction_ms = 0;
  // While this client's EXEC runs: the id its locks are held under (lock_table.h), which
  // the multi-key commands inside it pass on with their own lock requests; 0 otherwise.
  uint64_t txn_owner = 0;
  // Inside EXEC a blocking command does not block: it answers as if its timeout passed.
  bool in_exec() const { return txn_owner != 0; }
  // A fiber command run from inside another one (a call of EXEC, or of a script that
  // spans shards): while `nested` is set, FinishFiber hands the reply there (and resumes
  // the waiter, if any) instead of replying to the client.
  struct NestedReply {
    std::string reply;
    bool done = false;
    std::coroutine_handle<> waiter;
  };
  NestedReply* nested = nullptr;

  uint64_t id() const { return id_; }
  // CLIENT SETNAME and HELLO SETNAME set `name` through here, which also keeps a copy
  // that other workers may read (a slow command run on another shard is logged with it).
  void SetName(std::string n) {
    name = n;
    std::lock_guard<std::mutex> lock(shared_name_mu_);
    shared_name_ = std::move(n);
  }
  std::string NameFromAnyThread() const {
    std::lock_guard<std::mutex> lock(shared_name_mu_);
    return shared_name_;
  }
  const std::string& addr() const { return addr_; }
  const std::string& laddr() const { return laddr_; }
  Worker& worker() { return *worker_; }

  // Closes after the pending output is written (QUIT).
  virtual void CloseAfterReply() = 0;
  // Closes at once (CLIENT KILL).
  virtual void Kill() = 0;
  // A fiber command finished with this reply (possibly empty: no reply).
  virtual void FinishFiber(std::string&& reply) = 0;
  // A run's fiber ends (FiberRun): one reply per call, in the run's order.
  virtual void FinishFiberRun(std::vector<std::string>&& replies) = 0;
  // Appends an out-of-band message (a Pub/Sub message, an invalidation) to the output,
  // after the replies already due. Returns true when the output has reached a limit of
  // the client's class: the caller then has EnforceOutputLimits() run later in the turn.
  virtual bool Push(std::string_view bytes) = 0;
  // True once the client is closing: it takes no new subscriptions.
  virtual bool gone() const = 0;
  // Applies client-output-buffer-limit now (may close the client).
  virtual void EnforceOutputLimits() = 0;
  // RESET: leaves MULTI, WATCH and every subscription (the settings are the caller's).
  virtual void ResetState() = 0;
  // One line of CLIENT LIST / CLIENT INFO.
  virtual std::string InfoLine(int64_t now_ms) const = 0;
  // The replica's connection to its master (replication_state.h), and bytes sent to it
  // whatever the reply mode (REPLCONF ACK).
  virtual bool is_master() const { return false; }
  virtual void SendToMaster(std::string_view bytes) { (void)bytes; }
  // A replica of this server (PSYNC/SYNC turned it into one): it gets no replies, its
  // output is the RDB and the stream (SendToReplica, whatever the reply mode), its
  // output limit is the replica class's, and on_replica_close runs when it closes.
  virtual void MakeReplica() {}
  virtual bool is_replica() const { return false; }
  // Not from inside a command of that client (its suppressed reply would take the bytes).
  virtual void SendToReplica(std::string_view bytes) { (void)bytes; }
  // SendToReplica of a buffer given up: it is queued as it is, not copied.
  virtual void SendToReplicaOwned(std::string&& bytes) { SendToReplica(bytes); }
  // SendToReplica of bytes in a buffer shared with the backlog: a big piece is queued
  // as a view that keeps the buffer alive, not copied.
  virtual void SendToReplicaShared(std::shared_ptr<const std::string> buffer,
                                   std::string_view bytes) {
    (void)buffer;
    SendToReplica(bytes);
  }
  std::function<void()> on_replica_close;
  // What a replica said of itself in REPLCONF before its PSYNC.
  int repl_listening_port = 0;
  std::string repl_announced_ip;
  bool repl_capa_eof = false;
  bool repl_capa_psync2 = false;
  // WAIT: this client wrote since its last WAIT, and the stream's counter that its last
  // WAIT waited for (0: it never wrote; every replica counts).
  bool repl_wrote = false;
  uint64_t repl_wait_counter = 0;
  virtual size_t query_buffer_bytes() const = 0;
  virtual size_t output_bytes() const = 0;
  // The blocking command this client waits in, if any (blocking.h); a disconnect
  // cancels it.
  void set_blocked(std::shared_ptr<BlockedClient> b) { blocked_ = std::move(b); }
  // CLIENT UNBLOCK, on this client's worker: ends the wait of the blocking command it is
  // in, which then answers as at its timeout or (error) with kUnblockedError (blocking.h).
  // False when it is not waiting (not blocked, or already served).
  bool Unblock(bool error);
  // On this client's worker: cancels the wait of the blocking command it is in (the
  // command answers as at its timeout); false when there is none or a shard served it.
  bool CancelWait();

 protected:
  Client(Worker* w, uint64_t id, std::string addr, std::string laddr)
      : worker_(w), id_(id), addr_(std::move(addr)), laddr_(std::move(laddr)) {}
  virtual ~Client() = default;

  Worker* worker_;
  uint64_t id_;
  uint8_t access_gate_ = kGateNotAuthenticated;
  std::string addr_;
  std::string laddr_;
  std::shared_ptr<BlockedClient> blocked_;
  mutable std::mutex shared_name_mu_;
  std::string shared_name_;
};

}  // namespace strata
