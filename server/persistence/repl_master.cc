#include "server/persistence/repl_master.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstring>

#include "server/base/config.h"
#include "server/base/log.h"
#include "server/base/output_limits.h"
#include "server/base/version.h"
#include "server/engine/blocking.h"
#include "server/engine/client.h"
#include "server/engine/repl_log.h"
#include "server/engine/worker.h"
#include "server/persistence/snapshot.h"
#include "storage/file_io.h"
#include "storage/snapshot_rdb.h"

namespace strata {

struct ReplMaster::Peer {
  enum State { kWaitImage, kSending, kOnline };
  uint64_t id = 0;
  uint32_t worker = 0;
  std::string ip;
  int port = 0;
  bool capa_eof = false;
  bool psync2 = false;
  // A diskless image was sent: as Redis, the stream starts once the replica has
  // acknowledged (it finds the image's end mark at the end of a read).
  std::atomic<bool> wait_ack{false};
  std::atomic<int> state{kWaitImage};
  std::atomic<bool> closed{false};
  std::atomic<int64_t> ack{0};
  std::atomic<int64_t> ack_ms{0};
  // Worker 0's: where its stream starts (-1: not yet known) and its cut.
  int64_t start = -1;
  uint64_t cut_id = 0;
  // Its worker's: the first line (+FULLRESYNC/+CONTINUE) went out.
  bool preamble_sent = false;
  std::mutex mu;  // the rest
  std::condition_variable cv;
  std::string preamble;
  bool preamble_ready = false;
  // Stream bytes not yet on the connection: slices shared with the backlog.
  std::vector<ReplSlice> pending;
  // Until the image is sent, the stream is copied here instead, and moved to pending a
  // kHeldPieceBytes piece at a time: a slice keeps its whole batch buffer alive (room
  // for a turn, and the allocator's rounding), so for the seconds a full resync takes
  // the shared slices held about 1.7 times the stream's bytes.
  std::string held_tail;
  size_t pending_bytes = 0;
  // Under mu: what held_tail holds becomes the next pending slice.
  void FlushHeld() {
    if (held_tail.empty()) return;
    pending.push_back(ReplSlice::Own(std::move(held_tail)));
    held_tail = std::string();
  }
  bool deliver_posted = false;
  std::deque<std::string> pieces;  // the image, from the encoder
  bool image_done = false;
  std::string image_error;
};

struct ReplMaster::WaitRequest {
  uint32_t origin = 0;
  int64_t replicas = 0;
  uint64_t counter = 0;  // every write numbered below it
  uint64_t cut_id = 0;
  int64_t target = -1;  // its stream offset, once merged
  std::shared_ptr<BlockedClient> waiter;
  std::shared_ptr<std::atomic<int64_t>> acked;
};

namespace {

constexpr size_t kHeldPieceBytes = 256 * 1024;
const std::string kPing = RespCommand({"PING"});
const std::string kGetAck = RespCommand({"REPLCONF", "GETACK", "*"});

Client* FindClient(Worker& w, uint64_t id) {
  auto it = w.connections().find(id);
  return it == w.connections().end() ? nullptr : it->second;
}

std::string HostOf(const std::string& addr) {
  size_t colon = addr.rfind(':');
  return colon == std::string::npos ? addr : addr.substr(0, colon);
}

}  // namespace

ReplMaster::ReplMaster(Engine* engine, SnapshotManager* snapshots)
    : engine_(engine), snapshots_(snapshots), local_(engine->shard_count()) {
  engine_->replication().master_info = [this] { return Info(); };
}

ReplMaster::~ReplMaster() {
  Shutdown();
  engine_->replication().master_info = nullptr;
}

void ReplMaster::Shutdown() {
  stopping_.store(true);
  {
    std::lock_guard<std::mutex> l(peers_mu_);
    for (auto& p : peers_) {
      std::lock_guard<std::mutex> pl(p->mu);
      p->cv.notify_all();
    }
  }
  std::vector<Encoder> threads;
  {
    std::lock_guard<std::mutex> l(threads_mu_);
    threads.swap(threads_);
  }
  for (auto& t : threads) {
    if (t.thread.joinable()) t.thread.join();
  }
}

// ---------------------------------------------------------------- the replica's worker

std::string ReplMaster::Attach(Client& c, std::string_view replid, int64_t offset, bool psync) {
  Engine& engine = *engine_;
  if (c.is_replica()) return "";  // as Redis: a second PSYNC is ignored
  if (engine.replication().is_replica()) {
    return "NOMASTERLINK strata serves replicas only as a master (chained replication is not "
           "supported yet)";
  }
  if (engine.replication().failover() != ReplicationState::Failover::kNone) {
    return "NOMASTERLINK Can't SYNC while failing over";  // as Redis
  }
  if (!engine.config().String("spill-dir").empty()) {
    return "ERR replicas are not served with spill-dir set (spilled values live in the spill "
           "store, which a full resync cannot send yet)";
  }
  auto p = std::make_shared<Peer>();
  p->id = c.id();
  p->worker = c.worker().index();
  p->ip = !c.repl_announced_ip.empty() ? c.repl_announced_ip : HostOf(c.addr());
  p->port = c.repl_listening_port;
  p->capa_eof = c.repl_capa_eof;
  p->psync2 = c.repl_capa_psync2;
  p->ack_ms.store(c.worker().now_ms());
  c.MakeReplica();
  local_[p->worker].push_back(p);
  c.on_replica_close = [this, p] {
    p->closed.store(true);
    {
      std::lock_guard<std::mutex> l(p->mu);
      p->cv.notify_all();
    }
    Worker::Current()->Post(0, MakeTask([this, p] { Remove(p); }));
  };
  LogNotice("Replica %s:%d asks for synchronization", p->ip.c_str(), p->port);
  std::string id(replid);
  Worker& w = c.worker();
  auto task = [this, p, id, offset, psync] { Decide(p, id, offset, psync); };
  if (w.index() == 0) {
    w.Defer(MakeTask(std::move(task)));
  } else {
    w.Post(0, MakeTask(std::move(task)));
  }
  return "";
}

void ReplMaster::Ack(Client& c, int64_t offset) {
  Worker& w = c.worker();
  for (auto& p : local_[w.index()]) {
    if (p->id != c.id()) continue;
    p->ack.store(offset, std::memory_order_release);
    p->ack_ms.store(w.now_ms(), std::memory_order_relaxed);
    // Never from inside the command: its reply (suppressed for a replica) is being
    // written to the same output, and would take the stream's bytes with it.
    if (p->wait_ack.exchange(false)) w.Defer(MakeTask([this, p] { Deliver(*p); }));
    w.Post(0, MakeTask([this] { CheckWaits(); }));
    return;
  }
}

void ReplMaster::Pump(Worker& w, Peer& p) {
  Client* c = FindClient(w, p.id);
  if (c == nullptr || p.closed.load()) return;
  std::unique_lock<std::mutex> l(p.mu);
  if (!p.preamble_sent) {
    if (!p.preamble_ready) return;
    std::string first = std::move(p.preamble);
    p.preamble_sent = true;
    l.unlock();
    if (!first.empty()) c->SendToReplica(first);
    l.lock();
  }
  if (p.state.load() == Peer::kSending) {
    bool moved = false;
    while (!p.pieces.empty() && c->output_bytes() < 2 * kPieceBytes) {
      std::string piece = std::move(p.pieces.front());
      p.pieces.pop_front();
      moved = true;
      l.unlock();
      c->SendToReplicaOwned(std::move(piece));
      l.lock();
    }
    if (moved) p.cv.notify_all();
    if (!p.image_error.empty()) {
      std::string why = p.image_error;
      l.unlock();
      LogWarning("Replica %s:%d: full resync failed: %s", p.ip.c_str(), p.port, why.c_str());
      c->Kill();
      return;
    }
    if (!p.image_done || !p.pieces.empty()) return;
    if (p.wait_ack.load()) return;
    p.state.store(Peer::kOnline);
    LogNotice("Synchronization with replica %s:%d succeeded", p.ip.c_str(), p.port);
  }
  if (p.state.load() == Peer::kOnline && (!p.pending.empty() || !p.held_tail.empty())) {
    // The slices go to the connection as they are: big ones are sent from the buffer
    // the backlog shares, not copied again. What was held during the image goes first.
    p.FlushHeld();
    std::vector<ReplSlice> slices;
    slices.swap(p.pending);
    p.pending_bytes = 0;
    p.deliver_posted = false;
    l.unlock();
    for (ReplSlice& s : slices) c->SendToReplicaShared(std::move(s.buf), s.view());
  }
}

void ReplMaster::Deliver(Peer& p) {
  Worker& w = *Worker::Current();
  Pump(w, p);
}

void ReplMaster::Drop(const std::shared_ptr<Peer>& p, const std::string& why) {
  Worker& w = *Worker::Current();
  auto task = [this, p, why] {
    Client* c = FindClient(*Worker::Current(), p->id);
    if (c == nullptr) return;
    LogWarning("Dropping replica %s:%d: %s", p->ip.c_str(), p->port, why.c_str());
    c->Kill();
  };
  if (w.index() == p->worker) {
    task();
  } else {
    w.Post(p->worker, MakeTask(std::move(task)));
  }
}

void ReplMaster::OnWorkerTurn(Worker& w, int64_t, bool) {
  uint32_t i = w.index();
  if (i == 0) {
    // As Redis: no GETACK while clients are paused (it would move the offset a
    // failover's replica is waiting to reach); it goes once the pause ends.
    if (getack_due_ && stream_on_ && engine_->PauseModeAt(w.now_ms()) == Engine::kPauseNone) {
      w.repl_feed().Record(ReplLog::kNoDb, kGetAck);
      getack_due_ = false;
    }
    if (w.repl_on()) w.repl_feed().Publish();
    if (stream_on_ || !waits_.empty()) Merge();
  } else if (w.repl_on() && w.repl_feed().Publish()) {
    RequestMerge(w);
  }
  if (!local_[i].empty()) {
    for (size_t k = 0; k < local_[i].size(); k++) {
      std::shared_ptr<Peer> p = local_[i][k];
      Pump(w, *p);
    }
  }
}

bool ReplMaster::HasWork(const Worker&) const { return false; }

void ReplMaster::RequestMerge(Worker& from) {
  if (merge_requested_.exchange(true, std::memory_order_acq_rel)) return;
  from.Post(0, MakeTask([this] {
              merge_requested_.store(false, std::memory_order_release);
              Merge();
            }));
}

// ---------------------------------------------------------------- worker 0

void ReplMaster::EnableStream() {
  if (stream_on_) return;
  stream_on_ = true;
  ReplLog& log = engine_->repl_log();
  log.backlog().Resize(static_cast<size_t>(engine_->config().Int("repl-backlog-size")));
  log.backlog().Reset(engine_->replication().offset());
  log.ForgetDb();
  merged_offset_.store(log.backlog().offset());
  backlog_first_.store(log.backlog().first());
  next_ping_ms_ = 0;
  Worker& w0 = *Worker::Current();
  for (uint32_t i = 0; i < engine_->shard_count(); i++) {
    if (i == 0) {
      w0.SetReplFeed(true);
    } else {
      w0.Post(i, MakeTask([] { Worker::Current()->SetReplFeed(true); }));
    }
  }
  LogNotice("Replication stream started at offset %" PRId64 " (backlog of %zu bytes)",
            log.backlog().offset(), log.backlog().capacity());
}

void ReplMaster::DisableStream(bool new_history) {
  if (!stream_on_) return;
  stream_on_ = false;
  Worker& w0 = *Worker::Current();
  for (uint32_t i = 0; i < engine_->shard_count(); i++) {
    if (i == 0) {
      w0.SetReplFeed(false);
    } else {
      w0.Post(i, MakeTask([] { Worker::Current()->SetReplFeed(false); }));
    }
  }
  if (!new_history) return;
  // As Redis frees its backlog: the history ends here.
  engine_->replication().NewHistory();
  LogNotice("Replication backlog freed after %" PRId64 " seconds without replicas",
            engine_->config().Int("repl-backlog-ttl"));
}

void ReplMaster::Decide(std::shared_ptr<Peer> p, std::string replid, int64_t offset, bool psync) {
  if (p->closed.load()) return;
  EnableStream();
  {
    std::lock_guard<std::mutex> l(peers_mu_);
    peers_.push_back(p);
    connected_.store(static_cast<int64_t>(peers_.size()));
  }
  no_replicas_since_ms_ = 0;
  ReplicationState& state = engine_->replication();
  ReplLog& log = engine_->repl_log();
  std::string ours = state.replid();
  bool known = replid == ours || (replid == state.replid2() && offset <= state.second_offset());
  std::string held;
  if (psync && known && log.backlog().From(offset - 1, &held)) {
    p->start = log.backlog().offset();
    p->state.store(Peer::kOnline);
    {
      std::lock_guard<std::mutex> l(p->mu);
      p->preamble = p->psync2 ? "+CONTINUE " + ours + "\r\n" : std::string("+CONTINUE\r\n");
      p->preamble_ready = true;
      p->pending_bytes += held.size();
      p->pending.insert(p->pending.begin(), ReplSlice::Own(std::move(held)));
      p->deliver_posted = true;
    }
    sync_partial_ok_.fetch_add(1);
    LogNotice(
        "Partial resynchronization request from %s:%d accepted, sending %zu bytes of "
        "backlog starting from offset %" PRId64,
        p->ip.c_str(), p->port, held.size(), offset);
    Worker::Current()->Post(p->worker, MakeTask([this, p] { Deliver(*p); }));
    return;
  }
  // As Redis counts them: a PSYNC of a history other than "?" that could not continue.
  if (psync && replid != "?") sync_partial_err_.fetch_add(1);
  sync_full_.fetch_add(1);
  if (psync) {
    LogNotice("Full resync requested by replica %s:%d", p->ip.c_str(), p->port);
  }
  if (!psync) {
    std::lock_guard<std::mutex> l(p->mu);
    p->preamble_ready = true;  // SYNC: no first line
    p->preamble_sent = false;
  }
  StartImage(p);
}

void ReplMaster::StartImage(std::shared_ptr<Peer> p) {
  p->cut_id = next_cut_id_++;
  p->state.store(Peer::kWaitImage);
  snapshots_->RequestImage(
      [this, p](uint64_t counter) { engine_->repl_log().AddCut(counter, p->cut_id); },
      [this, p](const Status& st, SnapshotManager::Image image) {
        OnImage(p, st, std::move(image));
      });
}

void ReplMaster::OnImage(std::shared_ptr<Peer> p, const Status& st, SnapshotManager::Image image) {
  if (p->closed.load() || stopping_.load()) {
    for (int fd : image.fds) close(fd);
    return;
  }
  if (!st.ok()) {
    for (int fd : image.fds) close(fd);
    Drop(p, "the snapshot for its full resync failed: " + st.message());
    return;
  }
  p->state.store(Peer::kSending);
  std::lock_guard<std::mutex> l(threads_mu_);
  // (Never move a running thread onto itself or another running one: std::thread's
  // assignment to a joinable thread terminates. erase moves later ones down onto
  // joined or moved-from slots only.)
  for (auto it = threads_.begin(); it != threads_.end();) {
    if (it->finished->load(std::memory_order_acquire)) {
      it->thread.join();  // already returned: this does not wait
      it = threads_.erase(it);
    } else {
      ++it;
    }
  }
  auto finished = std::make_shared<std::atomic<bool>>(false);
  std::thread t([this, p, finished, image = std::move(image)]() mutable {
    Encode(p, std::move(image));
    finished->store(true, std::memory_order_release);
  });
  threads_.push_back(Encoder{std::move(t), std::move(finished)});
}

void ReplMaster::Merge() {
  ReplLog& log = engine_->repl_log();
  turn_slices_.clear();
  int64_t start = log.backlog().offset();
  size_t turn_bytes = log.MergeSlices([this](const ReplSlice& s) { turn_slices_.push_back(s); });
  std::vector<std::pair<uint64_t, int64_t>> cuts = log.TakeResolvedCuts();
  for (const auto& [id, off] : cuts) {
    for (auto& r : waits_) {
      if (r->cut_id == id) r->target = off;
    }
  }
  int64_t now_offset = log.backlog().offset();
  merged_offset_.store(now_offset, std::memory_order_release);
  backlog_first_.store(log.backlog().first(), std::memory_order_relaxed);
  // A replica's offset is its master's (the master client counts it).
  if (!engine_->replication().is_replica()) engine_->replication().SetOffset(now_offset);
  if (!cuts.empty() || turn_bytes != 0) {
    int64_t hard = engine_->config().output_limit(ClientClass::kReplica).hard_bytes;
    std::string replid = engine_->replication().replid();
    std::lock_guard<std::mutex> l(peers_mu_);
    for (auto& p : peers_) {
      if (p->closed.load()) continue;
      for (const auto& [id, off] : cuts) {
        if (id != p->cut_id || p->start >= 0) continue;
        p->start = off;
        std::lock_guard<std::mutex> pl(p->mu);
        if (!p->preamble_ready) {
          p->preamble = "+FULLRESYNC " + replid + " " + std::to_string(off) + "\r\n";
          p->preamble_ready = true;
        }
        LogNotice("Starting a full resync for replica %s:%d at offset %" PRId64, p->ip.c_str(),
                  p->port, off);
        Worker::Current()->Post(p->worker, MakeTask([this, p] { Deliver(*p); }));
      }
      if (p->start < 0 || turn_bytes == 0) continue;
      size_t skip = p->start > start ? static_cast<size_t>(p->start - start) : 0;
      if (skip >= turn_bytes) continue;
      bool post = false;
      bool over = false;
      {
        std::lock_guard<std::mutex> pl(p->mu);
        // The turn's slices from the replica's start on: shared, not copied, once the
        // replica is online; copied into held_tail while its image is being sent.
        bool hold = p->state.load() != Peer::kOnline;
        for (const ReplSlice& s : turn_slices_) {
          if (skip >= s.len) {
            skip -= s.len;
            continue;
          }
          if (hold) {
            if (p->held_tail.capacity() < kHeldPieceBytes) p->held_tail.reserve(kHeldPieceBytes);
            p->held_tail.append(s.view().substr(skip));
            if (p->held_tail.size() >= kHeldPieceBytes) p->FlushHeld();
          } else {
            p->FlushHeld();
            p->pending.push_back(ReplSlice{s.buf, s.off + skip, s.len - skip});
          }
          p->pending_bytes += s.len - skip;
          skip = 0;
        }
        over = hard > 0 && static_cast<int64_t>(p->pending_bytes) >= hard;
        if (p->state.load() == Peer::kOnline && !p->deliver_posted) {
          p->deliver_posted = true;
          post = true;
        }
      }
      if (over) {
        Drop(p,
             "its stream waiting behind the full resync passed client-output-buffer-limit "
             "replica");
      } else if (post) {
        Worker::Current()->Post(p->worker, MakeTask([this, p] { Deliver(*p); }));
      }
    }
  }
  if (!waits_.empty()) CheckWaits();
}

void ReplMaster::Remove(const std::shared_ptr<Peer>& p) {
  bool empty = false;
  {
    std::lock_guard<std::mutex> l(peers_mu_);
    peers_.erase(std::remove(peers_.begin(), peers_.end(), p), peers_.end());
    connected_.store(static_cast<int64_t>(peers_.size()));
    empty = peers_.empty();
  }
  if (empty) no_replicas_since_ms_ = Worker::Current()->now_ms();
  LogNotice("Connection with replica %s:%d lost", p->ip.c_str(), p->port);
  Worker::Current()->Post(p->worker, MakeTask([this, p] {
                            auto& v = local_[Worker::Current()->index()];
                            v.erase(std::remove(v.begin(), v.end(), p), v.end());
                          }));
  CheckWaits();
}

void ReplMaster::CountGoodReplicas(int64_t now_ms) {
  // min-replicas-to-write's count, as Redis's: online replicas whose last
  // acknowledgement is at most min-replicas-max-lag whole seconds old.
  int64_t lag_s = engine_->config().Int("min-replicas-max-lag");
  int64_t good = 0;
  {
    std::lock_guard<std::mutex> l(peers_mu_);
    for (const auto& p : peers_) {
      if (p->closed.load() || p->state.load() != Peer::kOnline) continue;
      if ((now_ms - p->ack_ms.load(std::memory_order_relaxed)) / 1000 <= lag_s) good++;
    }
  }
  engine_->replication().SetGoodReplicas(good);
}

void ReplMaster::OnTimer(Worker& w) {
  int64_t now = w.now_ms();
  CountGoodReplicas(now);
  if (!stream_on_) return;
  if (engine_->replication().is_replica()) {
    // REPLICAOF: as Redis, the replicas are dropped (they resync with the new chain's
    // data) and this process's own stream stops; its offset is now its master's.
    std::vector<std::shared_ptr<Peer>> all;
    {
      std::lock_guard<std::mutex> l(peers_mu_);
      all = peers_;
    }
    for (auto& p : all) Drop(p, "this server became a replica");
    DisableStream(false);
    return;
  }
  bool any = connected_.load() > 0;
  if (any && now >= next_ping_ms_) {
    // Keeps idle replicas from timing out, as Redis's master does; not while paused for
    // a manual failover, whose replica waits for the offset the pause stopped at.
    if (next_ping_ms_ != 0 && !engine_->paused_for_failover(now))
      w.repl_feed().Record(ReplLog::kNoDb, kPing);
    next_ping_ms_ = now + engine_->config().Int("repl-ping-replica-period") * 1000;
  }
  // CONFIG SET repl-backlog-size takes effect here (the newest bytes are kept).
  size_t want = static_cast<size_t>(engine_->config().Int("repl-backlog-size"));
  ReplBacklog& backlog = engine_->repl_log().backlog();
  if (backlog.capacity() != want) {
    backlog.Resize(want);
    backlog_first_.store(backlog.first(), std::memory_order_relaxed);
  }
  if (any) {
    int64_t timeout_ms = engine_->config().Int("repl-timeout") * 1000;
    std::lock_guard<std::mutex> l(peers_mu_);
    for (auto& p : peers_) {
      if (p->state.load() != Peer::kOnline || p->closed.load()) continue;
      if (now - p->ack_ms.load(std::memory_order_relaxed) > timeout_ms) {
        Drop(p, "timeout (no REPLCONF ACK within repl-timeout)");
        p->ack_ms.store(now);  // once
      }
    }
    return;
  }
  int64_t ttl = engine_->config().Int("repl-backlog-ttl");
  if (ttl > 0 && no_replicas_since_ms_ > 0 && now - no_replicas_since_ms_ >= ttl * 1000) {
    DisableStream(true);
  }
}

// ---------------------------------------------------------------- WAIT

void ReplMaster::Wait(uint32_t origin, int64_t replicas, uint64_t counter,
                      std::shared_ptr<BlockedClient> waiter,
                      std::shared_ptr<std::atomic<int64_t>> acked) {
  auto r = std::make_shared<WaitRequest>();
  r->origin = origin;
  r->replicas = replicas;
  r->counter = counter;
  r->waiter = std::move(waiter);
  r->acked = std::move(acked);
  auto task = [this, r] {
    if (r->counter == 0 || !stream_on_) {
      r->target = 0;
    } else {
      r->cut_id = next_cut_id_++;
      engine_->repl_log().AddCut(r->counter, r->cut_id, false);
    }
    waits_.push_back(r);
    if (connected_.load() > 0) getack_due_ = true;
    CheckWaits();
  };
  Worker& w = *Worker::Current();
  if (w.index() == 0) {
    w.Defer(MakeTask(std::move(task)));
  } else {
    w.Post(0, MakeTask(std::move(task)));
  }
}

int64_t ReplMaster::CountAcked(int64_t offset) const {
  if (offset < 0) offset = merged_offset_.load(std::memory_order_acquire);
  std::lock_guard<std::mutex> l(peers_mu_);
  int64_t n = 0;
  for (const auto& p : peers_) {
    if (p->state.load() == Peer::kOnline && !p->closed.load() &&
        p->ack.load(std::memory_order_acquire) >= offset)
      n++;
  }
  return n;
}

void ReplMaster::CheckWaits() {
  ReplLog& log = engine_->repl_log();
  size_t keep = 0;
  for (size_t i = 0; i < waits_.size(); i++) {
    std::shared_ptr<WaitRequest> r = waits_[i];
    if (r->waiter->state.load(std::memory_order_acquire) != BlockedClient::kWaiting) continue;
    if (r->target < 0 && !stream_on_) r->target = log.backlog().offset();
    if (r->target >= 0) {
      int64_t n = CountAcked(r->target);
      r->acked->store(n, std::memory_order_release);
      if (n >= r->replicas) {
        int expected = BlockedClient::kWaiting;
        if (r->waiter->state.compare_exchange_strong(expected, BlockedClient::kServed,
                                                     std::memory_order_acq_rel)) {
          std::shared_ptr<BlockedClient> c = r->waiter;
          Worker::Current()->Post(r->origin, MakeTask([c] {
                                    if (c->handle) {
                                      std::coroutine_handle<> h = c->handle;
                                      c->handle = nullptr;
                                      h.resume();
                                    }
                                  }));
        }
        continue;
      }
    }
    waits_[keep++] = r;
  }
  waits_.resize(keep);
}

// ---------------------------------------------------------------- INFO, ROLE

ReplicationState::MasterInfo ReplMaster::Info() const {
  ReplicationState::MasterInfo m;
  int64_t now = WallClockMs();
  {
    std::lock_guard<std::mutex> l(peers_mu_);
    int n = 0;
    for (const auto& p : peers_) {
      if (p->closed.load()) continue;
      static constexpr const char* kState[] = {"wait_bgsave", "send_bulk", "online"};
      int64_t lag = (now - p->ack_ms.load(std::memory_order_relaxed)) / 1000;
      m.replica_lines += "slave" + std::to_string(n++) + ":ip=" + p->ip +
                         ",port=" + std::to_string(p->port) + ",state=" + kState[p->state.load()] +
                         ",offset=" + std::to_string(p->ack.load()) +
                         ",lag=" + std::to_string(lag < 0 ? 0 : lag) + "\r\n";
    }
    m.connected = n;
  }
  int64_t size = engine_->config().Int("repl-backlog-size");
  m.backlog_size = size;
  // The backlog belongs to worker 0; INFO reads the figures it last published.
  int64_t off = merged_offset_.load(std::memory_order_acquire);
  m.backlog_active = connected_.load() > 0 || off > 0;
  m.backlog_first = backlog_first_.load(std::memory_order_relaxed) + 1;
  m.backlog_histlen = off - backlog_first_.load(std::memory_order_relaxed);
  return m;
}

std::vector<ReplMaster::RoleEntry> ReplMaster::RoleReplicas() const {
  std::vector<RoleEntry> out;
  for (const ReplicaView& r : Replicas()) {
    if (r.online) out.push_back({r.ip, r.port, r.ack});
  }
  return out;
}

std::vector<ReplMaster::ReplicaView> ReplMaster::Replicas() const {
  std::vector<ReplicaView> out;
  std::lock_guard<std::mutex> l(peers_mu_);
  for (const auto& p : peers_) {
    if (p->closed.load()) continue;
    out.push_back({p->ip, p->port, p->state.load() == Peer::kOnline, p->ack.load()});
  }
  return out;
}

// ---------------------------------------------------------------- the encoder thread

void ReplMaster::Encode(std::shared_ptr<Peer> p, SnapshotManager::Image image) {
  Config& cfg = engine_->config();
  rdb::RdbWriter::Options o;
  o.encode.version = 10;
  o.encode.compression = cfg.Bool("rdbcompression");
  o.checksum = cfg.Bool("rdbchecksum");
  SnapshotRdbEncoder enc(std::move(image.fds), std::move(image.functions), o,
                         STRATA_REDIS_COMPAT_VERSION, std::move(image.db_keys));
  Worker& home = engine_->worker(p->worker);
  auto wake = [&] { home.PostExternal(MakeTask([] {})); };
  auto push = [&](std::string piece) -> bool {
    std::unique_lock<std::mutex> l(p->mu);
    p->cv.wait(l, [&] {
      return p->pieces.size() < kQueuedPieces || p->closed.load() || stopping_.load();
    });
    if (p->closed.load() || stopping_.load()) return false;
    p->pieces.push_back(std::move(piece));
    l.unlock();
    wake();
    return true;
  };
  auto fail = [&](const std::string& why) {
    std::lock_guard<std::mutex> l(p->mu);
    p->image_error = why;
    wake();
  };
  bool diskless = p->capa_eof && cfg.Bool("repl-diskless-sync");
  Status st;
  bool done = false;
  if (diskless) {
    std::string mark = RandomHexId();
    if (!push("$EOF:" + mark + "\r\n")) return;
    while (!done) {
      std::string piece;
      st = enc.Next(kPieceBytes, &piece, &done);
      if (!st.ok()) return fail(st.message());
      if (!piece.empty() && !push(std::move(piece))) return;
    }
    // Set before the mark can reach the replica: its first ACK may follow at once.
    p->wait_ack.store(true);
    if (!push(mark)) return;
  } else {
    std::string path =
        JoinPath(cfg.String("dir"), "temp-repl-" + std::to_string(getpid()) + "-" +
                                        std::to_string(temp_seq_.fetch_add(1)) + ".rdb");
    int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return fail(Status::FromErrno("open " + path, errno).message());
    unlink(path.c_str());  // the open file is enough; nothing is left behind
    uint64_t size = 0;
    while (!done && st.ok()) {
      std::string piece;
      st = enc.Next(kPieceBytes, &piece, &done);
      if (st.ok()) st = WriteAll(fd, piece, path);
      size += piece.size();
      if (stopping_.load() || p->closed.load()) break;
    }
    if (!st.ok()) {
      close(fd);
      return fail(st.message());
    }
    if (!done || !push("$" + std::to_string(size) + "\r\n")) {
      close(fd);
      return;
    }
    uint64_t sent = 0;
    while (sent < size) {
      std::string piece(std::min<uint64_t>(kPieceBytes, size - sent), '\0');
      ssize_t n = pread(fd, piece.data(), piece.size(), static_cast<off_t>(sent));
      if (n <= 0) {
        close(fd);
        return fail(Status::FromErrno("read " + path, n < 0 ? errno : EIO).message());
      }
      piece.resize(static_cast<size_t>(n));
      sent += static_cast<uint64_t>(n);
      if (!push(std::move(piece))) {
        close(fd);
        return;
      }
    }
    close(fd);
  }
  LogNotice("Image for replica %s:%d encoded: %" PRIu64 " keys (%s)", p->ip.c_str(), p->port,
            enc.keys(), diskless ? "diskless" : "through a file");
  std::lock_guard<std::mutex> l(p->mu);
  p->image_done = true;
  wake();
}

}  // namespace strata
