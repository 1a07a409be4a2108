#include "server/cluster/cluster_service.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <random>

#include "server/base/config.h"
#include "server/base/log.h"
#include "server/engine/notify.h"
#include "server/engine/task.h"
#include "server/engine/worker.h"
#include "storage/file_io.h"

namespace strata {

std::string NewNodeId() {
  std::random_device rd;
  static const char kHex[] = "0123456789abcdef";
  std::string id;
  for (int i = 0; i < 40; i++) id += kHex[rd() % 16];
  return id;
}

ClusterService::ClusterService(Engine* engine) : engine_(engine) {}

ClusterService::~ClusterService() {
  if (lock_fd_ >= 0) close(lock_fd_);
}

bool ClusterService::Load(std::string* error) {
  const Config& cfg = engine_->config();
  if (cfg.Int("cluster-port") == 0 && engine_->process().port > 65535 - 10000) {
    *error = "port " + std::to_string(engine_->process().port) +
             " is too high for cluster-enabled yes: the cluster bus listens on port + 10000, "
             "which must be at most 65535 (use a port of at most 55535, or set cluster-port)";
    return false;
  }
  std::string file = cfg.String("cluster-config-file");
  // The directory the file is in (fsynced after each rename) and its name.
  std::string full = !file.empty() && file[0] == '/' ? file : JoinPath(cfg.String("dir"), file);
  size_t slash = full.rfind('/');
  if (slash == std::string::npos) {
    dir_ = ".";
    name_ = full;
  } else {
    dir_ = slash == 0 ? "/" : full.substr(0, slash);
    name_ = full.substr(slash + 1);
  }
  path_ = JoinPath(dir_, name_);
  // The lock is on a file beside it: the file itself is replaced by a rename at each
  // save, which would leave a lock on it behind on the old inode.
  std::string lock_path = path_ + ".lock";
  lock_fd_ = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ < 0) {
    *error =
        "cannot open the cluster config file's lock " + lock_path + ": " + std::strerror(errno);
    return false;
  }
  if (flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    *error = errno == EWOULDBLOCK
                 ? "the cluster config file " + path_ +
                       " is already used by another cluster node; give each node its own "
                       "cluster-config-file"
                 : "cannot lock the cluster config file " + path_ + ": " + std::strerror(errno);
    return false;
  }
  std::string text;
  Status s = FileExists(path_) ? ReadWholeFile(path_, &text) : Status::Ok();
  if (!s.ok()) {
    *error = "cannot read the cluster config file " + path_ + ": " + s.ToString();
    return false;
  }
  std::lock_guard<std::mutex> l(mu_);
  if (text.find_first_not_of(" \r\n\t") == std::string::npos) {
    state_ = std::make_unique<ClusterState>(NewNodeId());
    LogNotice("No cluster configuration found, I'm %s", state_->myself().id.c_str());
  } else {
    std::string why;
    if (!ClusterState::Parse(text, &state_, &why)) {
      *error = "the cluster config file " + path_ + " is not valid (" + why + ")";
      return false;
    }
    LogNotice("Node configuration loaded, I'm %.40s", state_->myself().id.c_str());
    // Saved ping and pong times are from before the restart: as Redis, a non-zero one
    // counts from now (a stale ping would make a node PFAIL at the first tick).
    int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
    for (const auto& n : state_->nodes()) {
      ClusterNode* node = state_->FindBySerial(n->serial);
      if (node->ping_sent_ms != 0) node->ping_sent_ms = now;
      if (node->pong_received_ms != 0) node->pong_received_ms = now;
    }
  }
  ApplyAnnouncedLocked();
  std::string save_error = SaveLocked();
  if (!save_error.empty()) {
    *error = save_error;
    return false;
  }
  RebuildLocked();
  return true;
}

bool ClusterService::ApplyAnnouncedLocked() {
  const Config& cfg = engine_->config();
  ClusterNode& me = state_->myself();
  int port = static_cast<int>(cfg.Int("cluster-announce-port"));
  if (port == 0) port = engine_->process().port;
  int cport = static_cast<int>(cfg.Int("cluster-port"));
  if (cport == 0) cport = engine_->process().port + 10000;
  std::string ip = cfg.String("cluster-announce-ip");
  if (ip.empty()) ip = me.ip;  // learned from the bus, or none yet
  std::string hostname = cfg.String("cluster-announce-hostname");
  if (me.port == port && me.cport == cport && me.ip == ip && me.hostname == hostname) return false;
  me.port = port;
  me.cport = cport;
  me.ip = ip;
  me.hostname = hostname;
  return true;
}

std::string ClusterService::SaveLocked() {
  Status s = WriteFileAtomically(dir_, name_, state_->Serialize());
  if (!s.ok()) {
    LogWarning("Could not save the cluster config file %s: %s", path_.c_str(),
               s.ToString().c_str());
    return "ERR error saving the cluster node config: " + s.ToString();
  }
  return "";
}

void ClusterService::RebuildLocked() {
  const Config& cfg = engine_->config();
  built_full_coverage_ = cfg.Int("cluster-require-full-coverage") != 0;
  built_reads_when_down_ = cfg.Int("cluster-allow-reads-when-down") != 0;
  // Published before the mutex is released: whoever reads the state after this sees a
  // layout no older at every worker (routing_board.h).
  engine_->routing_board().Publish(
      state_->BuildRouting(built_full_coverage_, built_reads_when_down_));
}

std::string ClusterService::Change(const std::function<bool(ClusterState&, std::string*)>& fn,
                                   bool changed) {
  std::lock_guard<std::mutex> l(mu_);
  std::string error;
  if (!fn(*state_, &error)) return error;
  if (!changed) return "";
  RebuildLocked();
  return SaveLocked();
}

void ClusterService::BusUpdate(const std::function<GossipEffects*(ClusterState&)>& fn) {
  bool publish = false;
  {
    std::lock_guard<std::mutex> l(mu_);
    GossipEffects* fx = fn(*state_);
    if (fx == nullptr || (!fx->save && !fx->routing)) return;
    if (fx->routing) {
      RebuildLocked();
      publish = true;
    }
    if (fx->save) SaveLocked();  // a failure is logged; the state stays in memory
  }
  if (!publish) return;
  for (uint32_t i = 0; i < engine_->shard_count(); i++) {
    engine_->worker(i).PostExternal(MakeTask([this, i] { InstallLatest(engine_->worker(i)); }));
  }
}

void ClusterService::Read(const std::function<void(const ClusterState&)>& fn) const {
  std::lock_guard<std::mutex> l(mu_);
  fn(*state_);
}

std::string ClusterService::Save() {
  std::lock_guard<std::mutex> l(mu_);
  return SaveLocked();
}

namespace {

void DropKeysOn(Worker& w, const std::vector<uint32_t>& slots) {
  Keyspace& ks = w.keyspace();
  if (ks.slot_index() == nullptr) return;
  std::vector<std::string> keys;
  for (uint32_t slot : slots) {
    ks.ForEachKeyInSlot(slot, [&](Entry* e) {
      keys.emplace_back(e->Key());
      return true;
    });
  }
  size_t dropped = 0;
  for (const std::string& k : keys) {
    if (!ks.Delete(0, k)) continue;
    dropped++;
    NotifyKeyspaceEvent(kNotifyGeneric, "del", k, 0);
    if (w.repl_on()) w.repl_feed().KeyDeleted(0, k, ks.changes());
  }
  if (dropped != 0) {
    LogWarning("Cluster: deleted %zu keys of slots another master now serves (shard %u)", dropped,
               w.index());
  }
}

}  // namespace

void ClusterService::DropKeysInSlots(std::vector<uint32_t> slots) {
  auto shared = std::make_shared<const std::vector<uint32_t>>(std::move(slots));
  for (uint32_t i = 0; i < engine_->shard_count(); i++) {
    engine_->worker(i).PostExternal(
        MakeTask([this, i, shared] { DropKeysOn(engine_->worker(i), *shared); }));
  }
}

void ClusterService::InstallLatest(Worker& w) { w.TakeLatestRouting(); }

void ClusterService::OnTimer(Worker& w) {
  const Config& cfg = engine_->config();
  bool full = cfg.Int("cluster-require-full-coverage") != 0;
  bool reads = cfg.Int("cluster-allow-reads-when-down") != 0;
  {
    std::lock_guard<std::mutex> l(mu_);
    bool announced = ApplyAnnouncedLocked();
    if (announced) SaveLocked();
    if (!announced && full == built_full_coverage_ && reads == built_reads_when_down_) return;
    RebuildLocked();
  }
  for (uint32_t i = 0; i < engine_->shard_count(); i++) {
    w.Post(i, MakeTask([this, i] { InstallLatest(engine_->worker(i)); }));
  }
}

}  // namespace strata
