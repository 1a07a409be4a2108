#include "core/entry.h"

#include <mimalloc.h>

#include <algorithm>
#include <new>

#include "core/ascii7.h"
#include "core/slab.h"

namespace strata {

const char* ValueTypeName(ValueType t) {
  switch (t) {
    case ValueType::kString:
      return "string";
    case ValueType::kList:
      return "list";
    case ValueType::kSet:
      return "set";
    case ValueType::kZSet:
      return "zset";
    case ValueType::kHash:
      return "hash";
    case ValueType::kStream:
      return "stream";
  }
  return "none";
}

namespace {

size_t VarintSize(uint32_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    n++;
  }
  return n;
}

char* WriteVarint(char* p, uint32_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<char>(v);
  return p;
}

}  // namespace

uint32_t Entry::ReadVarintSlow(const char* p, uint32_t* off) {
  uint32_t v = 0;
  int shift = 0;
  while (true) {
    uint8_t b = static_cast<uint8_t>(p[(*off)++]);
    v |= static_cast<uint32_t>(b & 0x7f) << shift;
    if (b < 0x80) return v;
    shift += 7;
  }
}

namespace {

// Allocates an entry of `size` bytes - from mimalloc with room for `alloc` bytes when it
// is past the slab sizes - and writes everything before its value: the access field
// (when has_access), the flags, the two lengths, the expiry and the key. Returns where
// the value goes; *entry is the entry.
[[gnu::always_inline]] inline char* AllocWithHeader(SlabHeap& heap, size_t size, size_t alloc,
                                                    bool has_access, uint32_t access, uint8_t flags,
                                                    std::string_view key, uint32_t vlen,
                                                    int64_t expire_ms, size_t* usable,
                                                    Entry** entry) {
  bool has_expire = expire_ms != Entry::kNoExpire;
  uint32_t klen = static_cast<uint32_t>(key.size());
  void* mem;
  if (size <= SlabHeap::kMaxSlotSize) {
    // A slab entry may take a bigger slot than its size (room for a string to grow in
    // place), never one past the slab's sizes: Destroy() tells the allocator from the
    // header's size.
    size_t slot = std::min(std::max(size, alloc), SlabHeap::kMaxSlotSize);
    mem = heap.Allocate(slot);
    *usable = SlabHeap::SlotSize(slot);
  } else {
    mem = mi_malloc(alloc);
    if (mem == nullptr) throw std::bad_alloc();
    *usable = mi_usable_size(mem);
  }
  char* p = static_cast<char*>(mem);
  if (has_access) {
    uint16_t low = static_cast<uint16_t>(access);
    std::memcpy(p, &low, 2);
    p[2] = static_cast<char>(access >> 16);
    p += Entry::kAccessBytes;
  }
  *entry = reinterpret_cast<Entry*>(p);
  *p++ = static_cast<char>(flags | (has_expire ? Entry::kHasExpire : 0) |
                           (has_access ? Entry::kHasAccess : 0));
  p = WriteVarint(p, klen);
  p = WriteVarint(p, vlen);
  if (has_expire) {
    std::memcpy(p, &expire_ms, 8);
    p += 8;
  }
  if (klen > 0) std::memcpy(p, key.data(), klen);
  return p + klen;
}

// The bytes before an entry's value (see AllocWithHeader).
inline size_t HeaderSize(bool has_access, uint32_t klen, uint32_t vlen, bool has_expire) {
  return (has_access ? Entry::kAccessBytes : 0) + 1 + VarintSize(klen) + VarintSize(vlen) +
         (has_expire ? 8 : 0) + klen;
}

// Allocates and fills an entry: `stored` is written as the value bytes (packed when
// `pack`), `vlen` is the value length recorded in the header.
template <bool kAccess>
[[gnu::always_inline]] inline Entry* CreateWith(SlabHeap& heap, std::string_view key, uint32_t vlen,
                                                std::string_view stored, bool pack, uint8_t flags,
                                                int64_t expire_ms, size_t* usable,
                                                uint32_t access) {
  uint32_t klen = static_cast<uint32_t>(key.size());
  size_t stored_len = pack ? ascii7::PackedSize(vlen) : stored.size();
  size_t size = HeaderSize(kAccess, klen, vlen, expire_ms != Entry::kNoExpire) + stored_len;
  Entry* entry;
  char* p = AllocWithHeader(heap, size, size, kAccess, access,
                            static_cast<uint8_t>(flags | (pack ? Entry::kPacked : 0)), key, vlen,
                            expire_ms, usable, &entry);
  if (pack) {
    ascii7::Pack(stored, p);
  } else if (!stored.empty()) {
    std::memcpy(p, stored.data(), stored.size());
  }
  return entry;
}

template <bool kAccess>
Entry* CreateEntry(SlabHeap& heap, std::string_view key, std::string_view value, ValueType type,
                   int64_t expire_ms, size_t* usable, uint32_t access) {
  bool packed =
      type == ValueType::kString && value.size() >= Entry::kPackMinLen && ascii7::IsAscii(value);
  return CreateWith<kAccess>(heap, key, static_cast<uint32_t>(value.size()), value, packed,
                             static_cast<uint8_t>(type), expire_ms, usable, access);
}

}  // namespace

static_assert(Entry::kHasAccess == 0x80, "AllocBase() and AllocSize() shift the flag down");
static_assert(Entry::kMaxSlabEntry == SlabHeap::kMaxSlotSize,
              "FitsStringOverwrite tells slab entries by size");

void Entry::OverwriteString(std::string_view value, int64_t expire_ms) {
  Layout l = Parse();
  if (expire_ms != kNoExpire) std::memcpy(Base() + l.expire_off, &expire_ms, sizeof(expire_ms));
  char* p = Base() + l.key_off + l.key_len;
  if (IsPacked()) {
    ascii7::Pack(value, p);
  } else if (!value.empty()) {
    std::memmove(p, value.data(), value.size());
  }
}

bool Entry::HasSlabRoom() const {
  return SlabHeap::UsableSize(AllocBase()) != SlabHeap::SlotSize(AllocSize());
}

Entry* Entry::CreateKey(SlabHeap& heap, std::string_view key, std::string_view value,
                        ValueType type, int64_t expire_ms, size_t* usable, uint32_t access) {
  return CreateEntry<true>(heap, key, value, type, expire_ms, usable, access);
}

Entry* Entry::Create(SlabHeap& heap, std::string_view key, std::string_view value, ValueType type,
                     int64_t expire_ms, size_t* usable, uint32_t access) {
  if (access == kNoAccess) return CreateEntry<false>(heap, key, value, type, expire_ms, usable, 0);
  return CreateEntry<true>(heap, key, value, type, expire_ms, usable, access);
}

Entry* Entry::CreateExternal(SlabHeap& heap, std::string_view key, ValueType type,
                             CollectionObject* obj, int64_t expire_ms, size_t* usable,
                             uint32_t access) {
  char ptr[sizeof(obj)];
  std::memcpy(ptr, &obj, sizeof(obj));
  Entry* e = Create(heap, key, std::string_view(ptr, sizeof(ptr)), type, expire_ms, usable, access);
  e->Base()[0] = static_cast<char>(e->Flags() | kExternal);
  return e;
}

Entry* Entry::CreateCold(SlabHeap& heap, std::string_view key, ValueType type, uint32_t value_len,
                         uint64_t seq, uint32_t disk_len, int64_t expire_ms, size_t* usable,
                         uint32_t access) {
  char locator[kColdBytes];
  std::memcpy(locator, &seq, 8);
  std::memcpy(locator + 8, &disk_len, 4);
  uint8_t flags = static_cast<uint8_t>(type) | kColdBits;
  return CreateWith<true>(heap, key, value_len, std::string_view(locator, kColdBytes), false, flags,
                          expire_ms, usable, access);
}

Entry* Entry::CreateRawString(SlabHeap& heap, std::string_view key, std::string_view init,
                              size_t len, size_t reserve, int64_t expire_ms, size_t* usable,
                              uint32_t access) {
  bool has_access = access != kNoAccess;
  uint32_t vlen = static_cast<uint32_t>(len);
  size_t head =
      HeaderSize(has_access, static_cast<uint32_t>(key.size()), vlen, expire_ms != kNoExpire);
  // Room to grow: a slab entry's slot up to the slab's biggest, an entry from mimalloc
  // as asked (Destroy() tells the allocator from the header's size, so a slab-sized value
  // never moves to mimalloc for room).
  Entry* entry;
  char* p = AllocWithHeader(heap, head + len, head + std::max(len, reserve), has_access, access,
                            static_cast<uint8_t>(ValueType::kString), key, vlen, expire_ms, usable,
                            &entry);
  size_t keep = std::min(init.size(), len);
  if (keep > 0) std::memcpy(p, init.data(), keep);
  if (len > keep) std::memset(p + keep, 0, len - keep);
  return entry;
}

bool Entry::GrowInPlace(size_t new_len) {
  Layout l = Parse();
  if (new_len <= l.value_len) return new_len == l.value_len;
  if (new_len > UINT32_MAX || VarintSize(static_cast<uint32_t>(new_len)) != VarintSize(l.value_len))
    return false;
  size_t size = AllocSize();
  size_t grown = size + (new_len - l.value_len);
  if (size <= SlabHeap::kMaxSlotSize) {
    // Within its slot (past the slab's sizes it would have to move to mimalloc).
    if (grown > SlabHeap::UsableSize(AllocBase())) return false;
  } else if (grown > mi_usable_size(AllocBase())) {
    return false;
  }
  uint32_t off = 1;
  ReadVarint(Base(), &off);  // past the key length: the value length follows
  WriteVarint(Base() + off, static_cast<uint32_t>(new_len));
  std::memset(Base() + l.key_off + l.key_len + l.value_len, 0, new_len - l.value_len);
  return true;
}

size_t Entry::UsableSize(const Entry* e) {
  size_t size = e->AllocSize();
  // A slab entry's slot may be bigger than its size asks (room to grow): its page says.
  return size <= SlabHeap::kMaxSlotSize ? SlabHeap::UsableSize(e->AllocBase())
                                        : mi_usable_size(e->AllocBase());
}

size_t Entry::Destroy(SlabHeap& heap, Entry* e) {
  size_t size = e->AllocSize();
  void* base = const_cast<void*>(e->AllocBase());
  if (size <= SlabHeap::kMaxSlotSize) return heap.Free(base);
  size_t n = mi_usable_size(base);
  mi_free(base);
  return n;
}

std::string_view Entry::Value(std::string* scratch) const {
  Layout l = Parse();
  const char* v = Base() + l.key_off + l.key_len;
  if (!IsPacked()) return {v, l.value_len};
  scratch->resize(l.value_len);
  ascii7::Unpack(v, l.value_len, scratch->data());
  return *scratch;
}

std::string_view Entry::ValueRange(size_t from, size_t to, std::string* scratch) const {
  Layout l = Parse();
  const char* v = Base() + l.key_off + l.key_len;
  if (!IsPacked()) return {v + from, to - from};
  if (from >= to) return {};
  // Whole 16-character groups from the one holding `from`: a run that ends at a group
  // boundary, or at the value's end, decodes like a value of its own.
  size_t g0 = from / 16;
  size_t end = std::min<size_t>(l.value_len, ((to - 1) / 16 + 1) * 16);
  size_t n = end - g0 * 16;
  scratch->resize(n);
  ascii7::Unpack(v + g0 * 14, n, scratch->data());
  return std::string_view(*scratch).substr(from - g0 * 16, to - from);
}

std::string Entry::ValueString() const {
  std::string s;
  std::string_view v = Value(&s);
  if (v.data() != s.data()) s.assign(v);
  return s;
}

void Entry::CopyValue(char* dst) const {
  Layout l = Parse();
  const char* v = Base() + l.key_off + l.key_len;
  if (IsPacked()) {
    ascii7::Unpack(v, l.value_len, dst);
  } else if (l.value_len > 0) {
    std::memcpy(dst, v, l.value_len);
  }
}

}  // namespace strata
