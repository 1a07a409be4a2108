// RemoteBatch: the commands one worker's clients send to one other worker in one loop
// turn, travelling as a single message and coming back as a single message.
//
// The client's worker appends each command (its arguments copied into one arena) while
// it parses; at the end of the turn the batch is posted to the owning worker, which
// runs the commands in order, appends every reply to one reply arena, and posts the
// batch back. The client's worker then fills each connection's reply slot and returns
// the batch to its pool. Per command this costs no allocation once the pool is warm,
// and memory is always freed by the thread that allocated it.
//
// While replicas are attached, a command the client sent as canonical RESP travels as
// its own bytes (its argument lengths, then the request as it came): the owning worker
// finds the views in it, and its replication feed copies it rather than writing the
// command again (repl_feed.h).
//
// A command that meets a locked key on the owning shard leaves the batch: it is copied
// into a RemoteCommand and queued behind the lock (see lock_table.h); its reply comes
// back on its own.
// Thread-safety: built and recycled by the origin worker; read and answered by the
// destination worker while it holds the batch; never shared at the same time.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace strata {

class ClientConnection;
struct CommandSpec;

struct RemoteBatch {
  struct Item {
    const CommandSpec* spec;
    ClientConnection* conn;
    uint64_t seq;
    uint32_t db;
    uint32_t argc;
    uint32_t args_offset;  // into args: argc lengths (uint32) then the bytes
    uint32_t reply_offset;
    uint32_t reply_len;
    int8_t resp;
    bool detached;  // queued behind a lock; its reply travels separately
    uint8_t track;  // TrackMode for the client (tracking.h)
    bool raw;       // the bytes are the client's request itself (see above)
  };

  uint32_t origin = 0;
  std::string args;
  std::string replies;
  std::vector<Item> items;

  void Clear() {
    args.clear();
    replies.clear();
    items.clear();
  }
  // raw: the request's bytes when they are canonical RESP (Connection::RawRequestOf), or
  // empty.
  void Add(const CommandSpec* spec, ClientConnection* conn, uint64_t seq, uint32_t db, int resp,
           const std::string_view* argv, size_t argc, uint8_t track, std::string_view raw = {});
  // Rebuilds the argument views of an item into *out; returns the request's own bytes
  // when it travels as them, else empty.
  std::string_view ArgsOf(const Item& item, std::vector<std::string_view>* out) const;
};

// Runs on the destination worker: executes every item, then posts the batch home.
void ExecuteRemoteBatch(void* batch);

}  // namespace strata
