#include "core/entry.h"

#include <mimalloc.h>

#include <new>

namespace strata {

const char* ValueTypeName(ValueType t) {
  switch (t) {
    case ValueType::kString:
      return "string";
  }
  return "none";
}

Entry* Entry::Create(std::string_view key, std::string_view value, ValueType type,
                     int64_t expire_ms, size_t* usable) {
  bool has_expire = expire_ms != kNoExpire;
  size_t size = AllocSize(key.size(), value.size(), has_expire);
  void* mem = mi_malloc(size);
  if (mem == nullptr) throw std::bad_alloc();
  Entry* e = static_cast<Entry*>(mem);
  e->next = nullptr;
  e->key_len_ = static_cast<uint32_t>(key.size());
  e->value_len_ = static_cast<uint32_t>(value.size());
  e->flags_ = static_cast<uint8_t>(type) | (has_expire ? kHasExpire : 0);
  if (has_expire) e->SetExpireInPlace(expire_ms);
  char* p = const_cast<char*>(e->KeyData());
  if (!key.empty()) std::memcpy(p, key.data(), key.size());
  if (!value.empty()) std::memcpy(p + key.size(), value.data(), value.size());
  *usable = mi_usable_size(mem);
  return e;
}

size_t Entry::UsableSize(const Entry* e) { return mi_usable_size(e); }

size_t Entry::Destroy(Entry* e) {
  size_t n = mi_usable_size(e);
  mi_free(e);
  return n;
}

}  // namespace strata
