// Stream values: StreamObject (a Redis stream: its entries, its metadata and its consumer
// groups), the iterator over its entries, and the builder that makes one from parts.
//
// Owns: the nodes holding the entries (packed buffers, one malloc block each; their
// byte layout is in stream_node.h), the ordered map from each node's base ID to the
// node, the consumer groups with their pending entries lists (PEL) and consumers, and
// the stream's metadata: last-generated-id, entries-added, max-deleted-entry-id and
// recorded-first-entry-id, as Redis 7 keeps them.
//
// Entries. XADD appends to the last node while it has fewer than stream-node-max-entries
// entries (live and deleted) and the new entry fits in stream-node-max-bytes; otherwise
// a node is started (the old one is shrunk to its size). A node stores the field names
// and value lengths of its first entry once; later entries with the same names (and
// lengths) store neither, IDs are deltas from the previous entry (one byte for the next
// sequence number in the same millisecond, flags included), and 7-bit text values are
// packed 8 characters in 7 bytes. An entry of 5 fields with 10-byte values costs 46 bytes,
// 46.75 with its share of the node header and map slot, against 70.5 in Redis 7.0.15
// (tests/unit/core/stream_type_test.cc measures it). Encoding buffers belong to the
// calling thread (stream_type.cc), not to any stream.
//   XDEL flags an entry deleted in place (a tombstone); a node is freed when its last live
// entry goes and rewritten without its tombstones once they outnumber its live entries.
// Exact trimming (MAXLEN/MINID =) frees whole nodes from the front, then flags entries of
// the first remaining node; approximate trimming (~) frees whole nodes only, as Redis
// does, both within an optional LIMIT of entries.
//   Costs: an ID lookup is a map search (O(log nodes)) plus a scan of one node; a range
// seeks the same way and then decodes only what it returns (plus the rest of a node at
// either end); trimming is linear in what it removes; XADD is amortized O(1) (the last
// node grows by half each time it is full, up to the byte limit).
//
// Consumer groups follow Redis 7, with the later fix to entries-read (Valkey, Redis 7.2+):
// a read by a group whose position fell before the first entry (trimmed past) estimates
// the counter again instead of adding one. Each group has its last-delivered-id, an
// entries-read counter (-1 when unknown), a PEL (an ordered map ID -> delivery time,
// delivery count, owning consumer) and its consumers by name; each consumer owns the
// ordered set of the IDs it has pending, and its seen-time and active-time. The lag of a
// group is entries-added minus entries-read when that counter is valid and no tombstone
// lies after the group's position, else it is estimated as Redis's
// streamEstimateDistanceFromFirstEverEntry does, or unknown (GroupLag).
//
// Canonical serialized form (Serialize / Parse; COPY, RENAME, MOVE and snapshots), byte by
// byte (varints are LEB128; a zvarint is a zigzag-encoded varint; an ID is its ms and seq
// as two varints; an ID list is delta-coded: the first ID whole, then for each next ID
// the varint ms delta followed, when that delta is 0, by the varint (seq - previous seq - 1),
// else by the varint seq):
//   u8        format version (kStreamFormatVersion)
//   varint    length (live entries)
//   ID        last-generated-id
//   ID        recorded-first-entry-id (the first entry's ID, 0-0 when empty)
//   ID        max-deleted-entry-id
//   varint    entries-added
//   length x entry, in ID order:
//     ID      delta-coded as above
//     varint  field count << 1 | 1 when the field names equal the previous entry's
//     names   unless flagged: field count x (varint length, bytes)
//     values  field count x (varint length, bytes)
//   varint    group count
//   group count x group, in name order:
//     varint length, name bytes
//     ID        last-delivered-id
//     varint    entries-read + 1 (0: unknown)
//     varint    consumer count
//     consumer count x consumer, in name order:
//       varint length, name bytes; zvarint seen-time ms; zvarint active-time ms (-1: never)
//     varint    PEL count
//     PEL count x pending entry, in ID order:
//       ID (delta-coded); zvarint delivery time ms; varint delivery count;
//       varint index of the owning consumer in the list above
// Parse rejects anything else (truncation, trailing bytes, IDs out of order, counts that
// disagree, an unknown consumer) with an error message; it never trusts a count to size
// an allocation.
//
// Thread-safety: a StreamObject belongs to the thread of the shard owning the entry that
// points at it, like every collection (object.h); iterators and entry views are valid
// until the stream's next change. StreamLimits is read by any shard thread.
#pragma once

#include <malloc.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <new>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/object.h"
#include "core/stream_node.h"

namespace strata {

// Node size limits, Redis's stream-node-max-bytes and stream-node-max-entries. Set from
// the config (CONFIG SET applies to nodes started afterwards); 0 means no limit (a node
// then stops at 1 GiB or 65535 entries).
struct StreamLimits {
  std::atomic<int64_t> node_max_bytes{4096};
  std::atomic<int64_t> node_max_entries{100};
};
StreamLimits& GlobalStreamLimits();

inline constexpr uint8_t kStreamFormatVersion = 1;
// The largest total of field and value bytes one entry may have (Redis's limit).
inline constexpr uint64_t kStreamEntryBytesMax = uint64_t{1} << 30;

// Outcomes of stream writes that can be refused; StreamStatusMessage gives Redis's text.
enum class StreamStatus : uint8_t {
  kOk,
  kIdZero,                     // XADD 0-0
  kIdExhausted,                // the last ID is the largest possible
  kIdTooSmall,                 // XADD with an ID not above the last one
  kTooLarge,                   // an entry over kStreamEntryBytesMax
  kSetIdBelowGivenMaxDeleted,  // XSETID id < its MAXDELETEDID
  kSetIdBelowMaxDeleted,       // XSETID id < the stream's max-deleted-entry-id
  kSetIdBelowTop,              // XSETID id < the last entry's ID
  kEntriesAddedBelowLength,    // XSETID ENTRIESADDED < the stream's length
};
// The Redis error reply for a status ("ERR ..."); "" for kOk.
const char* StreamStatusMessage(StreamStatus s);

// How a range bound was written (XRANGE, XREVRANGE, XPENDING, XAUTOCLAIM).
enum class StreamBoundStatus : uint8_t {
  kOk,
  kInvalidId,     // "ERR Invalid stream ID specified as stream command argument"
  kInvalidStart,  // "ERR invalid start ID for the interval" ("(" past the largest ID)
  kInvalidEnd,    // "ERR invalid end ID for the interval" ("(" before 0-0)
};
// Parses a range bound: an ID, "-" or "+", or "(" and an ID to exclude it, and returns
// the inclusive bound. An incomplete start takes sequence 0, an incomplete end the
// largest sequence.
StreamBoundStatus ParseStreamBound(std::string_view text, bool is_end, StreamId* inclusive);

// One entry: its ID and field/value pairs, in the order they were added. The views are
// valid until the iterator that produced them moves or the stream changes.
struct StreamEntry {
  StreamId id;
  std::vector<std::pair<std::string_view, std::string_view>> fields;
};

namespace stream_detail {

// A std allocator that adds the usable size of every block it hands out to a counter
// (and takes it back on release), so the containers of a stream are charged exactly.
template <class T>
class CountingAllocator {
 public:
  using value_type = T;
  explicit CountingAllocator(size_t* bytes) : bytes_(bytes) {}
  template <class U>
  CountingAllocator(const CountingAllocator<U>& o) : bytes_(o.bytes()) {}
  T* allocate(size_t n) {
    void* p = std::malloc(n * sizeof(T));
    if (p == nullptr) throw std::bad_alloc();
    *bytes_ += malloc_usable_size(p);
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t) {
    *bytes_ -= malloc_usable_size(p);
    std::free(p);
  }
  size_t* bytes() const { return bytes_; }
  template <class U>
  bool operator==(const CountingAllocator<U>& o) const {
    return bytes_ == o.bytes();
  }

 private:
  size_t* bytes_;
};

}  // namespace stream_detail

struct StreamConsumer;

// A PEL entry: an entry delivered to a consumer and not yet acknowledged.
struct StreamPending {
  int64_t delivery_ms = 0;      // last delivery, unix ms
  uint64_t delivery_count = 0;  // deliveries so far
  StreamConsumer* consumer = nullptr;
};

using StreamPel =
    std::map<StreamId, StreamPending, std::less<>,
             stream_detail::CountingAllocator<std::pair<const StreamId, StreamPending>>>;
using StreamIdSet = std::set<StreamId, std::less<>, stream_detail::CountingAllocator<StreamId>>;

struct StreamConsumer {
  StreamConsumer(std::string_view n, size_t* bytes)
      : name(n), pending(stream_detail::CountingAllocator<StreamId>(bytes)) {}
  std::string name;
  int64_t seen_ms = 0;     // last attempted interaction (read, claim), unix ms
  int64_t active_ms = -1;  // last successful read or claim, unix ms; -1: never
  StreamIdSet pending;     // the group PEL entries this consumer owns
};

using StreamConsumerMap =
    std::map<std::string_view, std::unique_ptr<StreamConsumer>, std::less<>,
             stream_detail::CountingAllocator<
                 std::pair<const std::string_view, std::unique_ptr<StreamConsumer>>>>;

// Read these freely; change them through StreamObject (which keeps its byte count and the
// PEL/consumer links right).
struct StreamGroup {
  StreamGroup(std::string_view n, size_t* bytes)
      : name(n),
        pel(stream_detail::CountingAllocator<std::pair<const StreamId, StreamPending>>(bytes)),
        consumers(stream_detail::CountingAllocator<
                  std::pair<const std::string_view, std::unique_ptr<StreamConsumer>>>(bytes)) {}
  std::string name;
  StreamId last_id;           // last-delivered-id
  int64_t entries_read = -1;  // entries-read; -1: unknown (Redis's SCG_INVALID_ENTRIES_READ)
  StreamPel pel;
  StreamConsumerMap consumers;  // by name, in byte order
};

using StreamGroupMap =
    std::map<std::string_view, std::unique_ptr<StreamGroup>, std::less<>,
             stream_detail::CountingAllocator<
                 std::pair<const std::string_view, std::unique_ptr<StreamGroup>>>>;

// XADD's ID argument.
struct StreamAddId {
  enum Kind : uint8_t {
    kAuto,      // "*": now_ms, or the next ID after the last
    kExplicit,  // "<ms>-<seq>" (or "<ms>", seq 0)
    kPartial,   // "<ms>-*": the next sequence number within ms
  };
  Kind kind = kAuto;
  StreamId id;  // kExplicit: the ID; kPartial: its ms
};

// XADD's and XTRIM's trimming arguments.
struct StreamTrimSpec {
  enum Strategy : uint8_t { kNone, kMaxLen, kMinId };
  Strategy strategy = kNone;
  bool approx = false;  // "~": remove whole nodes only
  uint64_t max_len = 0;
  StreamId min_id;
  // At most this many entries are removed (0: no limit). Redis's command sets it only
  // with "~": LIMIT, or 100 * stream-node-max-entries by default.
  uint64_t limit = 0;
};

// XPENDING's summary form.
struct StreamPendingSummary {
  size_t count = 0;
  StreamId min, max;  // meaningful when count > 0
  // Consumers with pending entries, by name, with how many each has.
  std::vector<std::pair<std::string_view, size_t>> consumers;
};

// One line of XPENDING's extended form.
struct StreamPendingLine {
  StreamId id;
  std::string_view consumer;
  int64_t idle_ms = 0;
  uint64_t delivery_count = 0;
};

// XCLAIM's options.
struct StreamClaimOptions {
  int64_t min_idle_ms = 0;
  // The delivery time to record: IDLE (now - idle) or TIME; -1 for now. A value below
  // 0 or past now is taken as now, as Redis does.
  int64_t delivery_ms = -1;
  int64_t retry_count = -1;  // RETRYCOUNT; -1: not given
  bool force = false;        // FORCE: create missing PEL entries for existing entries
  bool justid = false;       // JUSTID: do not count a delivery
  StreamId last_id;          // LASTID: raises the group's last-delivered-id (0-0: not given)
};

struct StreamAutoClaimResult {
  StreamId next;                  // the cursor for the next call; 0-0 at the end
  std::vector<StreamId> claimed;  // in PEL order
  std::vector<StreamId> deleted;  // PEL entries dropped because their entry is gone
};

class StreamIterator;
class StreamBuilder;

// REQUIRES: allocated on the heap, like every CollectionObject (Bytes() counts the object
// itself at its usable size).
class StreamObject final : public CollectionObject {
 public:
  using NodeMap = std::map<StreamId, char*, std::less<>,
                           stream_detail::CountingAllocator<std::pair<const StreamId, char*>>>;

  StreamObject();
  ~StreamObject() override;
  StreamObject(const StreamObject&) = delete;
  StreamObject& operator=(const StreamObject&) = delete;

  // ---- metadata (XINFO STREAM) ----
  StreamId last_id() const { return last_id_; }                // last-generated-id
  StreamId first_id() const { return first_id_; }              // recorded-first-entry-id
  StreamId max_deleted_id() const { return max_deleted_id_; }  // max-deleted-entry-id
  uint64_t entries_added() const { return entries_added_; }
  // The last live entry's ID (Redis's streamLastValidID); 0-0 when empty.
  StreamId last_entry_id() const { return last_entry_id_; }
  // Nodes (XINFO's radix-tree-keys; each node is also one map node: radix-tree-nodes).
  size_t node_count() const { return nodes_.size(); }

  // ---- writes to entries ----
  // XADD: appends an entry of field_values (field, value, field, value...; at least one
  // pair) under the ID `add` asks for, and sets *added. Refusals, checked in Redis's
  // order: kIdZero (explicit 0-0), kIdExhausted, kIdTooSmall, kTooLarge. The stream is
  // unchanged on a refusal.
  StreamStatus Add(StreamAddId add, std::span<const std::string_view> field_values, int64_t now_ms,
                   StreamId* added);
  // XDEL of one ID: true when a live entry was deleted (max-deleted-entry-id and the
  // first ID follow).
  bool Delete(StreamId id);
  // XTRIM (and XADD's trimming): returns the entries removed. Moves the recorded first ID;
  // leaves max-deleted-entry-id alone, as Redis does.
  uint64_t Trim(const StreamTrimSpec& spec);
  // XSETID: ENTRIESADDED (-1: not given) and MAXDELETEDID (0-0: not given) with Redis's
  // checks; nothing changes on a refusal.
  StreamStatus SetId(StreamId id, int64_t entries_added, StreamId max_deleted_id);

  // ---- reads ----
  // Live entries with start <= ID <= end, ascending, or descending from end when reverse.
  // XRANGE/XREVRANGE take their bounds from ParseStreamBound and stop after COUNT; XREAD
  // starts after its ID (Increment); XINFO's first-entry and last-entry are the first
  // element of Range(Min, Max) and of its reverse.
  StreamIterator Range(StreamId start, StreamId end, bool reverse = false) const;
  // Whether a live entry has this ID (Redis's streamEntryExists).
  bool Contains(StreamId id) const;

  // ---- lag (Redis 7.2) ----
  // Whether a tombstone may lie in [start, end] (streamRangeHasTombstones).
  bool RangeHasTombstones(StreamId start, StreamId end) const;
  // The logical read counter of id, its distance from the first entry ever added, or -1
  // when it cannot be known (streamEstimateDistanceFromFirstEverEntry).
  int64_t EstimateEntriesRead(StreamId id) const;
  // XINFO's lag of a group; false when it is unknown (nil).
  bool GroupLag(const StreamGroup& g, int64_t* lag) const;

  // ---- consumer groups (stream_groups.cc) ----
  const StreamGroupMap& groups() const { return groups_; }
  StreamGroup* FindGroup(std::string_view name);
  const StreamGroup* FindGroup(std::string_view name) const;
  // XGROUP CREATE: null when a group has that name (BUSYGROUP).
  StreamGroup* CreateGroup(std::string_view name, StreamId last_id, int64_t entries_read);
  // XGROUP SETID.
  void SetGroupId(StreamGroup* g, StreamId last_id, int64_t entries_read);
  // XGROUP DESTROY: true when the group existed.
  bool DestroyGroup(std::string_view name);
  StreamConsumer* FindConsumer(StreamGroup* g, std::string_view name);
  // XGROUP CREATECONSUMER: null when the consumer exists. seen-time is now_ms.
  StreamConsumer* CreateConsumer(StreamGroup* g, std::string_view name, int64_t now_ms);
  // The consumer XREADGROUP, XCLAIM and XAUTOCLAIM act for: found or created, its
  // seen-time set to now_ms. *created (optional) says which.
  StreamConsumer* TouchConsumer(StreamGroup* g, std::string_view name, int64_t now_ms,
                                bool* created = nullptr);
  // XGROUP DELCONSUMER: deletes the consumer and its PEL entries; returns how many it had
  // (0 when there is no such consumer).
  size_t DeleteConsumer(StreamGroup* g, std::string_view name);

  // XREADGROUP with ">": delivers up to count (0: no limit) entries after the group's
  // last-delivered-id, calling fn for each in order. Moves last-delivered-id and
  // entries-read along; unless noack, adds each entry to the PEL (delivery now_ms, count
  // 1) owned by c, taking it from another consumer if it was pending there, and sets c's
  // active-time. Returns the entries delivered (0 when there is nothing new).
  size_t ReadGroupNew(StreamGroup* g, StreamConsumer* c, size_t count, bool noack, int64_t now_ms,
                      const std::function<void(const StreamEntry&)>& fn);
  // XREADGROUP with an ID: c's own pending entries from start (inclusive), up to count
  // (0: no limit), calling fn(id, entry) or fn(id, nullptr) for an entry that no longer
  // exists. Found entries get a delivery (now_ms, count + 1).
  size_t ReadGroupHistory(StreamGroup* g, StreamConsumer* c, StreamId start, size_t count,
                          int64_t now_ms,
                          const std::function<void(StreamId, const StreamEntry*)>& fn);
  // XACK of one ID: true when it was pending.
  bool Ack(StreamGroup* g, StreamId id);
  // XPENDING key group.
  StreamPendingSummary PendingSummary(const StreamGroup& g) const;
  // XPENDING key group [IDLE min] start end count [consumer]: PEL entries (c's own when c
  // is not null) with start <= ID <= end and idle >= min_idle_ms, up to count.
  void PendingRange(const StreamGroup& g, const StreamConsumer* c, StreamId start, StreamId end,
                    size_t count, int64_t min_idle_ms, int64_t now_ms,
                    std::vector<StreamPendingLine>* out) const;
  // XCLAIM: gives c the PEL entries among ids idle for at least min_idle_ms (FORCE:
  // creating them for existing entries). Appends the claimed IDs, in argument order, to
  // *claimed, and to *dropped the IDs whose PEL entry was removed because the entry no
  // longer exists. Sets c's active-time when anything is claimed.
  void Claim(StreamGroup* g, StreamConsumer* c, std::span<const StreamId> ids,
             const StreamClaimOptions& opts, int64_t now_ms, std::vector<StreamId>* claimed,
             std::vector<StreamId>* dropped);
  // XAUTOCLAIM key group consumer min-idle start [COUNT count] [JUSTID]: scans the PEL
  // from start, at most count * 10 entries, until count entries were claimed or dropped.
  void AutoClaim(StreamGroup* g, StreamConsumer* c, StreamId start, size_t count,
                 int64_t min_idle_ms, bool justid, int64_t now_ms, StreamAutoClaimResult* out);

  // ---- CollectionObject ----
  size_t Bytes() const override;
  const char* Encoding() const override { return "stream"; }
  size_t Length() const override { return length_; }
  void Serialize(std::string* out) const override;
  // Lazy freeing: the groups at once, then nodes a slice at a time. The stream is
  // unusable after the first call.
  size_t ReleaseSome(size_t budget) override;

  // Builds a stream from its canonical serialized form; null (and *error) when the bytes
  // are not one.
  static std::unique_ptr<StreamObject> Parse(std::string_view serialized, std::string* error);

  const NodeMap& nodes() const { return nodes_; }

 private:
  friend class StreamBuilder;
  friend class StreamIterator;

  // Appends an entry with this ID. REQUIRES: id > every ID in the last node, the pairs
  // fit kStreamEntryBytesMax.
  void AppendEntry(StreamId id, std::span<const std::string_view> field_values);
  void FreeNode(NodeMap::iterator it);
  void ShrinkNode(NodeMap::iterator it);
  // Rewrites the node without its tombstones.
  void CompactNode(NodeMap::iterator it);
  void MaybeCompact(NodeMap::iterator it);
  // Recompute first_id_ / last_entry_id_ from the nodes.
  void RefreshFirstId();
  void RefreshLastEntryId();
  // The node holding the live entry id, and the entry's offset; false when absent.
  bool Locate(StreamId id, NodeMap::const_iterator* node, uint32_t* off) const;
  void DestroyGroupObject(std::unique_ptr<StreamGroup> g);
  void RemovePending(StreamGroup* g, StreamPel::iterator it);
  // Adds or reassigns a PEL entry for a delivery to c.
  void Deliver(StreamGroup* g, StreamConsumer* c, StreamId id, int64_t now_ms);

  size_t aux_bytes_ = 0;   // containers (counting allocators), groups, consumers, names
  size_t node_bytes_ = 0;  // node blocks at usable size
  NodeMap nodes_;
  uint64_t length_ = 0;
  uint64_t entries_added_ = 0;
  StreamId last_id_;
  StreamId first_id_;
  StreamId last_entry_id_;
  StreamId max_deleted_id_;
  StreamGroupMap groups_;
};

// Walks a stream's live entries in a range (StreamObject::Range). Invalid once the stream
// changes.
class StreamIterator {
 public:
  bool Valid() const { return valid_; }
  StreamId id() const { return head_.id; }
  // The current entry, its fields decoded on first use.
  const StreamEntry& entry() const;
  void Next();

 private:
  friend class StreamObject;
  StreamIterator(const StreamObject& s, StreamId start, StreamId end, bool reverse);
  // Loads the node at node_ and positions on its first candidate entry.
  void EnterNode();
  // Finds the next live entry in range from the current position (inclusive).
  void Settle();

  const StreamObject* s_;
  StreamObject::NodeMap::const_iterator node_;
  StreamId start_, end_;
  bool reverse_;
  bool valid_ = false;
  bool in_node_ = false;
  stream_node::Master master_;
  stream_node::EntryHead head_;
  // Forward: the current entry's offset and the previous entry's ID.
  uint32_t off_ = 0;
  StreamId prev_;
  bool first_ = true;
  // Reverse: each entry of the node as (offset, previous ID), and the current index.
  std::vector<std::pair<uint32_t, StreamId>> positions_;
  size_t index_ = 0;
  mutable bool loaded_ = false;
  mutable StreamEntry entry_;
  mutable std::string scratch_;
};

// Builds a StreamObject from its parts, as a loader has them (storage's RdbStream, or
// Parse): entries in ID order, then metadata, then each group with its PEL and
// consumers. The first error is kept and later calls do nothing; Finish reports it.
class StreamBuilder {
 public:
  StreamBuilder();
  ~StreamBuilder();

  // An entry (field, value, ...; at least one pair) above every entry before it.
  void AppendRaw(StreamId id, std::span<const std::string_view> field_values);
  // The stream's metadata. Without it, last-generated-id is the last entry's ID and
  // entries-added the length. The recorded first ID is always the first entry's.
  void SetMetadata(StreamId last_id, uint64_t entries_added, StreamId max_deleted_id);
  // A group (entries_read -1: unknown); the calls below apply to the last group added.
  void AddGroup(std::string_view name, StreamId last_id, int64_t entries_read);
  // A PEL entry, above the previous one of the group; its owner is named by
  // AddConsumerPending (every PEL entry must get exactly one).
  void AddPending(StreamId id, int64_t delivery_ms, uint64_t delivery_count);
  void AddConsumer(std::string_view name, int64_t seen_ms, int64_t active_ms);
  // Gives the last consumer added the group's PEL entry id.
  void AddConsumerPending(StreamId id);

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  // The stream, or null with *error set.
  std::unique_ptr<StreamObject> Finish(std::string* error);

 private:
  friend class StreamObject;  // Parse

  void Fail(std::string message);
  // Checks that every PEL entry of the current group has an owner.
  void CloseGroup();
  // Gives the current group's PEL entry id to consumer c.
  void Own(StreamConsumer* c, StreamId id);
  // A PEL entry owned by the index-th consumer of the current group (Parse's form).
  void AddPendingOwned(StreamId id, int64_t delivery_ms, uint64_t delivery_count,
                       uint64_t consumer_index);

  std::unique_ptr<StreamObject> s_;
  std::string error_;
  bool have_entry_ = false;
  StreamId last_entry_;
  bool metadata_set_ = false;
  StreamGroup* group_ = nullptr;
  StreamConsumer* consumer_ = nullptr;
  bool have_pending_ = false;
  StreamId last_pending_;
  size_t unowned_ = 0;                      // PEL entries of the current group without an owner yet
  std::vector<StreamConsumer*> consumers_;  // of the current group, in the order added
};

}  // namespace strata
