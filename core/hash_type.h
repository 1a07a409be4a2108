// Hash values: the small form and HashObject.
//
// Small form (OBJECT ENCODING "listpack"): a packed list (packed_list.h) of field,
// value, field, value ... inside the entry. It is kept while the hash has at most
// hash-max-listpack-entries fields and no field or value longer than
// hash-max-listpack-value bytes; past either, the hash becomes a HashObject and stays
// one (as in Redis, a hash never converts back).
//
// HashObject (OBJECT ENCODING "hashtable"): the same Table the keyspace uses, with one
// entry per field (key = field, value = value) from the shard's SlabHeap, so a field
// costs its bytes plus a 3-byte header, slab rounding and an 8-byte slot: no per-field
// pointers or dictEntry. HSCAN walks it with the table's stable cursor.
//
// HashAccess gives reads that work on either form, and HashEdit applies writes and
// converts between forms.
//
// Thread-safety: shard-owned, like the entry holding the hash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/object.h"
#include "core/table.h"

namespace strata {

class HashObject final : public CollectionObject {
 public:
  explicit HashObject(SlabHeap& heap);
  ~HashObject() override;

  // Sets field to value; true when the field is new.
  bool Set(std::string_view field, std::string_view value);
  // True when the field existed.
  bool Delete(std::string_view field);
  Entry* Find(std::string_view field) const;

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

// Reads over either form of a hash entry (REQUIRES: e->Type() == ValueType::kHash).
namespace hash_access {

size_t Length(const Entry* e);
// The value of field, copied into *out; false when absent.
bool Get(const Entry* e, std::string_view field, std::string* out);
bool Exists(const Entry* e, std::string_view field);
// Calls fn(field, value) for every field, in storage order.
void ForEach(const Entry* e, const std::function<void(std::string_view, std::string_view)>& fn);

}  // namespace hash_access

// Whether a hash with these sizes fits the small form.
bool HashFitsPacked(size_t fields, size_t longest_item);

// Builds the stored form of a hash from field/value pairs: the packed list when it fits
// the small form, else a HashObject (returned; *packed is then left empty).
std::unique_ptr<HashObject> BuildHash(const std::vector<std::pair<std::string, std::string>>& kv,
                                      SlabHeap& heap, std::string* packed);

// MaterializeCollection for hashes.
std::unique_ptr<CollectionObject> MaterializeHash(std::string_view serialized, SlabHeap& heap);

}  // namespace strata
