// Entry: one key and its value in a single allocation, with a 3-byte header for the
// common case.
//
// Layout (byte offsets from the Entry pointer; no alignment is assumed, multi-byte
// fields use memcpy):
//   -3..-1   uint24   access state, present only with has-access, *before* the entry:
//                     the key's last access (LRU, seconds) or its frequency counter and
//                     decay minute (LFU); see core/access.h. Keys carry it; collection
//                     elements (hash fields, set and zset members, which are entries
//                     too) do not. Being in front, it moves no other field: reading an
//                     entry costs the same with or without it, and an access is one
//                     3-byte store at a fixed offset.
//   0        uint8    flags: bits 0-2 value type, bit 3 has-expire, bit 4 value packed,
//                     bit 5 external (the value is a CollectionObject*, see object.h),
//                     bit 6 snapshot skip, bit 7 has-access. Bits 4 and 5 together
//                     (a pair no hot entry uses) mark a cold entry: its value is on
//                     disk (the spill tier, docs/ARCHITECTURE.md "The tier")
//   1..      varint   key length (LEB128: one byte below 128)
//   ..       varint   value length, as the client sees it (unpacked)
//   ..       int64    expire_ms, absolute unix ms; present only with has-expire
//   ..       key bytes
//   ..       value bytes: raw, or (strings only) ascii7-packed when every byte is below
//            0x80 and the value is at least kPackMinLen long; for an external
//            collection, the 8-byte pointer to its object; for a cold entry the
//            locator, kColdBytes: u64 spill sequence number (the disk record's key),
//            u32 length of the serialized value on disk. A cold entry's value length
//            is the hot value's, so STRLEN needs no disk read.
// The table slot that points at an entry carries hash bits (see table.h), so an entry
// needs no chain link and no stored hash.
//
// Allocation: up to SlabHeap::kMaxSlotSize bytes from the shard's SlabHeap (fine size
// classes), larger entries from mimalloc. Which one is known from the header alone, so
// nothing records it. Memory is charged at the usable size (slot or mimalloc block).
//
// An entry is immutable in size: a value of another length or shape, or adding or
// removing the expiry, builds a new entry and the table slot is swapped (Keyspace does
// this); a value of the same length and shape may be written in place (SET,
// FitsStringOverwrite; SETRANGE and the like, Keyspace::StringForWrite). Pointers to
// entries are valid only until the next write to the shard's table.
//
// Thread-safety: an entry belongs to its shard's thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "core/ascii7.h"

namespace strata {

class SlabHeap;
class CollectionObject;

// kStream values are always objects (core/stream_type.h), never packed in the entry.
enum class ValueType : uint8_t {
  kString = 0,
  kList = 1,
  kSet = 2,
  kZSet = 3,
  kHash = 4,
  kStream = 5
};
constexpr int kValueTypeCount = 6;

const char* ValueTypeName(ValueType t);

class Entry {
 public:
  static constexpr uint8_t kTypeMask = 0x07;
  static constexpr uint8_t kHasExpire = 0x08;
  static constexpr uint8_t kPacked = 0x10;
  static constexpr uint8_t kExternal = 0x20;
  // Set while a snapshot runs on an entry its image must not take from the table: the
  // entry's pre-image was already written, or it was created after the cut
  // (core/keyspace.h "Snapshots"). Cleared by the snapshot's traversal.
  static constexpr uint8_t kSnapSkip = 0x40;
  static constexpr uint8_t kHasAccess = 0x80;  // the top bit: AllocBase() shifts it
  static constexpr int64_t kNoExpire = 0;
  // Create's `access` for an entry without the access field.
  static constexpr uint32_t kNoAccess = UINT32_MAX;
  static constexpr size_t kAccessBytes = 3;
  // Shorter values are stored raw: packing saves at most 1 byte per 8 and costs a decode.
  static constexpr size_t kPackMinLen = 16;
  static constexpr uint8_t kColdBits = kPacked | kExternal;
  static constexpr size_t kColdBytes = 12;

  // Allocates an entry; *usable receives the bytes charged for it.
  // With access != kNoAccess the entry carries the 24-bit access field, set to it.
  static Entry* Create(SlabHeap& heap, std::string_view key, std::string_view value, ValueType type,
                       int64_t expire_ms, size_t* usable, uint32_t access = kNoAccess);
  // Create() for a key of the keyspace: always with the access field.
  static Entry* CreateKey(SlabHeap& heap, std::string_view key, std::string_view value,
                          ValueType type, int64_t expire_ms, size_t* usable, uint32_t access);
  // An entry whose value is a pointer to obj (not owned here: Keyspace frees objects).
  static Entry* CreateExternal(SlabHeap& heap, std::string_view key, ValueType type,
                               CollectionObject* obj, int64_t expire_ms, size_t* usable,
                               uint32_t access = kNoAccess);
  // A cold entry (the locator of a value on disk): value_len is the hot value's length
  // as the client sees it, disk_len the serialized value's.
  static Entry* CreateCold(SlabHeap& heap, std::string_view key, ValueType type, uint32_t value_len,
                           uint64_t seq, uint32_t disk_len, int64_t expire_ms, size_t* usable,
                           uint32_t access);
  // A raw (never packed) string of `len` bytes: `init`, then zero bytes, for a value
  // that is changed in place (Keyspace::StringForWrite). An entry past kMaxSlotSize is
  // allocated with room for `reserve` value bytes, so that it can grow in place.
  static Entry* CreateRawString(SlabHeap& heap, std::string_view key, std::string_view init,
                                size_t len, size_t reserve, int64_t expire_ms, size_t* usable,
                                uint32_t access);
  // A string stored again under its key (SET over a string) fits this entry's bytes
  // exactly when the value has the same length and would be stored the same way (packed
  // or raw), the expiry's presence is the same, and the entry has no room to grow, which
  // a new entry would not have: it is a slab entry (one from mimalloc may have room) and,
  // when raw, its slot is the size class of its size (Keyspace::StringForWrite gives a
  // raw entry a bigger slot). `value` is only read to decide packing when the rest
  // matches.
  bool FitsStringOverwrite(std::string_view value, bool has_expire) const {
    uint8_t f = Flags();
    if ((f & (kTypeMask | kExternal)) != static_cast<uint8_t>(ValueType::kString)) return false;
    if (((f & kHasExpire) != 0) != has_expire) return false;
    Layout l = Parse();
    if (l.value_len != value.size() || AllocSize() > kMaxSlabEntry) return false;
    // A packed entry's value is at least kPackMinLen long, so the new one is too.
    if (f & kPacked) return ascii7::IsAscii(value);
    return !(value.size() >= kPackMinLen && ascii7::IsAscii(value)) && !HasSlabRoom();
  }
  // REQUIRES: FitsStringOverwrite(value, expire_ms != kNoExpire). Writes the value (and
  // the expiry) over this entry's; flags, key and lengths stay. A raw value may be this
  // entry's own (the view Value() gives of it).
  void OverwriteString(std::string_view value, int64_t expire_ms);
  static constexpr size_t kMaxSlabEntry = 2048;  // SlabHeap::kMaxSlotSize (checked in entry.cc)
  // Frees the entry (not its object) and returns the bytes it was charged.
  static size_t Destroy(SlabHeap& heap, Entry* e);
  static size_t UsableSize(const Entry* e);
  // Bytes the entry occupies before allocator rounding (the access field included).
  size_t AllocSize() const {
    Layout l = Parse();
    // Raw and external values are stored at their length (a pointer's is 8); packed
    // ones packed; a cold entry holds its locator.
    uint8_t f = Flags();
    size_t stored = l.value_len;
    if (f & kPacked) stored = (f & kExternal) ? kColdBytes : ascii7::PackedSize(l.value_len);
    return (Flags() >> 7) * kAccessBytes + l.key_off + l.key_len + stored;
  }

  std::string_view Key() const {
    Layout l = Parse();
    return {Base() + l.key_off, l.key_len};
  }
  uint32_t KeyLen() const { return Parse().key_len; }
  uint32_t ValueLen() const { return Parse().value_len; }
  ValueType Type() const { return static_cast<ValueType>(Flags() & kTypeMask); }
  bool HasExpire() const { return Flags() & kHasExpire; }
  bool IsPacked() const { return (Flags() & kColdBits) == kPacked; }
  bool IsExternal() const { return (Flags() & kColdBits) == kExternal; }
  // The value is on disk (ColdSeq() names it); Value(), Object() and CopyValue() must
  // not be called.
  bool IsCold() const { return (Flags() & kColdBits) == kColdBits; }
  // External or cold: one bit test for the paths that must look at either.
  bool IsExternalOrCold() const { return Flags() & kExternal; }
  // REQUIRES: IsCold().
  uint64_t ColdSeq() const {
    uint64_t v;
    std::memcpy(&v, ColdLocator(), 8);
    return v;
  }
  uint32_t ColdDiskLen() const {
    uint32_t v;
    std::memcpy(&v, ColdLocator() + 8, 4);
    return v;
  }
  // Names another disk record holding the same value (a load that copies records
  // between stores). REQUIRES: IsCold().
  void SetColdSeq(uint64_t seq) { std::memcpy(const_cast<char*>(ColdLocator()), &seq, 8); }
  bool SnapSkip() const { return Flags() & kSnapSkip; }
  bool HasAccess() const { return Flags() & kHasAccess; }
  // REQUIRES: HasAccess(). The 24-bit access state (core/access.h).
  uint32_t Access() const {
    const auto* p = reinterpret_cast<const uint8_t*>(Base()) - kAccessBytes;
    uint16_t low;
    std::memcpy(&low, p, 2);
    return low | (uint32_t{p[2]} << 16);
  }
  void SetAccess(uint32_t v) {
    auto* p = reinterpret_cast<uint8_t*>(Base()) - kAccessBytes;
    uint16_t low = static_cast<uint16_t>(v);
    std::memcpy(p, &low, 2);
    p[2] = static_cast<uint8_t>(v >> 16);
  }
  void SetSnapSkip(bool on) {
    Base()[0] = static_cast<char>(on ? (Flags() | kSnapSkip) : (Flags() & ~kSnapSkip));
  }
  // REQUIRES: IsExternal().
  CollectionObject* Object() const {
    Layout l = Parse();
    CollectionObject* obj;
    std::memcpy(&obj, Base() + l.key_off + l.key_len, sizeof(obj));
    return obj;
  }
  int64_t ExpireMs() const {
    if (!HasExpire()) return kNoExpire;
    int64_t v;
    std::memcpy(&v, Base() + Parse().expire_off, sizeof(v));
    return v;
  }
  // REQUIRES: HasExpire().
  void SetExpireInPlace(int64_t ms) { std::memcpy(Base() + Parse().expire_off, &ms, sizeof(ms)); }
  bool IsExpired(int64_t now_ms) const { return HasExpire() && ExpireMs() <= now_ms; }

  // True when key equals this entry's key.
  bool KeyEquals(std::string_view key) const {
    Layout l = Parse();
    if (l.key_len != key.size()) return false;
    const char* a = Base() + l.key_off;
    const char* b = key.data();
    size_t n = key.size();
    if (n >= 8 && n <= 16) {
      // Two overlapping 8-byte compares instead of a call to memcmp (typical keys).
      uint64_t x0, y0, x1, y1;
      std::memcpy(&x0, a, 8);
      std::memcpy(&y0, b, 8);
      std::memcpy(&x1, a + n - 8, 8);
      std::memcpy(&y1, b + n - 8, 8);
      return ((x0 ^ y0) | (x1 ^ y1)) == 0;
    }
    return std::memcmp(a, b, n) == 0;
  }

  // Strings changed in place. REQUIRES: a raw value (not packed, external or cold); the
  // caller found the entry with a write lookup (Keyspace::Find), so a snapshot has its
  // pre-image, and the value's length does not change through this pointer.
  bool IsRaw() const { return (Flags() & kColdBits) == 0; }
  char* MutableValue() {
    Layout l = Parse();
    return Base() + l.key_off + l.key_len;
  }
  // Lengthens a raw value inside its own allocation, the new bytes zero; false when there
  // is no room (only an entry from mimalloc, past kMaxSlotSize, has any) or the length's
  // varint would widen. The bytes charged (the allocation's usable size) do not change.
  bool GrowInPlace(size_t new_len);

  // The value as the client sees it. Packed values are decoded into *scratch and the
  // view points there; raw values are viewed in place (scratch untouched).
  std::string_view Value(std::string* scratch) const;
  std::string ValueString() const;
  // Bytes [from, to) of the value (REQUIRES: from <= to <= ValueLen(), a string): a
  // raw value is viewed in place; of a packed one only the groups holding the range are
  // decoded, into *scratch, so a read of a few bytes of a big value stays cheap.
  std::string_view ValueRange(size_t from, size_t to, std::string* scratch) const;
  // Writes the ValueLen() bytes of the value to dst.
  void CopyValue(char* dst) const;

 private:
  struct Layout {
    uint32_t key_len;
    uint32_t value_len;
    uint32_t expire_off;
    uint32_t key_off;
  };
  uint8_t Flags() const { return static_cast<uint8_t>(Base()[0]); }
  // REQUIRES: a slab entry. Its slot is bigger than its size's class.
  bool HasSlabRoom() const;
  const char* ColdLocator() const {
    Layout l = Parse();
    return Base() + l.key_off + l.key_len;
  }
  const char* Base() const { return reinterpret_cast<const char*>(this); }
  // Where the allocation starts: the access field, when present, precedes the entry.
  const void* AllocBase() const { return Base() - (Flags() >> 7) * kAccessBytes; }
  char* Base() { return reinterpret_cast<char*>(this); }
  static uint32_t ReadVarint(const char* p, uint32_t* off) {
    uint8_t b = static_cast<uint8_t>(p[*off]);
    if (b < 0x80) [[likely]] {
      (*off)++;
      return b;
    }
    return ReadVarintSlow(p, off);
  }
  static uint32_t ReadVarintSlow(const char* p, uint32_t* off);
  Layout Parse() const {
    Layout l;
    uint32_t off = 1;
    l.key_len = ReadVarint(Base(), &off);
    l.value_len = ReadVarint(Base(), &off);
    l.expire_off = off;
    l.key_off = off + (HasExpire() ? 8 : 0);
    return l;
  }
};

}  // namespace strata
