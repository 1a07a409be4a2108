// DirtyRanges: which parts of a shard's hash space changed since the last snapshot, for
// incremental snapshots (docs/ARCHITECTURE.md "Snapshots", docs/FORMAT.md "Deltas").
//
// A range is (database, top kRangeBits bits of the key's table hash): 2^22 ranges per
// database, so with a few million keys a range holds about one key and a delta's size
// follows the number of keys changed. A delta stores every live key of each dirty
// range and its loader first deletes whatever the range held, so deletions and
// expirations need no tombstones. Sets are CRoaring bitmaps of range ids
// (db << kRangeBits | range).
//
// Thread-safety: a RangeSet is a value owned by one thread; the tracker belongs to its
// shard's thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/keyspace.h"

typedef struct roaring_bitmap_s roaring_bitmap_t;

namespace strata {

class RangeSet {
 public:
  static constexpr uint32_t kRangeBits = 22;
  static constexpr uint32_t kMaxDbs = 1024;  // db ids must fit above the range bits

  RangeSet();
  ~RangeSet();
  RangeSet(RangeSet&& o) noexcept;
  RangeSet& operator=(RangeSet&& o) noexcept;
  RangeSet(const RangeSet&) = delete;
  RangeSet& operator=(const RangeSet&) = delete;

  static uint32_t Id(uint32_t db, uint64_t hash) {
    return db << kRangeBits | static_cast<uint32_t>(hash >> (64 - kRangeBits));
  }
  static uint32_t DbOf(uint32_t id) { return id >> kRangeBits; }
  // The first table hash of a range, and the last.
  static uint64_t FirstHash(uint32_t id) {
    return static_cast<uint64_t>(id & ((1u << kRangeBits) - 1)) << (64 - kRangeBits);
  }
  static uint64_t LastHash(uint32_t id) { return FirstHash(id) | (~0ull >> kRangeBits); }

  void Add(uint32_t id);
  void AddDb(uint32_t db);  // every range of db
  bool Contains(uint32_t db, uint64_t hash) const;
  // The smallest id >= from, if any.
  bool NextAtLeast(uint32_t from, uint32_t* id) const;
  void Merge(const RangeSet& other);
  uint64_t Cardinality() const;
  bool empty() const;
  size_t MemoryBytes() const;
  void Clear();

  // varint range bits, then the bitmap in CRoaring's portable format.
  void Encode(std::string* out) const;
  // False (and *error set) when the bytes are not a valid encoding.
  static bool Decode(std::string_view in, RangeSet* out, std::string* error);

 private:
  roaring_bitmap_t* bm_;
};

// The tracker a keyspace reports changes to (keyspace.h ChangeTracker).
class DirtyRanges : public ChangeTracker {
 public:
  void KeyChanged(uint32_t db, uint64_t table_hash) override {
    uint32_t id = RangeSet::Id(db, table_hash);
    if (id == last_) return;  // runs of writes to one key cost a compare
    last_ = id;
    live_.Add(id);
  }
  void DbChanged(uint32_t db) override {
    live_.AddDb(db);
    last_ = UINT32_MAX;
  }
  // At a snapshot's cut: the ranges changed since the previous cut; tracking goes on
  // into an empty set.
  RangeSet Take() {
    RangeSet out = std::move(live_);
    live_ = RangeSet();
    last_ = UINT32_MAX;
    return out;
  }
  // A snapshot that failed gives its ranges back, so the next one writes them.
  void GiveBack(const RangeSet& s) { live_.Merge(s); }
  const RangeSet& live() const { return live_; }

 private:
  RangeSet live_;
  uint32_t last_ = UINT32_MAX;
};

}  // namespace strata
