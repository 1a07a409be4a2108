#include "server/engine/replication_state.h"

#include <cstdio>
#include <random>

#include "server/base/config.h"

namespace strata {

std::string RandomHexId() {
  static constexpr char kHex[] = "0123456789abcdef";
  std::random_device rd;
  std::mt19937_64 rng((static_cast<uint64_t>(rd()) << 32) ^ rd());
  std::string id(40, '0');
  for (char& c : id) c = kHex[rng() & 15];
  return id;
}

ReplicationState::ReplicationState() : replid_(RandomHexId()), replid2_(40, '0') {}

void ReplicationState::RecomputeLocked() {
  bool replica = is_replica_.load(std::memory_order_acquire);
  uint8_t f = 0;
  if (replica && read_only_) f |= kRefuseWrites;
  if (replica && !serve_stale_ && link_.load(std::memory_order_acquire) != Link::kUp) {
    f |= kRefuseStale;
  }
  if (save_failed_ && stop_writes_on_save_error_) f |= kRefuseMisconf;
  if (!replica && min_replicas_ > 0 && good_replicas_ < min_replicas_) f |= kRefuseNoReplicas;
  dispatch_.store(f, std::memory_order_relaxed);
}

void ReplicationState::BecomeReplica(const std::string& host, int port, bool read_only) {
  std::lock_guard<std::mutex> l(mu_);
  host_ = host;
  port_ = port;
  read_only_ = read_only;
  is_replica_.store(true, std::memory_order_release);
  link_.store(Link::kConnecting, std::memory_order_release);
  RecomputeLocked();
}

void ReplicationState::SetLink(Link link, int64_t now_ms) {
  std::lock_guard<std::mutex> l(mu_);
  Link before = link_.load(std::memory_order_acquire);
  if (before == Link::kUp && link != Link::kUp) down_since_ms_ = now_ms;
  link_.store(link, std::memory_order_release);
  RecomputeLocked();
}

int64_t ReplicationState::down_since_ms() const {
  std::lock_guard<std::mutex> l(mu_);
  return down_since_ms_;
}

void ReplicationState::Configure(bool read_only, bool serve_stale, bool stop_writes_on_save_error,
                                 int64_t min_replicas) {
  std::lock_guard<std::mutex> l(mu_);
  if (read_only == read_only_ && serve_stale == serve_stale_ &&
      stop_writes_on_save_error == stop_writes_on_save_error_ && min_replicas == min_replicas_)
    return;
  read_only_ = read_only;
  serve_stale_ = serve_stale;
  stop_writes_on_save_error_ = stop_writes_on_save_error;
  min_replicas_ = min_replicas;
  RecomputeLocked();
}

void ReplicationState::ConfigureFrom(const Config& c) {
  // As Redis: a failed save stops writes only while save rules are set, and
  // min-replicas-to-write holds only while min-replicas-max-lag is above 0.
  bool save_rules = !c.String("save").empty() || !c.String("snapshot-cron").empty();
  int64_t min_replicas = c.Int("min-replicas-max-lag") > 0 ? c.Int("min-replicas-to-write") : 0;
  Configure(c.Bool("replica-read-only"), c.Bool("replica-serve-stale-data"),
            save_rules && c.Bool("stop-writes-on-bgsave-error"), min_replicas);
}

void ReplicationState::SetGoodReplicas(int64_t n) {
  std::lock_guard<std::mutex> l(mu_);
  if (n == good_replicas_) return;
  good_replicas_ = n;
  RecomputeLocked();
}

void ReplicationState::SetSaveFailed(bool failed) {
  std::lock_guard<std::mutex> l(mu_);
  if (failed == save_failed_) return;
  save_failed_ = failed;
  RecomputeLocked();
}

void ReplicationState::BecomeMaster() {
  std::lock_guard<std::mutex> l(mu_);
  if (!is_replica_.load(std::memory_order_acquire)) return;
  // As Redis: the old history stays valid up to where it ended, so replicas of the old
  // master could continue from here; a new id starts this one's own history.
  replid2_ = replid_;
  second_offset_ = offset_.load(std::memory_order_relaxed) + 1;
  replid_ = RandomHexId();
  host_.clear();
  port_ = 0;
  is_replica_.store(false, std::memory_order_release);
  link_.store(Link::kNone, std::memory_order_release);
  RecomputeLocked();
}

void ReplicationState::SetMasterStream(const std::string& replid, int64_t offset) {
  std::lock_guard<std::mutex> l(mu_);
  replid_ = replid;
  offset_.store(offset, std::memory_order_relaxed);
}

bool ReplicationState::MasterOf(std::string* host, int* port) const {
  std::lock_guard<std::mutex> l(mu_);
  if (!is_replica_.load(std::memory_order_acquire)) return false;
  *host = host_;
  *port = port_;
  return true;
}

std::string ReplicationState::replid() const {
  std::lock_guard<std::mutex> l(mu_);
  return replid_;
}

std::string ReplicationState::replid2() const {
  std::lock_guard<std::mutex> l(mu_);
  return replid2_;
}

int64_t ReplicationState::second_offset() const {
  std::lock_guard<std::mutex> l(mu_);
  return second_offset_;
}

void ReplicationState::NewHistory() {
  std::lock_guard<std::mutex> l(mu_);
  replid_ = RandomHexId();
  replid2_ = std::string(40, '0');
  second_offset_ = -1;
}

std::string ReplicationState::InfoLines(int64_t now_ms, int64_t replica_priority,
                                        bool announced) const {
  MasterInfo m;
  if (master_info) m = master_info();
  std::lock_guard<std::mutex> l(mu_);
  std::string out;
  auto line = [&](const char* k, const std::string& v) {
    out += k;
    out += ':';
    out += v;
    out += "\r\n";
  };
  int64_t offset = offset_.load(std::memory_order_relaxed);
  if (is_replica_.load(std::memory_order_acquire)) {
    Link link = link_.load(std::memory_order_acquire);
    line("role", "slave");
    line("master_host", host_);
    line("master_port", std::to_string(port_));
    line("master_link_status", link == Link::kUp ? "up" : "down");
    int64_t io = last_io_ms_.load(std::memory_order_relaxed);
    line("master_last_io_seconds_ago",
         std::to_string(link == Link::kUp && io > 0 ? (now_ms - io) / 1000 : -1));
    line("master_sync_in_progress", link == Link::kTransfer || link == Link::kLoading ? "1" : "0");
    if (link == Link::kTransfer) {
      int64_t total = transfer_total_.load(std::memory_order_relaxed);
      int64_t read = transfer_read_.load(std::memory_order_relaxed);
      char perc[32];
      std::snprintf(perc, sizeof(perc), "%.2f",
                    total > 0 ? static_cast<double>(read) * 100 / static_cast<double>(total) : 0.0);
      line("master_sync_total_bytes", std::to_string(total));
      line("master_sync_read_bytes", std::to_string(read));
      line("master_sync_left_bytes", std::to_string(total - read));
      line("master_sync_perc", perc);
      line("master_sync_last_io_seconds_ago",
           std::to_string((now_ms - transfer_io_ms_.load(std::memory_order_relaxed)) / 1000));
    }
    if (link != Link::kUp) {
      // Sentinel reads it; -1 before the link was ever up, as Redis.
      int64_t down = down_since_ms_ > 0 ? (now_ms - down_since_ms_) / 1000 : -1;
      line("master_link_down_since_seconds", std::to_string(down));
    }
    line("slave_read_repl_offset", std::to_string(offset));
    line("slave_repl_offset", std::to_string(offset));
    line("slave_priority", std::to_string(replica_priority));
    line("slave_read_only", read_only_ ? "1" : "0");
    line("replica_announced", announced ? "1" : "0");
  } else {
    line("role", "master");
  }
  line("connected_slaves", std::to_string(m.connected));
  if (min_replicas_ > 0) line("min_slaves_good_slaves", std::to_string(good_replicas_));
  out += m.replica_lines;
  static const char* kFailoverStates[] = {"no-failover", "waiting-for-sync",
                                          "failover-in-progress"};
  line("master_failover_state", kFailoverStates[static_cast<int>(failover())]);
  line("master_replid", replid_);
  line("master_replid2", replid2_);
  line("master_repl_offset", std::to_string(offset));
  line("second_repl_offset", std::to_string(second_offset_));
  line("repl_backlog_active", m.backlog_active ? "1" : "0");
  line("repl_backlog_size", std::to_string(m.backlog_size));
  line("repl_backlog_first_byte_offset", std::to_string(m.backlog_first));
  line("repl_backlog_histlen", std::to_string(m.backlog_histlen));
  return out;
}

}  // namespace strata
