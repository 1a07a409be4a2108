// Sorted-set values: the listpack small form, ZSetObject, and the reads and writes that
// work on either.
//
// Owns: the score encoding of the small form, ZSetObject (a big sorted set: its member
// entries, their table and the ScoreIndex over them), ZSetReader, ZSetEditor and the
// builders of whole sorted sets (StoreZSet, MaterializeZSet).
//
// Encodings (OBJECT ENCODING names and thresholds as in Redis):
//   listpack   small form: a packed list (packed_list.h) member, score, member, score ...
//              sorted by (score, member), kept while the set has at most
//              zset-max-listpack-entries members and none longer than
//              zset-max-listpack-value bytes. A score item is the decimal text of an
//              integral score when that is shorter than 8 characters (|x| < 10^7, e.g.
//              "0", "-42"), else the 8 bytes of the IEEE double, so every double
//              (+-inf, -0, subnormals) round-trips exactly and a score never costs more
//              than 9 bytes. The small form keeps +0 where Redis's listpack does (a -0 added
//              to it is stored as 0).
//   skiplist   ZSetObject: a Table (table.h) with one entry per member (key = member,
//              value = the 8-byte score) from the shard's SlabHeap, for O(1) ZSCORE, and a
//              ScoreIndex (zset_index.h) of (score, entry) items for ranks, rank selection
//              and range starts in O(log n). A member costs its bytes plus ~45 (entry
//              header and score 11, table slot ~11, index item ~16-23).
// A sorted set moves to the big form when an add takes it past either limit, and does not
// move back (as in Redis), except that results written whole (the STORE commands, COPY,
// RENAME, MOVE) take the form their size calls for.
// The canonical serialized form (object.h) is the small form, whatever the size.
//
// Thread-safety: ZSetObject, ZSetReader and ZSetEditor run on the thread of the shard
// owning the entry (ZSetReader's views are valid until that shard's next write).
// ZMember vectors and the score codec are plain memory, usable on any thread.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/keyspace.h"
#include "core/object.h"
#include "core/table.h"
#include "core/zset_index.h"

namespace strata {

// A member and its score; the bytes are a view owned elsewhere.
struct ZMember {
  std::string_view member;
  double score;
};

// (score, member) order.
inline bool ZLess(const ZMember& a, const ZMember& b) {
  return ScoreIndex::Compare(a.score, a.member, b.score, b.member) < 0;
}

// The small form's score items.
namespace zscore {
// Encodes s into buf and returns the item's bytes (a view of buf).
std::string_view Encode(double s, char (&buf)[8]);
// REQUIRES: item came from Encode (length 8, or 1 to 7 decimal characters).
double Decode(std::string_view item);
}  // namespace zscore

// The small form's bytes.
namespace zpacked {
// Appends the members of a small form to out, in order (views into buf).
void Decode(std::string_view buf, std::vector<ZMember>* out);
// REQUIRES: items sorted by ZLess, members distinct, not empty.
std::string Encode(const std::vector<ZMember>& items);
// True when buf is a well-formed small form: a packed list of member/score pairs, scores
// well-formed and not NaN, in strictly increasing order.
bool Valid(std::string_view buf);
}  // namespace zpacked

// The number of members of a sorted-set entry (either form), without decoding it.
size_t ZSetLength(const Entry* e);

// Whether a sorted set of this many members, the longest this long, fits the small form.
bool ZSetFitsPacked(size_t members, size_t longest_member);

class ZSetObject final : public CollectionObject {
 public:
  explicit ZSetObject(SlabHeap& heap);
  ~ZSetObject() override;

  // Adds member with score, or moves an existing member to score. True when new.
  bool Set(std::string_view member, double score);
  // True when the member was there.
  bool Remove(std::string_view member);
  // Removes the member whose entry is m. REQUIRES: m belongs to this set.
  void RemoveEntry(Entry* m);
  // The member's entry (its key is the member, ScoreOf gives its score), or null.
  Entry* Find(std::string_view member) const;
  static double ScoreOf(const Entry* m);

  const ScoreIndex& index() const { return index_; }
  Table& table() { return table_; }
  const Table& table() const { return table_; }

  size_t Bytes() const override;
  const char* Encoding() const override { return "skiplist"; }
  size_t Length() const override { return table_.size(); }
  void Serialize(std::string* out) const override;
  // Lazy freeing: drops the index at once (its nodes only), then the members a slice at a
  // time. The set is unusable after the first call.
  size_t ReleaseSome(size_t budget) override;

 private:
  static void SetScoreInPlace(Entry* m, double score);

  SlabHeap& heap_;
  size_t entry_bytes_ = 0;
  Table table_;
  ScoreIndex index_;
  uint64_t release_cursor_ = 0;
};

// Reads over either form of a sorted-set entry (REQUIRES: e->Type() == kZSet). Ranks are
// 0-based in ascending (score, member) order.
class ZSetReader {
 public:
  explicit ZSetReader(const Entry* e);

  bool big() const { return obj_ != nullptr; }
  size_t size() const { return obj_ != nullptr ? obj_->Length() : count_; }
  bool Score(std::string_view member, double* score) const;
  // The rank and score of member; false when absent.
  bool Rank(std::string_view member, size_t* rank, double* score) const;
  // The number of leading members for which below(member, score) holds (a predicate that
  // holds for a prefix of the order).
  template <class Below>
  size_t CountWhile(Below below) const;
  // Calls fn(member, score) from rank `start` towards the end, or towards rank 0 when
  // reverse, until fn returns false or the set is exhausted. REQUIRES: start < size().
  template <class Fn>
  void Walk(size_t start, bool reverse, Fn fn) const;
  // The member of rank r. REQUIRES: r < size().
  ZMember At(size_t r) const;

 private:
  // The small form's members, decoded on first use (point lookups scan the bytes).
  const std::vector<ZMember>& Items() const;

  const ZSetObject* obj_ = nullptr;
  std::string_view packed_;  // small form: the entry's value
  size_t count_ = 0;
  mutable bool decoded_ = false;
  mutable std::vector<ZMember> items_;  // small form, views into the entry
};

// Redis's zsetAdd flags.
enum ZAddIn : int { kZAddNx = 1, kZAddXx = 2, kZAddGt = 4, kZAddLt = 8, kZAddIncr = 16 };
enum ZAddOut : int { kZAddNaN = 1, kZAddAdded = 2, kZAddUpdated = 4, kZAddNop = 8 };

// Changes a stored sorted set in place of its key, or creates it. A ZSetObject is changed
// in place; a small form is edited as a sorted vector of views (into the old value and
// into the caller's arguments, which must stay valid until Commit) and written back by
// Commit, converting to a ZSetObject when an add passes the limits. Entry pointers of the
// shard are invalid after Commit.
class ZSetEditor {
 public:
  // e: key's zset entry, or null for a key that does not exist yet.
  ZSetEditor(Keyspace& ks, uint32_t db, std::string_view key, Entry* e);
  ZSetEditor(const ZSetEditor&) = delete;
  ZSetEditor& operator=(const ZSetEditor&) = delete;

  size_t size() const;
  bool Score(std::string_view member, double* score) const;
  // Redis's zsetAdd: in_flags ZAddIn, *out_flags ZAddOut; false (nothing changed) when the
  // score or the incremented score is NaN. *newscore is set when the member was added or
  // its score set (not on a no-op).
  bool Add(std::string_view member, double score, int in_flags, int* out_flags, double* newscore);
  bool Remove(std::string_view member);
  // Removes ranks [start, end] (ascending order, inclusive). REQUIRES: end < size().
  void RemoveRanks(size_t start, size_t end);
  // Removes up to count members from the low end (or the high end when max), appending
  // copies in pop order.
  void Pop(bool max, size_t count, std::vector<std::pair<std::string, double>>* out);
  // Writes the changes back (keeping the key's TTL); deletes the key when it is empty.
  void Commit();

 private:
  void ToBig();
  ZSetObject* big() const { return obj_ != nullptr ? obj_ : fresh_.get(); }

  Keyspace& ks_;
  uint32_t db_;
  std::string_view key_;
  Entry* e_;
  int64_t expire_ms_ = Entry::kNoExpire;
  ZSetObject* obj_ = nullptr;  // e_'s own object, changed in place
  size_t obj_bytes_before_ = 0;
  std::unique_ptr<ZSetObject> fresh_;  // a big form made during this edit
  std::vector<ZMember> items_;         // the small form, sorted
  bool changed_ = false;
};

// Writes a whole sorted set to key, replacing what was there and dropping any TTL: the
// small form when it fits, else a ZSetObject; the key is deleted when items is empty.
// items: distinct members in any order (sorted here).
void StoreZSet(Keyspace& ks, uint32_t db, std::string_view key, std::vector<ZMember>* items);

// MaterializeCollection for sorted sets.
std::unique_ptr<CollectionObject> MaterializeZSet(std::string_view serialized, SlabHeap& heap);

// ---- templates ----

template <class Below>
size_t ZSetReader::CountWhile(Below below) const {
  if (obj_ != nullptr) {
    return obj_->index().CountWhile(
        [&](const ScoreIndex::Item& it) { return below(it.member(), it.score); });
  }
  const std::vector<ZMember>& items = Items();
  auto it = std::partition_point(items.begin(), items.end(),
                                 [&](const ZMember& m) { return below(m.member, m.score); });
  return static_cast<size_t>(it - items.begin());
}

template <class Fn>
void ZSetReader::Walk(size_t start, bool reverse, Fn fn) const {
  if (obj_ == nullptr) {
    const std::vector<ZMember>& items = Items();
    if (reverse) {
      for (size_t i = start + 1; i-- > 0;) {
        if (!fn(items[i].member, items[i].score)) return;
      }
    } else {
      for (size_t i = start; i < items.size(); i++) {
        if (!fn(items[i].member, items[i].score)) return;
      }
    }
    return;
  }
  ScoreIndex::Pos p = obj_->index().Seek(start);
  do {
    const ScoreIndex::Item& it = p.item();
    if (!fn(it.member(), it.score)) return;
  } while (reverse ? ScoreIndex::Prev(&p) : ScoreIndex::Next(&p));
}

}  // namespace strata
