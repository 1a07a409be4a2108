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
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/small_copy.h"

namespace strata {

class ClientConnection;
struct CommandSpec;

// An append-only byte buffer that grows by doubling and never writes bytes it is about to
// overwrite (std::string's resize zero-fills first); cleared, it keeps its capacity.
class ByteArena {
 public:
  // n more bytes at the end, for the caller to write.
  char* Extend(size_t n) {
    if (cap_ - size_ < n) [[unlikely]]
      Grow(n);
    char* p = data_.get() + size_;
    size_ += n;
    return p;
  }
  const char* data() const { return data_.get(); }
  size_t size() const { return size_; }
  size_t capacity() const { return cap_; }
  void clear() { size_ = 0; }
  void Release() {
    data_.reset();
    size_ = cap_ = 0;
  }

 private:
  void Grow(size_t n);
  std::unique_ptr<char[]> data_;
  size_t size_ = 0;
  size_t cap_ = 0;
};

struct RemoteBatch {
  struct Item {
    const CommandSpec* spec;
    ClientConnection* conn;
    uint64_t seq;
    uint32_t db;
    uint32_t argc;
    uint32_t args_offset;  // into args: the arguments as Add lays them out
    uint32_t reply_offset;
    uint32_t reply_len;
    int8_t resp;
    bool detached;  // queued behind a lock; its reply travels separately
    uint8_t track;  // TrackMode for the client (tracking.h)
    bool raw;       // the bytes are the client's request itself (see above)
  };

  uint32_t origin = 0;
  ByteArena args;
  std::string replies;
  std::vector<Item> items;

  void Clear() {
    args.clear();
    replies.clear();
    items.clear();
  }
  // raw: the request's bytes when they are canonical RESP (Connection::RawRequestOf), or
  // empty.
  // Inline: it runs for every command sent to another shard. Each argument is its length
  // (uint32) then its bytes; a raw item is all the lengths, then the request.
  [[gnu::always_inline]] void Add(const CommandSpec* spec, ClientConnection* conn, uint64_t seq,
                                  uint32_t db, int resp, const std::string_view* argv, size_t argc,
                                  uint8_t track, std::string_view raw = {}) {
    uint32_t at = static_cast<uint32_t>(args.size());
    if (!raw.empty()) [[unlikely]] {
      AddRaw(argv, argc, raw);
    } else {
      for (size_t i = 0; i < argc; i++) {
        uint32_t len = static_cast<uint32_t>(argv[i].size());
        char* p = args.Extend(sizeof(len) + len);
        std::memcpy(p, &len, sizeof(len));
        CopySmall(p + sizeof(len), argv[i].data(), len);
      }
    }
    items.push_back(Item{spec, conn, seq, db, static_cast<uint32_t>(argc), at, 0, 0,
                         static_cast<int8_t>(resp), false, track, !raw.empty()});
  }
  void AddRaw(const std::string_view* argv, size_t argc, std::string_view raw);
  // Rebuilds the argument views of an item into out[0, item.argc); returns the request's
  // own bytes when it travels as them, else empty.
  [[gnu::always_inline]] std::string_view ArgsOf(const Item& item, std::string_view* out) const {
    if (item.raw) [[unlikely]]
      return RawArgsOf(item, out);
    const char* p = args.data() + item.args_offset;
    for (uint32_t i = 0; i < item.argc; i++) {
      uint32_t len;
      std::memcpy(&len, p, sizeof(len));
      out[i] = std::string_view(p + sizeof(len), len);
      p += sizeof(len) + len;
    }
    return {};
  }
  std::string_view RawArgsOf(const Item& item, std::string_view* out) const;
  // The second argument of an item that travels as its arguments (not raw) and has two
  // or more; what ArgsOf would give as out[1], without the others (the lookahead).
  std::string_view SecondArgOf(const Item& item) const {
    const char* p = args.data() + item.args_offset;
    uint32_t len;
    std::memcpy(&len, p, sizeof(len));
    p += sizeof(len) + len;
    std::memcpy(&len, p, sizeof(len));
    return std::string_view(p + sizeof(len), len);
  }
};

// Runs on the destination worker: executes every item, then posts the batch home.
void ExecuteRemoteBatch(void* batch);

}  // namespace strata
