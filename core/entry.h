// Entry: one key and its value in a single allocation.
//
// Layout (one mimalloc block, sized exactly):
//   offset 0   Entry*   next        chain link inside a table bucket
//   offset 8   uint32   key_len
//   offset 12  uint32   value_len
//   offset 16  uint8    flags       bits 0-3 value type, bit 4 has-expire
//   offset 17  int64    expire_ms   absolute unix ms; present only with has-expire
//   then       key bytes, then value bytes
// An entry is immutable in size: changing the value's length or adding/removing the
// expiry builds a new entry and the table link is swapped (Keyspace does this).
// Memory is charged at the allocator's usable size (see Entry::Create).
//
// Thread-safety: an entry belongs to its shard's thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace strata {

enum class ValueType : uint8_t { kString = 0 };

const char* ValueTypeName(ValueType t);

class Entry {
 public:
  static constexpr uint8_t kTypeMask = 0x0f;
  static constexpr uint8_t kHasExpire = 0x10;
  static constexpr int64_t kNoExpire = 0;

  // Allocates an entry; *usable receives the bytes charged for it.
  static Entry* Create(std::string_view key, std::string_view value, ValueType type,
                       int64_t expire_ms, size_t* usable);
  // Frees the entry and returns the bytes it was charged.
  static size_t Destroy(Entry* e);
  static size_t UsableSize(const Entry* e);

  Entry* next;

  std::string_view Key() const { return {KeyData(), KeyLen()}; }
  std::string_view Value() const { return {KeyData() + KeyLen(), ValueLen()}; }
  char* MutableValue() { return const_cast<char*>(KeyData()) + KeyLen(); }
  uint32_t KeyLen() const { return key_len_; }
  uint32_t ValueLen() const { return value_len_; }
  ValueType Type() const { return static_cast<ValueType>(flags_ & kTypeMask); }
  bool HasExpire() const { return flags_ & kHasExpire; }
  int64_t ExpireMs() const {
    if (!HasExpire()) return kNoExpire;
    int64_t v;
    std::memcpy(&v, ExpirePtr(), sizeof(v));
    return v;
  }
  // REQUIRES: HasExpire().
  void SetExpireInPlace(int64_t ms) { std::memcpy(ExpirePtr(), &ms, sizeof(ms)); }
  bool IsExpired(int64_t now_ms) const { return HasExpire() && ExpireMs() <= now_ms; }

 private:
  static constexpr size_t kHeader = 17;
  static size_t AllocSize(size_t key_len, size_t value_len, bool has_expire) {
    return kHeader + (has_expire ? 8 : 0) + key_len + value_len;
  }
  char* Base() { return reinterpret_cast<char*>(this); }
  const char* Base() const { return reinterpret_cast<const char*>(this); }
  char* ExpirePtr() { return Base() + kHeader; }
  const char* ExpirePtr() const { return Base() + kHeader; }
  const char* KeyData() const { return Base() + kHeader + (HasExpire() ? 8 : 0); }

  uint32_t key_len_;
  uint32_t value_len_;
  uint8_t flags_;
};

}  // namespace strata
