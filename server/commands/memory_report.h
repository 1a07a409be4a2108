// MemoryReport: where the process's memory goes, for INFO memory and MEMORY STATS/DOCTOR.
//
// What used_memory counts (every figure at the allocator's usable size)
//   - dataset: every entry (slot size in the shard's SlabHeap, or mimalloc block size for
//     large entries);
//   - table: each database's directory and segment arrays;
//   - clients: each connection's object, read and write buffers, pending reply slots and
//     the event loop's per-connection state and backlog;
//   - io: each worker's event-loop receive buffers.
// Each worker owns and updates its own figures (no atomics on the data path); a worker
// publishes its total once per loop turn for maxmemory, and INFO/MEMORY gather exact
// figures with one hop to every worker (CollectShardMemory runs on the worker's thread).
// Not counted: code, thread stacks, the cross-worker rings (mmap'd, touched lazily), and
// small fixed allocations made at start-up (config, command table). They show up as the
// difference between RSS and used_memory (mem_fragmentation_ratio) along with allocator
// slack, which is reported separately: slab pages not filled (allocator_frag_*) and
// memory mimalloc keeps committed (allocator_rss_*).
//
// Thread-safety: CollectShardMemory on the worker's own thread; the rest are pure
// functions over gathered figures, callable from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/entry.h"
#include "server/net/reply_builder.h"

namespace strata {

class Engine;
class Worker;

struct ShardMemory {
  uint32_t shard = 0;
  size_t entry_bytes = 0;
  size_t table_bytes = 0;
  size_t client_bytes = 0;
  size_t io_bytes = 0;
  size_t clients = 0;
  size_t keys = 0;
  size_t expires = 0;
  size_t slab_page_bytes = 0;
  size_t slab_slot_bytes = 0;
  size_t lazyfree_pending = 0;
  size_t tier_bytes = 0;      // the spill tier's share (cache, table readers, I/O buffers)
  size_t pubsub_bytes = 0;    // the worker's Pub/Sub subscriber table
  size_t tracking_bytes = 0;  // the shard's CLIENT TRACKING table
  size_t type_bytes[kValueTypeCount] = {};
  size_t type_keys[kValueTypeCount] = {};
  std::vector<size_t> db_keys;         // per database
  std::vector<size_t> db_table_bytes;  // per database
  size_t used() const {
    return entry_bytes + table_bytes + client_bytes + io_bytes + tier_bytes + pubsub_bytes +
           tracking_bytes;
  }
};

// Runs on w's thread.
ShardMemory CollectShardMemory(Worker& w, uint32_t dbs);

struct MemorySummary {
  std::vector<ShardMemory> shards;
  size_t used = 0;
  size_t dataset = 0;  // entries
  size_t table = 0;
  size_t clients = 0;
  size_t io = 0;
  size_t tiered = 0;
  size_t pubsub = 0;    // subscriber tables and the process-wide channel directory
  size_t tracking = 0;  // the shards' CLIENT TRACKING tables
  size_t startup = 0;
  size_t overhead = 0;  // used - dataset
  size_t peak = 0;
  size_t rss = 0;
  size_t keys = 0;
  size_t expires = 0;
  size_t client_count = 0;
  size_t slab_page_bytes = 0;
  size_t slab_slot_bytes = 0;
  size_t lazyfree_pending = 0;
  size_t mimalloc_committed = 0;
  size_t allocator_active = 0;    // used plus unfilled slab pages
  size_t allocator_resident = 0;  // reported as active (see Summarize)
  size_t type_bytes[kValueTypeCount] = {};
  size_t type_keys[kValueTypeCount] = {};
  int64_t maxmemory = 0;
  std::string maxmemory_policy;
  size_t total_system_memory = 0;
};

// Also updates the server's peak.
MemorySummary Summarize(Engine& srv, std::vector<ShardMemory> shards);

// The body of INFO's "# Memory" section (Redis's fields, then strata's breakdown).
void AppendInfoMemory(const MemorySummary& m, std::string* out);
// MEMORY STATS reply.
void ReplyMemoryStats(const MemorySummary& m, ReplyBuilder& rb);
// MEMORY DOCTOR: findings in plain language.
std::string MemoryDoctor(const MemorySummary& m);

size_t ProcessRssBytes();
std::string HumanBytes(uint64_t bytes);

}  // namespace strata
