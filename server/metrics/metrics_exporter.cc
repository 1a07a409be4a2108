#include "server/metrics/metrics_exporter.h"

#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <vector>

#include "server/base/log.h"

namespace strata {
namespace {

constexpr size_t kMaxRequestBytes = 8192;
constexpr int kIoTimeoutMs = 2000;
constexpr size_t kMaxInfoBytes = 64 << 20;

// ---- the Prometheus text ----

struct Family {
  std::string type;  // gauge or counter
  std::string help;
  std::vector<std::string> samples;  // "name{labels} value"
};

class Exposition {
 public:
  void Add(const std::string& name, const char* type, const char* help, const std::string& labels,
           const std::string& value) {
    auto it = index_.find(name);
    if (it == index_.end()) {
      it = index_.emplace(name, families_.size()).first;
      families_.push_back({name, Family{type, help, {}}});
    }
    families_[it->second].second.samples.push_back(
        name + (labels.empty() ? "" : "{" + labels + "}") + " " + value);
  }
  std::string Text() const {
    std::string out;
    for (const auto& [name, f] : families_) {
      out += "# HELP " + name + " " + f.help + "\n";
      out += "# TYPE " + name + " " + f.type + "\n";
      for (const std::string& s : f.samples) out += s + "\n";
    }
    return out;
  }

 private:
  std::map<std::string, size_t> index_;
  std::vector<std::pair<std::string, Family>> families_;
};

// A label value with Prometheus's escapes.
std::string Label(std::string_view k, std::string_view v) {
  std::string out(k);
  out += "=\"";
  for (char ch : v) {
    if (ch == '\\' || ch == '"') {
      out += '\\';
      out += ch;
    } else if (ch == '\n') {
      out += "\\n";
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

bool IsNumber(std::string_view v) {
  if (v.empty()) return false;
  char* end = nullptr;
  std::string s(v);
  std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size();
}

std::string Scaled(std::string_view v, double div) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.17g", std::strtod(std::string(v).c_str(), nullptr) / div);
  return buf;
}

// "a=1,b=2" -> pairs.
std::map<std::string, std::string> SubFields(std::string_view v) {
  std::map<std::string, std::string> out;
  size_t pos = 0;
  while (pos < v.size()) {
    size_t comma = v.find(',', pos);
    if (comma == std::string_view::npos) comma = v.size();
    std::string_view kv = v.substr(pos, comma - pos);
    size_t eq = kv.find('=');
    if (eq != std::string_view::npos)
      out[std::string(kv.substr(0, eq))] = std::string(kv.substr(eq + 1));
    pos = comma + 1;
  }
  return out;
}

struct Simple {
  const char* field;
  const char* metric;
  const char* type;
  const char* help;
};

// INFO fields with a redis_exporter counterpart.
constexpr Simple kSimple[] = {
    {"uptime_in_seconds", "redis_uptime_in_seconds", "gauge", "Seconds since the start."},
    {"connected_clients", "redis_connected_clients", "gauge", "Client connections."},
    {"blocked_clients", "redis_blocked_clients", "gauge", "Clients in a blocking command."},
    {"tracking_clients", "redis_tracking_clients", "gauge", "Clients that track keys."},
    {"pubsub_clients", "redis_pubsub_clients", "gauge", "Clients with subscriptions."},
    {"maxclients", "redis_config_maxclients", "gauge", "maxclients."},
    {"used_memory", "redis_memory_used_bytes", "gauge", "used_memory."},
    {"used_memory_rss", "redis_memory_used_rss_bytes", "gauge", "used_memory_rss."},
    {"used_memory_peak", "redis_memory_used_peak_bytes", "gauge", "used_memory_peak."},
    {"used_memory_startup", "redis_memory_used_startup_bytes", "gauge", "used_memory_startup."},
    {"used_memory_dataset", "redis_memory_used_dataset_bytes", "gauge", "used_memory_dataset."},
    {"used_memory_lua", "redis_memory_used_lua_bytes", "gauge", "used_memory_lua."},
    {"used_memory_scripts", "redis_memory_used_scripts_bytes", "gauge", "used_memory_scripts."},
    {"maxmemory", "redis_memory_max_bytes", "gauge", "maxmemory."},
    {"mem_fragmentation_ratio", "redis_mem_fragmentation_ratio", "gauge",
     "mem_fragmentation_ratio."},
    {"mem_clients_normal", "redis_mem_clients_normal", "gauge", "mem_clients_normal."},
    {"loading", "redis_loading_dump_file", "gauge", "Whether a snapshot is being loaded."},
    {"rdb_changes_since_last_save", "redis_rdb_changes_since_last_save", "gauge",
     "Writes since the last snapshot."},
    {"rdb_bgsave_in_progress", "redis_rdb_bgsave_in_progress", "gauge",
     "Whether a snapshot is being written."},
    {"rdb_last_save_time", "redis_rdb_last_save_timestamp_seconds", "gauge",
     "Unix time of the last snapshot."},
    {"total_connections_received", "redis_connections_received_total", "counter",
     "Connections accepted."},
    {"total_commands_processed", "redis_commands_processed_total", "counter",
     "Commands processed."},
    {"rejected_connections", "redis_rejected_connections_total", "counter",
     "Connections refused (maxclients)."},
    {"total_net_input_bytes", "redis_net_input_bytes_total", "counter", "Bytes read."},
    {"total_net_output_bytes", "redis_net_output_bytes_total", "counter", "Bytes written."},
    {"instantaneous_ops_per_sec", "redis_instantaneous_ops_per_sec", "gauge",
     "Commands a second, over the last ~1.6 s."},
    {"instantaneous_input_kbps", "redis_instantaneous_input_kbps", "gauge",
     "KiB read a second, over the last ~1.6 s."},
    {"instantaneous_output_kbps", "redis_instantaneous_output_kbps", "gauge",
     "KiB written a second, over the last ~1.6 s."},
    {"expired_keys", "redis_expired_keys_total", "counter", "Keys expired."},
    {"evicted_keys", "redis_evicted_keys_total", "counter", "Keys evicted."},
    {"evicted_clients", "redis_evicted_clients_total", "counter", "Clients evicted."},
    {"keyspace_hits", "redis_keyspace_hits_total", "counter", "Lookups that found the key."},
    {"keyspace_misses", "redis_keyspace_misses_total", "counter", "Lookups that missed."},
    {"pubsub_channels", "redis_pubsub_channels", "gauge", "Channels with subscribers."},
    {"pubsub_patterns", "redis_pubsub_patterns", "gauge", "Patterns with subscribers."},
    {"total_error_replies", "redis_total_error_replies", "counter", "Error replies."},
    {"connected_slaves", "redis_connected_slaves", "gauge", "Connected replicas."},
    {"master_repl_offset", "redis_master_repl_offset", "gauge", "The replication offset."},
    {"second_repl_offset", "redis_second_repl_offset", "gauge",
     "Where the previous replication history ended."},
    {"slave_repl_offset", "redis_slave_repl_offset", "gauge",
     "A replica's offset in its master's stream."},
    {"master_last_io_seconds_ago", "redis_master_last_io_seconds_ago", "gauge",
     "Seconds since a replica last heard from its master."},
    {"master_sync_in_progress", "redis_master_sync_in_progress", "gauge",
     "Whether a replica is taking a full sync."},
    {"master_link_down_since_seconds", "redis_master_link_down_since_seconds", "gauge",
     "Seconds a replica's master link has been down."},
    {"slave_priority", "redis_slave_priority", "gauge", "replica-priority."},
    {"slave_read_only", "redis_slave_read_only", "gauge", "replica-read-only."},
    {"thread_count", "strata_threads", "gauge", "Worker threads (shards)."},
    {"mem_keys", "strata_keys", "gauge", "Keys in every database."},
    {"mem_bytes_per_key", "strata_bytes_per_key", "gauge", "used_memory per key."},
};

}  // namespace

std::string PrometheusFromInfo(std::string_view info) {
  Exposition ex;
  ex.Add("redis_up", "gauge", "Whether the server answered INFO.", "", "1");
  std::map<std::string, const Simple*> simple;
  for (const Simple& s : kSimple) simple[s.field] = &s;
  std::map<std::string, std::string> server;
  std::string role = "master";
  std::string link_status;
  std::string section;
  size_t pos = 0;
  while (pos < info.size()) {
    size_t nl = info.find('\n', pos);
    if (nl == std::string_view::npos) nl = info.size();
    std::string_view line = info.substr(pos, nl - pos);
    pos = nl + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    if (line[0] == '#') {
      section = std::string(line.substr(line.find_first_not_of("# ")));
      continue;
    }
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string k(line.substr(0, colon));
    std::string_view v = line.substr(colon + 1);
    if (section == "Server") server[k] = std::string(v);
    if (k == "role") role = std::string(v);
    if (k == "master_link_status") link_status = std::string(v);
    if (auto it = simple.find(k); it != simple.end()) {
      if (IsNumber(v))
        ex.Add(it->second->metric, it->second->type, it->second->help, "", std::string(v));
    } else if (k.rfind("cmdstat_", 0) == 0) {
      auto f = SubFields(v);
      std::string lbl = Label("cmd", k.substr(8));
      ex.Add("redis_commands_total", "counter", "Calls per command.", lbl, f["calls"]);
      ex.Add("redis_commands_duration_seconds_total", "counter", "Time spent per command.", lbl,
             Scaled(f["usec"], 1e6));
      if (f.count("rejected_calls"))
        ex.Add("redis_commands_rejected_calls_total", "counter", "Rejected calls per command.", lbl,
               f["rejected_calls"]);
      if (f.count("failed_calls"))
        ex.Add("redis_commands_failed_calls_total", "counter", "Failed calls per command.", lbl,
               f["failed_calls"]);
    } else if (k.rfind("errorstat_", 0) == 0) {
      auto f = SubFields(v);
      ex.Add("redis_errors_total", "counter", "Error replies per error code.",
             Label("err", k.substr(10)), f["count"]);
    } else if (section == "Keyspace" && k.rfind("db", 0) == 0) {
      auto f = SubFields(v);
      std::string lbl = Label("db", k);
      ex.Add("redis_db_keys", "gauge", "Keys per database.", lbl, f["keys"]);
      ex.Add("redis_db_keys_expiring", "gauge", "Keys with an expiry per database.", lbl,
             f["expires"]);
      ex.Add("redis_db_avg_ttl_seconds", "gauge", "Average TTL per database.", lbl,
             Scaled(f["avg_ttl"], 1000));
    } else if (k.rfind("mem_type_", 0) == 0) {
      auto f = SubFields(v);
      std::string lbl = Label("type", k.substr(9));
      ex.Add("strata_type_keys", "gauge", "Keys per type.", lbl, f["keys"]);
      ex.Add("strata_type_bytes", "gauge", "Value bytes per type.", lbl, f["bytes"]);
      ex.Add("strata_type_bytes_per_key", "gauge", "Value bytes per key, per type.", lbl,
             f["bytes_per_key"]);
    } else if (k.rfind("mem_shard_", 0) == 0) {
      auto f = SubFields(v);
      std::string lbl = Label("shard", k.substr(10));
      ex.Add("strata_shard_used_memory_bytes", "gauge", "used_memory per shard.", lbl, f["used"]);
      ex.Add("strata_shard_dataset_bytes", "gauge", "Dataset bytes per shard.", lbl, f["dataset"]);
      ex.Add("strata_shard_keys", "gauge", "Keys per shard.", lbl, f["keys"]);
      ex.Add("strata_shard_connections", "gauge", "Client connections per shard's worker.", lbl,
             f["connections"]);
    } else if ((k.rfind("snapshot_", 0) == 0 || section == "Tiered") && IsNumber(v)) {
      // Snapshot and spill figures, under their INFO names.
      std::string name = "strata_" + k;
      ex.Add(name, "gauge", "INFO field of the same name.", "", std::string(v));
    }
  }
  if (!link_status.empty()) {
    ex.Add("redis_master_link_up", "gauge", "Whether a replica's link to its master is up.", "",
           link_status == "up" ? "1" : "0");
  }
  ex.Add("strata_io_backend", "gauge", "The I/O backend in use.",
         Label("backend", server["io_backend"]), "1");
  ex.Add("redis_instance_info", "gauge", "Information about the server.",
         Label("redis_version", server["redis_version"]) + "," +
             Label("strata_version", server["strata_version"]) + "," +
             Label("redis_mode", server["redis_mode"]) + "," + Label("os", server["os"]) + "," +
             Label("role", role) + "," + Label("run_id", server["run_id"]) + "," +
             Label("tcp_port", server["tcp_port"]),
         "1");
  return ex.Text();
}

namespace {

void SetTimeouts(int fd) {
  timeval tv{kIoTimeoutMs / 1000, (kIoTimeoutMs % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

bool SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// A blocking RESP client for one INFO: connects, AUTHs when asked, reads the bulk reply.
class InfoClient {
 public:
  ~InfoClient() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool Connect(const std::string& host, int port) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res) != 0) return false;
    for (addrinfo* a = res; a != nullptr && fd_ < 0; a = a->ai_next) {
      int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
      if (fd < 0) continue;
      SetTimeouts(fd);
      if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
        fd_ = fd;
      } else {
        ::close(fd);
      }
    }
    freeaddrinfo(res);
    return fd_ >= 0;
  }
  // Sends a command; returns its reply's first line (without CRLF) in *line.
  bool Call(const std::vector<std::string>& args, std::string* line) {
    std::string req = "*" + std::to_string(args.size()) + "\r\n";
    for (const std::string& a : args) req += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
    return SendAll(fd_, req) && ReadLine(line);
  }
  bool ReadBytes(size_t n, std::string* out) {
    while (buf_.size() < n) {
      if (!Fill()) return false;
    }
    out->assign(buf_, 0, n);
    buf_.erase(0, n);
    return true;
  }

 private:
  bool Fill() {
    char tmp[65536];
    ssize_t n = ::recv(fd_, tmp, sizeof(tmp), 0);
    if (n < 0 && errno == EINTR) return true;
    if (n <= 0) return false;
    buf_.append(tmp, static_cast<size_t>(n));
    return true;
  }
  bool ReadLine(std::string* line) {
    for (;;) {
      size_t at = buf_.find("\r\n");
      if (at != std::string::npos) {
        line->assign(buf_, 0, at);
        buf_.erase(0, at + 2);
        return true;
      }
      if (buf_.size() > 1024 || !Fill()) return false;
    }
  }
  int fd_ = -1;
  std::string buf_;
};

bool FetchInfo(const MetricsServer::Options& o, std::string* info) {
  InfoClient c;
  if (!c.Connect(o.server_host, o.server_port)) return false;
  std::string line;
  if (!o.password.empty()) {
    if (!c.Call({"AUTH", o.password}, &line) || line.empty() || line[0] != '+') return false;
  }
  if (!c.Call({"INFO", "everything"}, &line) || line.size() < 2 || line[0] != '$') return false;
  long long len = std::strtoll(line.c_str() + 1, nullptr, 10);
  if (len < 0 || static_cast<size_t>(len) > kMaxInfoBytes) return false;
  return c.ReadBytes(static_cast<size_t>(len), info);
}

void Respond(int fd, const char* status, const std::string& body, bool head) {
  std::string out = std::string("HTTP/1.1 ") + status +
                    "\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
                    "Content-Length: " +
                    std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n";
  if (!head) out += body;
  SendAll(fd, out);
}

}  // namespace

MetricsServer::~MetricsServer() { Stop(); }

bool MetricsServer::Start(const Options& opts, std::string* error) {
  opts_ = opts;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* res = nullptr;
  std::string host = opts.bind == "*" ? "0.0.0.0" : opts.bind;
  int rc = getaddrinfo(host.c_str(), std::to_string(opts.port).c_str(), &hints, &res);
  if (rc != 0) {
    *error = "metrics-bind '" + opts.bind + "': " + gai_strerror(rc);
    return false;
  }
  std::string why = "no address";
  for (addrinfo* a = res; a != nullptr && listen_fd_ < 0; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 16) == 0) {
      listen_fd_ = fd;
    } else {
      why = std::strerror(errno);
      ::close(fd);
    }
  }
  freeaddrinfo(res);
  if (listen_fd_ < 0) {
    *error = "Could not listen for metrics on " + opts.bind + ":" + std::to_string(opts.port) +
             ": " + why;
    return false;
  }
  thread_ = std::thread([this] { Run(); });
  LogNotice("Serving Prometheus metrics on http://%s:%d/metrics", opts.bind.c_str(), opts.port);
  return true;
}

void MetricsServer::Stop() {
  if (!thread_.joinable()) return;
  stop_.store(true);
  thread_.join();
  ::close(listen_fd_);
  listen_fd_ = -1;
}

void MetricsServer::Run() {
  while (!stop_.load()) {
    pollfd p{listen_fd_, POLLIN, 0};
    int n = ::poll(&p, 1, 200);  // wakes to see stop_
    if (n <= 0) continue;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    SetTimeouts(fd);
    Serve(fd);
    ::close(fd);
  }
}

void MetricsServer::Serve(int fd) {
  std::string req;
  char tmp[2048];
  while (req.find("\r\n\r\n") == std::string::npos && req.size() < kMaxRequestBytes) {
    ssize_t n = ::recv(fd, tmp, sizeof(tmp), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // closed, or too slow
    req.append(tmp, static_cast<size_t>(n));
  }
  size_t sp1 = req.find(' ');
  size_t sp2 = sp1 == std::string::npos ? std::string::npos : req.find(' ', sp1 + 1);
  if (sp2 == std::string::npos) {
    Respond(fd, "400 Bad Request", "bad request\n", false);
    return;
  }
  std::string method = req.substr(0, sp1);
  std::string path = req.substr(sp1 + 1, sp2 - sp1 - 1);
  if (size_t q = path.find('?'); q != std::string::npos) path.resize(q);
  bool head = method == "HEAD";
  if (method != "GET" && !head) {
    Respond(fd, "405 Method Not Allowed", "only GET\n", false);
  } else if (path == "/metrics") {
    Respond(fd, "200 OK", Scrape(), head);
  } else if (path == "/") {
    Respond(fd, "200 OK", "strata: metrics are at /metrics\n", head);
  } else {
    Respond(fd, "404 Not Found", "not found\n", head);
  }
}

std::string MetricsServer::Scrape() {
  std::string info;
  if (!FetchInfo(opts_, &info)) {
    return "# HELP redis_up Whether the server answered INFO.\n# TYPE redis_up gauge\n"
           "redis_up 0\n";
  }
  return PrometheusFromInfo(info);
}

}  // namespace strata
