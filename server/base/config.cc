#include "server/base/config.h"

#include <fcntl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/glob.h"
#include "core/object.h"
#include "core/split_args.h"
#include "core/string_util.h"
#include "server/base/cron_schedule.h"
#include "server/base/notify_flags.h"
#include "server/base/version.h"

namespace strata {

Config::Option& Config::Add(std::string name, Kind kind, std::string def, bool mut,
                            std::string help) {
  auto o = std::make_unique<Option>();
  o->name = std::move(name);
  o->kind = kind;
  o->default_value = std::move(def);
  o->mutable_at_runtime = mut;
  o->help = std::move(help);
  Option& ref = *o;
  by_name_[ref.name] = &ref;
  options_.push_back(std::move(o));
  return ref;
}

void Config::Alias(Option& o, std::string name) {
  by_name_[name] = &o;
  o.aliases.push_back(std::move(name));
}

const std::vector<std::string>& Config::MaxmemoryPolicyNames() {
  static const std::vector<std::string> names = {
      "volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl",
      "allkeys-lru",  "allkeys-lfu",  "allkeys-random",  "noeviction"};
  return names;
}

Config::Config() {
  // name, kind, default, mutable at runtime, help (unit and meaning)
  Add("port", Kind::kInt, "6379", false, "TCP port to listen on").max = 65535;
  Add("bind", Kind::kString, "127.0.0.1", false,
      "space-separated IPv4/IPv6 addresses to listen on (\"*\" = every IPv4 address, "
      "\"-addr\" = skip it when unavailable); with protected-mode on and no requirepass, "
      "only clients from 127.0.0.1 and ::1 are served whatever the addresses");
  Add("tcp-backlog", Kind::kInt, "511", false, "listen(2) backlog, connections").min = 1;
  Add("tcp-keepalive", Kind::kInt, "300", true, "TCP keepalive period in seconds, 0 = off");
  Add("databases", Kind::kInt, "16", false, "number of logical databases").min = 1;
  auto& threads = Add("threads", Kind::kInt, "0", false,
                      "worker threads, one shard each; 0 = the CPUs this process may use");
  threads.max = 1024;
  auto& io = Add("io-backend", Kind::kEnum, "auto", false,
                 "event loop: io_uring, epoll, or auto (io_uring when the kernel allows)");
  io.enum_values = {"auto", "io_uring", "epoll"};
  Add("io-uring-batched-sends", Kind::kBool, "yes", false,
      "io_uring: replies leave in the loop turn's one submission instead of a send(2) per "
      "connection (fewer system calls per request when unpipelined)");
  auto& wakeup = Add("io-uring-wakeup-batch", Kind::kInt, "1", true,
                     "io_uring: a worker with nothing to do sleeps until up to this many "
                     "completions (requests, mostly) have arrived, or io-uring-wakeup-batch-usec "
                     "has passed; 1 wakes on the first. More means fewer wake-ups per request "
                     "under many concurrent unpipelined clients, for up to that bound in added "
                     "latency (it adapts to the load: it waits for no more requests than the "
                     "arrival rate brings within half the bound, and one client at a time is "
                     "never held). CONFIG SET reaches every worker within 1/hz s");
  wakeup.min = 1;
  wakeup.max = 256;
  auto& wakeup_us = Add("io-uring-wakeup-batch-usec", Kind::kInt, "100", true,
                        "io_uring: the longest a sleeping worker waits for a wake-up batch "
                        "(io-uring-wakeup-batch), in microseconds; a longer bound lets batches "
                        "form at lower request rates");
  wakeup_us.min = 1;
  wakeup_us.max = 100000;
  auto& busy_poll = Add("io-uring-busy-poll-usec", Kind::kInt, "0", true,
                        "io_uring: before it sleeps, a worker with nothing to do keeps asking the "
                        "kernel for completions for up to this many microseconds (0 = off): the "
                        "CPU it spends spares it the sleep and the wake-up, for cores given to the "
                        "server alone. CONFIG SET reaches every worker within 1/hz s");
  busy_poll.min = 0;
  busy_poll.max = 100000;
  auto& squash = Add("pipeline-squash", Kind::kInt, "32", true,
                     "the most pipelined calls of a command over several shards (MGET) that run "
                     "together, as one step on each shard under one set of locks; each call keeps "
                     "its own reply. 1 = each call alone (a hop, or two, per call)");
  squash.min = 1;
  squash.max = 256;  // below the pipelined commands in flight a client may have
  Add("thread-affinity", Kind::kBool, "no", false,
      "pin worker i to the i-th CPU the process may use, when there are enough CPUs (for "
      "machines whose load generators run elsewhere)");
  Add("dir", Kind::kString, ".", false, "working directory for data files");
  Add("dbfilename", Kind::kString, "dump.strata", true,
      "snapshot manifest file name in dir; the shard files are named after it")
      .validate = [](std::string_view v) -> std::string {
    return v.empty() || v.find('/') != std::string_view::npos
               ? "dbfilename can't be a path, just a filename"
               : "";
  };
  Add("save", Kind::kString, "3600 1 300 100 60 10000", true,
      "snapshot schedule \"<seconds> <changes> ...\": save when at least <changes> writes "
      "happened in <seconds>; \"\" disables automatic snapshots")
      .validate = [](std::string_view v) -> std::string {
    std::vector<std::string> parts;
    if (!SplitArgs(v, &parts) || parts.size() % 2 != 0) return "Invalid save parameters";
    for (const auto& p : parts) {
      int64_t n = 0;
      if (!ParseInt64(p, &n) || n < 0) return "Invalid save parameters";
    }
    return "";
  };
  Add("snapshot-cron", Kind::kString, "", true,
      "crontab schedule (5 fields, local time) for snapshots, e.g. \"0 * * * *\"; \"\" = none")
      .validate = [](std::string_view v) -> std::string {
    if (v.empty()) return "";
    std::string error;
    return CronSchedule::Parse(v, nullptr, &error) ? "" : "Invalid snapshot-cron: " + error;
  };
  auto& comp = Add("snapshot-compression", Kind::kEnum, "lz4", true,
                   "snapshot block compression: lz4 (fast), zstd (smaller) or none");
  comp.enum_values = {"lz4", "zstd", "none"};
  Add("snapshot-incremental", Kind::kBool, "yes", true,
      "after a full snapshot, write only the key ranges that changed (deltas)");
  Add("snapshot-max-deltas", Kind::kInt, "8", true,
      "deltas written after a full snapshot before the next one is full again")
      .min = 0;
  auto& corrupt = Add("snapshot-on-corrupt", Kind::kEnum, "refuse", true,
                      "a damaged snapshot at startup: refuse to start (naming the file and "
                      "offset), or start-empty (log it and serve no data)");
  corrupt.enum_values = {"refuse", "start-empty"};
  Add("rdbcompression", Kind::kBool, "yes", true,
      "LZF for strings over 20 bytes in DUMP payloads and RDB files strata writes "
      "(snapshot-compression chooses the snapshot codec)")
      .mirror = &GlobalEncodingLimits().rdb_compression;
  Add("rdbchecksum", Kind::kBool, "yes", true,
      "CRC-64 footer on RDB files strata writes, and its check on RDB files it loads (every "
      "snapshot block carries a CRC32C regardless)");
  Add("import-rdb", Kind::kString, "", false,
      "a Redis RDB file (relative to dir, or absolute) to load at startup instead of the "
      "snapshot: a migration from Redis; a file named by dbfilename that holds an RDB is "
      "loaded the same way");
  Add("import-rdb-skip-modules", Kind::kBool, "no", false,
      "when loading an RDB, skip module values and module aux data instead of refusing "
      "the file");
  auto& sanitize = Add("sanitize-dump-payload", Kind::kEnum, "no", true,
                       "RESTORE payload checks: strata validates every payload in full "
                       "(duplicates, counts, lengths) whatever the setting; accepted for "
                       "compatibility");
  sanitize.enum_values = {"no", "yes", "clients"};
  Add("appendonly", Kind::kBool, "no", true, "append-only file; only 'no' is supported").validate =
      [](std::string_view v) -> std::string {
    return EqualsIgnoreCase(v, "no") ? "" : "appendonly yes is not supported by strata";
  };
  Add("maxmemory", Kind::kMemory, "0", true,
      "memory limit in bytes for the whole process, 0 = none; over it, commands that add "
      "data get an OOM error");
  auto& pol = Add("maxmemory-policy", Kind::kEnum, "noeviction", true,
                  "what to do at maxmemory: noeviction refuses writes with an OOM error; "
                  "allkeys-* evict any key, volatile-* only keys with an expiry, by least "
                  "recent use (lru), least frequent use (lfu), nearest expiry (ttl) or at "
                  "random");
  pol.enum_values = MaxmemoryPolicyNames();
  {
    Option& o = Add("replica-ignore-maxmemory", Kind::kBool, "yes", true,
                    "a replica neither evicts nor refuses writes over maxmemory: its keys go "
                    "by its master's DELs, so it keeps what its master has (no = it applies "
                    "maxmemory-policy itself, and may lose keys its master still holds)");
    Alias(o, "slave-ignore-maxmemory");
  }
  Add("maxclients", Kind::kInt, "10000", true, "maximum simultaneous clients").min = 1;
  Add("tracking-table-max-keys", Kind::kInt, "1000000", true,
      "keys the client-side caching tables remember in all (CLIENT TRACKING); past it the "
      "tables drop keys, invalidating them, until they are back under it (0 = no limit)")
      .min = 0;
  Add("hll-sparse-max-bytes", Kind::kMemory, "3000", true,
      "largest HyperLogLog kept in the sparse form, bytes; past it a value turns dense "
      "(12304 bytes)")
      .min = 0;
  Add("requirepass", Kind::kString, "", true,
      "the default user's password for AUTH (\"\" = none: it takes any); ACL users are set "
      "with `user` lines, aclfile or ACL SETUSER");
  Add("aclfile", Kind::kString, "", false,
      "a file of ACL users, one `user <name> <rules...>` line each, read at start and by ACL "
      "LOAD and written by ACL SAVE (\"\" = none; not with `user` lines in the config "
      "file)");
  Add("acllog-max-len", Kind::kInt, "128", true,
      "entries ACL LOG keeps (refused commands, keys and channels, failed AUTHs)");
  {
    Option& o = Add("acl-pubsub-default", Kind::kEnum, "resetchannels", true,
                    "the channels a new ACL user starts with: resetchannels (none) or "
                    "allchannels");
    o.enum_values = {"allchannels", "resetchannels"};
  }
  {
    // Replication (strata as a replica: server/persistence/replica_link.h).
    Option& o = Add("replicaof", Kind::kString, "", false,
                    "\"<host> <port>\": start as a replica of that master (REPLICAOF changes it "
                    "at runtime); \"\" = a master");
    Alias(o, "slaveof");
    o.validate = [](std::string_view v) -> std::string {
      if (v.empty()) return "";
      size_t sp = v.find(' ');
      if (sp == std::string_view::npos || sp == 0 || sp + 1 >= v.size()) {
        return "replicaof takes a host and a port";
      }
      int64_t port = 0;
      if (!ParseInt64(v.substr(sp + 1), &port) || port <= 0 || port > 65535) {
        return "Invalid master port";
      }
      return "";
    };
  }
  Add("masterauth", Kind::kString, "", true, "the password the replica sends to its master");
  Add("masteruser", Kind::kString, "", true,
      "the user the replica authenticates as (AUTH <masteruser> <masterauth>)");
  {
    Option& o = Add("replica-read-only", Kind::kBool, "yes", true,
                    "a replica refuses writes from its clients (-READONLY)");
    Alias(o, "slave-read-only");
  }
  {
    Option& o = Add("replica-serve-stale-data", Kind::kBool, "yes", true,
                    "a replica whose master link is down still serves its data; no = only "
                    "INFO, PING and the replication commands, others get -MASTERDOWN");
    Alias(o, "slave-serve-stale-data");
  }
  Add("repl-timeout", Kind::kInt, "60", true,
      "seconds without data from the master before a replica drops the link")
      .min = 1;
  {
    Option& o = Add("replica-priority", Kind::kInt, "100", true,
                    "Sentinel's preference when promoting a replica (lower first; 0 = never)");
    Alias(o, "slave-priority");
    o.min = 0;
  }
  Add("replica-announced", Kind::kBool, "yes", true,
      "whether Sentinel lists this replica (INFO replication's replica_announced)");
  Add("repl-backlog-size", Kind::kMemory, "1mb", true,
      "bytes of the replication stream a master keeps for replicas that reconnect (a "
      "partial resync from an offset still held)")
      .min = 16 * 1024;
  Add("repl-backlog-ttl", Kind::kInt, "3600", true,
      "seconds a master without replicas keeps its backlog (0 = for ever)")
      .min = 0;
  Add("repl-diskless-sync", Kind::kBool, "yes", true,
      "a full resync sends the image to a replica that can take it as it is made "
      "($EOF: framing); no = through a file in dir first, sent with its length");
  Add("repl-diskless-sync-delay", Kind::kInt, "5", true,
      "accepted for Redis's configs: a full resync starts at once (every replica's image "
      "comes from its own fork-free snapshot)")
      .min = 0;
  {
    Option& o = Add("repl-ping-replica-period", Kind::kInt, "10", true,
                    "seconds between the PINGs a master adds to its stream while it has "
                    "replicas");
    o.min = 1;
    Alias(o, "repl-ping-slave-period");
  }
  {
    // Redis Cluster (docs/ARCHITECTURE.md "Cluster").
    Option& o = Add("cluster-enabled", Kind::kEnum, "no", false,
                    "yes: a Redis Cluster node with its own slots and nodes.conf "
                    "(cluster-config-file); emulated: this server answers the cluster "
                    "commands (CLUSTER SLOTS, SHARDS, NODES, INFO...) as the one node of a "
                    "cluster that owns all 16384 slots, so cluster-only clients can use it");
    o.enum_values = {"no", "yes", "emulated"};
  }
  Add("cluster-config-file", Kind::kString, "nodes.conf", false,
      "the file (in dir unless absolute) where a node with cluster-enabled yes keeps its "
      "view of the cluster; created when missing, rewritten on every change");
  Add("cluster-require-full-coverage", Kind::kBool, "yes", true,
      "with cluster-enabled yes, the cluster is down while any slot has no serving master");
  Add("cluster-node-timeout", Kind::kInt, "15000", true,
      "milliseconds: a cluster bus link that has sent no whole message for this long is "
      "closed")
      .min = 1;
  Add("cluster-bus-max-message-bytes", Kind::kMemory, "8mb", true,
      "the largest cluster bus message a link may send this node; a longer one closes the "
      "link (a PUBLISH across the cluster carries its whole message)")
      .min = 4352;
  Add("cluster-link-sendbuf-limit", Kind::kMemory, "64mb", true,
      "bytes a cluster bus link may leave unread before it is closed (0: no limit)")
      .min = 0;
  Add("cluster-allow-reads-when-down", Kind::kBool, "no", true,
      "with cluster-enabled yes, reads are still served while the cluster is down");
  {
    Option& o = Add("cluster-replica-validity-factor", Kind::kInt, "10", true,
                    "a cluster replica whose master link has been down for longer than "
                    "cluster-node-timeout x this + repl-ping-replica-period seconds does not "
                    "fail its master over (0: it always may)");
    o.min = 0;
    Alias(o, "cluster-slave-validity-factor");
  }
  {
    Option& o = Add("cluster-replica-no-failover", Kind::kBool, "no", true,
                    "a cluster replica never fails its master over on its own (CLUSTER "
                    "FAILOVER still does)");
    Alias(o, "cluster-slave-no-failover");
  }
  Add("cluster-allow-replica-migration", Kind::kBool, "yes", true,
      "a cluster master that loses its last slot to another master becomes that master's "
      "replica, and a replica may move to a master left without any");
  Add("cluster-migration-barrier", Kind::kInt, "1", true,
      "replicas a cluster master keeps before one of them may move to a master left without "
      "any")
      .min = 0;
  {
    Option& o = Add("cluster-announce-ip", Kind::kString, "", true,
                    "the address the cluster commands give clients for this node (empty: the "
                    "address the asking client connected to)");
    // It is written into nodes.conf and the cluster bus's 46-byte address field.
    o.validate = [](std::string_view v) -> std::string {
      if (v.size() > 45) return "the address must be at most 45 characters";
      for (char ch : v) {
        if (ch == ' ' || ch == ',' || ch == '@' || static_cast<unsigned char>(ch) < 0x20)
          return "the address must not contain spaces, ',', '@' or control characters";
      }
      return "";
    };
  }
  Add("cluster-announce-port", Kind::kInt, "0", true,
      "the port the cluster commands give clients for this node (0: port)")
      .max = 65535;
  {
    Option& o = Add("cluster-announce-hostname", Kind::kString, "", true,
                    "a hostname the cluster commands give clients beside the address (empty: "
                    "none)");
    // It is written into nodes.conf and CLUSTER NODES' lines: Redis's rule.
    o.validate = [](std::string_view v) -> std::string {
      if (v.size() >= 256) return "Hostnames must be less than 256 characters";
      for (char ch : v) {
        if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '.')
          return "Hostnames must only contain alphanumeric characters, '-' or '.'";
      }
      return "";
    };
  }
  Add("cluster-port", Kind::kInt, "0", false,
      "the cluster bus port shown in CLUSTER NODES (0: port + 10000)")
      .max = 65535;
  {
    Option& o = Add("replica-announce-ip", Kind::kString, "", true,
                    "the address a replica asks its master (and so Sentinel) to list it by");
    Alias(o, "slave-announce-ip");
  }
  {
    Option& o = Add("replica-announce-port", Kind::kInt, "0", true,
                    "the port a replica asks its master (and so Sentinel) to list it by "
                    "(0: its own port)");
    o.max = 65535;
    Alias(o, "slave-announce-port");
  }
  {
    // Entries store lengths in 32 bits, so one string is at most 4 GiB - 1.
    Option& o = Add("proto-max-bulk-len", Kind::kMemory, "512mb", true,
                    "largest bulk string, bytes (at most 4gb - 1)");
    o.min = 1024 * 1024;
    o.max = 4294967295LL;
  }
  Add("client-query-buffer-limit", Kind::kMemory, "1gb", true,
      "largest query buffer per client, bytes")
      .min = 1024 * 1024;
  Add("client-output-buffer-limit", Kind::kString, std::string(kDefaultOutputLimits), true,
      "per class (normal, replica, pubsub): hard limit, soft limit, soft seconds; a client "
      "whose queued replies reach the hard limit, or stay over the soft one that long, is "
      "closed (0 = no limit)")
      .on_set = [this](std::string_view v, std::string* text) -> std::string {
    OutputLimits limits;
    for (int c = 0; c < kClientClasses; c++) {
      limits.of[c] = {output_limits_[c][0].load(), output_limits_[c][1].load(),
                      output_limits_[c][2].load()};
    }
    std::string err = ParseOutputLimits(v, &limits);
    if (!err.empty()) return err;
    for (int c = 0; c < kClientClasses; c++) {
      output_limits_[c][0].store(limits.of[c].hard_bytes);
      output_limits_[c][1].store(limits.of[c].soft_bytes);
      output_limits_[c][2].store(limits.of[c].soft_seconds);
    }
    *text = RenderOutputLimits(limits);
    return "";
  };
  Add("notify-keyspace-events", Kind::kString, "", true,
      "keyspace notifications to publish, as Redis's class letters: K (keyspace channels) "
      "and/or E (keyevent channels) with any of g $ l s h z x e t m d n, A for g$lshzxetd; "
      "empty = off")
      .on_set = [](std::string_view v, std::string* text) -> std::string {
    uint32_t flags = 0;
    if (!ParseNotifyFlags(v, &flags))
      return "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.";
    SetNotifyFlags(flags);
    *text = RenderNotifyFlags(flags);
    return "";
  };
  Add("maxmemory-clients", Kind::kString, "0", true,
      "memory all clients' buffers may use together, bytes or a percentage of maxmemory; "
      "past it the clients using the most are closed, as Redis evicts them (0 = no limit)")
      .on_set = [this](std::string_view v, std::string* text) -> std::string {
    if (!v.empty() && v.back() == '%') {
      int64_t pct = 0;
      if (!ParseInt64(v.substr(0, v.size() - 1), &pct) || pct < 0)
        return "argument must be a memory or percent value";
      if (pct > 100) return "percentage argument must be less or equal to 100";
      maxmemory_clients_percent_.store(pct);
      maxmemory_clients_.store(0);
      *text = std::string(v);
      return "";
    }
    auto bytes = ParseMemory(v);
    if (!bytes || *bytes > static_cast<uint64_t>(INT64_MAX))
      return "argument must be a memory or percent value";
    maxmemory_clients_.store(static_cast<int64_t>(*bytes));
    maxmemory_clients_percent_.store(0);
    *text = std::to_string(*bytes);
    return "";
  };
  {
    Option& o = Add("slowlog-log-slower-than", Kind::kInt, "10000", true,
                    "microseconds a command must run to enter the slow log (SLOWLOG); 0 logs "
                    "every command, -1 none");
    o.min = -1;
    Add("slowlog-max-len", Kind::kInt, "128", true, "entries the slow log keeps").min = 0;
    Add("latency-tracking", Kind::kBool, "yes", true,
        "per-command latency histograms (INFO latencystats, LATENCY HISTOGRAM)");
    Add("latency-tracking-info-percentiles", Kind::kString, "50 99 99.9", true,
        "the percentiles INFO latencystats shows (numbers from 0 to 100)")
        .validate = [](std::string_view v) -> std::string {
      std::vector<std::string> words;
      if (!SplitArgs(v, &words)) return "Invalid percentiles";
      for (const std::string& w : words) {
        double p;
        if (!ParseDouble(w, &p) || p < 0 || p > 100) return "Invalid percentiles";
      }
      return "";
    };
    Add("latency-monitor-threshold", Kind::kInt, "0", true,
        "milliseconds a command must run to be sampled by the latency monitor (LATENCY); "
        "0 = off")
        .min = 0;
  }
  Add("metrics-port", Kind::kInt, "0", false,
      "TCP port of the Prometheus endpoint (GET /metrics over HTTP); 0 = off")
      .max = 65535;
  Add("metrics-bind", Kind::kString, "127.0.0.1", false,
      "address the Prometheus endpoint listens on (one address; * = all)");
  {
    Option& o = Add("enable-debug-command", Kind::kEnum, "no", false,
                    "whether DEBUG may run: no, yes, or local (loopback clients only)");
    o.enum_values = {"no", "yes", "local"};
  }
  Add("hz", Kind::kInt, "10", true, "background task frequency (active expiry), per second").min =
      1;
  by_name_["hz"]->max = 500;
  {
    Option& o = Add("busy-reply-threshold", Kind::kInt, "5000", true,
                    "milliseconds a script or function may run before other clients get "
                    "-BUSY (and SCRIPT KILL / FUNCTION KILL may stop it); 0 = never");
    o.min = 0;
    Alias(o, "lua-time-limit");
  }
  {
    Option& o = Add("script-hop-spin-us", Kind::kInt, "30", true,
                    "strata's: microseconds a script across shards spins for a hop's answer "
                    "before it sleeps (0: sleep at once)");
    o.min = 0;
    o.max = 10000;
    Option& p = Add("script-hop-poll-us", Kind::kInt, "200", true,
                    "strata's: microseconds a shard held by a script across shards polls for "
                    "the script's next hop instead of sleeping (0: sleep at once)");
    p.min = 0;
    p.max = 100000;
  }
  Add("daemonize", Kind::kBool, "no", false, "only 'no' is supported (use systemd)").validate =
      [](std::string_view v) -> std::string {
    return EqualsIgnoreCase(v, "no") ? "" : "daemonize yes is not supported by strata";
  };
  auto& ll = Add("loglevel", Kind::kEnum, "notice", true, "debug, verbose, notice, warning");
  ll.enum_values = {"debug", "verbose", "notice", "warning", "nothing"};
  Add("logfile", Kind::kString, "", false, "log file path; \"\" = standard output");
  Add("pidfile", Kind::kString, "", false, "file to write the process id to; \"\" = none");
  Add("protected-mode", Kind::kBool, "yes", true,
      "while no requirepass is set, refuse clients that connect from addresses other than "
      "127.0.0.1 and ::1 (as Redis: -DENIED, then the connection is closed)");
  // Collection encodings (core/object.h): the small packed form is kept up to these sizes.
  auto encoding = [&](const char* name, const char* alias, const char* def, int64_t min,
                      std::atomic<int64_t>* mirror, const char* help) {
    Option& o = Add(name, Kind::kInt, def, true, help);
    o.min = min;
    o.mirror = mirror;
    if (alias != nullptr) Alias(o, alias);
  };
  EncodingLimits& lim = GlobalEncodingLimits();
  encoding("hash-max-listpack-entries", "hash-max-ziplist-entries", "512", 0,
           &lim.hash_max_listpack_entries, "most fields of a hash kept in the packed form");
  encoding("hash-max-listpack-value", "hash-max-ziplist-value", "64", 0,
           &lim.hash_max_listpack_value, "longest field or value, bytes, of a packed hash");
  encoding("set-max-intset-entries", nullptr, "512", 0, &lim.set_max_intset_entries,
           "most members of an all-integer set kept as an intset");
  encoding("set-max-listpack-entries", nullptr, "128", 0, &lim.set_max_listpack_entries,
           "most members of a set kept in the packed form");
  encoding("set-max-listpack-value", nullptr, "64", 0, &lim.set_max_listpack_value,
           "longest member, bytes, of a packed set");
  encoding("zset-max-listpack-entries", "zset-max-ziplist-entries", "128", 0,
           &lim.zset_max_listpack_entries, "most members of a sorted set kept in the packed form");
  encoding("zset-max-listpack-value", "zset-max-ziplist-value", "64", 0,
           &lim.zset_max_listpack_value, "longest member, bytes, of a packed sorted set");
  encoding("list-max-listpack-size", "list-max-ziplist-size", "-2", -5, &lim.list_max_listpack_size,
           "list node size: positive = elements per node, -1..-5 = 4/8/16/32/64 KiB per node");
  encoding("list-compress-depth", nullptr, "0", 0, &lim.list_compress_depth,
           "nodes at each end of a big list left uncompressed; the inner ones are compressed "
           "with zstd (0 = no compression)");
  Add("timeout", Kind::kInt, "0", true, "close idle clients after N seconds; only 0 (never)")
      .validate = [](std::string_view v) -> std::string {
    return v == "0" ? "" : "client idle timeout is not supported by strata yet";
  };

  // The spill tier (docs/ARCHITECTURE.md "The tier").
  Add("spill-dir", Kind::kString, "", false,
      "directory for values spilled to disk (a RocksDB store per shard under it); "
      "empty: spill off");
  auto fraction = [](std::string_view v) -> std::string {
    std::string text(v);
    char* end = nullptr;
    double d = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || !(d > 0) || d > 1) {
      return "argument must be a fraction above 0 and at most 1";
    }
    return "";
  };
  Add("spill-high-watermark", Kind::kString, "0.9", true,
      "spilling starts when used memory passes this fraction of maxmemory")
      .validate = fraction;
  Add("spill-low-watermark", Kind::kString, "0.8", true,
      "spilling goes on until used memory is below this fraction of maxmemory")
      .validate = fraction;
  Add("spill-gc-dead-fraction", Kind::kString, "0.4", true,
      "a spill store file is rewritten once this fraction of its records is dead "
      "(lower: less disk, more rewriting)")
      .validate = fraction;
  Add("spill-min-value-size", Kind::kMemory, "64", true,
      "values smaller than this many bytes stay in RAM");
  Add("spill-max-disk-size", Kind::kMemory, "0", true,
      "spilling stops when the spill store's files reach this size; 0 = no limit");
  Add("spill-cache-size", Kind::kMemory, "0", false,
      "the spill store's block cache and memtables, counted in used_memory; "
      "0 = a tenth of maxmemory, at least 4mb");
  Add("spill-blob-min-size", Kind::kMemory, "0", false,
      "values of at least this many bytes go to the spill store's blob files (compaction "
      "then moves only their references); 0 = none");
  {
    Option& o = Add("spill-compression", Kind::kEnum, "lz4", false,
                    "compression of the spill store's blocks");
    o.enum_values = {"lz4", "zstd", "none"};
  }

  // Redis settings that strata accepts so existing config files load; each says what
  // it does here.
  {
    Option& o = Add("maxmemory-samples", Kind::kInt, "5", true,
                    "keys sampled per database per eviction round; more is closer to "
                    "exact LRU/LFU and costs more CPU");
    o.min = 1;
    o.max = INT32_MAX;
  }
  {
    Option& o = Add("maxmemory-eviction-tenacity", Kind::kInt, "10", true,
                    "how long a shard may evict before a write goes ahead over the limit: "
                    "0-10 is 0-500 us, then 15% more per step, capped at 1 ms per loop "
                    "turn (the rest is evicted on later turns)");
    o.max = 100;
  }
  Add("lfu-log-factor", Kind::kInt, "10", true,
      "LFU counter growth: higher needs more accesses to reach the top (255)")
      .max = INT32_MAX;
  Add("lfu-decay-time", Kind::kInt, "1", true,
      "minutes for the LFU counter of an unread key to drop by one; 0 = never decays")
      .max = INT32_MAX;
  Add("lazyfree-lazy-user-del", Kind::kBool, "no", true,
      "DEL frees big collections a slice per loop turn, as UNLINK does");
  Add("lazyfree-lazy-user-flush", Kind::kBool, "no", true,
      "FLUSHALL/FLUSHDB without SYNC or ASYNC act as ASYNC (free a slice per loop turn)");
  for (const char* name : {"lazyfree-lazy-expire", "lazyfree-lazy-server-del"}) {
    Add(name, Kind::kBool, "no", true,
        "accepted for compatibility; these deletions free at once on the shard thread");
  }
  Add("lazyfree-lazy-eviction", Kind::kBool, "no", true,
      "accepted for compatibility; eviction always frees big collections a slice per loop "
      "turn, so that evicting one never stalls a shard");
  Add("always-show-logo", Kind::kBool, "no", false, "accepted for compatibility; no logo");
  Add("set-proc-title", Kind::kBool, "yes", false, "accepted for compatibility");

  AddRedisOnlySettings();

  for (auto& o : options_) {
    std::string err = Apply(*o, o->default_value);
    if (!err.empty()) {
      std::fprintf(stderr, "bad default for %s: %s\n", o->name.c_str(), err.c_str());
      std::abort();
    }
    o->default_text = Render(*o);
  }
  proto_max_bulk_len_ = &by_name_["proto-max-bulk-len"]->number;
  query_buf_limit_ = &by_name_["client-query-buffer-limit"]->number;
  maxclients_ = &by_name_["maxclients"]->number;
  tracking_max_keys_ = &by_name_["tracking-table-max-keys"]->number;
  hll_sparse_max_bytes_ = &by_name_["hll-sparse-max-bytes"]->number;
  slowlog_slower_than_ = &by_name_["slowlog-log-slower-than"]->number;
  slowlog_max_len_ = &by_name_["slowlog-max-len"]->number;
  latency_threshold_ = &by_name_["latency-monitor-threshold"]->number;
  latency_tracking_ = &by_name_["latency-tracking"]->number;
  pipeline_squash_ = &by_name_["pipeline-squash"]->number;
  maxmemory_ = &by_name_["maxmemory"]->number;
  maxmemory_policy_ = &by_name_["maxmemory-policy"]->number;
  maxmemory_samples_ = &by_name_["maxmemory-samples"]->number;
  eviction_tenacity_ = &by_name_["maxmemory-eviction-tenacity"]->number;
  lfu_log_factor_ = &by_name_["lfu-log-factor"]->number;
  lfu_decay_time_ = &by_name_["lfu-decay-time"]->number;
}

const Config::Option* Config::Find(std::string_view name) const {
  std::string lower = Lowercase(name);
  auto it = by_name_.find(lower);
  return it == by_name_.end() ? nullptr : it->second;
}

Config::Option* Config::FindMutable(std::string_view name) {
  return const_cast<Option*>(Find(name));
}

std::string Config::Apply(Option& o, std::string_view value) {
  if (o.kind == Kind::kBool && !EqualsIgnoreCase(value, "yes") && !EqualsIgnoreCase(value, "no"))
    return "argument must be 'yes' or 'no'";
  if (o.validate) {
    std::string err = o.validate(value);
    if (!err.empty()) return err;
  }
  switch (o.kind) {
    case Kind::kInt: {
      int64_t v = 0;
      if (!ParseInt64(value, &v)) return "argument couldn't be parsed into an integer";
      if (v < o.min || v > o.max) {
        return "argument must be between " + std::to_string(o.min) + " and " +
               std::to_string(o.max) + " inclusive";
      }
      o.number.store(v);
      if (o.mirror != nullptr) o.mirror->store(v);
      return "";
    }
    case Kind::kMemory: {
      auto v = ParseMemory(value);
      if (!v || *v > static_cast<uint64_t>(INT64_MAX)) return "argument must be a memory value";
      if (static_cast<int64_t>(*v) < o.min || static_cast<int64_t>(*v) > o.max) {
        return "argument must be between " + std::to_string(o.min) + " and " +
               std::to_string(o.max) + " inclusive";
      }
      o.number.store(static_cast<int64_t>(*v));
      return "";
    }
    case Kind::kBool:
      if (EqualsIgnoreCase(value, "yes")) {
        o.number.store(1);
      } else if (EqualsIgnoreCase(value, "no")) {
        o.number.store(0);
      } else {
        return "argument must be 'yes' or 'no'";
      }
      if (o.mirror != nullptr) o.mirror->store(o.number.load());
      return "";
    case Kind::kEnum:
      for (size_t i = 0; i < o.enum_values.size(); i++) {
        if (EqualsIgnoreCase(value, o.enum_values[i])) {
          o.number.store(static_cast<int64_t>(i));
          return "";
        }
      }
      return "argument(s) must be one of the following: " + [&] {
        std::string s;
        for (size_t i = 0; i < o.enum_values.size(); i++) {
          if (i) s += ", ";
          s += o.enum_values[i];
        }
        return s;
      }();
    case Kind::kString: {
      std::lock_guard<std::mutex> lock(mu_);
      if (o.on_set) return o.on_set(value, &o.text);
      o.text = std::string(value);
      return "";
    }
  }
  return "unknown option kind";
}

std::string Config::Render(const Option& o) const {
  switch (o.kind) {
    case Kind::kInt:
    case Kind::kMemory:
      return std::to_string(o.number.load());
    case Kind::kBool:
      return o.number.load() ? "yes" : "no";
    case Kind::kEnum:
      return o.enum_values[o.number.load()];
    case Kind::kString: {
      std::lock_guard<std::mutex> lock(mu_);
      return o.text;
    }
  }
  return "";
}

namespace {

// A value as a config file line takes it: bare when it is one plain word, else quoted
// with Redis's escapes. Lists of words (save, bind, client-output-buffer-limit,
// snapshot-cron) are written as they are.
// Options whose value is several words on a config line (`save 900 1 300 10`,
// `replicaof host port`); the others take one.
bool IsWordListOption(std::string_view name) {
  return name == "save" || name == "bind" || name == "client-output-buffer-limit" ||
         name == "snapshot-cron" || name == "replicaof" || name == "slaveof" ||
         name == "oom-score-adj-values";
}

std::string ConfigWord(std::string_view name, std::string_view v) {
  bool list = IsWordListOption(name);
  bool plain = !v.empty();
  for (unsigned char ch : v) {
    if (ch <= ' ' || ch == '"' || ch == '\'' || ch == '\\' || ch >= 0x7f) plain = false;
  }
  if (plain) return std::string(v);
  if (list && !v.empty() && v.find_first_of("\"'\\") == std::string_view::npos) {
    bool words_ok = true;
    for (unsigned char ch : v) {
      if (ch < ' ' || ch >= 0x7f) words_ok = false;
    }
    if (words_ok) return std::string(v);
  }
  std::string out;
  AppendRepr(&out, v);
  return out;
}

}  // namespace

std::vector<double> Config::latency_percentiles() const {
  std::vector<std::string> words;
  SplitArgs(String("latency-tracking-info-percentiles"), &words);
  std::vector<double> out;
  for (const std::string& w : words) {
    double p;
    if (ParseDouble(w, &p)) out.push_back(p);
  }
  return out;
}

std::string Config::Rewrite(const std::vector<std::string>& users) const {
  if (config_file_.empty()) return "The server is running without a config file";
  std::string text;
  {
    std::ifstream in(config_file_, std::ios::binary);
    if (!in) return "Rewriting config file: " + std::string(std::strerror(errno));
    std::ostringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  }
  std::vector<std::string> lines;
  for (size_t pos = 0; pos < text.size();) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    lines.emplace_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  std::map<const Option*, bool> written;
  size_t users_written = 0;
  std::vector<std::string> out;
  for (const std::string& raw : lines) {
    std::string_view line = raw;
    size_t first = line.find_first_not_of(" \t\r");
    std::vector<std::string> argv;
    const Option* o = nullptr;
    if (first != std::string_view::npos && line[first] != '#' &&
        SplitArgs(line.substr(first), &argv) && !argv.empty()) {
      if (EqualsIgnoreCase(argv[0], "user")) {
        // The users take the file's `user` lines in order, as Redis rewrites them.
        if (users_written < users.size()) out.push_back(users[users_written++]);
        continue;
      }
      o = Find(argv[0]);
    }
    if (o == nullptr) {
      out.push_back(raw);  // comments, blank lines and what strata does not know
      continue;
    }
    if (written[o]) continue;  // a later line of a setting already written
    written[o] = true;
    out.push_back(o->name + " " + ConfigWord(o->name, Render(*o)));
  }
  bool header = false;
  for (const auto& o : options_) {
    if (written[o.get()]) continue;
    std::string v = Render(*o);
    if (v == o->default_text) continue;
    if (!header) {
      out.emplace_back("# Generated by CONFIG REWRITE");
      header = true;
    }
    out.push_back(o->name + " " + ConfigWord(o->name, v));
  }
  if (users_written < users.size()) {
    if (!header) out.emplace_back("# Generated by CONFIG REWRITE");
    out.insert(out.end(), users.begin() + static_cast<std::ptrdiff_t>(users_written), users.end());
  }
  std::string body;
  for (const std::string& l : out) body += l + "\n";
  // Write beside the file, sync, rename over it, sync the directory.
  std::string tmp = config_file_ + ".rewrite-" + std::to_string(getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return "Rewriting config file: " + std::string(std::strerror(errno));
  size_t done = 0;
  while (done < body.size()) {
    ssize_t n = ::write(fd, body.data() + done, body.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::string err = std::strerror(errno);
      ::close(fd);
      ::unlink(tmp.c_str());
      return "Rewriting config file: " + err;
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    std::string err = std::strerror(errno);
    ::unlink(tmp.c_str());
    return "Rewriting config file: " + err;
  }
  if (::rename(tmp.c_str(), config_file_.c_str()) != 0) {
    std::string err = std::strerror(errno);
    ::unlink(tmp.c_str());
    return "Rewriting config file: " + err;
  }
  std::string dir = config_file_.substr(0, config_file_.find_last_of('/') + 1);
  int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return "";
}

std::string Config::DefaultsTemplate() const {
  constexpr size_t kWidth = 88;
  std::string out;
  for (const auto& o : options_) {
    std::string help = o->help;
    if (o->kind == Kind::kEnum) {
      help += " (one of:";
      for (const std::string& v : o->enum_values) help += " " + v;
      help += ")";
    }
    help += o->mutable_at_runtime ? "; CONFIG SET can change it" : "; read at start-up only";
    for (const std::string& a : o->aliases) help += "; also accepted as " + a;
    // Word-wrapped comment lines.
    out += "\n#";
    size_t col = 1;
    size_t pos = 0;
    while (pos < help.size()) {
      size_t end = help.find(' ', pos);
      if (end == std::string::npos) end = help.size();
      const std::string_view word(help.data() + pos, end - pos);
      if (col > 1 && col + 1 + word.size() > kWidth) {
        out += "\n#";
        col = 1;
      }
      out += ' ';
      out += word;
      col += 1 + word.size();
      pos = end + 1;
    }
    const std::string& v = o->default_value;
    const bool quote = v.empty() || v.find_first_of(" \t\"'") != std::string::npos;
    out += "\n# " + o->name + " " + (quote ? "\"" + v + "\"" : v) + "\n";
  }
  return out;
}

std::string Config::Set(std::string_view name, std::string_view value, bool at_runtime) {
  Option* o = FindMutable(name);
  if (o == nullptr) return "unknown option";
  if (at_runtime && !o->mutable_at_runtime) return "can't set immutable config";
  std::string err = Apply(*o, value);
  generation_.fetch_add(1, std::memory_order_release);
  return err;
}

std::optional<std::string> Config::Get(std::string_view name) const {
  const Option* o = Find(name);
  if (o == nullptr) return std::nullopt;
  return Render(*o);
}

std::vector<std::pair<std::string, std::string>> Config::GetMatching(
    std::string_view pattern) const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& o : options_) {
    if (GlobMatch(pattern, o->name, true)) out.emplace_back(o->name, Render(*o));
    for (const std::string& a : o->aliases) {
      if (GlobMatch(pattern, a, true)) out.emplace_back(a, Render(*o));
    }
  }
  return out;
}

int64_t Config::Int(std::string_view name) const {
  const Option* o = Find(name);
  return o ? o->number.load() : 0;
}

std::string Config::String(std::string_view name) const {
  const Option* o = Find(name);
  return o ? Render(*o) : std::string();
}

bool Config::LoadFileText(std::string_view text, std::string* error) {
  size_t line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line =
        text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
    line_no++;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t'))
      line.remove_suffix(1);
    size_t first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos || line[first] == '#') continue;
    line.remove_prefix(first);
    std::vector<std::string> argv;
    std::string reason;
    if (!SplitArgs(line, &argv)) {
      reason = "Unbalanced quotes in configuration line";
    } else if (argv.size() < 2) {
      reason = "wrong number of arguments";
    } else {
      std::string name = Lowercase(argv[0]);
      Option* o = FindMutable(name);
      if (name == "user") {
        // An ACL user (acl.h): its rules are checked and applied when the server starts.
        std::lock_guard<std::mutex> l(mu_);
        user_lines_.emplace_back(argv.begin() + 1, argv.end());
        user_line_numbers_.push_back(static_cast<int>(line_no));
      } else if (o == nullptr) {
        reason = "Bad directive or wrong number of arguments";
      } else {
        std::string value = argv[1];
        if (IsWordListOption(name)) {
          for (size_t i = 2; i < argv.size(); i++) value += " " + argv[i];
        } else if (argv.size() != 2) {
          reason = "wrong number of arguments";
        }
        if (reason.empty()) reason = Apply(*o, value);
      }
    }
    if (!reason.empty()) {
      *error = "\n*** FATAL CONFIG FILE ERROR (strata " STRATA_VERSION ") ***\n" +
               std::string("Reading the configuration file, at line ") + std::to_string(line_no) +
               "\n>>> '" + std::string(line) + "'\n" + reason;
      return false;
    }
  }
  return true;
}

bool Config::LoadFromArgs(int argc, char** argv, std::string* error, bool* exit_now) {
  *exit_now = false;
  CLI::App app{"strata-server: a Redis-compatible, thread-per-core, in-memory cache",
               "strata-server"};
  app.set_version_flag("-v,--version", "strata-server " STRATA_VERSION);
  app.get_formatter()->column_width(34);
  std::string file;
  app.add_option("config-file", file, "Redis-style config file (key value lines)");
  bool print_config = false;
  app.add_flag("--print-config", print_config,
               "Print every option at its default as a commented config file, and exit");
  std::map<std::string, std::string> flag_values;
  for (auto& o : options_) {
    std::string desc = o->help + " (default: \"" + o->default_value + "\"" +
                       (o->mutable_at_runtime ? ", CONFIG SET works" : "") + ")";
    // As with redis-server, a setting given twice takes the last value.
    // An alias (Redis's older name) is the same flag.
    std::string names = "--" + o->name;
    for (const std::string& a : o->aliases) names += ",--" + a;
    app.add_option(names, flag_values[o->name], desc)
        ->type_name("VALUE")
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    std::printf("%s", app.help().c_str());
    *exit_now = true;
    return true;
  } catch (const CLI::CallForVersion& e) {
    std::printf("strata-server %s\n", STRATA_VERSION);
    *exit_now = true;
    return true;
  } catch (const CLI::ParseError& e) {
    *error = e.what();
    return false;
  }
  if (print_config) {
    std::printf("%s", DefaultsTemplate().c_str());
    *exit_now = true;
    return true;
  }
  if (!file.empty()) {
    std::ifstream in(file);
    if (!in) {
      *error = "Fatal error, can't open config file '" + file + "'";
      return false;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    if (!LoadFileText(ss.str(), error)) return false;
    // Kept absolute: CONFIG REWRITE finds it whatever the working directory is then.
    char* abs = realpath(file.c_str(), nullptr);
    config_file_ = abs != nullptr ? std::string(abs) : file;
    std::free(abs);
  }
  for (auto& o : options_) {
    CLI::Option* opt = app.get_option("--" + o->name);
    if (opt->count() == 0) continue;
    std::string err = Apply(*o, flag_values[o->name]);
    if (!err.empty()) {
      *error = "invalid value for --" + o->name + " '" + flag_values[o->name] + "': " + err;
      return false;
    }
  }
  return true;
}

}  // namespace strata
