// Set values: the intset and listpack small forms, SetObject, and the rules that move a
// set from one to the next.
//
// Encodings (OBJECT ENCODING names and thresholds as in Redis 7.2):
//   intset     small form tagged PackedTag::kIntSet: [tag][width][member]*, each member a
//              width-byte little-endian integer, width 2, 4 or 8 (the narrowest that holds
//              every member), sorted ascending so that membership is a binary search. The
//              count is the body length over the width. Used while every member is a
//              canonical int64 decimal (Redis's string2ll) and there are at most
//              set-max-intset-entries of them.
//   listpack   small form tagged PackedTag::kPackedList: a packed list (packed_list.h) of
//              the members in insertion order, while there are at most
//              set-max-listpack-entries and none is longer than set-max-listpack-value.
//   hashtable  SetObject: the keyspace's Table with one entry per member (key = member,
//              empty value) from the shard's SlabHeap, as HashObject; a member costs its
//              bytes, a 3-byte header, slab rounding and an 8-byte slot. SSCAN walks it
//              with the table's stable cursor.
// Conversions only go forward, as in Redis: intset -> listpack when a non-integer arrives
// and the set still fits a listpack; intset -> hashtable when it outgrows the intset (or
// a non-integer arrives and it would not fit a listpack); listpack -> hashtable past
// either listpack limit. SetBuilder applies these rules one member at a time, so a set
// built member by member ends in the encoding Redis would give it; SetEditor applies
// them to a stored set.
//
// The canonical serialized form (object.h) is the small form: an intset as it is, any
// other set as a packed list of its members.
//
// Thread-safety: SetObject, set_access and SetEditor run on the thread of the shard that
// owns the entry. SetBuilder owns plain memory only: it may be filled on any thread, and
// is written to a key (Store) by the thread of the shard that owns that key.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "core/keyspace.h"
#include "core/object.h"
#include "core/table.h"

namespace strata {

enum class SetEncoding : uint8_t { kIntSet, kListpack, kHashtable };

const char* SetEncodingName(SetEncoding enc);

class SetObject final : public CollectionObject {
 public:
  explicit SetObject(SlabHeap& heap);
  ~SetObject() override;

  // True when the member is new.
  bool Add(std::string_view member);
  // True when the member was there.
  bool Remove(std::string_view member);
  bool Contains(std::string_view member) const;
  // A pseudo-random member chosen from seed, valid until the next change.
  // REQUIRES: not empty.
  std::string_view Random(uint64_t seed) const;

  size_t Bytes() const override;
  const char* Encoding() const override { return "hashtable"; }
  size_t Length() const override { return table_.size(); }
  void Serialize(std::string* out) const override;
  size_t ReleaseSome(size_t budget) override;

  Table& table() { return table_; }
  const Table& table() const { return table_; }

 private:
  SlabHeap& heap_;
  size_t entry_bytes_ = 0;
  uint64_t release_cursor_ = 0;
  Table table_;
};

// The intset small form.
namespace intset {

// Redis's string2ll: a canonical decimal (no sign but '-', no leading zero, no "-0")
// that fits int64. Only such members go into an intset.
bool ToInt(std::string_view member, int64_t* v);
// Bytes per member that hold v: 2, 4 or 8.
size_t WidthFor(int64_t v);
// Encodes sorted, distinct values (at least one).
std::string Encode(const std::vector<int64_t>& sorted);
size_t Count(std::string_view buf);
int64_t At(std::string_view buf, size_t i);
bool Find(std::string_view buf, int64_t v);
std::vector<int64_t> Decode(std::string_view buf);
// True when buf is a well-formed intset (tag, width, whole members, strictly ascending).
bool Valid(std::string_view buf);

}  // namespace intset

// Reads over any form of a set entry (REQUIRES: e->Type() == ValueType::kSet).
namespace set_access {

SetEncoding Encoding(const Entry* e);
size_t Length(const Entry* e);
bool Contains(const Entry* e, std::string_view member);
// Calls fn(member) for every member in storage order (intsets: ascending).
void ForEach(const Entry* e, const std::function<void(std::string_view)>& fn);
std::vector<std::string> Members(const Entry* e);
// A pseudo-random member chosen from seed. REQUIRES: not empty.
std::string Random(const Entry* e, uint64_t seed);

}  // namespace set_access

// A set being built or edited off the keyspace: the members in the working form of its
// encoding (sorted integers, members in insertion order, or a hash set), changing
// encoding by Redis's rules as members are added.
class SetBuilder {
 public:
  // An empty set in `start` (Redis builds SUNION/SDIFF results from an empty intset, and
  // SINTERSTORE results from the encoding of the smallest input).
  explicit SetBuilder(SetEncoding start = SetEncoding::kIntSet);
  // Redis's setTypeCreate: the encoding a new set starts in when its first member is
  // `first` and about `size_hint` members are coming.
  static SetBuilder ForNew(std::string_view first, size_t size_hint);
  // A stored small form (either tag).
  static SetBuilder FromPacked(std::string_view value);

  SetEncoding encoding() const { return enc_; }
  size_t size() const;
  bool empty() const { return size() == 0; }

  // True when the member is new.
  bool Add(std::string_view member);
  // True when the member was there.
  bool Remove(std::string_view member);
  bool Contains(std::string_view member) const;
  // Redis's setTypeMaybeConvert: straight to hashtable when size_hint members would not
  // fit the current small form.
  void MaybeConvert(size_t size_hint);
  // Redis's maybeConvertToIntset, for a result known to hold integers only: becomes an
  // intset unless it holds more than set-max-intset-entries members.
  void ConvertToIntSetIfFits();

  // Positional access for random picks. REQUIRES: i < size().
  std::string MemberAt(size_t i) const;
  void RemoveAt(size_t i);
  // Calls fn(member) for every member in the order Redis would iterate this encoding.
  void ForEach(const std::function<void(std::string_view)>& fn) const;

  // Writes the set to key, replacing what was there (the key is deleted when the set is
  // empty). Small forms are stored in the entry, a hashtable as a new SetObject.
  void Store(Keyspace& ks, uint32_t db, std::string_view key, int64_t expire_ms) const;
  // The small form's bytes. REQUIRES: encoding() != kHashtable, not empty.
  std::string Packed() const;

 private:
  void ToListpack();
  void ToHashtable();

  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };

  SetEncoding enc_;
  std::vector<int64_t> ints_;                                    // kIntSet, ascending
  std::vector<std::string> strs_;                                // kListpack
  std::unordered_set<std::string, Hash, std::equal_to<>> hash_;  // kHashtable
};

// Changes a stored set in place of its key: a SetObject is changed in place, a small
// form through a SetBuilder that Commit writes back. Entry pointers of the shard are
// invalid after Commit.
class SetEditor {
 public:
  // Edits the existing set entry e of key.
  SetEditor(Keyspace& ks, uint32_t db, std::string_view key, Entry* e);
  // Creates key as a new set; first and size_hint as SetBuilder::ForNew.
  SetEditor(Keyspace& ks, uint32_t db, std::string_view key, std::string_view first,
            size_t size_hint);

  SetEncoding encoding() const;
  size_t size() const;
  bool Add(std::string_view member);
  bool Remove(std::string_view member);
  bool Contains(std::string_view member) const;
  void MaybeConvert(size_t size_hint);
  // Removes and returns a pseudo-random member. REQUIRES: size() > 0.
  std::string PopRandom(uint64_t seed);
  // Writes the changes back: the key is deleted when the set is empty, a changed small
  // form is stored again (keeping the key's TTL), a SetObject's bytes are re-charged.
  void Commit();

 private:
  Keyspace& ks_;
  uint32_t db_;
  std::string_view key_;
  Entry* e_;
  int64_t expire_ms_;
  SetObject* obj_ = nullptr;
  size_t obj_bytes_before_ = 0;
  SetBuilder builder_;
  bool changed_ = false;
};

// MaterializeCollection for sets: intsets are kept as they are, a packed list becomes a
// SetObject when it is past the listpack limits.
std::unique_ptr<CollectionObject> MaterializeSet(std::string_view serialized, SlabHeap& heap);

}  // namespace strata
