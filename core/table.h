// Table: one shard database's hash table of entries.
//
// Shape
//   Extendible hashing: a directory of 2^G segment pointers indexed by the top G bits of
//   the key's TableHash. A segment has a local depth L <= G and owns every hash whose top
//   L bits equal its prefix. A segment that fills up either grows (a bigger array, no
//   key is rehashed) or, at kMaxSegmentBytes, splits in two (depth L+1); the directory
//   doubles by copying pointers when L == G. No operation ever touches more than one
//   segment, so there is no global rehash and no 2x memory spike.
//
// A segment is an open-addressing array of 8-byte slots. A slot holds the entry pointer
//   (low 48 bits) and a 16-bit tag: the hash bits just below the segment's prefix, bits
//   [L, L+16). The tag is both the filter (a probe dereferences an entry only when the
//   tags are equal) and the position: an entry's home is tag * capacity >> 16, and
//   entries are kept sorted by tag (linear probing with ordered insertion, a "Robin
//   Hood" table). So:
//     - a lookup starts at its home and stops at the first slot with a larger tag or an
//       empty slot past its home;
//     - growing a segment re-places slots from their tags alone (no entry is touched);
//     - a delete shifts the following displaced slots back (no tombstones);
//     - a range of tags is a contiguous run, which is what SCAN walks.
//   A segment has kTailSlots past its capacity so that displaced entries never wrap.
//   Capacity is chosen to fill its allocation exactly: mimalloc's size class for small
//   segments, whole OS pages (mmap) from 16 KiB up, so that the array a growing segment
//   leaves behind is returned at once instead of lingering as allocator free space.
//   A segment grows at 7/8 full, so the load factor stays between ~0.6 and 0.875:
//   about 10-11 bytes of table per key.
//
// SCAN order
//   A cursor is a position in hash space (the top kCursorBits bits). A scan step covers
//   one chunk: 1/256 of a segment's tag range. Splits only cut a chunk's range into finer
//   ranges and growth does not move ranges at all, so a key present during a whole scan
//   is returned at least once however the table grows in between. The table never
//   shrinks its directory.
//
// Thread-safety: owned by one shard thread; no internal synchronisation. Refs and entry
// pointers returned are valid until the next Insert or Erase.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/entry.h"

namespace strata {

class SlabHeap;

class Table {
 public:
  static constexpr int kCursorBits = 40;
  static constexpr uint64_t kCursorEnd = 1ull << kCursorBits;
  static constexpr uint32_t kTailSlots = 32;
  static constexpr size_t kMaxSegmentBytes = 32 * 1024;
  static constexpr int kDepthMax = 32;
  static constexpr int kChunkBits = 8;           // a SCAN step covers 1/256 of a segment
  static constexpr uint32_t kPrefetchAhead = 8;  // slots, in whole-range walks

  struct Segment;
  // A located slot: the segment and the position in it. Null when seg is null.
  struct Ref {
    Segment* seg = nullptr;
    uint32_t pos = 0;
    explicit operator bool() const { return seg != nullptr; }
  };

  // total_bytes, when given, is a running sum (shared by the owner's tables) that this
  // table keeps up to date with its OverheadBytes().
  explicit Table(SlabHeap& heap, size_t* total_bytes = nullptr);
  ~Table();  // destroys every entry
  Table(const Table&) = delete;
  Table& operator=(const Table&) = delete;

  Entry* Find(std::string_view key, uint64_t hash) const;
  Ref Locate(std::string_view key, uint64_t hash) const;
  // Starts loading the cache line of hash's home slot (a loader that knows its next
  // keys hides the miss of each insert behind the work on the previous ones).
  void Prefetch(uint64_t hash) const {
    const Segment* s = dir_[DirIndex(hash)];
    PrefetchLine(&s->slots[Home(TagFor(hash, s->depth), s->cap)]);
  }
  // Lookahead over a batch of lookups (at most kLookaheadMax; more are ignored). A
  // lookup in a table bigger than the caches waits on cache misses in a row: the
  // segment's header, the home slot, the entry (and the directory's line first, when
  // the directory is big). This takes each step for every hash of the batch before the
  // next step, so that the misses of one step overlap and the batch waits about three
  // times rather than three times per key:
  //   1. the segment header's line (reading the directory);
  //   2. the home slot's line, found through the header;
  //   3. the first two lines of the entry of the first slot whose tag is the hash's,
  //      found through the slots: the key, and for a short key the value's start.
  // Hints only: nothing is written, and a key that is absent costs only the reads.
  static constexpr size_t kLookaheadMax = 32;
  void PrefetchLookups(const uint64_t* hashes, size_t n) const;
  static Entry* At(Ref r);
  // Calls fn(entry) for every entry whose slot tag matches hash's: a superset of the
  // entries with this hash (callers compare TableHash of the key); fn must not modify
  // the table.
  template <class F>
  void ForEachWithTag(uint64_t hash, F&& fn) const {
    const Segment* s = dir_[DirIndex(hash)];
    uint32_t tag = TagFor(hash, s->depth);
    for (uint32_t pos = Home(tag, s->cap); pos < s->nslots; pos++) {
      uint64_t slot = s->slots[pos];
      if (slot == 0) return;
      uint32_t t = TagOf(slot);
      if (t > tag) return;
      if (t == tag) fn(PtrOf(slot));
    }
  }
  // REQUIRES: no entry with e's key is present; hash == TableHash(e->Key()).
  void Insert(Entry* e, uint64_t hash);
  // Puts e (same key) where r's entry was and returns the old entry (not freed).
  Entry* Replace(Ref r, Entry* e);
  // Removes and returns r's entry (not freed).
  Entry* Erase(Ref r);

  size_t size() const { return size_; }
  // Directory and segment arrays, in bytes at their allocation's usable size.
  size_t OverheadBytes() const { return dir_bytes_ + segment_bytes_; }
  // The table bytes attributable to the entry at r: its segment's bytes shared evenly.
  static size_t ShareBytes(Ref r);

  // Calls fn(Entry*) for each entry in the chunk holding `cursor`; fn returns true to
  // have the entry removed from the table (fn then owns it and frees it).
  // Returns the position after that chunk, or 0 when the end of the table is reached.
  template <class F>
  uint64_t ScanChunk(uint64_t cursor, F&& fn);

  // Visits every entry; fn must not modify the table.
  template <class F>
  void ForEach(F&& fn) const;

  // A pseudo-random entry chosen from `seed`, or nullptr when empty.
  Entry* RandomEntry(uint64_t seed) const;

  // For an empty table about to receive about n keys in any order (loading a snapshot,
  // whose keys come sorted by hash): sets up the segments they will need at once, each
  // about 70% full at n. Keys inserted in hash order into a small table would pile up
  // in the part of a segment their hashes share; with the final segments they land
  // near their homes. No-op unless the table is empty.
  void Reserve(size_t n);
  // Destroys every entry and resets to an empty table; returns the entry bytes freed.
  size_t Clear();
  // Destroys the entries of chunks from *cursor on until at least `budget` entries are
  // gone or the end is reached (then *cursor is 0); returns the entry bytes freed.
  // Used to free a big collection a slice at a time.
  size_t DestroySome(uint64_t* cursor, size_t budget);

  size_t segments() const { return segments_; }
  uint32_t global_depth() const { return global_depth_; }

  struct Segment {
    uint32_t depth;
    uint32_t count;
    uint32_t cap;     // homes are in [0, cap)
    uint32_t nslots;  // cap + kTailSlots
    uint32_t bytes;   // usable size of this allocation
    uint32_t pad;
    uint64_t slots[];
  };

  // The segment owning `hash`, and the range of hashes it owns: [first, first + span),
  // where span = 2^(64 - depth) (all of hash space when depth is 0).
  Segment* SegmentFor(uint64_t hash) const { return dir_[DirIndex(hash)]; }
  static uint64_t SegmentFirstHash(const Segment* s, uint64_t hash) {
    return s->depth == 0 ? 0 : hash & ~(~0ull >> s->depth);
  }
  // Visits the entries of one segment, in slot order; fn must not modify the table.
  template <class F>
  static void ForEachInSegment(const Segment* s, F&& fn) {
    for (uint32_t i = 0; i < s->nslots; i++) {
      if (s->slots[i] != 0) fn(PtrOf(s->slots[i]));
    }
  }
  // Visits the entries of segment s whose hash lies in [first, last], a sub-range of the
  // segment's own hash range, walking only the slots of that tag run (entries whose
  // hashes share the tag bits may lie just outside when the range is narrower than a
  // tag: callers that care check). fn may change an entry's flags only.
  template <class F>
  static void ForEachInHashRange(Segment* s, uint64_t first, uint64_t last, F&& fn) {
    uint32_t t_lo = TagFor(first, s->depth), t_hi = TagFor(last, s->depth);
    uint32_t last_home = Home(t_hi, s->cap);
    for (uint32_t pos = Home(t_lo, s->cap); pos < s->nslots; pos++) {
      // Entries are scattered in memory: fetch a few slots ahead while this one is used.
      if (pos + kPrefetchAhead < s->nslots && s->slots[pos + kPrefetchAhead] != 0)
        __builtin_prefetch(PtrOf(s->slots[pos + kPrefetchAhead]));
      uint64_t slot = s->slots[pos];
      if (slot == 0) {
        if (pos >= last_home) break;
        continue;
      }
      uint32_t tag = TagOf(slot);
      if (tag > t_hi) break;
      if (tag >= t_lo) fn(PtrOf(slot));
    }
  }
  // Every distinct segment, in directory order; fn must not modify the table.
  template <class F>
  void ForEachSegment(F&& fn) {
    Segment* prev = nullptr;
    for (Segment* s : dir_) {
      if (s == prev) continue;
      prev = s;
      fn(s);
    }
  }

 private:
  static constexpr uint64_t kPtrMask = (1ull << 48) - 1;
  // (An asm statement: GCC drops a __builtin_prefetch whose result nothing reads here.)
  static void PrefetchLine(const void* p) {
#if defined(__x86_64__)
    asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
#else
    __builtin_prefetch(p);
#endif
  }
  static Entry* PtrOf(uint64_t s) { return reinterpret_cast<Entry*>(s & kPtrMask); }
  static uint32_t TagOf(uint64_t s) { return static_cast<uint32_t>(s >> 48); }
  static uint64_t MakeSlot(Entry* e, uint32_t tag) {
    return reinterpret_cast<uint64_t>(e) | (static_cast<uint64_t>(tag) << 48);
  }
  static uint32_t Home(uint32_t tag, uint32_t cap) {
    return static_cast<uint32_t>((static_cast<uint64_t>(tag) * cap) >> 16);
  }
  static uint32_t TagFor(uint64_t hash, uint32_t depth) {
    return static_cast<uint32_t>((hash << depth) >> 48);
  }
  uint32_t DirIndex(uint64_t hash) const {
    return global_depth_ == 0 ? 0 : static_cast<uint32_t>(hash >> (64 - global_depth_));
  }
  Segment* NewSegment(uint32_t depth, size_t min_cap);
  void FreeSegment(Segment* s);
  // Places sorted slots into an empty segment; false if they do not fit.
  static bool PlaceSorted(Segment* s, const uint64_t* slots, size_t n);
  static bool InsertSorted(Segment* s, uint64_t slot);
  static void EraseAt(Segment* s, uint32_t pos);
  void Grow(uint32_t dir_index);
  void Split(uint32_t dir_index);

  SlabHeap& heap_;
  std::vector<Segment*> dir_;
  uint32_t global_depth_ = 0;
  size_t segments_ = 0;
  size_t size_ = 0;
  size_t dir_bytes_ = 0;
  size_t segment_bytes_ = 0;
  size_t* total_bytes_;
  size_t own_total_ = 0;  // total_bytes_ points here when the owner keeps no sum
  void SetDirBytes(size_t n) {
    *total_bytes_ += n - dir_bytes_;
    dir_bytes_ = n;
  }
};

template <class F>
uint64_t Table::ScanChunk(uint64_t cursor, F&& fn) {
  if (cursor >= kCursorEnd) return 0;
  uint32_t dir_index =
      global_depth_ == 0 ? 0 : static_cast<uint32_t>(cursor >> (kCursorBits - global_depth_));
  Segment* s = dir_[dir_index];
  int shift = kCursorBits - static_cast<int>(s->depth) - kChunkBits;
  uint64_t next = ((cursor >> shift) + 1) << shift;
  uint32_t chunk = static_cast<uint32_t>((cursor >> shift) & ((1u << kChunkBits) - 1));
  uint32_t t_lo = chunk << (16 - kChunkBits);
  uint32_t t_hi = t_lo + (1u << (16 - kChunkBits));
  uint32_t last_home = Home(t_hi - 1, s->cap);
  uint32_t pos = Home(t_lo, s->cap);
  while (pos < s->nslots) {
    uint64_t slot = s->slots[pos];
    if (slot == 0) {
      if (pos >= last_home) break;
      pos++;
      continue;
    }
    uint32_t tag = TagOf(slot);
    if (tag >= t_hi) break;
    if (tag < t_lo) {
      pos++;
      continue;
    }
    if (fn(PtrOf(slot))) {
      EraseAt(s, pos);
      size_--;
      continue;  // the next slot, if displaced, moved into pos
    }
    pos++;
  }
  return next >= kCursorEnd ? 0 : next;
}

template <class F>
void Table::ForEach(F&& fn) const {
  const Segment* prev = nullptr;
  for (const Segment* s : dir_) {
    if (s == prev) continue;  // consecutive directory slots share a segment
    prev = s;
    for (uint32_t i = 0; i < s->nslots; i++) {
      if (s->slots[i] != 0) fn(PtrOf(s->slots[i]));
    }
  }
}

}  // namespace strata
