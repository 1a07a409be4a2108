#include "server/engine/remote_batch.h"

#include <algorithm>
#include <cstring>

#include "core/hash.h"
#include "core/string_util.h"
#include "server/base/cycle_clock.h"
#include "server/engine/client_connection.h"
#include "server/engine/command.h"
#include "server/engine/worker.h"

namespace strata {

void ByteArena::Grow(size_t n) {
  size_t cap = cap_ < 4096 ? 4096 : cap_;
  while (cap - size_ < n) cap *= 2;
  auto fresh = std::make_unique_for_overwrite<char[]>(cap);
  if (size_ > 0) std::memcpy(fresh.get(), data_.get(), size_);
  data_ = std::move(fresh);
  cap_ = cap;
}

void RemoteBatch::AddRaw(const std::string_view* argv, size_t argc, std::string_view raw) {
  char* p = args.Extend(argc * sizeof(uint32_t) + raw.size());
  for (size_t i = 0; i < argc; i++) {
    uint32_t len = static_cast<uint32_t>(argv[i].size());
    std::memcpy(p, &len, sizeof(len));
    p += sizeof(len);
  }
  std::memcpy(p, raw.data(), raw.size());
}

std::string_view RemoteBatch::RawArgsOf(const Item& item, std::string_view* views) const {
  // The lengths, then "*<argc>\r\n", then "$<len>\r\n<bytes>" and two bytes for each
  // argument.
  const char* lens = args.data() + item.args_offset;
  const char* data = lens + item.argc * sizeof(uint32_t);
  const char* start = data;
  data += 3 + DecimalDigits(item.argc);
  for (uint32_t i = 0; i < item.argc; i++) {
    uint32_t len;
    std::memcpy(&len, lens + i * sizeof(uint32_t), sizeof(len));
    data += 3 + DecimalDigits(len);
    views[i] = std::string_view(data, len);
    data += len + 2;
  }
  return std::string_view(start, static_cast<size_t>(data - start));
}

namespace {

// Lookahead, as ClientConnection::PrefetchAhead does for a client's input: the table
// lookups of the second arguments (the key of most commands; every item's keys are this
// shard's) of items [first, end) that are in the first one's database are prefetched
// together. Items that travel as their request's bytes (with replicas) are left out.
void PrefetchItemKeys(const RemoteBatch& b, size_t first, size_t end, const Keyspace& ks) {
  uint64_t hashes[ClientConnection::kLookaheadRequests];
  size_t m = 0;
  uint32_t db = b.items[first].db;
  for (size_t i = first; i < end; i++) {
    const RemoteBatch::Item& item = b.items[i];
    if (item.raw || item.argc < 2 || item.db != db) continue;
    std::string_view key = b.SecondArgOf(item);
    if (key.empty() || key.size() > ClientConnection::kLookaheadKeyMax) continue;
    hashes[m++] = TableHash(key);
  }
  if (m > 0) ks.PrefetchLookups(db, hashes, m);
}

// Runs on the origin worker: hands every reply to its connection.
void DeliverRemoteBatch(void* p) {
  auto* batch = static_cast<RemoteBatch*>(p);
  // A connection's commands are added in runs (its input is parsed a read at a time), so
  // its replies are handed over a run at a time.
  size_t n = batch->items.size();
  for (size_t i = 0; i < n;) {
    ClientConnection* conn = batch->items[i].conn;
    size_t end = i + 1;
    while (end < n && batch->items[end].conn == conn) end++;
    conn->CompleteSlots(*batch, i, end);
    i = end;
  }
  Worker::Current()->RecycleBatch(batch);
}

}  // namespace

void ExecuteRemoteBatch(void* p) {
  auto* batch = static_cast<RemoteBatch*>(p);
  Worker* w = Worker::Current();
  thread_local std::vector<std::string_view> many_args;
  thread_local std::vector<std::string_view> keys;
  constexpr size_t kFewArgs = 16;
  std::string_view few_args[kFewArgs];
  const size_t count = batch->items.size();
  size_t looked = 0;  // items up to here had their keys prefetched
  for (size_t at = 0; at < count; at++) {
    if (at == looked && count > 1 &&
        w->keyspace().table(batch->items[at].db).size() >= ClientConnection::kLookaheadMinKeys) {
      looked = std::min(count, at + ClientConnection::kLookaheadRequests);
      PrefetchItemKeys(*batch, at, looked, w->keyspace());
    }
    RemoteBatch::Item& item = batch->items[at];
    std::string_view* argv = few_args;
    if (item.argc > kFewArgs) [[unlikely]] {
      many_args.resize(item.argc);
      argv = many_args.data();
    }
    std::string_view raw = batch->ArgsOf(item, argv);
    CmdArgs args(argv, item.argc);
    LockTable& locks = w->locks();
    if (!locks.empty()) {
      keys.clear();
      item.spec->Keys(args, &keys);
      if (!locks.CanRun(item.db, keys, item.spec->is_write())) {
        item.detached = true;
        auto* rc = new RemoteCommand{item.spec, item.conn, batch->origin,         item.seq,
                                     item.db,   item.resp, OwnedArgs::Copy(args), {},
                                     item.track};
        ClientConnection::QueueBehindLocks(rc, keys);
        continue;
      }
    }
    if (ColdGate* gate = w->cold_gate(); gate != nullptr) [[unlikely]] {
      keys.clear();
      item.spec->Keys(args, &keys);
      if (!keys.empty() && gate->MustWait(item.db, keys, item.spec->NeedsValues(args))) {
        item.detached = true;
        auto* rc = new RemoteCommand{item.spec, item.conn, batch->origin,         item.seq,
                                     item.db,   item.resp, OwnedArgs::Copy(args), {},
                                     item.track};
        ClientConnection::HoldForColdValues(rc, keys);
        continue;
      }
    }
    item.reply_offset = static_cast<uint32_t>(batch->replies.size());
    ReplyBuilder rb(&batch->replies, item.resp);
    ShardCtx ctx{*w, w->keyspace(), item.db, w->now_ms(), item.conn->is_master()};
    Keyspace::MasterCallScope master_call(ctx.ks, ctx.from_master);
    if (w->eviction().active() && (item.spec->flags & kCmdDenyOom)) [[unlikely]]
      w->eviction().BeforeWrite(args);
    uint64_t client = item.conn->id();  // fixed at creation: readable from any thread
    ExecScope exec(client, static_cast<TrackMode>(item.track), batch->origin);
    uint64_t t0 = CycleClock::Now();
    w->BeforeShardCall();
    item.spec->shard_fn(args, ctx, rb);
    if (w->repl_on()) [[unlikely]]
      w->Propagate(item.spec, args, item.db,
                   std::string_view(batch->replies).substr(item.reply_offset), raw);
    if (item.track == static_cast<uint8_t>(TrackMode::kRead)) [[unlikely]]
      w->tracking().RememberKeys(item.spec, args, client, batch->origin);
    uint64_t ticks = CycleClock::Now() - t0;
    item.reply_len = static_cast<uint32_t>(batch->replies.size() - item.reply_offset);
    w->CountCall(item.spec, ticks, item.reply_len > 0 && batch->replies[item.reply_offset] == '-',
                 args, item.db, item.conn, batch->origin != w->index());
    w->stats().remote_commands++;
  }
  w->Post(batch->origin, Task{DeliverRemoteBatch, batch});
}

}  // namespace strata
