// Collection values: how hashes, sets, sorted sets and lists are stored in an entry.
//
// Two forms, chosen per key by size (thresholds with Redis's config names, see
// EncodingLimits):
//   - small: the collection is packed into the entry's value bytes (one allocation for
//     key, metadata and every element). The first value byte is the encoding tag
//     (PackedTag); the layout after it belongs to the type (see packed_list.h).
//     Every write builds a new entry, which for a small collection costs about as much
//     as the memmove a Redis listpack does.
//   - big: the entry's value is an 8-byte pointer (Entry::IsExternal()) to a
//     CollectionObject that the entry owns. Writes change the object in place; the
//     keyspace re-charges its bytes afterwards (Keyspace::Recharge).
// The canonical serialized form of every collection is its small form (tag + body),
// whatever its size: COPY, RENAME and MOVE carry it between shards, and
// MaterializeCollection turns it back into the right form on arrival.
//
// Thread-safety: owned by the shard's thread like the entry that points at it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/entry.h"

namespace strata {

class SlabHeap;

// First byte of a small collection's value.
enum class PackedTag : uint8_t { kPackedList = 0, kIntSet = 1 };

class CollectionObject {
 public:
  virtual ~CollectionObject() = default;
  // Every byte the object holds (itself, its tables, nodes and elements), at usable size.
  virtual size_t Bytes() const = 0;
  // OBJECT ENCODING name (Redis's where the encoding is equivalent).
  virtual const char* Encoding() const = 0;
  // Elements (hash fields, set members, list elements, sorted-set members).
  virtual size_t Length() const = 0;
  // Appends the canonical serialized form (the type's small form).
  virtual void Serialize(std::string* out) const = 0;
  // Frees up to about `budget` elements (lazy freeing of a deleted collection, a slice
  // per loop turn); returns the elements left. The default frees nothing and returns 0:
  // the owner then deletes the object whole.
  virtual size_t ReleaseSome(size_t budget) { return 0; }
};

// Process-wide encoding thresholds, set from the config (CONFIG SET applies at once);
// read by the shards when a collection grows.
struct EncodingLimits {
  std::atomic<int64_t> hash_max_listpack_entries{512};
  std::atomic<int64_t> hash_max_listpack_value{64};
  std::atomic<int64_t> set_max_intset_entries{512};
  std::atomic<int64_t> set_max_listpack_entries{128};
  std::atomic<int64_t> set_max_listpack_value{64};
  std::atomic<int64_t> zset_max_listpack_entries{128};
  std::atomic<int64_t> zset_max_listpack_value{64};
  std::atomic<int64_t> list_max_listpack_size{-2};
  // list-compress-depth: plain nodes kept at each end of a big list (0: none compressed).
  std::atomic<int64_t> list_compress_depth{0};
  // DEBUG QUICKLIST-PACKED-THRESHOLD: an element at least this long gets a node of its
  // own in a big list (Redis's PLAIN nodes; 1 GB by default).
  std::atomic<int64_t> list_packed_threshold{int64_t{1} << 30};
  // rdbcompression (1 or 0): LZF for strings in DUMP payloads, read on every DUMP.
  std::atomic<int64_t> rdb_compression{1};
};
EncodingLimits& GlobalEncodingLimits();

// Builds the stored form of a collection from its canonical serialized form: returns an
// object when the collection is too big for the small form, nullptr when `serialized`
// should be stored as it is.
std::unique_ptr<CollectionObject> MaterializeCollection(ValueType type, std::string_view serialized,
                                                        SlabHeap& heap);

// OBJECT ENCODING of a small collection's value bytes.
const char* PackedEncodingName(ValueType type, std::string_view value);

}  // namespace strata
