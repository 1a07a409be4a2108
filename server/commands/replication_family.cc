// Replication commands: REPLICAOF (and SLAVEOF), ROLE, REPLCONF, PSYNC, SYNC and WAIT, for
// strata as a replica (server/persistence/replica_link.h) and as a master
// (server/persistence/repl_master.h). They run on the client's own thread (WAIT as a
// fiber that may block).
#include <string>

#include "core/string_util.h"
#include "server/base/config.h"
#include "server/base/log.h"
#include "server/commands/errors.h"
#include "server/commands/families.h"
#include "server/engine/blocking.h"
#include "server/engine/client.h"
#include "server/engine/command.h"
#include "server/engine/engine.h"
#include "server/engine/hops.h"
#include "server/engine/worker.h"
#include "server/persistence/failover.h"
#include "server/persistence/repl_master.h"
#include "server/persistence/replica_link.h"

namespace strata {
namespace {

constexpr const char* kLoadingError = "LOADING Redis is loading the dataset in memory";

void CmdReplicaOf(Client& c, CmdArgs args, ReplyBuilder& rb) {
  Engine& engine = c.worker().engine();
  ReplicationState& state = engine.replication();
  ReplicaLink& link = engine.Service<ReplicaLink>();
  if (engine.process().cluster_yes) {
    // A cluster node's replication follows the cluster (CLUSTER REPLICATE), as in Redis.
    rb.Error("ERR REPLICAOF not allowed in cluster mode.");
    return;
  }
  if (state.failover() != ReplicationState::Failover::kNone) {
    rb.Error("ERR REPLICAOF not allowed while failing over.");
    return;
  }
  if (EqualsIgnoreCase(args[1], "no") && EqualsIgnoreCase(args[2], "one")) {
    if (state.is_replica()) {
      if (!link.StopUnlessLoading()) {  // as Redis refuses REPLICAOF while it loads
        rb.Error(kLoadingError);
        return;
      }
      state.BecomeMaster();
      // What CONFIG GET replicaof shows and CONFIG REWRITE writes, as in Redis.
      engine.config().Set("replicaof", "", false);
      LogNotice("MASTER MODE enabled (user request from 'id=%llu addr=%s')",
                static_cast<unsigned long long>(c.id()), c.addr().c_str());
    }
    rb.Ok();
    return;
  }
  int64_t port = 0;
  if (!ParseInt64(args[2], &port) || port < 0 || port > 65535) {
    rb.Error("ERR Invalid master port");
    return;
  }
  if (!engine.config().String("spill-dir").empty()) {
    // A full sync replaces the data by a reload, which the spill tier cannot take yet.
    rb.Error("ERR REPLICAOF is not available with spill-dir set");
    return;
  }
  std::string host(args[1]);
  std::string cur_host;
  int cur_port = 0;
  if (state.MasterOf(&cur_host, &cur_port) && EqualsIgnoreCase(cur_host, host) &&
      cur_port == port) {
    LogNotice(
        "REPLICAOF would result into synchronization with the master we are already "
        "connected with. No operation performed.");
    rb.Simple("OK Already connected to specified master");
    return;
  }
  if (!link.StopUnlessLoading()) {
    rb.Error(kLoadingError);
    return;
  }
  link.Start(host, static_cast<int>(port));
  engine.config().Set("replicaof", host + " " + std::to_string(port), false);
  LogNotice("REPLICAOF %s:%lld enabled (user request from 'id=%llu addr=%s')", host.c_str(),
            static_cast<long long>(port), static_cast<unsigned long long>(c.id()),
            c.addr().c_str());
  rb.Ok();
}

void CmdRole(Client& c, CmdArgs args, ReplyBuilder& rb) {
  Engine& engine = c.worker().engine();
  ReplicationState& state = engine.replication();
  std::string host;
  int port = 0;
  if (state.MasterOf(&host, &port)) {
    bool up = state.link() == ReplicationState::Link::kUp;
    rb.Array(5);
    rb.Bulk("slave");
    rb.Bulk(host);
    rb.Integer(port);
    rb.Bulk(engine.Service<ReplicaLink>().RoleState());
    rb.Integer(up ? state.offset() : -1);
    return;
  }
  std::vector<ReplMaster::RoleEntry> replicas = engine.Service<ReplMaster>().RoleReplicas();
  rb.Array(3);
  rb.Bulk("master");
  rb.Integer(state.offset());
  rb.Array(replicas.size());
  for (const auto& r : replicas) {
    rb.Array(3);
    rb.Bulk(r.ip);
    rb.Bulk(std::to_string(r.port));
    rb.Bulk(std::to_string(r.offset));
  }
}

// REPLCONF: GETACK from the master (answered on the master link whatever the reply
// mode); the options a replica sends its master before PSYNC (listening-port,
// ip-address, capa) are kept on its connection; ACK from a replica records its offset
// and gets no reply, as in Redis.
void CmdReplconf(Client& c, CmdArgs args, ReplyBuilder& rb) {
  if (args.size() % 2 == 0) {
    rb.Error(errors::kSyntax);
    return;
  }
  for (size_t i = 1; i < args.size(); i += 2) {
    std::string opt = Lowercase(args[i]);
    if (opt == "ack") {
      int64_t offset = 0;
      if (c.is_replica() && ParseInt64(args[i + 1], &offset))
        c.worker().engine().Service<ReplMaster>().Ack(c, offset);
      return;
    }
    if (opt == "listening-port") {
      int64_t port = 0;
      if (!ParseInt64(args[i + 1], &port) || port < 0 || port > 65535) {
        rb.Error(errors::kNotInteger);
        return;
      }
      c.repl_listening_port = static_cast<int>(port);
      continue;
    }
    if (opt == "ip-address") {
      c.repl_announced_ip.assign(args[i + 1]);
      continue;
    }
    if (opt == "capa") {
      if (EqualsIgnoreCase(args[i + 1], "eof")) c.repl_capa_eof = true;
      if (EqualsIgnoreCase(args[i + 1], "psync2")) c.repl_capa_psync2 = true;
      continue;
    }
    if (opt == "getack") {
      if (c.is_master()) {
        std::string off = std::to_string(c.worker().engine().replication().offset());
        c.SendToMaster("*3\r\n$8\r\nREPLCONF\r\n$3\r\nACK\r\n$" + std::to_string(off.size()) +
                       "\r\n" + off + "\r\n");
      }
      return;
    }
    if (opt != "rdb-only" && opt != "rdb-filter-only") {
      rb.Error("ERR Unrecognized REPLCONF option: " + std::string(args[i]));
      return;
    }
  }
  rb.Ok();
}

// PSYNC replid offset FAILOVER: a master's FAILOVER (persistence/failover.h) names this
// replica its successor. Only for the history this replica follows: it then becomes a
// master (as REPLICAOF NO ONE: the data stays, and its previous history can be
// continued), and the PSYNC goes on as any, so the old master continues from its own
// offset. Asked again once done (the answer was lost), it goes on the same way; Redis
// refuses that one as sent to a master. False when refused (the error is in rb).
bool TakeOverForFailover(Client& c, std::string_view replid, ReplyBuilder& rb) {
  Engine& engine = c.worker().engine();
  ReplicationState& state = engine.replication();
  if (engine.process().cluster_yes) {
    rb.Error("ERR PSYNC FAILOVER is not allowed in cluster mode");
    return false;
  }
  if (!state.is_replica()) {
    // A master that already took over for that very history (the old master's PSYNC
    // FAILOVER was answered, but the answer lost): the old master asks again.
    if (replid == state.replid2()) return true;
    rb.Error("ERR PSYNC FAILOVER can't be sent to a master.");
    return false;
  }
  if (replid != state.replid()) {
    rb.Error("ERR PSYNC FAILOVER replid must match my replid.");
    return false;
  }
  if (!engine.Service<ReplicaLink>().StopUnlessLoading()) {
    rb.Error(kLoadingError);
    return false;
  }
  state.BecomeMaster();
  engine.config().Set("replicaof", "", false);
  LogNotice("Failover request received for replid %s.", std::string(replid).c_str());
  return true;
}

// PSYNC replid offset, SYNC: the connection becomes a replica (repl_master.h); nothing
// is replied here (the replica gets +FULLRESYNC or +CONTINUE from the master's side).
void CmdPsync(Client& c, CmdArgs args, ReplyBuilder& rb) {
  bool psync = EqualsIgnoreCase(args[0], "psync");
  int64_t offset = -1;
  if (psync && !ParseInt64(args[2], &offset)) {
    rb.Error(errors::kNotInteger);
    return;
  }
  if (c.in_exec()) {
    rb.Error("ERR Replica can't be in a transaction");
    return;
  }
  if (psync && args.size() > 3 && EqualsIgnoreCase(args[3], "failover") &&
      !TakeOverForFailover(c, args[1], rb)) {
    return;
  }
  std::string err = c.worker().engine().Service<ReplMaster>().Attach(
      c, psync ? args[1] : std::string_view("?"), offset, psync);
  if (!err.empty()) rb.Error(err);
}

// WAIT's wait: no key; its deadline, a disconnect or the replicas' acknowledgements end
// it.
struct ReplicaAckWait final : BlockedClient {
  Readiness Check(Worker&, std::string_view) override { return Readiness::kEmpty; }
  void Take(Worker&, std::string_view) override {}
};

// WAIT numreplicas timeout: how many replicas acknowledged every write numbered before
// it (repl_master.h): at once when none is asked for (or inside EXEC, as Redis answers
// there), otherwise once enough have or the timeout ends (0 waits for ever).
Fiber WaitFiber(Client* c, std::shared_ptr<OwnedArgs> owned) {
  CmdArgs args = owned->span();
  std::string out;
  ReplyBuilder rb(&out, c->resp);
  Worker& home = c->worker();
  int64_t numreplicas = 0, timeout = 0;
  if (home.engine().replication().is_replica()) {
    rb.Error(
        "ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 "
        "if a replica is configured to be writable (which is not the default) writes to "
        "replicas are just local and are not propagated.");
  } else if (!ParseInt64(args[2], &timeout)) {
    rb.Error("ERR timeout is not an integer or out of range");
  } else if (timeout < 0) {
    rb.Error("ERR timeout is negative");
  } else if (!ParseInt64(args[1], &numreplicas)) {
    rb.Error(errors::kNotInteger);
  } else if (numreplicas <= 0 || c->in_exec()) {
    rb.Integer(home.engine().Service<ReplMaster>().CountAcked(-1));
  } else {
    auto waiter = std::make_shared<ReplicaAckWait>();
    waiter->origin = home.index();
    waiter->db = c->db;
    waiter->deadline_ms = timeout == 0 ? 0 : home.now_ms() + timeout;
    auto acked = std::make_shared<std::atomic<int64_t>>(0);
    c->set_blocked(waiter);
    home.TrackBlocked(waiter);
    if (c->repl_wrote) {
      c->repl_wait_counter = home.engine().repl_log().counter();
      c->repl_wrote = false;
    }
    home.engine().Service<ReplMaster>().Wait(home.index(), numreplicas, c->repl_wait_counter,
                                             waiter, acked);
    co_await BlockAwait(waiter.get());
    c->set_blocked(nullptr);
    if (waiter->unblock_error) {
      rb.Error(kUnblockedError);
    } else {
      rb.Integer(acked->load(std::memory_order_acquire));
    }
  }
  c->FinishFiber(std::move(out));
}

// FAILOVER [TO host port [FORCE]] [TIMEOUT ms] | FAILOVER ABORT (persistence/failover.h):
// Redis 7.0's checks, in its order; once the failover began, the reply waits until every
// worker holds writes.
Fiber FailoverFiber(Client* c, std::shared_ptr<OwnedArgs> owned) {
  CmdArgs args = owned->span();
  std::string out;
  ReplyBuilder rb(&out, c->resp);
  Engine& engine = c->worker().engine();
  FailoverCoordinator& failover = engine.Service<FailoverCoordinator>();
  FailoverCoordinator::Request req;
  std::string error;
  if (engine.process().cluster_yes) {
    error = "ERR FAILOVER not allowed in cluster mode.";
  } else if (args.size() == 2 && EqualsIgnoreCase(args[1], "abort")) {
    if (failover.Abort()) {
      rb.Ok();
    } else {
      error = "ERR No failover in progress.";
    }
  } else {
    for (size_t i = 1; i < args.size() && error.empty(); i++) {
      if (EqualsIgnoreCase(args[i], "timeout") && i + 1 < args.size() && req.timeout_ms == 0) {
        if (!ParseInt64(args[i + 1], &req.timeout_ms)) {
          error = errors::kNotInteger;
        } else if (req.timeout_ms <= 0) {
          error = "ERR FAILOVER timeout must be greater than 0";
        }
        i++;
      } else if (EqualsIgnoreCase(args[i], "to") && i + 2 < args.size() && !req.has_target) {
        int64_t port = 0;
        if (!ParseInt64(args[i + 2], &port) || port < INT32_MIN || port > INT32_MAX) {
          error = errors::kNotInteger;
        }
        req.has_target = true;
        req.host = std::string(args[i + 1]);
        req.port = static_cast<int>(port);
        i += 2;
      } else if (EqualsIgnoreCase(args[i], "force") && !req.force) {
        req.force = true;
      } else {
        error = errors::kSyntax;
      }
    }
    if (error.empty()) error = failover.Begin(req, c->worker().now_ms());
    if (error.empty()) {
      // Writes wait on every worker from now on: only then is the offset still.
      co_await RunOn(engine.AllShards(), [](Worker& w) { w.SetPauseGate(true); });
      rb.Ok();
    }
  }
  if (!error.empty()) rb.Error(error);
  c->FinishFiber(std::move(out));
}

}  // namespace

void RegisterReplicationFamily(CommandRegistry& r) {
  auto add = [&](const char* name, int arity, uint32_t flags, ConnFn fn, const char* since,
                 const char* summary) {
    CommandSpec s{name, arity, flags, 0, 0, 0};
    s.conn_fn = fn;
    s.group = "server";
    s.since = since;
    s.summary = summary;
    r.Add(std::move(s));
  };
  add("replicaof", 3, kCmdAdmin | kCmdServer | kCmdNoScript | kCmdStale, CmdReplicaOf, "5.0.0",
      "Makes the server a replica of another, or turns it back into a master.");
  add("slaveof", 3, kCmdAdmin | kCmdServer | kCmdNoScript | kCmdStale, CmdReplicaOf, "1.0.0",
      "Makes the server a replica of another, or turns it back into a master.");
  add("role", 1, kCmdNoScript | kCmdLoading | kCmdStale | kCmdFast, CmdRole, "2.8.12",
      "Returns the replication role.");
  {
    CommandSpec s{"failover", -1, kCmdAdmin | kCmdServer | kCmdNoScript | kCmdStale, 0, 0, 0};
    s.fiber_fn = FailoverFiber;
    s.group = "server";
    s.since = "6.2.0";
    s.summary =
        "Hands this master's role over to one of its replicas, with no acknowledged write "
        "lost.";
    r.Add(std::move(s));
  }
  {
    CommandSpec s{"wait", 3, kCmdNoScript | kCmdBlocking, 0, 0, 0};
    s.fiber_fn = WaitFiber;
    s.group = "generic";
    s.since = "3.0.0";
    s.summary =
        "Blocks until the given number of replicas have acknowledged this client's "
        "writes, or the timeout ends.";
    r.Add(std::move(s));
  }
  add("psync", -3, kCmdAdmin | kCmdServer | kCmdNoScript | kCmdNoMulti, CmdPsync, "2.8.0",
      "An internal command used in replication.");
  add("sync", 1, kCmdAdmin | kCmdServer | kCmdNoScript | kCmdNoMulti, CmdPsync, "1.0.0",
      "An internal command used in replication.");
  add("replconf", -1,
      kCmdAdmin | kCmdServer | kCmdNoScript | kCmdLoading | kCmdStale | kCmdAllowBusy, CmdReplconf,
      "3.0.0", "An internal command for configuring the replication stream.");
}

}  // namespace strata
