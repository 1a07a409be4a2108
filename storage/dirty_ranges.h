// DirtyRanges: which parts of a shard's hash space changed since the last snapshot, for
// incremental snapshots (docs/ARCHITECTURE.md "Snapshots", docs/FORMAT.md "Deltas").
//
// A range is (database, top `bits` bits of the key's table hash): 2^24 ranges per
// database as written now (2^22 in older files; each set carries its width), so with a
// few million keys a range holds well under one key and a delta's size follows the
// number of keys changed. A delta stores every live key of each dirty
// range and its loader first deletes whatever the range held, so deletions and
// expirations need no tombstones. Sets are CRoaring bitmaps of range ids
// (db << bits | range).
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
  // The width of the files written before widths were chosen, and the narrowest and
  // widest a set may have. A wider range holds fewer keys, so a delta writes fewer keys
  // that did not change; its set costs more memory when most ranges are dirty (2^bits
  // bits per database at most).
  static constexpr uint32_t kRangeBits = 22;
  static constexpr uint32_t kMinRangeBits = 8;
  static constexpr uint32_t kMaxRangeBits = 24;

  explicit RangeSet(uint32_t bits = kRangeBits);
  ~RangeSet();
  RangeSet(RangeSet&& o) noexcept;
  RangeSet& operator=(RangeSet&& o) noexcept;
  RangeSet(const RangeSet&) = delete;
  RangeSet& operator=(const RangeSet&) = delete;

  // The width for a server with `databases` databases: kMaxRangeBits, or less when the
  // database ids would not fit above it in 32 bits (more than 256 databases).
  static uint32_t BitsFor(uint32_t databases);

  uint32_t bits() const { return bits_; }
  uint32_t Id(uint32_t db, uint64_t hash) const {
    return db << bits_ | static_cast<uint32_t>(hash >> (64 - bits_));
  }
  uint32_t DbOf(uint32_t id) const { return id >> bits_; }
  // The first table hash of a range, and the last.
  uint64_t FirstHash(uint32_t id) const {
    return static_cast<uint64_t>(id & ((1u << bits_) - 1)) << (64 - bits_);
  }
  uint64_t LastHash(uint32_t id) const { return FirstHash(id) | (~0ull >> bits_); }

  void Add(uint32_t id);
  void AddDb(uint32_t db);  // every range of db
  bool Contains(uint32_t db, uint64_t hash) const;
  // The smallest id >= from, if any.
  bool NextAtLeast(uint32_t from, uint32_t* id) const;
  // Whether every id in [first, last] is in the set.
  bool AllIn(uint32_t first, uint32_t last) const;
  // For an id in the set: the last id of the run of ids in the set that starts there,
  // within id's database (O(log run) lookups).
  uint32_t RunEnd(uint32_t id) const;
  // Adds other's ranges (of any width: a range of another width adds every range of
  // this width that overlaps it).
  void Merge(const RangeSet& other);
  uint64_t Cardinality() const;
  bool empty() const;
  size_t MemoryBytes() const;
  void Clear();

  // varint range bits, then the bitmap in CRoaring's portable format.
  void Encode(std::string* out) const;
  // False (and *error set) when the bytes are not a valid encoding. The set takes the
  // width written (kMinRangeBits..kMaxRangeBits).
  static bool Decode(std::string_view in, RangeSet* out, std::string* error);

 private:
  roaring_bitmap_t* bm_;
  uint32_t bits_;
};

// The tracker a keyspace reports changes to (keyspace.h ChangeTracker), in ranges of
// one width.
class DirtyRanges : public ChangeTracker {
 public:
  explicit DirtyRanges(uint32_t bits = RangeSet::kRangeBits) : live_(bits) {}
  void KeyChanged(uint32_t db, uint64_t table_hash) override {
    uint32_t id = live_.Id(db, table_hash);
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
    live_ = RangeSet(out.bits());
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
