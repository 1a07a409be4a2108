// Config::AddRedisOnlySettings: the Redis 7.0 settings strata accepts so that a
// redis.conf written for Redis loads (see config.h and docs/ARCHITECTURE.md "Config").
#include <string>
#include <string_view>
#include <vector>

#include "core/string_util.h"
#include "server/base/config.h"

namespace strata {

// Redis 7.0 settings for what strata does its own way or does not have, so that a
// redis.conf written for Redis (Debian's included) loads. Each accepts the values that
// describe what strata does; a value that would ask for something strata lacks is
// refused with the reason, never accepted and ignored.
void Config::AddRedisOnlySettings() {
  // Accepted as any valid value: tuning of Redis internals strata does not share.
  auto tuning = [this](const char* name, Kind kind, const char* def, const char* why) {
    return &Add(name, kind, def, true, std::string("accepted for compatibility; ") + why);
  };
  // Accepted only as `allowed` (case-insensitive); other values are refused with `why`.
  auto only = [this](const char* name, Kind kind, const char* def, std::vector<std::string> allowed,
                     const char* why) {
    Option& o = Add(name, kind, def, true,
                    std::string("accepted for compatibility as ") + allowed[0] + "; " + why);
    std::string reason = why;
    o.validate = [allowed, reason](std::string_view v) -> std::string {
      for (const std::string& a : allowed) {
        if (EqualsIgnoreCase(v, a)) return "";
      }
      return reason;
    };
    return &o;
  };
  Add("stop-writes-on-bgsave-error", Kind::kBool, "yes", true,
      "while save rules are set and the last snapshot failed, writes and PING get -MISCONF "
      "until a snapshot succeeds");
  tuning("proc-title-template", Kind::kString, "{title} {listen-addr} {server-mode}",
         "strata does not rewrite its process title");
  tuning("rdb-del-sync-files", Kind::kBool, "no",
         "a full resync's image is never left in dir (sent as it is made, or through an "
         "unlinked file)");
  tuning("repl-diskless-sync-max-replicas", Kind::kInt, "0",
         "each replica's full resync starts at once");
  only("repl-diskless-load", Kind::kString, "disabled", {"disabled", "on-empty-db", "swapdb"},
       "repl-diskless-load must be disabled, on-empty-db or swapdb")
      ->help =
      "accepted for compatibility; a replica always takes its master's image into a "
      "temporary file and loads it from there";
  tuning("repl-disable-tcp-nodelay", Kind::kBool, "no",
         "replication sockets keep TCP_NODELAY, as every socket here");
  {
    Option* o = tuning("replica-lazy-flush", Kind::kBool, "no",
                       "the flush before a replica's load is strata's own");
    Alias(*o, "slave-lazy-flush");
  }
  only("oom-score-adj", Kind::kString, "no", {"no"},
       "oom-score-adj is not supported by strata (set the score from the service manager, "
       "e.g. systemd's OOMScoreAdjust=)");
  tuning("oom-score-adj-values", Kind::kString, "0 200 800", "used only with oom-score-adj");
  tuning("disable-thp", Kind::kBool, "yes",
         "strata never forks, the cost transparent huge pages have for Redis");
  for (const char* name :
       {"aof-load-truncated", "aof-use-rdb-preamble", "aof-rewrite-incremental-fsync"}) {
    tuning(name, Kind::kBool, "yes",
           "used only with appendonly yes, which strata does not support");
  }
  for (const char* name :
       {"no-appendfsync-on-rewrite", "aof-timestamp-enabled", "aof-disable-auto-gc"}) {
    tuning(name, Kind::kBool, "no", "used only with appendonly yes, which strata does not support");
  }
  tuning("appendfilename", Kind::kString, "appendonly.aof",
         "used only with appendonly yes, which strata does not support");
  tuning("appenddirname", Kind::kString, "appendonlydir",
         "used only with appendonly yes, which strata does not support");
  Option* fsync = tuning("appendfsync", Kind::kEnum, "everysec",
                         "used only with appendonly yes, which strata does not support");
  fsync->enum_values = {"always", "everysec", "no"};
  tuning("auto-aof-rewrite-percentage", Kind::kInt, "100",
         "used only with appendonly yes, which strata does not support");
  tuning("auto-aof-rewrite-min-size", Kind::kMemory, "64mb",
         "used only with appendonly yes, which strata does not support");
  tuning("stream-node-max-bytes", Kind::kMemory, "4096", "strata's stream nodes are its own");
  tuning("stream-node-max-entries", Kind::kInt, "100", "strata's stream nodes are its own");
  tuning("activerehashing", Kind::kBool, "yes", "strata's tables grow a segment at a time");
  tuning("dynamic-hz", Kind::kBool, "yes", "hz is what the timers run at");
  tuning("rdb-save-incremental-fsync", Kind::kBool, "yes",
         "a snapshot's files are written and fsynced by strata's own rules");
  tuning("jemalloc-bg-thread", Kind::kBool, "yes", "strata does not use jemalloc");
  tuning("crash-log-enabled", Kind::kBool, "yes", "strata writes no crash report of its own");
  tuning("crash-memcheck-enabled", Kind::kBool, "yes", "strata runs no memory test after a crash");
  {
    Option* o = tuning("active-expire-effort", Kind::kInt, "1",
                       "each worker's expiry cycle has its own fixed budget per tick");
    o->min = 1;
    o->max = 10;
  }
  only("activedefrag", Kind::kBool, "no", {"no"},
       "Active defragmentation cannot be enabled: strata has no active defragmentation");
  for (const char* name :
       {"active-defrag-cycle-min", "active-defrag-cycle-max", "active-defrag-threshold-lower",
        "active-defrag-threshold-upper", "active-defrag-max-scan-fields"}) {
    tuning(name, Kind::kInt, "0", "used only with activedefrag yes, which strata does not have");
  }
  tuning("active-defrag-ignore-bytes", Kind::kMemory, "100mb",
         "used only with activedefrag yes, which strata does not have");
  {
    Option* o = tuning("io-threads", Kind::kInt, "1",
                       "every worker does its own clients' I/O (--threads sets the workers)");
    o->min = 1;
    o->max = 128;
  }
  tuning("io-threads-do-reads", Kind::kBool, "no",
         "every worker does its own clients' I/O (--threads sets the workers)");
  Option* sup = tuning("supervised", Kind::kEnum, "no",
                       "strata tells systemd it is ready whenever NOTIFY_SOCKET is set");
  sup->enum_values = {"no", "upstart", "systemd", "auto"};
  only("syslog-enabled", Kind::kBool, "no", {"no"},
       "syslog-enabled yes is not supported by strata (it logs to logfile or stdout)");
  tuning("syslog-ident", Kind::kString, "redis", "used only with syslog-enabled yes");
  tuning("syslog-facility", Kind::kString, "local0", "used only with syslog-enabled yes");
  only("tls-port", Kind::kInt, "0", {"0"}, "TLS is not supported by strata");
  for (const char* name : {"tls-replication", "tls-cluster"}) {
    only(name, Kind::kBool, "no", {"no"}, "TLS is not supported by strata");
  }
  only("tls-auth-clients", Kind::kString, "yes", {"yes", "no", "optional"},
       "tls-auth-clients must be yes, no or optional")
      ->help = "accepted for compatibility; TLS is not supported by strata";
  for (const char* name :
       {"tls-cert-file", "tls-key-file", "tls-key-file-pass", "tls-client-cert-file",
        "tls-client-key-file", "tls-client-key-file-pass", "tls-dh-params-file", "tls-ca-cert-file",
        "tls-ca-cert-dir", "tls-protocols", "tls-ciphers", "tls-ciphersuites"}) {
    tuning(name, Kind::kString, "", "TLS is not supported by strata");
  }
  tuning("tls-prefer-server-ciphers", Kind::kBool, "no", "TLS is not supported by strata");
  tuning("tls-session-caching", Kind::kBool, "yes", "TLS is not supported by strata");
  tuning("tls-session-cache-size", Kind::kInt, "20480", "TLS is not supported by strata");
  tuning("tls-session-cache-timeout", Kind::kInt, "300", "TLS is not supported by strata");
  Add("unixsocket", Kind::kString, "", false,
      "also listen on this Unix socket path (with port 0, only on it); a stale socket left "
      "there is replaced, a live one refused");
  Add("unixsocketperm", Kind::kInt, "0", false,
      "the Unix socket's permissions, in octal as chmod takes them (0 = the umask's)")
      .validate = [](std::string_view v) -> std::string {
    return v.find_first_not_of("01234567") == std::string_view::npos
               ? ""
               : "unixsocketperm must be octal digits";
  };
  for (const char* name : {"shutdown-on-sigint", "shutdown-on-sigterm"}) {
    only(name, Kind::kString, "default", {"default"},
         "only default is supported by strata (a signal saves when save rules are set, as "
         "SHUTDOWN does)");
  }
  tuning("shutdown-timeout", Kind::kInt, "10", "strata does not wait for replicas to catch up");
  {
    Option& o = Add("min-replicas-to-write", Kind::kInt, "0", true,
                    "a master refuses writes (-NOREPLICAS) while fewer replicas than this "
                    "are online and acknowledged within min-replicas-max-lag seconds; 0 = "
                    "off");
    Alias(o, "min-slaves-to-write");
    Option& lag = Add("min-replicas-max-lag", Kind::kInt, "10", true,
                      "seconds since a replica's last acknowledgement within which it counts "
                      "for min-replicas-to-write; 0 turns min-replicas-to-write off");
    Alias(lag, "min-slaves-max-lag");
  }
  {
    Option& o = Add("propagation-error-behavior", Kind::kEnum, "ignore", true,
                    "a command of the master's stream that fails on a replica is logged "
                    "and counted (INFO unexpected_error_replies); panic or "
                    "panic-on-replicas (the same: strata has no AOF) also stop a read-only "
                    "replica at once");
    o.enum_values = {"ignore", "panic", "panic-on-replicas"};
  }
  tuning("replica-ignore-disk-write-errors", Kind::kBool, "no",
         "a replica applies its master's writes whatever its own saves do");
  only("enable-module-command", Kind::kString, "no", {"no"}, "strata does not load modules");
  {
    Option* o = only("enable-protected-configs", Kind::kString, "no", {"no", "yes", "local"},
                     "enable-protected-configs must be no, yes or local");
    o->help =
        "accepted for compatibility; dbfilename may be set with CONFIG SET, dir only at "
        "start";
  }
  tuning("ignore-warnings", Kind::kString, "", "strata's start-up checks are its own");
  only("socket-mark-id", Kind::kInt, "0", {"0"}, "socket-mark-id is not supported by strata");
  only("bind-source-addr", Kind::kString, "", {""}, "bind-source-addr is not supported by strata");
  tuning("cluster-allow-pubsubshard-when-down", Kind::kBool, "yes",
         "shard channels are served while the node owns their slot");
  only("cluster-announce-bus-port", Kind::kInt, "0", {"0"},
       "set cluster-port for the bus port CLUSTER NODES shows");
  only("cluster-announce-tls-port", Kind::kInt, "0", {"0"}, "TLS is not supported by strata");
  only("cluster-preferred-endpoint-type", Kind::kString, "ip", {"ip"},
       "only ip is supported by strata");
  for (const char* name :
       {"server_cpulist", "bio_cpulist", "aof_rewrite_cpulist", "bgsave_cpulist"}) {
    tuning(name, Kind::kString, "", "pin the workers with --cpus");
  }
}

}  // namespace strata
