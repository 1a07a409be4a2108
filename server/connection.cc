#include "server/connection.h"

#include <cstdio>
#include <cstring>

#include "core/hash.h"
#include "core/string_util.h"
#include "server/config.h"
#include "server/cycle_clock.h"
#include "server/heap_bytes.h"
#include "server/log.h"
#include "server/remote_batch.h"
#include "server/server.h"
#include "server/worker.h"

namespace strata {
namespace {

// Redis: "unknown command 'x', with args beginning with: 'a' 'b' " where the argument
// list is cut at 128 characters.
std::string UnknownCommandError(CmdArgs args) {
  std::string name(args[0].substr(0, 128));
  std::string list;
  for (size_t i = 1; i < args.size() && list.size() < 128; i++) {
    size_t room = 128 - list.size();
    list += "'";
    list.append(args[i].substr(0, room));
    list += "' ";
  }
  return "ERR unknown command '" + name + "', with args beginning with: " + list;
}

void DeliverReply(void* p) {
  auto* rc = static_cast<RemoteCommand*>(p);
  rc->conn->CompleteSlot(rc->seq, rc->reply);
  delete rc;
}

// Runs a shard command now, on the current (owning) worker, and sends the reply home.
void RunRemoteNow(void* p) {
  auto* rc = static_cast<RemoteCommand*>(p);
  Worker* w = Worker::Current();
  ReplyBuilder rb(&rc->reply, rc->resp);
  ShardCtx ctx{*w, w->keyspace(), rc->db, w->now_ms()};
  uint64_t t0 = CycleClock::Now();
  rc->spec->shard_fn(rc->args->span(), ctx, rb);
  CommandStat& st = w->stats().commands[rc->spec->id];
  st.calls++;
  st.usec_ticks += CycleClock::Now() - t0;
  if (!rc->reply.empty() && rc->reply[0] == '-') st.failed_calls++;
  w->stats().total_commands_processed++;
  if (rc->origin != w->index()) w->stats().remote_commands++;
  w->Post(rc->origin, Task{DeliverReply, rc});
}

}  // namespace

Connection::Connection(Worker* w, int sock, uint64_t id, std::string addr, std::string laddr)
    : worker_(w), id_(id), addr_(std::move(addr)), laddr_(std::move(laddr)) {
  fd = sock;
  rbuf_.resize(kReadChunk);
  created_ms = w->now_ms();
  last_interaction_ms = created_ms;
  authenticated = w->server().config().String("requirepass").empty();
}

Connection::~Connection() { worker_->ChargeClientBytes(0, charged_bytes_); }

size_t Connection::MemoryBytes() const {
  size_t n = HeapBytes(static_cast<const void*>(this));
  n += HeapBytes(rbuf_) + HeapBytes(out_) + HeapBytes(sending_) + HeapBytes(args_);
  n += HeapBytes(addr_) + HeapBytes(laddr_) + HeapBytes(name) + HeapBytes(lib_name) +
       HeapBytes(lib_ver) + HeapBytes(last_subcommand_);
  // std::deque keeps a map and 512-byte nodes even when empty.
  constexpr size_t kPerNode = sizeof(Slot) < 512 ? 512 / sizeof(Slot) : 1;
  n += (slots_.size() / kPerNode + 1) * kPerNode * sizeof(Slot) + 8 * sizeof(void*);
  for (const Slot& s : slots_) n += HeapBytes(s.data);
  n += worker_->loop().ConnBufferBytes(this);
  return n;
}

void Connection::Recharge() {
  // Buffers only change what they cost when their capacity changes; reply slots (data
  // from other shards) are recounted while any are pending.
  size_t r = rbuf_.capacity(), o = out_.capacity(), s = sending_.capacity(), a = args_.capacity();
  if (r == charged_rbuf_ && o == charged_out_ && s == charged_sending_ && a == charged_args_ &&
      slots_.empty() && !slots_charged_) {
    return;
  }
  charged_rbuf_ = r;
  charged_out_ = o;
  charged_sending_ = s;
  charged_args_ = a;
  slots_charged_ = !slots_.empty();
  size_t now = MemoryBytes();
  worker_->ChargeClientBytes(now, charged_bytes_);
  charged_bytes_ = now;
}

void Connection::Start() {
  worker_->loop().AddConn(this);
  ArmRead();
  Recharge();
}

void Connection::ArmRead() {
  if (reading_ || closing_ || paused_ || close_after_reply_) return;
  if (rstart_ == rend_) {
    rstart_ = rend_ = 0;
    if (rbuf_.size() > 4 * kReadChunk) {
      rbuf_.resize(kReadChunk);
      rbuf_.shrink_to_fit();
    }
  }
  size_t needed = parser_.needed();
  if (rbuf_.size() - rend_ < kReadChunk / 4 || (needed && rstart_ + needed > rbuf_.size())) {
    if (rstart_ > 0) {
      std::memmove(rbuf_.data(), rbuf_.data() + rstart_, rend_ - rstart_);
      rend_ -= rstart_;
      rstart_ = 0;
    }
    size_t want = rbuf_.size();
    if (want - rend_ < kReadChunk / 4) want *= 2;
    if (needed > want) want = needed;
    if (want != rbuf_.size()) rbuf_.resize(want);
  }
  reading_ = true;
  worker_->loop().ArmRecv(this, rbuf_.data() + rend_, rbuf_.size() - rend_);
}

void Connection::OnRecv(ssize_t n) {
  reading_ = false;
  if (closing_) return;
  if (n <= 0) {
    Kill();
    return;
  }
  rend_ += static_cast<size_t>(n);
  worker_->stats().total_net_input_bytes += static_cast<uint64_t>(n);
  last_interaction_ms = worker_->now_ms();
  uint64_t limit = static_cast<uint64_t>(
      worker_->server().config().client_query_buffer_limit().load(std::memory_order_relaxed));
  if (rend_ - rstart_ > limit) {
    LogWarning("Closing client that reached max query buffer length: id=%llu addr=%s",
               static_cast<unsigned long long>(id_), addr_.c_str());
    Kill();
    return;
  }
  ProcessInput();
}

void Connection::ProcessInput() {
  if (closing_) return;
  paused_ = false;
  worker_->RefreshClock();
  // With a memory limit, charge the bytes just read before commands are checked against
  // it, so that a big write is refused while its own request still sits in the buffer
  // (as Redis does).
  if (worker_->server().config().maxmemory().load(std::memory_order_relaxed) > 0) {
    Recharge();
    worker_->UpdateMemoryState();
  }
  RespLimits limits;
  limits.bulk_len_max = static_cast<uint64_t>(
      worker_->server().config().proto_max_bulk_len().load(std::memory_order_relaxed));
  while (rstart_ < rend_ && !close_after_reply_ && !closing_) {
    if (fiber_running_ || inflight_ >= kInflightMax) {
      paused_ = true;
      break;
    }
    size_t consumed = 0;
    auto r = parser_.Parse(rbuf_.data() + rstart_, rend_ - rstart_, limits, &consumed, &args_);
    if (r == RespParser::Result::kNeedMore) break;
    if (r == RespParser::Result::kError) {
      protocol_error_ = true;
      ReplyError("ERR " + parser_.error());
      LogVerbose("Protocol error (%s) from client: id=%llu addr=%s", parser_.error().c_str(),
                 static_cast<unsigned long long>(id_), addr_.c_str());
      close_after_reply_ = true;
      rstart_ = rend_;
      break;
    }
    if (args_.empty()) {
      rstart_ += consumed;
      continue;
    }
    CmdArgs args(args_.data(), args_.size());
    const CommandSpec* spec = CommandRegistry::Get().Find(args[0]);
    if (spec != nullptr && spec->fiber_fn != nullptr && spec->shard_fn == nullptr &&
        inflight_ > 0) {
      // A whole-keyspace command waits for this client's earlier commands.
      paused_ = true;
      break;
    }
    if (spec != nullptr && spec->fiber_fn != nullptr && spec->shard_fn != nullptr &&
        inflight_ > 0) {
      // A multi-key command that spans shards must also wait; single-shard ones need not.
      std::vector<std::string_view> keys;
      spec->Keys(args, &keys);
      uint32_t n = worker_->server().shard_count();
      bool multi = false;
      for (size_t i = 1; i < keys.size(); i++) {
        if (ShardOfKey(keys[i], n) != ShardOfKey(keys[0], n)) multi = true;
      }
      if (multi) {
        paused_ = true;
        break;
      }
    }
    rstart_ += consumed;
    Dispatch(spec, args);
  }
  if (rstart_ == rend_) rstart_ = rend_ = 0;
  Dirty();
  if (!paused_) ArmRead();
  Recharge();
}

std::string* Connection::ReplyTarget(bool* suppress) {
  *suppress = reply_mode == ReplyMode::kOff || skip_next_reply;
  skip_next_reply = false;
  if (slots_.empty()) return &out_;
  slots_.push_back(Slot{false, *suppress, {}});
  return &slots_.back().data;
}

uint64_t Connection::ReservePendingSlot() {
  bool suppress = reply_mode == ReplyMode::kOff || skip_next_reply;
  skip_next_reply = false;
  slots_.push_back(Slot{false, suppress, {}});
  return slot_base_ + slots_.size() - 1;
}

void Connection::CommitReply(std::string* target, bool suppress, size_t start) {
  if (target == &out_) {
    if (suppress) out_.resize(start);
    return;
  }
  slots_.back().ready = true;
}

void Connection::ReplyError(std::string_view msg) {
  bool suppress = false;
  std::string* t = ReplyTarget(&suppress);
  size_t start = t->size();
  ReplyBuilder rb(t, resp);
  rb.Error(msg);
  CommitReply(t, suppress && !protocol_error_, start);
}

bool Connection::Dispatch(const CommandSpec* spec, CmdArgs args) {
  if (spec == nullptr) {
    ReplyError(UnknownCommandError(args));
    return true;
  }
  if (!spec->CheckArity(args.size())) {
    worker_->stats().commands[spec->id].rejected_calls++;
    ReplyError(WrongArityError(spec->name));
    return true;
  }
  if (!authenticated && !(spec->flags & kCmdNoAuth)) {
    if (worker_->server().config().String("requirepass").empty()) {
      authenticated = true;
    } else {
      worker_->stats().commands[spec->id].rejected_calls++;
      ReplyError("NOAUTH Authentication required.");
      return true;
    }
  }
  if (!(spec->flags & kCmdLoading) && worker_->server().snapshots().loading()) [[unlikely]] {
    worker_->stats().commands[spec->id].rejected_calls++;
    ReplyError("LOADING Redis is loading the dataset in memory");
    return true;
  }
  if ((spec->flags & kCmdDenyOom) && worker_->over_memory_limit()) {
    worker_->stats().commands[spec->id].rejected_calls++;
    ReplyError("OOM command not allowed when used memory > 'maxmemory'.");
    return true;
  }
  last_spec_ = spec;
  if (spec->subcommands != nullptr && args.size() > 1) last_subcommand_ = Lowercase(args[1]);
  if (spec->conn_fn != nullptr && !(spec->needs_fiber && spec->needs_fiber(args))) {
    // Suppression is decided after the handler, so that CLIENT REPLY ON is answered and
    // CLIENT REPLY OFF/SKIP are not.
    bool skip_before = skip_next_reply;
    skip_next_reply = false;
    bool unused = false;
    ReplyMode mode_before = reply_mode;
    reply_mode = ReplyMode::kOn;
    std::string* t = ReplyTarget(&unused);
    reply_mode = mode_before;
    size_t start = t->size();
    ReplyBuilder rb(t, resp);
    uint64_t t0 = CycleClock::Now();
    spec->conn_fn(*this, args, rb);
    CommandStat& st = worker_->stats().commands[spec->id];
    st.calls++;
    st.usec_ticks += CycleClock::Now() - t0;
    if (t->size() > start && (*t)[start] == '-') st.failed_calls++;
    worker_->stats().total_commands_processed++;
    bool suppress = skip_before || reply_mode == ReplyMode::kOff;
    if (t == &out_) {
      if (suppress) out_.resize(start);
    } else {
      slots_.back().ready = true;
      slots_.back().suppress = suppress;
    }
    return true;
  }
  uint32_t shard_count = worker_->server().shard_count();
  if (spec->shard_fn != nullptr) {
    uint32_t shard = worker_->index();
    bool multi = false;
    if (spec->first_key > 0) {
      thread_local std::vector<std::string_view> keys;
      keys.clear();
      spec->Keys(args, &keys);
      // A container command whose subcommand takes no key (MEMORY STATS) uses its fiber.
      if (keys.empty() && spec->fiber_fn != nullptr) multi = true;
      if (!keys.empty() && shard_count > 1) {
        shard = ShardOfKey(keys[0], shard_count);
        for (size_t i = 1; i < keys.size() && !multi; i++) {
          if (ShardOfKey(keys[i], shard_count) != shard) multi = true;
        }
      }
    }
    if (!multi) return DispatchToShard(spec, args, shard);
  }
  if (spec->fiber_fn != nullptr) {
    StartFiber(spec, args);
    return !fiber_running_;
  }
  ReplyError("ERR internal error: command has no handler for keys on several shards");
  return true;
}

bool Connection::DispatchToShard(const CommandSpec* spec, CmdArgs args, uint32_t shard) {
  Worker& w = *worker_;
  if (shard == w.index()) {
    LockTable& locks = w.locks();
    if (!locks.empty()) {
      std::vector<std::string_view> keys;
      spec->Keys(args, &keys);
      if (!locks.CanRun(db, keys, spec->is_write())) {
        // Queue behind the multi-shard command holding (or waiting for) these keys.
        uint64_t seq = ReservePendingSlot();
        auto* rc =
            new RemoteCommand{spec, this, w.index(), seq, db, resp, OwnedArgs::Copy(args), {}};
        inflight_++;
        LockTable::Request req;
        for (auto k : keys) req.keys.push_back(LockTable::LockKey(db, k));
        req.exclusive = spec->is_write();
        req.hold = false;
        req.on_admit = Task{RunRemoteNow, rc};
        locks.Enqueue(std::move(req));
        return true;
      }
    }
    bool suppress = false;
    std::string* t = ReplyTarget(&suppress);
    size_t start = t->size();
    ReplyBuilder rb(t, resp);
    ShardCtx ctx{w, w.keyspace(), db, w.now_ms()};
    uint64_t t0 = CycleClock::Now();
    spec->shard_fn(args, ctx, rb);
    CommandStat& st = w.stats().commands[spec->id];
    st.calls++;
    st.usec_ticks += CycleClock::Now() - t0;
    if (t->size() > start && (*t)[start] == '-') st.failed_calls++;
    w.stats().total_commands_processed++;
    CommitReply(t, suppress, start);
    return true;
  }
  uint64_t seq = ReservePendingSlot();
  inflight_++;
  w.BatchFor(shard)->Add(spec, this, seq, db, resp, args.data(), args.size());
  return true;
}

void Connection::QueueBehindLocks(RemoteCommand* rc, const std::vector<std::string_view>& keys) {
  LockTable::Request req;
  for (auto k : keys) req.keys.push_back(LockTable::LockKey(rc->db, k));
  req.exclusive = rc->spec->is_write();
  req.hold = false;
  req.on_admit = Task{RunRemoteNow, rc};
  Worker::Current()->locks().Enqueue(std::move(req));
}

void Connection::StartFiber(const CommandSpec* spec, CmdArgs args) {
  ReservePendingSlot();
  fiber_running_ = true;
  inflight_++;
  worker_->stats().multi_shard_commands++;
  CommandStat& st = worker_->stats().commands[spec->id];
  st.calls++;
  worker_->stats().total_commands_processed++;
  spec->fiber_fn(this, OwnedArgs::Copy(args));
}

void Connection::FinishFiber(std::string&& reply) {
  // The fiber's slot is the newest one reserved when it started: the client had no
  // commands in flight after it, since input is paused while a fiber runs.
  uint64_t seq = slot_base_ + slots_.size() - 1;
  fiber_running_ = false;
  CompleteSlot(seq, reply);
}

void Connection::CompleteSlot(uint64_t seq, std::string_view data) {
  Slot& s = slots_[seq - slot_base_];
  if (seq == slot_base_) {
    // The oldest outstanding reply: straight to the output, no intermediate copy.
    if (!s.suppress) out_.append(data);
    slots_.pop_front();
    slot_base_++;
  } else {
    s.data.assign(data);
    s.ready = true;
  }
  while (!slots_.empty() && slots_.front().ready) {
    if (!slots_.front().suppress) out_.append(slots_.front().data);
    slots_.pop_front();
    slot_base_++;
  }
  inflight_--;
  if (closing_) {
    MaybeDestroy();
    return;
  }
  Dirty();
  if (paused_ && !fiber_running_) {
    // Resume later in this turn, never from inside another command's call stack.
    paused_ = false;
    inflight_++;
    worker_->Defer(Task{[](void* p) {
                          auto* c = static_cast<Connection*>(p);
                          c->inflight_--;
                          if (c->closing_) {
                            c->MaybeDestroy();
                            return;
                          }
                          c->ProcessInput();
                        },
                        this});
  }
}

void Connection::Dirty() {
  if (dirty_) return;
  dirty_ = true;
  worker_->MarkDirty(this);
}

void Connection::FlushOutput() {
  dirty_ = false;
  if (closing_) {
    MaybeDestroy();
    return;
  }
  // While replies from other shards are still due for requests already read, hold the
  // output (up to kHoldOutputMax bytes) so that the whole pipelined batch leaves in one
  // send: fewer system calls here and fewer wake-ups for the client.
  if (inflight_ > 0 && !fiber_running_ && out_.size() < kHoldOutputMax) return;
  if (!send_active && !out_.empty()) {
    sending_.swap(out_);
    out_.clear();
    size_t n = sending_.size();
    if (worker_->loop().Send(this, sending_.data(), sending_.size())) {
      worker_->stats().total_net_output_bytes += n;
      sending_.clear();
      if (sending_.capacity() > 1 << 20) sending_.shrink_to_fit();
    }
  }
  Recharge();
  // Kill() may destroy this connection: nothing may follow it.
  if (close_after_reply_ && !send_active && out_.empty() && slots_.empty() && !fiber_running_)
    Kill();
}

void Connection::OnSendDone(int err) {
  if (err != 0) {
    Kill();
    return;
  }
  worker_->stats().total_net_output_bytes += sending_.size();
  sending_.clear();
  if (sending_.capacity() > 1 << 20) sending_.shrink_to_fit();
  if (!out_.empty() || close_after_reply_) Dirty();
  Recharge();
}

void Connection::Kill() {
  if (closing_) return;
  closing_ = true;
  if (blocked_ != nullptr) {
    // Leaving while blocked: cancel the wait unless a shard already served it.
    int expected = BlockedClient::kWaiting;
    if (blocked_->state.compare_exchange_strong(expected, BlockedClient::kCancelled) &&
        blocked_->handle) {
      std::coroutine_handle<> h = blocked_->handle;
      blocked_->handle = nullptr;
      worker_->Defer(ResumeTask(h));
    }
  }
  worker_->RemoveConnection(this);
  worker_->loop().Close(this);
}

void Connection::OnClosed() {
  io_closed_ = true;
  MaybeDestroy();
}

void Connection::MaybeDestroy() {
  if (io_closed_ && inflight_ == 0 && !fiber_running_ && !dirty_) delete this;
}

std::string Connection::InfoLine(int64_t now_ms) const {
  std::string cmd = "NULL";
  if (last_spec_ != nullptr) {
    cmd = last_spec_->name;
    if (last_spec_->subcommands != nullptr && !last_subcommand_.empty())
      cmd += "|" + last_subcommand_;
  }
  char buf[1024];
  std::snprintf(
      buf, sizeof(buf),
      "id=%llu addr=%s laddr=%s fd=%d name=%s age=%lld idle=%lld flags=N db=%u sub=0 psub=0 "
      "ssub=0 multi=-1 qbuf=%zu qbuf-free=%zu argv-mem=0 multi-mem=0 rbs=%zu rbp=0 obl=0 "
      "oll=0 omem=%zu tot-mem=%zu events=r cmd=%s user=default redir=-1 resp=%d lib-name=%s "
      "lib-ver=%s",
      static_cast<unsigned long long>(id_), addr_.c_str(), laddr_.c_str(), fd, name.c_str(),
      static_cast<long long>((now_ms - created_ms) / 1000),
      static_cast<long long>((now_ms - last_interaction_ms) / 1000), db, rend_ - rstart_,
      rbuf_.size() - (rend_ - rstart_), rbuf_.size(), out_.capacity() + sending_.capacity(),
      rbuf_.capacity() + out_.capacity() + sending_.capacity() + sizeof(*this), cmd.c_str(), resp,
      lib_name.c_str(), lib_ver.c_str());
  return buf;
}

}  // namespace strata
