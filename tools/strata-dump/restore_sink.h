// RestoreSink: writes items to a live server (strata, Redis or Valkey) with pipelined
// RESTORE over parallel connections.
//
// The caller's thread cuts the items into batches (kBatchKeys keys or kBatchBytes
// bytes) and queues them (at most 2 per connection wait, so memory stays bounded); one
// thread per connection sends a batch as one pipeline - SELECT where the database
// changes (after --db-map), RESTORE key ttl payload ABSTTL [REPLACE] [IDLETIME|FREQ] -
// and reads the replies. A key the target refuses as "payload version or checksum" or
// "Bad data format" (an older server, a newer encoding) is written again with the
// type's own commands (plain_commands.h), and so is every key past --max-value-bytes,
// in chunks. BUSYKEY without --replace, and any other error, stop the run with the key
// and the reply.
//
// Checkpoints: each batch carries the source position that re-reads it; SafePosition()
// is the position before the oldest batch not yet acknowledged, so a run restarted
// there (--resume) misses nothing (and writes again at most what was in flight).
//
// Thread-safety: Start, Add, Finish and SafePosition on the caller's thread; the
// connection threads are internal.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tools/strata-dump/item.h"
#include "tools/strata-mem/resp_client.h"

namespace strata::dump {

struct RestoreOptions {
  mem::Endpoint to;
  mem::ClientOptions client;
  int connections = 4;
  bool replace = false;
  std::map<uint32_t, uint32_t> db_map;
  uint64_t max_value_bytes = 64ull << 20;
  size_t chunk_bytes = 1 << 20;
};

struct RestoreStats {
  std::atomic<uint64_t> keys{0};
  std::atomic<uint64_t> bytes{0};
  std::atomic<uint64_t> plain{0};    // written with type commands (refused payloads)
  std::atomic<uint64_t> chunked{0};  // past --max-value-bytes
};

class RestoreSink {
 public:
  static constexpr size_t kBatchKeys = 256;
  static constexpr size_t kBatchBytes = 1 << 20;

  explicit RestoreSink(RestoreOptions opts) : opts_(std::move(opts)) {}
  ~RestoreSink();
  // Connects every connection (a wrong address or password fails here).
  bool Start(std::string* error);
  // position: the source's position that reads this item again; only read when
  // NeedsPosition() (the item starts a batch), so a caller computes it only then.
  bool Add(Item item, const std::string& position, std::string* error);
  bool NeedsPosition() const { return open_.items.empty(); }
  // Loads a function library (FUNCTION LOAD REPLACE) on the target.
  bool LoadFunction(const std::string& code, std::string* error);
  // Sends what is queued and waits for every reply.
  bool Finish(std::string* error);
  // The position to resume from: before the oldest batch not acknowledged, or
  // `current` (the source's position now) when every batch is.
  std::string SafePosition(const std::string& current);
  const RestoreStats& stats() const { return stats_; }
  uint32_t MapDb(uint32_t db) const;

 private:
  struct Batch {
    uint64_t seq;
    std::string position;
    std::vector<Item> items;
  };
  void Flush();
  void Worker(mem::RespClient* c);
  bool SendBatch(mem::RespClient* c, Batch& b, uint32_t* cur_db, std::string* error);
  bool WritePlain(mem::RespClient* c, const Item& item, std::string* error);
  void SetError(const std::string& e);

  RestoreOptions opts_;
  std::vector<std::unique_ptr<mem::RespClient>> clients_;
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Batch> queue_;
  std::map<uint64_t, std::string> in_flight_;  // seq -> position, not yet acknowledged
  bool closing_ = false;
  std::string error_;
  std::atomic<bool> failed_{false};
  Batch open_;
  size_t open_bytes_ = 0;
  uint64_t next_seq_ = 0;
  RestoreStats stats_;
};

}  // namespace strata::dump
