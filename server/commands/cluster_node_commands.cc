// CLUSTER under `cluster-enabled yes` (docs/ARCHITECTURE.md "Cluster"): the state's
// views (INFO, NODES, SLOTS, SHARDS, REPLICAS, LINKS...) on the client's thread, and the
// layout changes (ADDSLOTS, DELSLOTS, FLUSHSLOTS, SET-CONFIG-EPOCH, BUMPEPOCH, FORGET,
// RESET) in a fiber that saves nodes.conf (ClusterService::Change) and installs the new
// routing on every worker before it replies. Replies and errors are Redis 7.0's.
//
// MEET adds a node in its handshake, which the cluster bus then carries out
// (cluster_bus.h); REPLICATE makes this node a replica (the replica link follows the
// master). SETSLOT opens a slot for migration (MIGRATING, IMPORTING: the data path then
// answers -ASK and -TRYAGAIN, cluster_routing.h), closes it (STABLE) and gives it to a
// node (NODE), as Redis 7.0 does.
#include "server/commands/cluster_node_commands.h"

#include <arpa/inet.h>

#include <algorithm>
#include <chrono>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "core/key_slot.h"
#include "core/string_util.h"
#include "server/base/config.h"
#include "server/base/log.h"
#include "server/cluster/bus_message.h"
#include "server/cluster/cluster_bus.h"
#include "server/cluster/cluster_service.h"
#include "server/commands/errors.h"
#include "server/engine/engine.h"
#include "server/engine/hops.h"
#include "server/engine/replication_state.h"
#include "server/engine/shard_groups.h"
#include "server/engine/worker.h"
#include "server/persistence/replica_link.h"

namespace strata {
namespace {

// The address the asking client reached: given for this node while it has none of its
// own (it learns one from the cluster bus, or cluster-announce-ip).
std::string ReachedIp(const Client& c) {
  const std::string& laddr = c.laddr();
  size_t colon = laddr.rfind(':');
  return colon == std::string::npos ? laddr : laddr.substr(0, colon);
}

std::string IpOf(const ClusterState& st, const ClusterNode& n, const std::string& my_ip) {
  return (&n == &st.myself() && n.ip.empty()) ? my_ip : n.ip;
}

// Ping, pong and failure report times are wall-clock ms, as on the cluster bus.
int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// An IPv4 or IPv6 address in its normal form, or "" when it is neither.
std::string NormalIp(const std::string& ip) {
  unsigned char buf[sizeof(in6_addr)];
  char out[INET6_ADDRSTRLEN] = {};
  if (inet_pton(AF_INET, ip.c_str(), buf) == 1) {
    inet_ntop(AF_INET, buf, out, sizeof(out));
  } else if (inet_pton(AF_INET6, ip.c_str(), buf) == 1) {
    inet_ntop(AF_INET6, buf, out, sizeof(out));
  }
  return out;
}

bool ParseSlotArg(std::string_view a, uint32_t* slot) {
  int64_t v = 0;
  if (!ParseInt64(a, &v) || v < 0 || v >= kClusterSlots) return false;
  *slot = static_cast<uint32_t>(v);
  return true;
}

std::string InfoText(const ClusterState& st, bool full_coverage, const ClusterBus* bus) {
  size_t assigned = 0, ok = 0, pfail = 0, fail = 0;
  for (uint32_t s = 0; s < kClusterSlots; s++) {
    const ClusterNode* o = st.SlotOwner(s);
    if (o == nullptr) continue;
    assigned++;
    if (o->flags & kNodeFail) {
      fail++;
    } else if (o->flags & kNodePFail) {
      pfail++;
    } else {
      ok++;
    }
  }
  const ClusterNode& me = st.myself();
  uint64_t my_epoch = me.config_epoch;
  if (!me.is_master() && !me.master_id.empty()) {
    if (const ClusterNode* m = st.FindNode(me.master_id)) my_epoch = m->config_epoch;
  }
  std::string out;
  auto line = [&](std::string_view name, const std::string& value) {
    out.append(name);
    out += ':';
    out += value;
    out += "\r\n";
  };
  line("cluster_state", st.Ok(full_coverage) ? "ok" : "fail");
  line("cluster_slots_assigned", std::to_string(assigned));
  line("cluster_slots_ok", std::to_string(ok));
  line("cluster_slots_pfail", std::to_string(pfail));
  line("cluster_slots_fail", std::to_string(fail));
  line("cluster_known_nodes", std::to_string(st.nodes().size()));
  line("cluster_size", std::to_string(st.ServingMasters()));
  line("cluster_current_epoch", std::to_string(st.current_epoch()));
  line("cluster_my_epoch", std::to_string(my_epoch));
  // The bus's messages by type (only the types seen), then in all, as Redis lists them.
  for (const char* dir : {"sent", "received"}) {
    uint64_t total = 0;
    for (uint16_t t = 0; t < bus::kTypeCount && bus != nullptr; t++) {
      uint64_t n = dir[0] == 's' ? bus->sent(t) : bus->received(t);
      if (n == 0) continue;
      total += n;
      line(std::string("cluster_stats_messages_") + bus::TypeName(t) + "_" + dir,
           std::to_string(n));
    }
    line(std::string("cluster_stats_messages_") + dir, std::to_string(total));
  }
  line("total_cluster_links_buffer_limit_exceeded",
       std::to_string(bus != nullptr ? bus->links_over_limit() : 0));
  return out;
}

// One node of a CLUSTER SLOTS range: address, port, id, then a map of what was not
// given first (the hostname, when set).
void SlotsNode(const ClusterState& st, const ClusterNode& n, const std::string& my_ip,
               ReplyBuilder& rb) {
  rb.Array(4);
  rb.Bulk(IpOf(st, n, my_ip));
  rb.Integer(n.port);
  rb.Bulk(n.id);
  if (n.hostname.empty()) {
    rb.Map(0);
  } else {
    rb.Map(1);
    rb.Bulk("hostname");
    rb.Bulk(n.hostname);
  }
}

void ReplySlots(const ClusterState& st, const std::string& my_ip, ReplyBuilder& rb) {
  struct Range {
    uint32_t a, b;
    const ClusterNode* master;
    std::vector<const ClusterNode*> replicas;
  };
  std::vector<Range> ranges;
  for (const auto& n : st.nodes()) {
    if (!n->is_master()) continue;
    std::vector<const ClusterNode*> replicas;
    for (const ClusterNode* r : st.ReplicasOf(*n)) {
      if (!r->failed()) replicas.push_back(r);
    }
    for (auto [a, b] : st.RangesOf(*n)) ranges.push_back(Range{a, b, n.get(), replicas});
  }
  // In slot order, as Redis lists them.
  std::sort(ranges.begin(), ranges.end(), [](const Range& x, const Range& y) { return x.a < y.a; });
  rb.Array(ranges.size());
  for (const Range& r : ranges) {
    rb.Array(3 + r.replicas.size());
    rb.Integer(r.a);
    rb.Integer(r.b);
    SlotsNode(st, *r.master, my_ip, rb);
    for (const ClusterNode* rep : r.replicas) SlotsNode(st, *rep, my_ip, rb);
  }
}

void ShardsNode(const ClusterState& st, const ClusterNode& n, const std::string& my_ip,
                int64_t my_offset, ReplyBuilder& rb) {
  bool me = &n == &st.myself();
  rb.Map(n.hostname.empty() ? 7 : 8);
  rb.Bulk("id");
  rb.Bulk(n.id);
  rb.Bulk("port");
  rb.Integer(n.port);
  std::string ip = IpOf(st, n, my_ip);
  rb.Bulk("ip");
  rb.Bulk(ip);
  rb.Bulk("endpoint");
  rb.Bulk(ip);
  if (!n.hostname.empty()) {
    rb.Bulk("hostname");
    rb.Bulk(n.hostname);
  }
  rb.Bulk("role");
  rb.Bulk(n.is_master() ? "master" : "replica");
  rb.Bulk("replication-offset");
  rb.Integer(me ? my_offset : 0);  // another node's offset comes with the bus
  rb.Bulk("health");
  rb.Bulk(n.failed() ? "fail" : "online");
}

void ReplyShards(const ClusterState& st, const std::string& my_ip, int64_t my_offset,
                 ReplyBuilder& rb) {
  std::vector<const ClusterNode*> masters;
  for (const auto& n : st.nodes()) {
    if (n->is_master() && !(n->flags & kNodeHandshake)) masters.push_back(n.get());
  }
  rb.Array(masters.size());
  for (const ClusterNode* m : masters) {
    auto ranges = st.RangesOf(*m);
    std::vector<const ClusterNode*> replicas = st.ReplicasOf(*m);
    rb.Map(2);
    rb.Bulk("slots");
    rb.Array(ranges.size() * 2);
    for (auto [a, b] : ranges) {
      rb.Integer(a);
      rb.Integer(b);
    }
    rb.Bulk("nodes");
    rb.Array(1 + replicas.size());
    ShardsNode(st, *m, my_ip, my_offset, rb);
    for (const ClusterNode* r : replicas) ShardsNode(st, *r, my_ip, my_offset, rb);
  }
}

const char* const kHelp[] = {
    "CLUSTER <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "ADDSLOTS <slot> [<slot> ...]",
    "    Assign slots to current node.",
    "ADDSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
    "    Assign slots which are between <start-slot> and <end-slot> to current node.",
    "BUMPEPOCH",
    "    Advance the cluster config epoch.",
    "COUNT-FAILURE-REPORTS <node-id>",
    "    Return number of failure reports for <node-id>.",
    "COUNTKEYSINSLOT <slot>",
    "    Return the number of keys in <slot>.",
    "DELSLOTS <slot> [<slot> ...]",
    "    Delete slots information from current node.",
    "DELSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
    "    Delete slots information which are between <start-slot> and <end-slot>.",
    "FLUSHSLOTS",
    "    Delete current node own slots information.",
    "FORGET <node-id>",
    "    Remove a node from the cluster.",
    "GETKEYSINSLOT <slot> <count>",
    "    Return key names stored by current node in a slot.",
    "INFO",
    "    Return information about the cluster.",
    "KEYSLOT <key>",
    "    Return the hash slot for <key>.",
    "LINKS",
    "    Return information about all network links between this node and its peers.",
    "MYID",
    "    Return the node id.",
    "MYSHARDID",
    "    Return the node's shard id.",
    "NODES",
    "    Return cluster configuration seen by node. Output format:",
    "    <id> <ip:port@bus-port[,hostname]> <flags> <master> <pings> <pongs> <epoch> <link> "
    "<slot> ...",
    "REPLICAS <node-id>",
    "    Return <node-id> replicas.",
    "RESET [HARD|SOFT]",
    "    Reset current node (default: soft).",
    "SAVECONFIG",
    "    Force saving cluster configuration on disk.",
    "SET-CONFIG-EPOCH <epoch>",
    "    Set config epoch of current node.",
    "SHARDS",
    "    Return information about slot range mappings and the nodes associated with them.",
    "SLOTS",
    "    Return information about slots range mappings. Each range is made of:",
    "    start, end, master and replicas IP addresses, ports and ids",
    "HELP",
    "    Print this help.",
};

constexpr std::string_view kLayoutChanges[] = {
    "addslots",  "addslotsrange", "delslots", "delslotsrange", "flushslots", "set-config-epoch",
    "bumpepoch", "forget",        "reset",    "replicate",     "setslot"};

}  // namespace

std::string ClusterWrongArity(std::string_view lower_sub) {
  return "ERR wrong number of arguments for 'cluster|" + std::string(lower_sub) + "' command";
}

bool IsClusterLayoutChange(std::string_view lower_sub) {
  return std::find(std::begin(kLayoutChanges), std::end(kLayoutChanges), lower_sub) !=
         std::end(kLayoutChanges);
}

void ClusterNodeConn(Client& c, CmdArgs args, ReplyBuilder& rb) {
  Engine& srv = c.worker().engine();
  ClusterService& svc = srv.Service<ClusterService>();
  std::string sub = Lowercase(args[1]);
  auto arity = [&](size_t n) {
    if (args.size() == n) return true;
    rb.Error(ClusterWrongArity(sub));
    return false;
  };
  auto find_node = [&](const ClusterState& st) -> const ClusterNode* {
    const ClusterNode* n = st.FindNode(args[2]);
    if (n == nullptr) rb.Error("ERR Unknown node " + std::string(args[2]));
    return n;
  };
  if (sub == "help") {
    if (!arity(2)) return;
    rb.Array(std::size(kHelp));
    for (const char* line : kHelp) rb.Simple(line);
  } else if (sub == "info") {
    if (!arity(2)) return;
    bool full = srv.config().Int("cluster-require-full-coverage") != 0;
    svc.Read([&](const ClusterState& st) { rb.Verbatim(InfoText(st, full, svc.bus())); });
  } else if (sub == "myid") {
    if (!arity(2)) return;
    svc.Read([&](const ClusterState& st) { rb.Bulk(st.myself().id); });
  } else if (sub == "myshardid") {
    if (arity(2)) rb.Bulk(srv.process().cluster_shard_id);
  } else if (sub == "nodes") {
    if (!arity(2)) return;
    std::string ip = ReachedIp(c);
    svc.Read([&](const ClusterState& st) { rb.Verbatim(st.NodesText(ip)); });
  } else if (sub == "slots") {
    if (!arity(2)) return;
    std::string ip = ReachedIp(c);
    svc.Read([&](const ClusterState& st) { ReplySlots(st, ip, rb); });
  } else if (sub == "shards") {
    if (!arity(2)) return;
    std::string ip = ReachedIp(c);
    int64_t offset = srv.replication().offset();
    svc.Read([&](const ClusterState& st) { ReplyShards(st, ip, offset, rb); });
  } else if (sub == "keyslot") {
    if (arity(3)) rb.Integer(KeySlot(args[2]));
  } else if (sub == "saveconfig") {
    if (!arity(2)) return;
    std::string err = svc.Save();
    if (err.empty()) {
      rb.Ok();
    } else {
      rb.Error(err);
    }
  } else if (sub == "count-failure-reports") {
    if (!arity(3)) return;
    // The reports still valid (twice the node timeout), as Redis counts them.
    int64_t validity =
        srv.config().Int("cluster-node-timeout") * ClusterGossip::kFailReportValidityMult;
    int64_t now = WallMs();
    svc.Read([&](const ClusterState& st) {
      const ClusterNode* n = find_node(st);
      if (n == nullptr) return;
      int64_t count = 0;
      for (const FailReport& r : n->fail_reports) count += now - r.time_ms <= validity;
      rb.Integer(count);
    });
  } else if (sub == "failover") {
    bool force = false, takeover = false;
    if (args.size() == 3 && EqualsIgnoreCase(args[2], "force")) {
      force = true;
    } else if (args.size() == 3 && EqualsIgnoreCase(args[2], "takeover")) {
      takeover = true;
    } else if (args.size() > 3) {
      rb.Error("ERR unknown subcommand or wrong number of arguments for '" + std::string(args[1]) +
               "'. Try CLUSTER HELP.");
      return;
    } else if (args.size() != 2) {
      rb.Error(std::string(errors::kSyntax));
      return;
    }
    std::string err;
    svc.Read([&](const ClusterState& st) {
      const ClusterNode& me = st.myself();
      const ClusterNode* m = me.master_id.empty() ? nullptr : st.FindNode(me.master_id);
      if (me.is_master()) {
        err = "ERR You should send CLUSTER FAILOVER to a replica";
      } else if (m == nullptr) {
        err = "ERR I'm a replica but my master is unknown to me";
      } else if (!force && !takeover && (m->failed() || !m->connected)) {
        err = "ERR Master is down or failed, please use CLUSTER FAILOVER FORCE";
      }
    });
    if (!err.empty()) {
      rb.Error(err);
      return;
    }
    FailoverMode mode = takeover ? FailoverMode::kTakeover
                        : force  ? FailoverMode::kForce
                                 : FailoverMode::kDefault;
    if (const ClusterBus* bus = svc.bus()) bus->RequestFailover(mode);
    rb.Ok();
  } else if (sub == "meet") {
    if (args.size() < 4) {
      rb.Error(ClusterWrongArity(sub));
      return;
    }
    if (args.size() > 5) {
      rb.Error("ERR unknown subcommand or wrong number of arguments for '" + std::string(args[1]) +
               "'. Try CLUSTER HELP.");
      return;
    }
    int64_t port = 0, cport = 0;
    if (!ParseInt64(args[3], &port)) {
      rb.Error("ERR Invalid TCP base port specified: " + std::string(args[3]));
      return;
    }
    if (args.size() == 5) {
      if (!ParseInt64(args[4], &cport)) {
        rb.Error("ERR Invalid TCP bus port specified: " + std::string(args[4]));
        return;
      }
    } else {
      cport = port + 10000;
    }
    std::string ip = NormalIp(std::string(args[2]));
    if (ip.empty() || port <= 0 || port > 65535 || cport <= 0 || cport > 65535) {
      rb.Error("ERR Invalid node address specified: " + std::string(args[2]) + ":" +
               std::string(args[3]));
      return;
    }
    // A handshake with that address already going on is not an error (as in Redis).
    svc.Change(
        [&](ClusterState& st, std::string*) {
          st.StartHandshake(ip, static_cast<int>(port), static_cast<int>(cport), WallMs(),
                            NewNodeId());
          return true;
        },
        /*changed=*/false);
    if (const ClusterBus* bus = svc.bus()) bus->Wake();
    rb.Ok();
  } else if (sub == "replicas" || sub == "slaves") {
    if (!arity(3)) return;
    std::string ip = ReachedIp(c);
    svc.Read([&](const ClusterState& st) {
      const ClusterNode* n = find_node(st);
      if (n == nullptr) return;
      if (!n->is_master()) {
        rb.Error("ERR The specified node is not a master");
        return;
      }
      std::vector<const ClusterNode*> replicas = st.ReplicasOf(*n);
      rb.Array(replicas.size());
      for (const ClusterNode* r : replicas) rb.Bulk(st.NodeLine(*r, ip));
    });
  } else if (sub == "links") {
    if (!arity(2)) return;
    std::vector<ClusterBus::LinkStat> links;
    if (const ClusterBus* bus = svc.bus()) links = bus->LinkStats();
    rb.Array(links.size());
    for (const ClusterBus::LinkStat& l : links) {
      rb.Map(6);
      rb.Bulk("direction");
      rb.Bulk(l.outbound ? "to" : "from");
      rb.Bulk("node");
      rb.Bulk(l.node);
      rb.Bulk("create-time");
      rb.Integer(l.create_time);
      rb.Bulk("events");
      rb.Bulk(l.writing ? "rw" : "r");
      rb.Bulk("send-buffer-allocated");
      rb.Integer(static_cast<int64_t>(l.send_buffer_allocated));
      rb.Bulk("send-buffer-used");
      rb.Integer(static_cast<int64_t>(l.send_buffer_used));
    }
  } else {
    rb.Error("ERR unknown subcommand '" + std::string(args[1]) + "'. Try CLUSTER HELP.");
  }
}

Fiber ClusterNodeChangeFiber(Client* c, std::shared_ptr<OwnedArgs> owned) {
  CmdArgs args = owned->span();
  std::string out;
  ReplyBuilder rb(&out, c->resp);
  Engine& srv = c->worker().engine();
  ClusterService& svc = srv.Service<ClusterService>();
  std::string sub = Lowercase(args[1]);
  std::string error;
  std::string status;  // a status reply other than +OK (BUMPEPOCH)
  bool changed = false;
  bool applied = false;  // a change was made (even when saving the file then failed)

  // FLUSHSLOTS and RESET need to know whether this node holds keys.
  size_t keys = 0;
  if (sub == "flushslots" || sub == "reset" || sub == "replicate") {
    std::vector<size_t> counts(srv.shard_count(), 0);
    co_await RunOn(srv.AllShards(),
                   [&](Worker& w) { counts[w.index()] = w.keyspace().key_count(); });
    for (size_t n : counts) keys += n;
  }

  if (sub == "addslots" || sub == "delslots" || sub == "addslotsrange" || sub == "delslotsrange") {
    bool range = sub.ends_with("range");
    bool add = sub.starts_with("add");
    // The ranges as given (one per argument without RANGE). The errors come in Redis
    // 7.0's order: ADDSLOTS and DELSLOTS parse every argument before checking any slot;
    // the RANGE forms parse and check one range at a time, so a range that does not parse
    // is kept in place with its error.
    struct Range {
      uint32_t a = 0, b = 0;
      std::string error;
    };
    std::vector<Range> ranges;
    if (args.size() < 3 || (range && (args.size() - 2) % 2 != 0)) {
      error = ClusterWrongArity(sub);
    } else if (!range) {
      for (size_t i = 2; i < args.size() && error.empty(); i++) {
        uint32_t s = 0;
        if (!ParseSlotArg(args[i], &s)) error = "ERR Invalid or out of range slot";
        ranges.push_back(Range{s, s, {}});
      }
    } else {
      for (size_t i = 2; i + 1 < args.size(); i += 2) {
        Range r;
        if (!ParseSlotArg(args[i], &r.a) || !ParseSlotArg(args[i + 1], &r.b)) {
          r.error = "ERR Invalid or out of range slot";
        } else if (r.a > r.b) {
          r.error = "ERR start slot number " + std::to_string(r.a) +
                    " is greater than end slot number " + std::to_string(r.b);
        }
        bool stop = !r.error.empty();
        ranges.push_back(std::move(r));
        if (stop) break;
      }
    }
    if (error.empty()) {
      error = svc.Change([&](ClusterState& st, std::string* err) {
        // One pass over the slots, marking each: memory is bounded by the slot count
        // however many times a range is repeated.
        std::vector<char> seen(kClusterSlots, 0);
        for (const Range& r : ranges) {
          if (!r.error.empty()) {
            *err = r.error;
            return false;
          }
          for (uint32_t s = r.a; s <= r.b; s++) {
            if (add && st.SlotOwner(s) != nullptr) {
              *err = "ERR Slot " + std::to_string(s) + " is already busy";
              return false;
            }
            if (!add && st.SlotOwner(s) == nullptr) {
              *err = "ERR Slot " + std::to_string(s) + " is already unassigned";
              return false;
            }
            if (seen[s]) {
              *err = "ERR Slot " + std::to_string(s) + " specified multiple times";
              return false;
            }
            seen[s] = 1;
          }
        }
        for (uint32_t s = 0; s < kClusterSlots; s++) {
          if (!seen[s]) continue;
          if (add) {
            st.AssignToMyself(s);
          } else {
            st.Unassign(s);
          }
        }
        applied = true;
        return true;
      });
      changed = applied;
    }
  } else if (sub == "flushslots") {
    if (args.size() != 2) {
      error = ClusterWrongArity(sub);
    } else if (keys != 0) {
      error = "ERR DB must be empty to perform CLUSTER FLUSHSLOTS.";
    } else {
      error = svc.Change([&](ClusterState& st, std::string*) {
        for (uint32_t s = 0; s < kClusterSlots; s++) {
          if (st.SlotOwner(s) == &st.myself()) st.Unassign(s);
        }
        applied = true;
        return true;
      });
      changed = applied;
    }
  } else if (sub == "set-config-epoch") {
    int64_t epoch = 0;
    if (args.size() != 3) {
      error = ClusterWrongArity(sub);
    } else if (!ParseInt64(args[2], &epoch)) {
      error = std::string(errors::kNotInteger);
    } else if (epoch < 0) {
      error = "ERR Invalid config epoch specified: " + std::to_string(epoch);
    } else {
      error = svc.Change([&](ClusterState& st, std::string* err) {
        if (st.nodes().size() > 1) {
          *err =
              "ERR The user can assign a config epoch only when the node does not know any "
              "other node.";
          return false;
        }
        if (st.myself().config_epoch != 0) {
          *err = "ERR Node config epoch is already non-zero";
          return false;
        }
        st.myself().config_epoch = static_cast<uint64_t>(epoch);
        if (st.current_epoch() < st.myself().config_epoch)
          st.set_current_epoch(st.myself().config_epoch);
        applied = true;
        return true;
      });
      changed = applied;
    }
  } else if (sub == "bumpepoch") {
    if (args.size() != 2) {
      error = ClusterWrongArity(sub);
    } else {
      error = svc.Change([&](ClusterState& st, std::string*) {
        // Without consensus, as Redis: a new epoch unless this node already has the
        // largest one and it is not 0.
        uint64_t max = st.MaxEpoch();
        ClusterNode& me = st.myself();
        if (me.config_epoch == 0 || me.config_epoch != max) {
          st.set_current_epoch(st.current_epoch() + 1);
          me.config_epoch = st.current_epoch();
          status = "BUMPED " + std::to_string(me.config_epoch);
        } else {
          status = "STILL " + std::to_string(me.config_epoch);
        }
        applied = true;
        return true;
      });
      changed = applied;
    }
  } else if (sub == "forget") {
    if (args.size() != 3) {
      error = ClusterWrongArity(sub);
    } else {
      error = svc.Change([&](ClusterState& st, std::string* err) {
        const ClusterNode* n = st.FindNode(args[2]);
        if (n == nullptr) {
          *err = "ERR Unknown node " + std::string(args[2]);
          return false;
        }
        if (n == &st.myself()) {
          *err = "ERR I tried hard but I can't forget myself...";
          return false;
        }
        if (!st.myself().is_master() && st.myself().master_id == n->id) {
          *err = "ERR Can't forget my master!";
          return false;
        }
        // Gossip does not bring it back for a minute (as Redis's blacklist).
        st.Blacklist(n->id, WallMs() + ClusterGossip::kForgetBlacklistMs);
        st.Forget(n);
        applied = true;
        return true;
      });
      changed = applied;
    }
  } else if (sub == "replicate") {
    if (args.size() != 3) {
      error = ClusterWrongArity(sub);
    } else {
      std::string ip;
      int port = 0;
      error = svc.Change([&](ClusterState& st, std::string* err) {
        const ClusterNode* n = st.FindNode(args[2]);
        if (n == nullptr) {
          *err = "ERR Unknown node " + std::string(args[2]);
          return false;
        }
        if (n == &st.myself()) {
          *err = "ERR Can't replicate myself";
          return false;
        }
        if (!n->is_master()) {
          *err = "ERR I can only replicate a master, not a replica.";
          return false;
        }
        const ClusterNode& me = st.myself();
        if (me.is_master() && (st.SlotCount(me) != 0 || keys != 0)) {
          *err = "ERR To set a master the node must be empty and without assigned slots.";
          return false;
        }
        GossipEffects fx;
        ClusterGossip::SetMyMaster(st, *n, &fx);
        ip = n->ip;
        port = n->port;
        applied = true;
        return true;
      });
      changed = applied;
      // The replica link connects on its own thread; the reply does not wait for it.
      if (applied) {
        srv.Service<ReplicaLink>().Start(ip, port);
        if (const ClusterBus* bus = svc.bus()) bus->Wake();  // the new role goes out now
      }
    }
  } else if (sub == "setslot") {
    uint32_t slot = 0;
    bool slot_ok = args.size() >= 3 && ParseSlotArg(args[2], &slot);
    std::string action = args.size() >= 4 ? Lowercase(args[3]) : std::string();
    // NODE to another node needs the slot empty here (a keyspace count over the shards).
    size_t slot_keys = 0;
    if (slot_ok && action == "node" && args.size() == 5) {
      std::vector<size_t> counts(srv.shard_count(), 0);
      co_await RunOn(srv.AllShards(), [&](Worker& w) {
        counts[w.index()] = w.keyspace().slot_index()->Count(slot);
      });
      for (size_t n : counts) slot_keys += n;
    }
    std::string follow_ip;
    int follow_port = 0;
    bool bumped = false;
    if (args.size() < 4) {
      error = ClusterWrongArity(sub);
    } else {
      error = svc.Change([&](ClusterState& st, std::string* err) {
        ClusterNode& me = st.myself();
        if (!me.is_master()) {
          *err = "ERR Please use SETSLOT only with masters.";
          return false;
        }
        if (!slot_ok) {
          *err = "ERR Invalid or out of range slot";
          return false;
        }
        std::string slot_text = std::to_string(slot);
        std::string node_arg = args.size() >= 5 ? std::string(args[4]) : std::string();
        if ((action == "migrating" || action == "importing") && args.size() == 5) {
          bool migrating = action == "migrating";
          if (migrating && st.SlotOwner(slot) != &me) {
            *err = "ERR I'm not the owner of hash slot " + slot_text;
            return false;
          }
          if (!migrating && st.SlotOwner(slot) == &me) {
            *err = "ERR I'm already the owner of hash slot " + slot_text;
            return false;
          }
          const ClusterNode* n = st.FindNode(node_arg);
          if (n == nullptr) {
            *err = "ERR I don't know about node " + node_arg;
            return false;
          }
          if (!n->is_master()) {
            *err = "ERR Target node is not a master";
            return false;
          }
          if (migrating) {
            st.SetMigrating(slot, n->id);
          } else {
            st.SetImporting(slot, n->id);
          }
        } else if (action == "stable" && args.size() == 4) {
          st.ClearMigrating(slot);
          st.ClearImporting(slot);
        } else if (action == "node" && args.size() == 5) {
          const ClusterNode* n = st.FindNode(node_arg);
          if (n == nullptr) {
            *err = "ERR Unknown node " + node_arg;
            return false;
          }
          if (!n->is_master()) {
            *err = "ERR Target node is not a master";
            return false;
          }
          bool was_mine = st.SlotOwner(slot) == &me;
          if (was_mine && n != &me && slot_keys != 0) {
            *err = "ERR Can't assign hashslot " + slot_text +
                   " to a different node while I still hold keys for this hash slot.";
            return false;
          }
          // No key left here: the migration is over, whoever owns the slot by now (the
          // target's new epoch may have reached this node first).
          if (slot_keys == 0) st.ClearMigrating(slot);
          if (n == &me && st.importing().count(slot) != 0) {
            // The slot came here by hand: a new config epoch, without the cluster's
            // agreement, lets the other nodes take the new owner (Redis does the same; a
            // collision is settled as any other).
            uint64_t max = st.MaxEpoch();
            if (me.config_epoch == 0 || me.config_epoch != max) {
              st.set_current_epoch(st.current_epoch() + 1);
              me.config_epoch = st.current_epoch();
              LogWarning("configEpoch updated after importing slot %u", slot);
            }
            st.ClearImporting(slot);
            bumped = true;
          }
          st.SetOwner(slot, n);
          if (was_mine && n != &me && st.SlotCount(me) == 0 &&
              srv.config().Int("cluster-allow-replica-migration") != 0) {
            // A master left without slots follows the node that took the last one.
            LogWarning("Configuration change detected. Reconfiguring myself as a replica of %.40s",
                       n->id.c_str());
            GossipEffects fx;
            ClusterGossip::SetMyMaster(st, *n, &fx);
            follow_ip = n->ip;
            follow_port = n->port;
          }
        } else {
          *err = "ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP";
          return false;
        }
        applied = true;
        return true;
      });
      changed = applied;
      if (applied && follow_port != 0) srv.Service<ReplicaLink>().Start(follow_ip, follow_port);
      // The new owner (or role) goes out now rather than with the next PINGs.
      if (applied && (bumped || follow_port != 0)) {
        if (const ClusterBus* bus = svc.bus()) bus->Wake();
      }
    }
  } else if (sub == "reset") {
    bool hard = false;
    if (args.size() > 3) {
      error = ClusterWrongArity(sub);
    } else if (args.size() == 3 && EqualsIgnoreCase(args[2], "hard")) {
      hard = true;
    } else if (args.size() == 3 && !EqualsIgnoreCase(args[2], "soft")) {
      error = std::string(errors::kSyntax);
    }
    if (error.empty()) {
      std::string new_id = NewNodeId();
      bool was_replica = false;
      error = svc.Change([&](ClusterState& st, std::string* err) {
        if (st.myself().is_master() && keys != 0) {
          *err = "ERR CLUSTER RESET can't be called with master nodes containing keys";
          return false;
        }
        was_replica = !st.myself().is_master();
        st.Reset(hard, new_id);
        applied = true;
        return true;
      });
      changed = applied;
      if (applied && was_replica) {
        // A replica that is reset is an empty master, as in Redis: it stops replicating
        // and drops the copy of its old master's data, which it no longer owns.
        srv.Service<ReplicaLink>().Stop();
        if (srv.replication().is_replica()) srv.replication().BecomeMaster();
        std::vector<uint32_t> shards = srv.AllShards();
        std::vector<LockTable::Request> holds = WholeShardRequests(shards.size(), c->txn_owner);
        for (uint32_t s : shards) co_await LockOn(s, &holds[s]);
        co_await RunOn(shards, [&](Worker& w) {
          w.keyspace().FlushAll(/*lazy=*/true);
          if (w.engine().tracking_gate_refs.load(std::memory_order_relaxed) > 0) {
            w.tracking().OnFlush();
          }
          w.locks().ReleaseWhole();
        });
      }
    }
  } else {
    error = "ERR unknown subcommand '" + std::string(args[1]) + "'. Try CLUSTER HELP.";
  }

  if (changed) {
    // Every worker routes by the new layout before the client hears of it.
    co_await RunOn(srv.AllShards(), [&](Worker& w) { svc.InstallLatest(w); });
  }
  if (!error.empty()) {
    rb.Error(error);
  } else if (!status.empty()) {
    rb.Simple(status);
  } else {
    rb.Ok();
  }
  c->FinishFiber(std::move(out));
}

}  // namespace strata
