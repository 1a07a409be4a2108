#include "server/server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>

#include "core/split_args.h"
#include "server/base/log.h"
#include "server/base/version.h"
#include "server/cluster/cluster_bus.h"
#include "server/cluster/cluster_service.h"
#include "server/commands/families.h"
#include "server/engine/engine.h"
#include "server/engine/replication_state.h"
#include "server/engine/worker.h"
#include "server/metrics/metrics_exporter.h"
#include "server/net/event_loop.h"
#include "server/persistence/failover.h"
#include "server/persistence/repl_master.h"
#include "server/persistence/replica_link.h"
#include "server/persistence/snapshot.h"
#include "server/persistence/tier_service.h"
#include "server/sd_notify.h"

namespace strata {

uint32_t UsableCpuCount() {
  cpu_set_t set;
  uint32_t n = 1;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) n = static_cast<uint32_t>(CPU_COUNT(&set));
  // cgroup v2 quota: "max 100000" or "<quota> <period>".
  std::ifstream f("/sys/fs/cgroup/cpu.max");
  std::string quota, period;
  if (f >> quota >> period && quota != "max") {
    double q = std::atof(quota.c_str());
    double p = std::atof(period.c_str());
    if (q > 0 && p > 0) {
      uint32_t limit = static_cast<uint32_t>(std::ceil(q / p));
      if (limit >= 1 && limit < n) n = limit;
    }
  }
  return n == 0 ? 1 : n;
}

namespace {

// 40 random hex digits: a run id, a cluster node or shard id.
std::string RandomId40() {
  std::random_device rd;
  static const char kHex[] = "0123456789abcdef";
  std::string id;
  for (int i = 0; i < 40; i++) id += kHex[rd() % 16];
  return id;
}

}  // namespace

Server::Server(Config* config) : config_(config), run_id_(RandomId40()) {}

Server::~Server() {
  repl_master_.reset();
  replica_.reset();
  snapshots_.reset();
  tier_.reset();  // the workers have stopped; the keyspaces it hooks go with the engine
  engine_.reset();
  for (int fd : listen_fds_) close(fd);
  if (!unix_path_.empty()) unlink(unix_path_.c_str());
}

int Server::exit_code() const { return engine_ ? engine_->exit_code() : 0; }

bool Server::OpenListeners(std::string* error) {
  port_ = static_cast<int>(config_->Int("port"));
  if (!OpenUnixListener(error)) return false;
  // As Redis: port 0 with a Unix socket listens on the socket only.
  if (port_ == 0 && !unix_path_.empty()) return true;
  return OpenTcpListeners(port_, &listen_fds_, error);
}

bool Server::OpenUnixListener(std::string* error) {
  std::string path = config_->String("unixsocket");
  if (path.empty()) return true;
  sockaddr_un sa{};
  if (path.size() >= sizeof(sa.sun_path)) {
    *error = "unixsocket: path too long (at most " + std::to_string(sizeof(sa.sun_path) - 1) +
             " bytes): " + path;
    return false;
  }
  sa.sun_family = AF_UNIX;
  std::memcpy(sa.sun_path, path.data(), path.size());
  // A socket left by a process that died is replaced; one that still answers is another
  // server's, and so is refused. Anything else at the path is left alone (bind fails).
  struct stat st {};
  if (lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) {
    int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    bool live = probe >= 0 && connect(probe, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) == 0;
    if (probe >= 0) close(probe);
    if (live) {
      *error = "Failed opening Unix socket: another server listens on " + path;
      return false;
    }
    unlink(path.c_str());
  }
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *error = std::string("socket: ") + std::strerror(errno);
    return false;
  }
  int backlog = static_cast<int>(config_->Int("tcp-backlog"));
  if (bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0 || listen(fd, backlog) != 0) {
    int err = errno;
    close(fd);
    *error = "Failed opening Unix socket " + path + ": " + std::strerror(err);
    return false;
  }
  unix_path_ = path;
  listen_fds_.push_back(fd);
  // unixsocketperm holds the octal digits as written (700 is rwx------).
  std::string digits = std::to_string(config_->Int("unixsocketperm"));
  auto mode = static_cast<mode_t>(std::strtol(digits.c_str(), nullptr, 8));
  if (mode != 0 && chmod(path.c_str(), mode) != 0) {
    *error =
        "Failed to set the Unix socket's permissions (" + digits + "): " + std::strerror(errno);
    return false;
  }
  return true;
}

bool Server::OpenTcpListeners(int port, std::vector<int>* fds, std::string* error) {
  std::vector<std::string> addrs;
  if (!SplitArgs(config_->String("bind"), &addrs) || addrs.empty()) {
    *error = "bind: no address given";
    return false;
  }
  int backlog = static_cast<int>(config_->Int("tcp-backlog"));
  for (std::string addr : addrs) {
    bool optional = false;
    if (!addr.empty() && addr[0] == '-') {  // Redis: "-::1" means "skip if unavailable"
      optional = true;
      addr = addr.substr(1);
    }
    if (addr == "*") addr = "0.0.0.0";
    sockaddr_storage ss{};
    socklen_t len = 0;
    int family = AF_INET;
    if (addr.find(':') != std::string::npos) {
      family = AF_INET6;
      auto* a6 = reinterpret_cast<sockaddr_in6*>(&ss);
      a6->sin6_family = AF_INET6;
      a6->sin6_port = htons(static_cast<uint16_t>(port));
      if (inet_pton(AF_INET6, addr.c_str(), &a6->sin6_addr) != 1) {
        *error = "Invalid bind address '" + addr + "'";
        return false;
      }
      len = sizeof(sockaddr_in6);
    } else {
      auto* a4 = reinterpret_cast<sockaddr_in*>(&ss);
      a4->sin_family = AF_INET;
      a4->sin_port = htons(static_cast<uint16_t>(port));
      if (inet_pton(AF_INET, addr.c_str(), &a4->sin_addr) != 1) {
        *error = "Invalid bind address '" + addr + "'";
        return false;
      }
      len = sizeof(sockaddr_in);
    }
    int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      *error = std::string("socket: ") + std::strerror(errno);
      return false;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    if (bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0 || listen(fd, backlog) != 0) {
      int err = errno;
      close(fd);
      if (optional) continue;
      *error = "Failed listening on port " + std::to_string(port) + " (tcp), address " + addr +
               ": " + std::strerror(err);
      return false;
    }
    fds->push_back(fd);
  }
  if (fds->empty()) {
    *error = "Failed listening on any address";
    return false;
  }
  return true;
}

bool Server::Start(std::string* error) {
  int64_t start_time_ms = WallClockMs();
  uint32_t threads = static_cast<uint32_t>(config_->Int("threads"));
  if (threads == 0) threads = UsableCpuCount();
  std::string be = config_->String("io-backend");
  IoBackend backend = be == "io_uring" ? IoBackend::kIoUring
                      : be == "epoll"  ? IoBackend::kEpoll
                                       : IoBackend::kAuto;
  if (!OpenListeners(error)) return false;
  engine_ = std::make_unique<Engine>(config_, threads);
  ProcessInfo& process = engine_->process();
  process.run_id = run_id_;
  process.cluster_emulated = config_->String("cluster-enabled") == "emulated";
  process.cluster_yes = config_->String("cluster-enabled") == "yes";
  process.cluster_node_id = RandomId40();
  process.cluster_shard_id = RandomId40();
  process.executable = executable_;
  process.port = port_;
  process.start_time_ms = start_time_ms;
  if (!config_->String("spill-dir").empty() && !config_->String("replicaof").empty()) {
    *error =
        "replicaof is not available with spill-dir set (a full sync reloads the data, "
        "which the spill tier cannot take yet)";
    return false;
  }
  if (process.cluster_yes) {
    if (!config_->String("replicaof").empty()) {
      *error = "replicaof directive not allowed in cluster mode";
      return false;
    }
    cluster_ = std::make_unique<ClusterService>(engine_.get());
    if (!cluster_->Load(error)) return false;
    engine_->AddService(cluster_.get());
  }
  if (!config_->String("spill-dir").empty()) {
    // Before the snapshot manager: a worker's store is in place before its load starts.
    tier_ = std::make_unique<TierService>(engine_.get());
    engine_->AddService(tier_.get());
  }
  snapshots_ = std::make_unique<SnapshotManager>(engine_.get());
  snapshots_->set_tier(tier_.get());
  engine_->AddService(snapshots_.get());
  replica_ = std::make_unique<ReplicaLink>(engine_.get(), snapshots_.get());
  engine_->AddService(replica_.get());
  repl_master_ = std::make_unique<ReplMaster>(engine_.get(), snapshots_.get());
  engine_->AddService(repl_master_.get());
  failover_ =
      std::make_unique<FailoverCoordinator>(engine_.get(), repl_master_.get(), replica_.get());
  engine_->AddService(failover_.get());
  Status load = snapshots_->PrepareLoad();
  if (!load.ok()) {
    *error = "Can't load the snapshot: " + load.message() +
             " (refusing to start; set snapshot-on-corrupt start-empty to start with no data)";
    return false;
  }
  if (tier_ != nullptr) {
    tier_->SetRestore(snapshots_->ColdCheckpointsToLoad());
    Status s = tier_->Prepare();
    if (!s.ok()) {
      *error = "Can't open the spill store: " + s.message();
      return false;
    }
  }
  // One worker per CPU of the affinity mask, when there are enough CPUs: a shard's data
  // then stays in one core's caches.
  std::vector<int> cpus;
  cpu_set_t set;
  if (config_->Bool("thread-affinity") && sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int c = 0; c < CPU_SETSIZE; c++) {
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
    }
  }
  if (!StartAcl(*config_, error)) return false;
  if (!engine_->Start(backend, listen_fds_, cpus, error)) return false;
  if (cluster_ != nullptr) {
    // The cluster bus, on the same addresses, at the bus port.
    std::vector<int> bus_fds;
    int cport = static_cast<int>(config_->Int("cluster-port"));
    if (cport == 0) cport = port_ + 10000;
    bus_ = std::make_unique<ClusterBus>(engine_.get(), cluster_.get());
    // A cluster node's replication follows the cluster: CLUSTER REPLICATE, a failover
    // won, slots lost to another master.
    ClusterBus::ReplicationHooks hooks;
    hooks.follow = [this](const std::string& ip, int port) { replica_->Start(ip, port); };
    hooks.stop = [this] {
      replica_->Stop();
      if (engine_->replication().is_replica()) engine_->replication().BecomeMaster();
    };
    bus_->set_replication_hooks(std::move(hooks));
    if (!OpenTcpListeners(cport, &bus_fds, error) || !bus_->Start(std::move(bus_fds), error)) {
      for (int fd : bus_fds) close(fd);
      engine_->Stop();
      return false;
    }
    cluster_->set_bus(bus_.get());
    // A replica in its nodes.conf replicates its master again.
    std::string master_ip;
    int master_port = 0;
    cluster_->Read([&](const ClusterState& st) {
      const ClusterNode& me = st.myself();
      if (me.is_master() || me.master_id.empty()) return;
      if (const ClusterNode* m = st.FindNode(me.master_id)) {
        master_ip = m->ip;
        master_port = m->port;
      }
    });
    if (!master_ip.empty() && master_port > 0) replica_->Start(master_ip, master_port);
  }
  if (int64_t mport = config_->Int("metrics-port"); mport > 0) {
    MetricsServer::Options mo;
    mo.bind = config_->String("metrics-bind");
    mo.port = static_cast<int>(mport);
    mo.server_port = port_;
    // The first bind address, as a client reaches it (a wildcard: loopback).
    std::vector<std::string> words;
    SplitArgs(config_->String("bind"), &words);
    std::string host = words.empty() ? "127.0.0.1" : words[0];
    if (!host.empty() && host[0] == '-') host.erase(0, 1);
    if (host == "*" || host == "0.0.0.0") host = "127.0.0.1";
    if (host == "::" || host == "::*") host = "::1";
    mo.server_host = host;
    mo.password = config_->String("requirepass");
    metrics_ = std::make_unique<MetricsServer>();
    if (!metrics_->Start(mo, error)) {
      engine_->Stop();
      return false;
    }
  }
  if (std::string master = config_->String("replicaof"); !master.empty()) {
    size_t sp = master.find(' ');
    replica_->Start(master.substr(0, sp), std::atoi(master.c_str() + sp + 1));
  }
  LogNotice("strata %s started: %u worker threads, io_backend=%s, port %d", STRATA_VERSION, threads,
            process.io_backend.c_str(), port_);
  LogNotice("Ready to accept connections tcp");
  std::string notify_error;
  if (!SdNotify("READY=1\nSTATUS=Ready to accept connections", &notify_error)) {
    LogWarning("Can't notify systemd: %s", notify_error.c_str());
  }
  return true;
}

void Server::RunUntilSignal() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  for (;;) {
    int sig = 0;
    sigwait(&set, &sig);
    LogNotice("Received %s scheduling shutdown...", sig == SIGINT ? "SIGINT" : "SIGTERM");
    if (engine_->exit_code() != 0 || engine_->shutdown_save_done() || snapshots_->loading() ||
        !snapshots_->AutoSaveEnabled()) {
      break;
    }
    LogNotice("Saving the final snapshot before exiting.");
    Status s = snapshots_->SaveAndWait(SnapshotManager::Reason::kShutdown);
    if (s.ok()) break;
    LogWarning("Error trying to save the DB, can't exit: %s", s.message().c_str());
  }
  std::string notify_error;
  if (!SdNotify("STOPPING=1", &notify_error)) {
    LogWarning("Can't notify systemd: %s", notify_error.c_str());
  }
  if (metrics_ != nullptr) metrics_->Stop();
  if (bus_ != nullptr) {
    cluster_->set_bus(nullptr);  // workers stop reaching it before its thread goes
    bus_->Stop();
  }
  replica_->Shutdown();
  repl_master_->Shutdown();
  engine_->Stop();
  LogNotice("strata is now ready to exit, bye bye...");
}

}  // namespace strata
