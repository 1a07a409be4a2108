// Cluster commands: CLUSTER, READONLY, READWRITE, ASKING (docs/ARCHITECTURE.md "Cluster").
//
// With cluster-enabled no (the default) each answers Redis's "cluster support disabled"
// error, as a standalone redis-server does. With cluster-enabled emulated this server is
// the one node of a cluster that owns all 16384 slots: CLUSTER SLOTS, SHARDS, NODES and
// INFO describe that cluster, KEYSLOT hashes as Redis Cluster does (core/key_slot.h), and
// READONLY, READWRITE and ASKING are accepted. No key is ever redirected (every slot is
// here), and multi-key commands over keys of different slots work as they do without
// cluster mode. COUNTKEYSINSLOT and GETKEYSINSLOT read each shard's slot index
// (core/slot_index.h). Subcommands that change a real cluster's layout (ADDSLOTS, MEET,
// SETSLOT...) are refused with the reason.
//
// The node's address as clients are told it: cluster-announce-ip, else the address the
// asking client connected to (so a client reaching the server through any interface is
// sent back to that interface); its port: cluster-announce-port, else the server's port.
//
// They run on the client's own thread and touch no shard data, except COUNTKEYSINSLOT and
// GETKEYSINSLOT: a fiber asks every shard, holding each whole as DBSIZE does.
#include <algorithm>
#include <cctype>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/key_slot.h"
#include "core/string_util.h"
#include "server/base/config.h"
#include "server/commands/cluster_node_commands.h"
#include "server/commands/errors.h"
#include "server/commands/families.h"
#include "server/engine/client.h"
#include "server/engine/command.h"
#include "server/engine/engine.h"
#include "server/engine/hops.h"
#include "server/engine/replication_state.h"
#include "server/engine/shard_groups.h"
#include "server/engine/worker.h"

namespace strata {
namespace {

constexpr std::string_view kClusterDisabled = "ERR This instance has cluster support disabled";

struct NodeView {
  std::string ip;
  int64_t port;
  int64_t bus_port;
  std::string hostname;
  const std::string* id;
  int64_t offset;
};

NodeView Myself(Client& c) {
  Engine& srv = c.worker().engine();
  Config& cfg = srv.config();
  NodeView n;
  n.ip = cfg.String("cluster-announce-ip");
  if (n.ip.empty()) {
    const std::string& laddr = c.laddr();  // "host:port"
    size_t colon = laddr.rfind(':');
    n.ip = colon == std::string::npos ? laddr : laddr.substr(0, colon);
  }
  n.port = cfg.Int("cluster-announce-port");
  if (n.port == 0) n.port = srv.process().port;
  n.bus_port = cfg.Int("cluster-port");
  if (n.bus_port == 0) n.bus_port = srv.process().port + 10000;
  n.hostname = cfg.String("cluster-announce-hostname");
  n.id = &srv.process().cluster_node_id;
  n.offset = srv.replication().offset();
  return n;
}

std::string ClusterInfo() {
  std::string out;
  auto line = [&](std::string_view name, std::string_view value) {
    out.append(name);
    out += ':';
    out.append(value);
    out += "\r\n";
  };
  line("cluster_state", "ok");
  line("cluster_slots_assigned", "16384");
  line("cluster_slots_ok", "16384");
  line("cluster_slots_pfail", "0");
  line("cluster_slots_fail", "0");
  line("cluster_known_nodes", "1");
  line("cluster_size", "1");
  line("cluster_current_epoch", "0");
  line("cluster_my_epoch", "0");
  line("cluster_stats_messages_sent", "0");
  line("cluster_stats_messages_received", "0");
  line("total_cluster_links_buffer_limit_exceeded", "0");
  return out;
}

// CLUSTER SLOTS: one range, 0-16383, served by this node: its address, port, id and a
// map of the networking facts not given first (the hostname, when set), as Redis 7.
void ReplySlots(const NodeView& n, ReplyBuilder& rb) {
  rb.Array(1);
  rb.Array(3);
  rb.Integer(0);
  rb.Integer(kClusterSlots - 1);
  rb.Array(4);
  rb.Bulk(n.ip);
  rb.Integer(n.port);
  rb.Bulk(*n.id);
  if (n.hostname.empty()) {
    rb.Map(0);
  } else {
    rb.Map(1);
    rb.Bulk("hostname");
    rb.Bulk(n.hostname);
  }
}

// CLUSTER SHARDS (Redis 7): one shard, its slot ranges and its one node.
void ReplyShards(const NodeView& n, ReplyBuilder& rb) {
  rb.Array(1);
  rb.Map(2);
  rb.Bulk("slots");
  rb.Array(2);
  rb.Integer(0);
  rb.Integer(kClusterSlots - 1);
  rb.Bulk("nodes");
  rb.Array(1);
  rb.Map(n.hostname.empty() ? 7 : 8);
  rb.Bulk("id");
  rb.Bulk(*n.id);
  rb.Bulk("port");
  rb.Integer(n.port);
  rb.Bulk("ip");
  rb.Bulk(n.ip);
  rb.Bulk("endpoint");
  rb.Bulk(n.ip);
  if (!n.hostname.empty()) {
    rb.Bulk("hostname");
    rb.Bulk(n.hostname);
  }
  rb.Bulk("role");
  rb.Bulk("master");
  rb.Bulk("replication-offset");
  rb.Integer(n.offset);
  rb.Bulk("health");
  rb.Bulk("online");
}

// CLUSTER NODES: "<id> <ip>:<port>@<bus port>[,<hostname>] myself,master - <ping sent>
// <pong received> <config epoch> connected <slots>".
std::string NodesLine(const NodeView& n) {
  std::string out = *n.id;
  out += ' ';
  out += n.ip;
  out += ':';
  out += std::to_string(n.port);
  out += '@';
  out += std::to_string(n.bus_port);
  if (!n.hostname.empty()) {
    out += ',';
    out += n.hostname;
  }
  out += " myself,master - 0 0 0 connected 0-16383\n";
  return out;
}

const char* const kClusterHelp[] = {
    "CLUSTER <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "INFO",
    "    Return information about the cluster.",
    "COUNTKEYSINSLOT <slot>",
    "    Return the number of keys in <slot>.",
    "GETKEYSINSLOT <slot> <count>",
    "    Return key names stored by current node in a slot.",
    "KEYSLOT <key>",
    "    Return the hash slot for <key>.",
    "MYID",
    "    Return the node id.",
    "MYSHARDID",
    "    Return the node's shard id.",
    "NODES",
    "    Return cluster configuration seen by node. Output format:",
    "    <id> <ip:port@bus-port[,hostname]> <flags> <master> <pings> <pongs> <epoch> <link> "
    "<slot> ...",
    "SHARDS",
    "    Return information about slot range mappings and the nodes associated with them.",
    "SLOTS",
    "    Return information about slots range mappings. Each range is made of:",
    "    start, end, master and replicas IP addresses, ports and ids",
    "HELP",
    "    Print this help.",
    "(cluster-enabled emulated: this node owns every slot; the subcommands that change a "
    "cluster's layout are not available)",
};

// Redis Cluster's subcommands that change or inspect a real cluster's layout: refused
// here, naming the reason, rather than "unknown subcommand".
constexpr std::string_view kLayoutSubcommands[] = {"addslots",
                                                   "addslotsrange",
                                                   "delslots",
                                                   "delslotsrange",
                                                   "flushslots",
                                                   "setslot",
                                                   "meet",
                                                   "forget",
                                                   "replicate",
                                                   "reset",
                                                   "failover",
                                                   "saveconfig",
                                                   "set-config-epoch",
                                                   "bumpepoch",
                                                   "count-failure-reports",
                                                   "replicas",
                                                   "slaves",
                                                   "links"};

void CmdCluster(Client& c, CmdArgs args, ReplyBuilder& rb) {
  Engine& srv = c.worker().engine();
  if (srv.process().cluster_yes) {
    ClusterNodeConn(c, args, rb);
    return;
  }
  if (!srv.process().cluster_emulated) {
    rb.Error(kClusterDisabled);
    return;
  }
  std::string sub = Lowercase(args[1]);
  auto arity = [&](size_t n) {
    if (args.size() == n) return true;
    rb.Error(ClusterWrongArity(sub));
    return false;
  };
  if (sub == "help") {
    if (!arity(2)) return;
    rb.Array(std::size(kClusterHelp));
    for (const char* line : kClusterHelp) rb.Simple(line);
  } else if (sub == "info") {
    if (arity(2)) rb.Verbatim(ClusterInfo());
  } else if (sub == "myid") {
    if (arity(2)) rb.Bulk(srv.process().cluster_node_id);
  } else if (sub == "myshardid") {
    if (arity(2)) rb.Bulk(srv.process().cluster_shard_id);
  } else if (sub == "slots") {
    if (arity(2)) ReplySlots(Myself(c), rb);
  } else if (sub == "shards") {
    if (arity(2)) ReplyShards(Myself(c), rb);
  } else if (sub == "nodes") {
    if (arity(2)) rb.Verbatim(NodesLine(Myself(c)));
  } else if (sub == "keyslot") {
    if (arity(3)) rb.Integer(KeySlot(args[2]));
  } else if (std::find(std::begin(kLayoutSubcommands), std::end(kLayoutSubcommands), sub) !=
             std::end(kLayoutSubcommands)) {
    std::string name(args[1]);
    for (char& ch : name) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    rb.Error("ERR CLUSTER " + name +
             " is not available with cluster-enabled emulated (this node owns every slot, "
             "and there is no cluster bus)");
  } else {
    rb.Error("ERR unknown subcommand '" + std::string(args[1]) + "'. Try CLUSTER HELP.");
  }
}

// COUNTKEYSINSLOT <slot> and GETKEYSINSLOT <slot> <count>, and with cluster-enabled yes
// the layout changes (cluster_node_commands.h), run in a fiber.
bool ClusterNeedsFiber(CmdArgs args) {
  std::string sub = Lowercase(args[1]);
  if (sub == "countkeysinslot" || sub == "getkeysinslot") return true;
  return IsClusterLayoutChange(sub) && Worker::Current()->engine().process().cluster_yes;
}

Fiber ClusterKeysFiber(Client* c, std::shared_ptr<OwnedArgs> owned) {
  CmdArgs args = owned->span();
  std::string out;
  ReplyBuilder rb(&out, c->resp);
  Engine& srv = c->worker().engine();
  bool count_only = EqualsIgnoreCase(args[1], "countkeysinslot");
  int64_t slot = 0;
  int64_t max_keys = 0;
  if (!srv.process().cluster_mode()) {
    rb.Error(kClusterDisabled);
  } else if (args.size() != (count_only ? 3u : 4u)) {
    rb.Error(ClusterWrongArity(Lowercase(args[1])));
  } else if (!ParseInt64(args[2], &slot) || (!count_only && !ParseInt64(args[3], &max_keys))) {
    rb.Error(errors::kNotInteger);
  } else if (slot < 0 || slot >= kClusterSlots || max_keys < 0) {
    rb.Error(count_only ? "ERR Invalid slot" : "ERR Invalid slot or number of keys");
  } else {
    std::vector<uint32_t> shards = srv.AllShards();
    std::vector<LockTable::Request> holds = WholeShardRequests(shards.size(), c->txn_owner);
    for (uint32_t s : shards) co_await LockOn(s, &holds[s]);
    std::vector<size_t> counts(shards.size(), 0);
    std::vector<std::vector<std::string>> keys(shards.size());
    uint32_t want_slot = static_cast<uint32_t>(slot);
    size_t want = static_cast<size_t>(max_keys);
    co_await RunOn(shards, [&](Worker& w) {
      const Keyspace& ks = w.keyspace();
      counts[w.index()] = ks.slot_index()->Count(want_slot);
      std::vector<std::string>& mine = keys[w.index()];
      if (!count_only && want > 0) {
        ks.ForEachKeyInSlot(want_slot, [&](Entry* e) {
          mine.emplace_back(e->Key());
          return mine.size() < want;
        });
      }
      w.locks().ReleaseWhole();
    });
    if (count_only) {
      size_t total = 0;
      for (size_t n : counts) total += n;
      rb.Integer(static_cast<int64_t>(total));
    } else {
      size_t total = 0;
      for (const auto& k : keys) total += k.size();
      total = std::min(total, want);
      rb.Array(total);
      for (const auto& shard_keys : keys) {
        for (const std::string& k : shard_keys) {
          if (total == 0) break;
          rb.Bulk(k);
          total--;
        }
      }
    }
  }
  c->FinishFiber(std::move(out));
}

Fiber ClusterFiber(Client* c, std::shared_ptr<OwnedArgs> owned) {
  if (IsClusterLayoutChange(Lowercase(owned->span()[1])))
    return ClusterNodeChangeFiber(c, std::move(owned));
  return ClusterKeysFiber(c, std::move(owned));
}

// READONLY, READWRITE and ASKING: accepted in a cluster. READONLY lets the client read
// a replica's master's slots on the replica (cluster-enabled yes; an emulated node
// serves every slot itself); READWRITE ends that. ASKING lets the next command run in a
// slot this node imports (cluster_routing.h; the dispatcher uses the flag up).
void CmdClusterConnectionState(Client& c, CmdArgs args, ReplyBuilder& rb) {
  if (!c.worker().engine().process().cluster_mode()) {
    rb.Error(kClusterDisabled);
    return;
  }
  if (EqualsIgnoreCase(args[0], "readonly")) c.cluster_readonly = true;
  if (EqualsIgnoreCase(args[0], "readwrite")) c.cluster_readonly = false;
  if (EqualsIgnoreCase(args[0], "asking")) c.cluster_asking = true;
  rb.Ok();
}

}  // namespace

const std::vector<std::string> kClusterSubcommands = {"help",
                                                      "info",
                                                      "myid",
                                                      "myshardid",
                                                      "slots",
                                                      "shards",
                                                      "nodes",
                                                      "keyslot",
                                                      "countkeysinslot",
                                                      "getkeysinslot",
                                                      "addslots",
                                                      "addslotsrange",
                                                      "delslots",
                                                      "delslotsrange",
                                                      "flushslots",
                                                      "set-config-epoch",
                                                      "bumpepoch",
                                                      "forget",
                                                      "reset",
                                                      "saveconfig",
                                                      "count-failure-reports",
                                                      "replicas",
                                                      "slaves",
                                                      "links",
                                                      "meet",
                                                      "replicate",
                                                      "setslot",
                                                      "failover"};

void RegisterClusterFamily(CommandRegistry& r) {
  CommandSpec cluster{"cluster", -2, kCmdStale, 0, 0, 0};
  cluster.conn_fn = CmdCluster;
  cluster.fiber_fn = ClusterFiber;
  cluster.needs_fiber = ClusterNeedsFiber;
  cluster.subcommands = &kClusterSubcommands;
  cluster.group = "cluster";
  cluster.since = "3.0.0";
  cluster.summary = "A container for Redis Cluster commands.";
  r.Add(std::move(cluster));
  auto add = [&](const char* name, uint32_t flags, const char* summary) {
    CommandSpec s{name, 1, flags | kCmdConnection | kCmdFast, 0, 0, 0};
    s.conn_fn = CmdClusterConnectionState;
    s.group = "cluster";
    s.since = "3.0.0";
    s.summary = summary;
    r.Add(std::move(s));
  };
  add("readonly", kCmdLoading | kCmdStale,
      "Enables read-only queries for a connection to a Redis Cluster replica node.");
  add("readwrite", kCmdLoading | kCmdStale,
      "Enables read-write queries for a connection to a Redis Cluster replica node.");
  add("asking", 0, "Signals that a cluster client is following an -ASK redirect.");
}

}  // namespace strata
