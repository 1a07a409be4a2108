// Table: one shard's hash table of entries, grown by extendible hashing.
//
// How it works
//   A directory of 2^G segment pointers is indexed by the top G bits of the key's
//   TableHash. A segment has a local depth L <= G (it owns every hash whose top L bits
//   equal its prefix) and 2^kBucketBits buckets, chained through Entry::next, indexed
//   by the hash bits just below the prefix (bits L .. L+kBucketBits). When a segment
//   holds more than kSegmentLoadMax entries it splits in two (depth L+1); when L == G
//   the directory doubles first (pointer copies only). Growth therefore never rehashes
//   the whole table: the cost of one insert is bounded by one segment's size, and
//   there is no 2x memory spike.
//
// SCAN order
//   Every bucket covers a contiguous range of the hash space: the hashes whose top
//   L+kBucketBits bits are the bucket's. Splits only ever cut a range into finer
//   ranges, never move a key to an earlier range. A cursor is a position in hash space
//   (the top kCursorBits bits); ScanBucket() returns the bucket containing the cursor
//   and the position where that bucket ends. A key present during a whole scan is
//   therefore returned at least once however the table grows in between, and a cursor
//   left at a bucket boundary stays a boundary. The table never shrinks.
//
// Thread-safety: owned by one shard thread; no internal synchronisation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/entry.h"

namespace strata {

class Table {
 public:
  static constexpr int kBucketBits = 8;
  static constexpr uint32_t kBuckets = 1u << kBucketBits;
  static constexpr uint32_t kSegmentLoadMax = kBuckets;  // average chain length 1
  static constexpr int kDepthMax = 32;
  static constexpr int kCursorBits = 40;
  static constexpr uint64_t kCursorEnd = 1ull << kCursorBits;

  Table();
  ~Table();  // destroys every entry
  Table(const Table&) = delete;
  Table& operator=(const Table&) = delete;

  Entry* Find(std::string_view key, uint64_t hash) const;
  // The link (bucket head or previous entry's next) that points at the key's entry,
  // or nullptr when absent. Valid until the next Insert.
  Entry** FindLink(std::string_view key, uint64_t hash);
  // REQUIRES: no entry with e's key is present.
  void Insert(Entry* e, uint64_t hash);
  // Puts e where *link's entry was and returns the old entry (not freed).
  Entry* ReplaceAt(Entry** link, Entry* e);
  // Unlinks and returns the entry at *link (not freed).
  Entry* UnlinkAt(Entry** link);

  size_t size() const { return size_; }
  // Directory and bucket arrays, in bytes (entries are accounted by their owner).
  size_t OverheadBytes() const;

  // Calls fn(Entry** link) for each entry in the bucket holding `cursor`; fn returns
  // true when it unlinked the entry at *link (the walk then stays on that link).
  // Returns the position after that bucket, or 0 when the end of the table is reached.
  template <class F>
  uint64_t ScanBucket(uint64_t cursor, F&& fn);

  // Visits every entry; fn must not modify the table.
  template <class F>
  void ForEach(F&& fn) const;

  // A pseudo-random entry chosen from `seed`, or nullptr when empty.
  Entry* RandomEntry(uint64_t seed) const;

  // Destroys every entry and resets to an empty table; returns the entry bytes freed.
  size_t Clear();

 private:
  struct Segment {
    uint32_t depth;
    uint32_t count;
    Entry* buckets[kBuckets];
  };

  uint32_t DirIndex(uint64_t hash) const {
    return global_depth_ == 0 ? 0 : static_cast<uint32_t>(hash >> (64 - global_depth_));
  }
  static uint32_t BucketIndex(const Segment* s, uint64_t hash) {
    return static_cast<uint32_t>((hash << s->depth) >> (64 - kBucketBits));
  }
  void Split(uint32_t dir_index);
  static Segment* NewSegment(uint32_t depth);
  static void FreeSegment(Segment* s);

  std::vector<Segment*> dir_;
  uint32_t global_depth_ = 0;
  size_t segments_ = 0;
  size_t size_ = 0;
};

template <class F>
uint64_t Table::ScanBucket(uint64_t cursor, F&& fn) {
  if (cursor >= kCursorEnd) return 0;
  uint32_t dir_index =
      global_depth_ == 0 ? 0 : static_cast<uint32_t>(cursor >> (kCursorBits - global_depth_));
  Segment* s = dir_[dir_index];
  int shift = kCursorBits - static_cast<int>(s->depth) - kBucketBits;
  uint64_t start = (cursor >> shift) << shift;
  uint32_t bucket = static_cast<uint32_t>((cursor >> shift) & (kBuckets - 1));
  Entry** link = &s->buckets[bucket];
  while (*link != nullptr) {
    Entry* e = *link;
    if (fn(link)) {
      // fn unlinked e (through UnlinkAt, which keeps counts right); *link is now next.
      continue;
    }
    link = &e->next;
  }
  uint64_t next = start + (1ull << shift);
  return next >= kCursorEnd ? 0 : next;
}

template <class F>
void Table::ForEach(F&& fn) const {
  const Segment* prev = nullptr;
  for (const Segment* s : dir_) {
    if (s == prev) continue;  // consecutive directory slots share a segment
    prev = s;
    for (Entry* head : s->buckets) {
      for (Entry* e = head; e != nullptr; e = e->next) fn(e);
    }
  }
}

}  // namespace strata
