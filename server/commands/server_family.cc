// Server commands that need every worker: INFO, CONFIG, CLIENT, SHUTDOWN. Each runs as
// a fiber that gathers per-worker figures with one parallel hop.
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <unordered_set>

#include "core/access.h"
#include "core/glob.h"
#include "core/string_util.h"
#include "server/base/config.h"
#include "server/base/cycle_clock.h"
#include "server/base/log.h"
#include "server/base/version.h"
#include "server/cluster/cluster_bus.h"
#include "server/cluster/cluster_service.h"
#include "server/commands/client_tracking.h"
#include "server/commands/errors.h"
#include "server/commands/families.h"
#include "server/commands/memory_report.h"
#include "server/engine/acl.h"
#include "server/engine/client.h"
#include "server/engine/command.h"
#include "server/engine/engine.h"
#include "server/engine/hops.h"
#include "server/engine/latency_histogram.h"
#include "server/engine/pubsub.h"
#include "server/engine/slowlog.h"
#include "server/engine/worker.h"
#include "server/persistence/repl_master.h"
#include "server/persistence/snapshot_await.h"
#include "server/persistence/tier_service.h"

namespace strata {
namespace {

struct ShardReport {
  WorkerStats stats;
  KeyspaceStats ks;
  ShardMemory memory;
  std::vector<size_t> keys;
  std::vector<size_t> expires;
  std::vector<int64_t> avg_ttl;
  size_t clients = 0;
  size_t blocked_clients = 0;
  size_t blocked_with_timeout = 0;
  double expired_stale_ratio = 0;  // active expiry's estimate on this shard
  rusage thread_cpu{};             // worker 0's thread (the *_main_thread CPU lines)
  size_t pubsub_clients = 0;
  size_t tracking_keys = 0;
  size_t tracking_items = 0;
  size_t max_input_buffer = 0;
  size_t max_output_buffer = 0;
};

void AddLine(std::string* s, const std::string& k, const std::string& v) {
  *s += k;
  *s += ':';
  *s += v;
  *s += "\r\n";
}

std::string BuildInfo(Client* c, const std::vector<std::string>& wanted,
                      const std::vector<ShardReport>& reports, const MemorySummary& memory) {
  Engine& srv = c->worker().engine();
  Config& cfg = srv.config();
  bool all = false, everything = false, dflt = wanted.empty();
  std::map<std::string, bool> sections;
  for (auto& w : wanted) {
    if (w == "all") all = true;
    if (w == "everything") everything = true;
    if (w == "default") dflt = true;
    sections[w] = true;
  }
  auto want = [&](const char* name, bool in_default) {
    return everything || (all && true) || (dflt && in_default) || sections.count(name);
  };
  WorkerStats total;
  total.commands.resize(CommandRegistry::Get().stat_count());
  KeyspaceStats ks;
  size_t clients_max_in = 0, clients_max_out = 0;
  for (auto& r : reports) {
    total.total_commands_processed += r.stats.total_commands_processed;
    total.total_connections_received += r.stats.total_connections_received;
    total.rejected_connections += r.stats.rejected_connections;
    total.total_net_input_bytes += r.stats.total_net_input_bytes;
    total.total_net_output_bytes += r.stats.total_net_output_bytes;
    total.total_net_repl_input_bytes += r.stats.total_net_repl_input_bytes;
    total.total_net_repl_output_bytes += r.stats.total_net_repl_output_bytes;
    total.total_reads_processed += r.stats.total_reads_processed;
    total.total_writes_processed += r.stats.total_writes_processed;
    total.expire_cycle_ticks += r.stats.expire_cycle_ticks;
    total.remote_commands += r.stats.remote_commands;
    total.multi_shard_commands += r.stats.multi_shard_commands;
    total.pipeline_squashed_calls += r.stats.pipeline_squashed_calls;
    total.scripts_across_shards += r.stats.scripts_across_shards;
    total.scripts_every_shard += r.stats.scripts_every_shard;
    total.client_query_buffer_limit_disconnections +=
        r.stats.client_query_buffer_limit_disconnections;
    total.client_output_buffer_limit_disconnections +=
        r.stats.client_output_buffer_limit_disconnections;
    total.evicted_clients += r.stats.evicted_clients;
    total.unexpected_error_replies += r.stats.unexpected_error_replies;
    total.errors.Add(r.stats.errors);
    for (size_t i = 0; i < r.stats.commands.size(); i++) {
      total.commands[i].calls += r.stats.commands[i].calls;
      total.commands[i].usec_ticks += r.stats.commands[i].usec_ticks;
      total.commands[i].rejected_calls += r.stats.commands[i].rejected_calls;
      total.commands[i].failed_calls += r.stats.commands[i].failed_calls;
      latency::Merge(&total.commands[i].latency, r.stats.commands[i].latency);
    }
    ks.expired_keys += r.ks.expired_keys;
    ks.evicted_keys += r.ks.evicted_keys;
    ks.keyspace_hits += r.ks.keyspace_hits;
    ks.keyspace_misses += r.ks.keyspace_misses;
    clients_max_in = std::max(clients_max_in, r.max_input_buffer);
    clients_max_out = std::max(clients_max_out, r.max_output_buffer);
  }
  int64_t now = c->worker().now_ms();
  std::string out;
  auto section = [&](const char* title) {
    if (!out.empty()) out += "\r\n";
    out += "# ";
    out += title;
    out += "\r\n";
  };
  if (want("server", true)) {
    section("Server");
    AddLine(&out, "redis_version", STRATA_REDIS_COMPAT_VERSION);
    AddLine(&out, "strata_version", STRATA_VERSION);
    // What a Redis built outside a git checkout reports.
    AddLine(&out, "redis_git_sha1", "00000000");
    AddLine(&out, "redis_git_dirty", "0");
    AddLine(&out, "redis_mode", srv.process().cluster_mode() ? "cluster" : "standalone");
    utsname name;
    if (uname(&name) == 0) {
      AddLine(&out, "os", std::string(name.sysname) + " " + name.release + " " + name.machine);
    } else {
      AddLine(&out, "os", "Linux");
    }
    AddLine(&out, "arch_bits", "64");
    AddLine(&out, "multiplexing_api", srv.process().io_backend);
    AddLine(&out, "io_backend", srv.process().io_backend);
#if defined(__GNUC__) && !defined(__clang__)
    AddLine(&out, "gcc_version",
            std::to_string(__GNUC__) + "." + std::to_string(__GNUC_MINOR__) + "." +
                std::to_string(__GNUC_PATCHLEVEL__));
#else
    AddLine(&out, "gcc_version", "0.0.0");  // as Redis built by another compiler
#endif
    AddLine(&out, "process_id", std::to_string(getpid()));
    // strata tells systemd it is ready whenever NOTIFY_SOCKET is set (sd_notify.h).
    AddLine(&out, "process_supervised", std::getenv("NOTIFY_SOCKET") != nullptr ? "systemd" : "no");
    AddLine(&out, "run_id", srv.process().run_id);
    AddLine(&out, "tcp_port", std::to_string(srv.process().port));
    int64_t up = (now - srv.process().start_time_ms) / 1000;
    AddLine(&out, "server_time_usec", std::to_string(WallClockUs()));
    AddLine(&out, "uptime_in_seconds", std::to_string(up));
    AddLine(&out, "uptime_in_days", std::to_string(up / 86400));
    AddLine(&out, "hz", std::to_string(cfg.Int("hz")));
    AddLine(&out, "configured_hz", std::to_string(cfg.Int("hz")));  // no dynamic hz
    // The clock keys' access times are kept in (seconds, 24 bits), as Redis's.
    AddLine(&out, "lru_clock", std::to_string(access::LruClock(now)));
    AddLine(&out, "thread_count", std::to_string(srv.shard_count()));
    AddLine(&out, "executable", srv.process().executable);
    AddLine(&out, "config_file", cfg.config_file());
  }
  if (want("clients", true)) {
    section("Clients");
    AddLine(&out, "connected_clients", std::to_string(srv.connected_clients.load()));
    // The cluster bus's links, inbound and outbound (cluster-enabled yes).
    size_t bus_links = 0;
    if (const ClusterService* cluster = srv.FindService<ClusterService>(); cluster != nullptr) {
      if (const ClusterBus* bus = cluster->bus(); bus != nullptr) bus_links = bus->links();
    }
    AddLine(&out, "cluster_connections", std::to_string(bus_links));
    AddLine(&out, "maxclients", std::to_string(cfg.Int("maxclients")));
    AddLine(&out, "client_recent_max_input_buffer", std::to_string(clients_max_in));
    AddLine(&out, "client_recent_max_output_buffer", std::to_string(clients_max_out));
    size_t blocked = 0;
    for (auto& r : reports) blocked += r.blocked_clients;
    AddLine(&out, "blocked_clients", std::to_string(blocked));
    AddLine(&out, "tracking_clients", std::to_string(srv.tracking_clients.load()));
    size_t in_timeout = 0;
    for (auto& r : reports) in_timeout += r.blocked_with_timeout;
    AddLine(&out, "clients_in_timeout_table", std::to_string(in_timeout));
    size_t pubsub_clients = 0;
    for (auto& r : reports) pubsub_clients += r.pubsub_clients;
    AddLine(&out, "pubsub_clients", std::to_string(pubsub_clients));
  }
  if (want("memory", true)) {
    section("Memory");
    AppendInfoMemory(memory, &out);
  }
  if (want("persistence", true)) {
    section("Persistence");
    srv.Service<SnapshotManager>().AppendInfo(&out);
  }
  if (want("tiered", true)) {
    section("Tiered");
    if (const TierService* tier = srv.FindService<TierService>()) {
      tier->AppendInfo(&out);
    } else {
      AppendTierOffInfo(&out);
    }
  }
  if (want("stats", true)) {
    section("Stats");
    AddLine(&out, "total_connections_received", std::to_string(total.total_connections_received));
    AddLine(&out, "total_commands_processed", std::to_string(total.total_commands_processed));
    uint64_t ops_rate = 0, input_rate = 0, output_rate = 0;  // the workers' sum
    uint64_t repl_input_rate = 0, repl_output_rate = 0;
    for (auto& r : reports) {
      ops_rate += r.stats.ops_rate.PerSecond();
      input_rate += r.stats.input_rate.PerSecond();
      output_rate += r.stats.output_rate.PerSecond();
      repl_input_rate += r.stats.repl_input_rate.PerSecond();
      repl_output_rate += r.stats.repl_output_rate.PerSecond();
    }
    AddLine(&out, "instantaneous_ops_per_sec", std::to_string(ops_rate));
    // Replication's bytes are in the totals too, and apart in the *_repl_* lines: the
    // master's stream and its image (a full sync's transfer), what replicas were sent.
    uint64_t sync_in = srv.replication().sync_input_bytes();
    AddLine(&out, "total_net_input_bytes", std::to_string(total.total_net_input_bytes + sync_in));
    AddLine(&out, "total_net_output_bytes", std::to_string(total.total_net_output_bytes));
    AddLine(&out, "total_net_repl_input_bytes",
            std::to_string(total.total_net_repl_input_bytes + sync_in));
    AddLine(&out, "total_net_repl_output_bytes", std::to_string(total.total_net_repl_output_bytes));
    auto kbps = [&out](const char* name, uint64_t bytes_per_second) {
      char buf[64];
      std::snprintf(buf, sizeof(buf), "%.2f", static_cast<double>(bytes_per_second) / 1024);
      AddLine(&out, name, buf);
    };
    kbps("instantaneous_input_kbps", input_rate);
    kbps("instantaneous_output_kbps", output_rate);
    kbps("instantaneous_input_repl_kbps", repl_input_rate);
    kbps("instantaneous_output_repl_kbps", repl_output_rate);
    AddLine(&out, "rejected_connections", std::to_string(total.rejected_connections));
    if (ReplMaster* rm = srv.FindService<ReplMaster>(); rm != nullptr) {
      AddLine(&out, "sync_full", std::to_string(rm->sync_full()));
      AddLine(&out, "sync_partial_ok", std::to_string(rm->sync_partial_ok()));
      AddLine(&out, "sync_partial_err", std::to_string(rm->sync_partial_err()));
    }
    AddLine(&out, "expired_keys", std::to_string(ks.expired_keys));
    // Active expiry's estimates, the shards' mean (keys spread evenly over the shards).
    double stale = 0;
    for (auto& r : reports) stale += r.expired_stale_ratio;
    char perc[64];
    std::snprintf(perc, sizeof(perc), "%.2f",
                  reports.empty() ? 0.0 : stale * 100 / static_cast<double>(reports.size()));
    AddLine(&out, "expired_stale_perc", perc);
    AddLine(&out, "expire_cycle_cpu_milliseconds",
            std::to_string(CycleClock::ToMicros(total.expire_cycle_ticks) / 1000));
    AddLine(&out, "evicted_keys", std::to_string(ks.evicted_keys));
    AddLine(&out, "evicted_clients", std::to_string(total.evicted_clients));
    AddLine(&out, "total_eviction_exceeded_time",
            std::to_string(srv.total_eviction_exceeded_ms(now)));
    AddLine(&out, "current_eviction_exceeded_time",
            std::to_string(srv.current_eviction_exceeded_ms(now)));
    AddLine(&out, "keyspace_hits", std::to_string(ks.keyspace_hits));
    AddLine(&out, "keyspace_misses", std::to_string(ks.keyspace_misses));
    AddLine(&out, "pubsub_channels", std::to_string(srv.pubsub().Count(PubSubKind::kChannel)));
    AddLine(&out, "pubsub_patterns", std::to_string(srv.pubsub().Count(PubSubKind::kPattern)));
    AddLine(&out, "pubsubshard_channels", std::to_string(srv.pubsub().Count(PubSubKind::kShard)));
    // Snapshots and full resyncs never fork here.
    AddLine(&out, "latest_fork_usec", "0");
    AddLine(&out, "total_forks", "0");
    size_t tracking_keys = 0, tracking_items = 0;
    for (auto& r : reports) {
      tracking_keys += r.tracking_keys;
      tracking_items += r.tracking_items;
    }
    AddLine(&out, "tracking_total_keys", std::to_string(tracking_keys));
    AddLine(&out, "tracking_total_items", std::to_string(tracking_items));
    AddLine(&out, "tracking_total_prefixes", std::to_string(srv.bcast().distinct_prefixes()));
    AddLine(&out, "unexpected_error_replies", std::to_string(total.unexpected_error_replies));
    AddLine(&out, "total_error_replies", std::to_string(total.errors.total));
    AddLine(&out, "total_reads_processed", std::to_string(total.total_reads_processed));
    AddLine(&out, "total_writes_processed", std::to_string(total.total_writes_processed));
    AddLine(&out, "cross_shard_commands", std::to_string(total.remote_commands));
    AddLine(&out, "multi_shard_commands", std::to_string(total.multi_shard_commands));
    AddLine(&out, "pipeline_squashed_calls", std::to_string(total.pipeline_squashed_calls));
    AddLine(&out, "scripts_across_shards", std::to_string(total.scripts_across_shards));
    AddLine(&out, "scripts_every_shard", std::to_string(total.scripts_every_shard));
    AddLine(&out, "client_query_buffer_limit_disconnections",
            std::to_string(total.client_query_buffer_limit_disconnections));
    AddLine(&out, "client_output_buffer_limit_disconnections",
            std::to_string(total.client_output_buffer_limit_disconnections));
  }
  if (want("replication", true)) {
    section("Replication");
    out += srv.replication().InfoLines(WallClockMs(), srv.config().Int("replica-priority"),
                                       srv.config().Bool("replica-announced"));
  }
  if (want("cpu", true)) {
    section("CPU");
    // getrusage's system and user time of `who`, as used_cpu_sys<suffix> and
    // used_cpu_user<suffix>, in seconds.
    auto cpu_lines = [&out](const rusage& ru, const char* suffix) {
      char buf[64];
      for (auto [name, tv] :
           {std::pair{"used_cpu_sys", ru.ru_stime}, std::pair{"used_cpu_user", ru.ru_utime}}) {
        std::snprintf(buf, sizeof(buf), "%ld.%06ld", static_cast<long>(tv.tv_sec),
                      static_cast<long>(tv.tv_usec));
        AddLine(&out, std::string(name) + suffix, buf);
      }
    };
    rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    cpu_lines(ru, "");
    // No child process ever runs (no fork): zeros, from the kernel's count all the same.
    getrusage(RUSAGE_CHILDREN, &ru);
    cpu_lines(ru, "_children");
    // Redis's main thread runs its commands; here every worker does, and worker 0 also
    // runs replication and the timers of the process's services.
    cpu_lines(reports.empty() ? rusage{} : reports[0].thread_cpu, "_main_thread");
  }
  if (want("commandstats", false)) {
    section("Commandstats");
    const CommandRegistry& registry = CommandRegistry::Get();
    for (size_t i = 0; i < total.commands.size(); i++) {
      const CommandStat& st = total.commands[i];
      uint64_t usec = CycleClock::ToMicros(st.usec_ticks);
      if (st.calls == 0 && st.rejected_calls == 0 && st.failed_calls == 0) continue;
      char buf[256];
      std::snprintf(buf, sizeof(buf),
                    "calls=%llu,usec=%llu,usec_per_call=%.2f,rejected_calls=%llu,"
                    "failed_calls=%llu",
                    static_cast<unsigned long long>(st.calls),
                    static_cast<unsigned long long>(usec),
                    st.calls ? static_cast<double>(usec) / st.calls : 0.0,
                    static_cast<unsigned long long>(st.rejected_calls),
                    static_cast<unsigned long long>(st.failed_calls));
      AddLine(&out, "cmdstat_" + registry.stat_name(i), buf);
    }
  }
  if (want("errorstats", true)) {
    section("Errorstats");
    for (const auto& [code, n] : total.errors.by_code)
      AddLine(&out, "errorstat_" + code, "count=" + std::to_string(n));
  }
  if (want("latencystats", false)) {
    section("Latencystats");
    std::vector<double> percentiles = cfg.latency_percentiles();
    const CommandRegistry& registry = CommandRegistry::Get();
    for (size_t i = 0; i < total.commands.size(); i++) {
      const std::vector<uint64_t>& h = total.commands[i].latency;
      if (latency::Total(h) == 0) continue;
      std::string line;
      for (size_t j = 0; j < percentiles.size(); j++) {
        char label[64], buf[128];
        std::snprintf(label, sizeof(label), "%f", percentiles[j]);
        std::string l = label;
        if (l.find('.') != std::string::npos) {
          while (!l.empty() && l.back() == '0') l.pop_back();
          if (!l.empty() && l.back() == '.') l.pop_back();
        }
        std::snprintf(buf, sizeof(buf), "p%s=%.3f", l.c_str(),
                      latency::PercentileMicros(h, percentiles[j], CycleClock::TicksPerMicro()));
        if (j != 0) line += ',';
        line += buf;
      }
      AddLine(&out, "latency_percentiles_usec_" + registry.stat_name(i), line);
    }
  }
  if (want("cluster", true)) {
    section("Cluster");
    AddLine(&out, "cluster_enabled", srv.process().cluster_mode() ? "1" : "0");
  }
  if (want("keyspace", true)) {
    section("Keyspace");
    uint32_t dbs = static_cast<uint32_t>(cfg.Int("databases"));
    for (uint32_t db = 0; db < dbs; db++) {
      size_t keys = 0, expires = 0;
      int64_t ttl_sum = 0, ttl_n = 0;
      for (auto& r : reports) {
        keys += r.keys[db];
        expires += r.expires[db];
        if (r.avg_ttl[db] > 0) {
          ttl_sum += r.avg_ttl[db];
          ttl_n++;
        }
      }
      if (keys == 0) continue;
      AddLine(&out, "db" + std::to_string(db),
              "keys=" + std::to_string(keys) + ",expires=" + std::to_string(expires) +
                  ",avg_ttl=" + std::to_string(ttl_n ? ttl_sum / ttl_n : 0));
    }
  }
  return out;
}

Fiber InfoFiber(Client* c, std::shared_ptr<OwnedArgs> owned) {
  CmdArgs args = owned->span();
  std::vector<std::string> wanted;
  for (size_t i = 1; i < args.size(); i++) wanted.push_back(Lowercase(args[i]));
  Engine& srv = c->worker().engine();
  std::vector<ShardReport> reports(srv.shard_count());
  uint32_t dbs = static_cast<uint32_t>(srv.config().Int("databases"));
  co_await RunOn(srv.AllShards(), [&](Worker& w) {
    ShardReport& r = reports[w.index()];
    r.stats = w.stats();
    r.ks = w.keyspace().stats();
    r.memory = CollectShardMemory(w, dbs);
    r.blocked_clients = w.blocked_clients();
    r.blocked_with_timeout = w.blocked_with_timeout();
    r.expired_stale_ratio = w.keyspace().expired_stale_ratio();
    if (w.index() == 0) getrusage(RUSAGE_THREAD, &r.thread_cpu);
    r.pubsub_clients = w.pubsub().clients();
    r.tracking_keys = w.tracking().live_keys();
    r.tracking_items = w.tracking().live_items();
    for (uint32_t db = 0; db < dbs; db++) {
      r.keys.push_back(w.keyspace().DbSize(db));
      r.expires.push_back(w.keyspace().ExpiresCount(db));
      r.avg_ttl.push_back(w.keyspace().SampleAvgTtl(db, w.now_ms()));
    }
    for (auto& [id, conn] : w.connections()) {
      r.max_input_buffer = std::max(r.max_input_buffer, conn->query_buffer_bytes());
      r.max_output_buffer = std::max(r.max_output_buffer, conn->output_bytes());
    }
  });
  std::vector<ShardMemory> shard_memory;
  for (auto& r : reports) shard_memory.push_back(std::move(r.memory));
  MemorySummary memory = Summarize(srv, std::move(shard_memory));
  std::string text = BuildInfo(c, wanted, reports, memory);
  std::string out;
  ReplyBuilder rb(&out, c->resp);
  rb.Verbatim(text);
  c->FinishFiber(std::move(out));
}

Fiber ConfigFiber(Client* c, std::shared_ptr<OwnedArgs> owned) {
  CmdArgs args = owned->span();
  std::string out;
  ReplyBuilder rb(&out, c->resp);
  Engine& srv = c->worker().engine();
  Config& cfg = srv.config();
  std::string sub = Lowercase(args[1]);
  if (sub == "get" && args.size() >= 3) {
    std::vector<std::pair<std::string, std::string>> found;
    for (size_t i = 2; i < args.size(); i++) {
      for (auto& kv : cfg.GetMatching(args[i])) {
        bool dup = false;
        for (auto& f : found) dup |= f.first == kv.first;
        if (!dup) found.push_back(kv);
      }
    }
    rb.Map(found.size());
    for (auto& [k, v] : found) {
      rb.Bulk(k);
      rb.Bulk(v);
    }
  } else if (sub == "set" && args.size() >= 4 && args.size() % 2 == 0) {
    // All or nothing: validate every pair against a copy of the current values first.
    std::vector<std::pair<std::string, std::string>> old;
    std::string error;
    for (size_t i = 2; i + 1 < args.size(); i += 2) {
      std::string name = Lowercase(args[i]);
      for (size_t j = 2; j < i; j += 2) {
        if (Lowercase(args[j]) == name) {
          error = "ERR CONFIG SET failed (possibly related to argument '" + name +
                  "') - duplicate parameter";
        }
      }
      if (!error.empty()) break;
      auto cur = cfg.Get(name);
      if (!cur) {
        error = "ERR Unknown option or number of arguments for CONFIG SET - '" +
                std::string(args[i]) + "'";
        break;
      }
      std::string why = cfg.Set(name, args[i + 1], true);
      if (!why.empty()) {
        error = "ERR CONFIG SET failed (possibly related to argument '" + name + "') - " + why;
        break;
      }
      old.emplace_back(name, *cur);
    }
    if (!error.empty()) {
      for (auto it = old.rbegin(); it != old.rend(); ++it) {
        std::string ignored = cfg.Set(it->first, it->second, false);  // restoring a valid value
        (void)ignored;
      }
      rb.Error(error);
    } else {
      // The slow log's limits apply from the next command here (other workers: their
      // next loop turn); a shorter slowlog-max-len drops the oldest entries now.
      c->worker().RefreshSlowLimits();
      srv.slowlog().Trim(static_cast<size_t>(cfg.slowlog_max_len()));
      // The dispatcher's refusals (replica-read-only, replica-serve-stale-data,
      // stop-writes-on-bgsave-error) hold from the next command on, as in Redis (worker
      // 0's timer re-reads them too).
      srv.replication().ConfigureFrom(cfg);
      bool acl_changed = false;
      for (const auto& [name, value] : old) {
        if (name == "requirepass") {
          // As Redis: requirepass is the default user's password (its only one).
          AclRegistry::Get().SetRequirePass(cfg.String("requirepass"));
          acl_changed = true;
        } else if (name == "acl-pubsub-default") {
          SetAclPubsubDefault(cfg.String("acl-pubsub-default") == "allchannels");
        }
      }
      if (acl_changed) co_await RunOn(srv.AllShards(), [c](Worker& w) { w.RefreshAclUsers(c); });
      rb.Ok();
    }
  } else if (sub == "set" && args.size() >= 3) {
    rb.Error(WrongArityError("config|set"));
  } else if (sub == "rewrite" && args.size() == 2) {
    // The users go into the file unless they live in an aclfile, as Redis writes them.
    std::vector<std::string> users;
    if (cfg.String("aclfile").empty()) {
      for (const AclUserPtr& u : AclRegistry::Get().All()) {
        users.push_back("user " + u->name() + " " + u->Describe());
      }
    }
    std::string err = cfg.Rewrite(users);
    if (err.empty()) {
      LogNotice("CONFIG REWRITE executed with success.");
      rb.Ok();
    } else {
      LogWarning("CONFIG REWRITE failed: %s", err.c_str());
      rb.Error("ERR " + err);
    }
  } else if (sub == "resetstat" && args.size() == 2) {
    co_await RunOn(srv.AllShards(), [](Worker& w) {
      size_t n = w.stats().commands.size();
      w.stats() = WorkerStats();
      w.stats().commands.resize(n);
      w.keyspace().stats() = KeyspaceStats();
      w.keyspace().ResetExpiredStaleRatio();
      // On worker 0, whose timer samples it with its own counters.
      if (w.index() == 0) w.engine().replication().ResetSyncInputBytes();
    });
    // Redis counts a call once it has run, so the reset's own call is the first the new
    // statistics hold; here it was counted when it started (StartFiber), before the reset.
    if (const CommandSpec* config = CommandRegistry::Get().Find("config")) {
      c->worker().stats().commands[SubcommandStatIndex(*config, "resetstat")].calls++;
      c->worker().stats().total_commands_processed++;
    }
    rb.Ok();
  } else if (sub == "help") {
    const char* lines[] = {
        "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "GET <pattern>",
        "    Return parameters matching the glob-like <pattern> and their values.",
        "SET <directive> <value>",
        "    Set the configuration <directive> to <value>.",
        "RESETSTAT",
        "    Reset statistics reported by the INFO command.",
        "REWRITE",
        "    Rewrite the configuration file.",
        "HELP",
        "    Prints this help."};
    rb.Array(sizeof(lines) / sizeof(lines[0]));
    for (const char* l : lines) rb.Simple(l);
  } else if (sub == "get" || sub == "set" || sub == "resetstat" || sub == "rewrite") {
    rb.Error(WrongArityError("config|" + sub));
  } else {
    rb.Error("ERR unknown subcommand '" + std::string(args[1]) + "'. Try CONFIG HELP.");
  }
  c->FinishFiber(std::move(out));
}

// Redis's client types (CLIENT LIST TYPE, CLIENT KILL TYPE).
enum class ClientType { kNormal, kReplica, kPubSub, kMaster, kUnknown };

ClientType ClientTypeByName(std::string_view name) {
  if (EqualsIgnoreCase(name, "normal")) return ClientType::kNormal;
  if (EqualsIgnoreCase(name, "replica") || EqualsIgnoreCase(name, "slave"))
    return ClientType::kReplica;
  if (EqualsIgnoreCase(name, "pubsub")) return ClientType::kPubSub;
  if (EqualsIgnoreCase(name, "master")) return ClientType::kMaster;
  return ClientType::kUnknown;
}

// On the client's own worker.
ClientType ClientTypeOf(const Client& c) {
  if (c.is_master()) return ClientType::kMaster;
  if (c.is_replica()) return ClientType::kReplica;
  if (c.subscribed()) return ClientType::kPubSub;
  return ClientType::kNormal;
}

struct KillFilter {
  std::unordered_set<uint64_t> ids;  // a set: many ids over many clients stay linear
  std::string addr, laddr, user;
  bool has_id = false, has_addr = false, has_laddr = false, has_type = false, has_user = false;
  bool has_maxage = false;
  int64_t maxage_s = 0;
  ClientType type = ClientType::kNormal;
  bool skipme = true;
  uint64_t me = 0;
  // now_ms: the client's worker's clock.
  bool Matches(const Client& conn, int64_t now_ms) const {
    if (skipme && conn.id() == me) return false;
    if (has_type && ClientTypeOf(conn) != type) return false;
    if (has_id && ids.count(conn.id()) == 0) return false;
    if (has_addr && conn.addr() != addr) return false;
    if (has_laddr && conn.laddr() != laddr) return false;
    if (has_user && (conn.acl_user == nullptr || conn.acl_user->name() != user)) return false;
    if (has_maxage && now_ms - conn.created_ms < maxage_s * 1000) return false;
    return true;
  }
};

void ClientConn(Client& conn, CmdArgs args, ReplyBuilder& rb) {
  Client* c = &conn;
  std::string sub = Lowercase(args[1]);
  if (sub == "id" && args.size() == 2) {
    rb.Integer(static_cast<int64_t>(c->id()));
  } else if (sub == "setname" && args.size() == 3) {
    std::string_view name = args[2];
    bool ok = true;
    for (char ch : name) ok &= ch >= '!' && ch <= '~';
    if (!ok) {
      rb.Error("ERR Client names cannot contain spaces, newlines or special characters.");
    } else {
      c->SetName(std::string(name));
      rb.Ok();
    }
  } else if (sub == "getname" && args.size() == 2) {
    c->name.empty() ? rb.Null() : rb.Bulk(c->name);
  } else if (sub == "setinfo" && args.size() == 4) {
    std::string attr = Lowercase(args[2]);
    std::string_view v = args[3];
    bool ok = true;
    for (char ch : v) ok &= ch >= '!' && ch <= '~';
    if (attr != "lib-name" && attr != "lib-ver") {
      rb.Error("ERR Unrecognized option '" + std::string(args[2]) + "'");
    } else if (!ok) {
      rb.Error("ERR " + attr + " cannot contain spaces, newlines or special characters.");
    } else {
      (attr == "lib-name" ? c->lib_name : c->lib_ver) = std::string(v);
      rb.Ok();
    }
  } else if (sub == "info" && args.size() == 2) {
    rb.Verbatim(c->InfoLine(c->worker().now_ms()) + "\n");
  } else if (sub == "tracking" && args.size() >= 3) {
    ClientTrackingCommand(*c, args, rb, -1);  // no REDIRECT (that one runs in the fiber)
  } else if (sub == "caching" && args.size() == 3) {
    ClientCachingCommand(*c, args, rb);
  } else if (sub == "getredir" && args.size() == 2) {
    ClientGetRedirCommand(*c, rb);
  } else if (sub == "trackinginfo" && args.size() == 2) {
    ClientTrackingInfoCommand(*c, rb);
  } else if (sub == "no-evict" && args.size() == 3) {
    if (EqualsIgnoreCase(args[2], "on")) {
      c->no_evict = true;
      rb.Ok();
    } else if (EqualsIgnoreCase(args[2], "off")) {
      c->no_evict = false;
      rb.Ok();
    } else {
      rb.Error(errors::kSyntax);
    }
  } else if (sub == "reply" && args.size() == 3) {
    if (EqualsIgnoreCase(args[2], "on")) {
      c->reply_mode = Client::ReplyMode::kOn;
      rb.Ok();
    } else if (EqualsIgnoreCase(args[2], "off")) {
      c->reply_mode = Client::ReplyMode::kOff;
    } else if (EqualsIgnoreCase(args[2], "skip")) {
      c->skip_next_reply = true;
    } else {
      rb.Error(errors::kSyntax);
    }
  } else if (sub == "help") {
    const char* lines[] = {"CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                           "ID",
                           "GETNAME",
                           "SETNAME <name>",
                           "SETINFO <option> <value>",
                           "INFO",
                           "LIST [TYPE <type>] [ID <id> [<id> ...]]",
                           "KILL <ip:port> | <filter> <value> ...",
                           "NO-EVICT (ON|OFF)",
                           "PAUSE <timeout> [WRITE|ALL]",
                           "UNPAUSE",
                           "REPLY (ON|OFF|SKIP)",
                           "UNBLOCK <clientid> [TIMEOUT|ERROR]",
                           "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
                           "         [OPTIN] [OPTOUT] [NOLOOP]",
                           "CACHING (YES|NO)",
                           "GETREDIR",
                           "TRACKINGINFO",
                           "HELP"};
    rb.Array(sizeof(lines) / sizeof(lines[0]));
    for (const char* l : lines) rb.Simple(l);
  } else if (sub == "unblock" && args.size() > 4) {
    rb.Error("ERR unknown subcommand or wrong number of arguments for 'unblock'. Try CLIENT HELP.");
  } else {
    static const char* known[] = {
        "id",    "setname",  "getname", "setinfo",  "info",         "list",  "kill",    "no-evict",
        "reply", "tracking", "caching", "getredir", "trackinginfo", "pause", "unpause", "unblock"};
    bool is_known = false;
    for (const char* k : known) is_known |= sub == k;
    if (is_known) {
      rb.Error(WrongArityError("client|" + sub));
    } else {
      rb.Error("ERR unknown subcommand '" + std::string(args[1]) + "'. Try CLIENT HELP.");
    }
  }
}

Fiber ClientFiber(Client* c, std::shared_ptr<OwnedArgs> owned) {
  CmdArgs args = owned->span();
  std::string out;
  ReplyBuilder rb(&out, c->resp);
  Engine& srv = c->worker().engine();
  std::string sub = Lowercase(args[1]);
  if (sub == "tracking") {
    // REDIRECT: the target must exist now; its worker is where its messages go.
    uint64_t target = TrackingRedirectOf(args);
    std::vector<char> found(srv.shard_count(), 0);
    if (target != 0) {
      co_await RunOn(srv.AllShards(), [&](Worker& w) {
        found[w.index()] = w.connections().count(target) > 0 ? 1 : 0;
      });
    }
    auto it = std::find(found.begin(), found.end(), 1);
    int64_t redirect_worker = it == found.end() ? -1 : it - found.begin();
    ClientTrackingCommand(*c, args, rb, redirect_worker);
  } else if (sub == "list") {
    std::unordered_set<uint64_t> ids;
    bool bad = false;
    bool has_type = false;
    ClientType type = ClientType::kNormal;
    std::string type_error;
    for (size_t i = 2; i < args.size(); i++) {
      if (EqualsIgnoreCase(args[i], "type") && i + 1 < args.size()) {
        i++;
        has_type = true;
        type = ClientTypeByName(args[i]);
        if (type == ClientType::kUnknown) {
          type_error = "ERR Unknown client type '" + std::string(args[i]) + "'";
          break;
        }
      } else if (EqualsIgnoreCase(args[i], "id") && i + 1 < args.size()) {
        for (i = i + 1; i < args.size(); i++) {
          int64_t id = 0;
          if (!ParseInt64(args[i], &id) || id <= 0) {
            bad = true;
            break;
          }
          ids.insert(static_cast<uint64_t>(id));
        }
      } else {
        bad = true;
      }
    }
    if (!type_error.empty()) {
      rb.Error(type_error);
    } else if (bad) {
      rb.Error(errors::kSyntax);
    } else {
      std::vector<std::string> lines(srv.shard_count());
      co_await RunOn(srv.AllShards(), [&](Worker& w) {
        std::vector<std::pair<uint64_t, Client*>> conns(w.connections().begin(),
                                                        w.connections().end());
        std::sort(conns.begin(), conns.end());
        for (auto& [id, conn] : conns) {
          if (!ids.empty() && ids.count(id) == 0) continue;
          if (has_type && ClientTypeOf(*conn) != type) continue;
          lines[w.index()] += conn->InfoLine(w.now_ms()) + "\n";
        }
      });
      std::string all;
      for (auto& l : lines) all += l;
      rb.Verbatim(all);
    }
  } else if (sub == "kill" && args.size() >= 3) {
    KillFilter f;
    f.me = c->id();
    bool old_form = args.size() == 3;
    std::string error;
    if (old_form) {
      f.has_addr = true;
      f.addr = std::string(args[2]);
      f.skipme = false;
    } else {
      for (size_t i = 2; i < args.size(); i += 2) {
        if (i + 1 >= args.size()) {
          error = std::string(errors::kSyntax);
          break;
        }
        std::string opt = Lowercase(args[i]);
        std::string_view val = args[i + 1];
        if (opt == "id") {
          int64_t id = 0;
          if (!ParseInt64(val, &id) || id <= 0) {
            error = "ERR client-id should be greater than 0";
            break;
          }
          f.has_id = true;
          f.ids.insert(static_cast<uint64_t>(id));
        } else if (opt == "addr") {
          f.has_addr = true;
          f.addr = std::string(val);
        } else if (opt == "laddr") {
          f.has_laddr = true;
          f.laddr = std::string(val);
        } else if (opt == "skipme") {
          if (EqualsIgnoreCase(val, "yes")) {
            f.skipme = true;
          } else if (EqualsIgnoreCase(val, "no")) {
            f.skipme = false;
          } else {
            error = std::string(errors::kSyntax);
            break;
          }
        } else if (opt == "type") {
          f.has_type = true;
          f.type = ClientTypeByName(val);
          if (f.type == ClientType::kUnknown) {
            error = "ERR Unknown client type '" + std::string(val) + "'";
            break;
          }
        } else if (opt == "user") {
          if (AclRegistry::Get().Find(val) == nullptr) {
            error = "ERR No such user '" + std::string(val) + "'";
            break;
          }
          f.has_user = true;
          f.user = std::string(val);
        } else if (opt == "maxage") {
          // Redis 7.2's filter: connections at least this many seconds old.
          if (!ParseInt64(val, &f.maxage_s) || f.maxage_s < 0) {
            error = std::string(errors::kSyntax);
            break;
          }
          f.has_maxage = true;
        } else {
          error = std::string(errors::kSyntax);
          break;
        }
      }
    }
    if (!error.empty()) {
      rb.Error(error);
    } else {
      std::vector<int64_t> killed(srv.shard_count(), 0);
      bool kill_self = false;
      co_await RunOn(srv.AllShards(), [&](Worker& w) {
        std::vector<Client*> victims;
        for (auto& [id, conn] : w.connections()) {
          if (f.Matches(*conn, w.now_ms())) victims.push_back(conn);
        }
        for (Client* v : victims) {
          if (v == c) {
            kill_self = true;  // closed after its reply is written
          } else {
            v->Kill();
          }
          killed[w.index()]++;
        }
      });
      int64_t n = 0;
      for (int64_t k : killed) n += k;
      if (kill_self) c->CloseAfterReply();
      if (old_form) {
        n > 0 ? rb.Ok() : rb.Error("ERR No such client");
      } else {
        rb.Integer(n);
      }
    }
  } else if (sub == "pause" && (args.size() == 3 || args.size() == 4)) {
    // Redis 7.0's order of checks: the mode, then the timeout (milliseconds).
    Engine::PauseMode mode = Engine::kPauseAll;
    if (args.size() == 4) {
      if (EqualsIgnoreCase(args[3], "write")) {
        mode = Engine::kPauseWrite;
      } else if (!EqualsIgnoreCase(args[3], "all")) {
        rb.Error("ERR CLIENT PAUSE mode must be WRITE or ALL");
        c->FinishFiber(std::move(out));
        co_return;
      }
    }
    int64_t ms = 0;
    if (!ParseInt64(args[2], &ms)) {
      rb.Error("ERR timeout is not an integer or out of range");
      c->FinishFiber(std::move(out));
      co_return;
    }
    if (ms < 0) {
      rb.Error("ERR timeout is negative");
      c->FinishFiber(std::move(out));
      co_return;
    }
    int64_t now = c->worker().now_ms();
    int64_t end = ms > INT64_MAX - now ? INT64_MAX : now + ms;
    srv.PauseClients(end, mode);
    // Every worker holds its clients from now on: the reply waits for all of them.
    co_await RunOn(srv.AllShards(), [](Worker& w) { w.SetPauseGate(true); });
    rb.Ok();
  } else if (sub == "unpause" && args.size() == 2) {
    srv.UnpauseClients();
    rb.Ok();
  } else if (sub == "unblock") {
    // On the target's worker (found by its id on each), as Redis: 1 when it was waiting
    // in a blocking command, which then answers as at its timeout or with -UNBLOCKED.
    int64_t id = 0;
    bool error = false;
    if (!ParseInt64(args[2], &id)) {
      rb.Error(errors::kNotInteger);
    } else if (args.size() == 4 && !EqualsIgnoreCase(args[3], "timeout") &&
               !EqualsIgnoreCase(args[3], "error")) {
      rb.Error("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
    } else {
      error = args.size() == 4 && EqualsIgnoreCase(args[3], "error");
      std::vector<char> done(srv.shard_count(), 0);
      co_await RunOn(srv.AllShards(), [&](Worker& w) {
        auto it = w.connections().find(static_cast<uint64_t>(id));
        if (it != w.connections().end() && it->second->Unblock(error)) done[w.index()] = 1;
      });
      rb.Integer(std::count(done.begin(), done.end(), 1));
    }
  }
  c->FinishFiber(std::move(out));
}

bool ClientNeedsFiber(CmdArgs args) {
  if (EqualsIgnoreCase(args[1], "tracking") && args.size() >= 3)
    return TrackingRedirectOf(args) != 0;
  return EqualsIgnoreCase(args[1], "list") ||
         (EqualsIgnoreCase(args[1], "kill") && args.size() >= 3) ||
         (EqualsIgnoreCase(args[1], "pause") && (args.size() == 3 || args.size() == 4)) ||
         (EqualsIgnoreCase(args[1], "unpause") && args.size() == 2) ||
         (EqualsIgnoreCase(args[1], "unblock") && (args.size() == 3 || args.size() == 4));
}

Fiber ShutdownFiber(Client* c, std::shared_ptr<OwnedArgs> owned) {
  CmdArgs args = owned->span();
  std::string out;
  ReplyBuilder rb(&out, c->resp);
  bool nosave = false, save = false, force = false;
  for (size_t i = 1; i < args.size(); i++) {
    std::string a = Lowercase(args[i]);
    if (a != "nosave" && a != "save" && a != "now" && a != "force" && a != "abort") {
      rb.Error(errors::kSyntax);
      c->FinishFiber(std::move(out));
      co_return;
    }
    if (a == "abort") {
      rb.Error("ERR No shutdown in progress.");
      c->FinishFiber(std::move(out));
      co_return;
    }
    nosave = nosave || a == "nosave";
    save = save || a == "save";
    force = force || a == "force";
  }
  if (nosave && save) {
    rb.Error(errors::kSyntax);
    c->FinishFiber(std::move(out));
    co_return;
  }
  Engine& srv = c->worker().engine();
  if (!nosave && srv.busy_scripts() > 0) {
    // As Redis: while a script is busy only SHUTDOWN NOSAVE stops the server (a save
    // would wait for the script).
    rb.Error(srv.BusyScriptError());
    c->FinishFiber(std::move(out));
    co_return;
  }
  LogWarning("User requested shutdown...");
  SnapshotManager& sm = srv.Service<SnapshotManager>();
  if (!nosave && !sm.loading() && (save || sm.AutoSaveEnabled())) {
    LogNotice("Saving the final snapshot before exiting.");
    Status s = co_await SnapshotAwait(SnapshotManager::Reason::kShutdown, true);
    if (!s.ok() && !force) {
      LogWarning("Error trying to save the DB, can't exit: %s", s.message().c_str());
      rb.Error("ERR Errors trying to SHUTDOWN. Check logs.");
      c->FinishFiber(std::move(out));
      co_return;
    }
  }
  srv.RequestShutdown(true);
  // No reply: the connection closes with the server, as in Redis.
  c->CloseAfterReply();
  c->FinishFiber(std::string());
}

}  // namespace

const std::vector<std::string> kClientSubcommands = {
    "id",           "setname",  "getname", "setinfo",  "info",    "list",
    "kill",         "no-evict", "reply",   "tracking", "caching", "getredir",
    "trackinginfo", "help",     "pause",   "unpause",  "unblock"};
const std::vector<std::string> kConfigSubcommands = {"get", "set", "resetstat", "rewrite", "help"};

void RegisterServerFamily(CommandRegistry& r) {
  auto add = [&](const char* name, int arity, uint32_t flags, FiberFn fn) {
    CommandSpec s{name, arity, flags | kCmdServer, 0, 0, 0};
    s.fiber_fn = fn;
    s.group = "server";
    r.Add(std::move(s));
  };
  add("info", -1, kCmdLoading | kCmdStale, InfoFiber);
  add("config", -2, kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale, ConfigFiber);
  r.FindMutable("config")->subcommands = &kConfigSubcommands;
  {
    CommandSpec s{"client", -2, kCmdNoScript | kCmdLoading | kCmdStale | kCmdConnection, 0, 0, 0};
    s.conn_fn = ClientConn;
    s.fiber_fn = ClientFiber;
    s.needs_fiber = ClientNeedsFiber;
    s.subcommands = &kClientSubcommands;
    s.group = "connection";
    r.Add(std::move(s));
  }
  add("shutdown", -1,
      kCmdAdmin | kCmdNoScript | kCmdNoMulti | kCmdLoading | kCmdStale | kCmdAllowBusy,
      ShutdownFiber);
}

}  // namespace strata
