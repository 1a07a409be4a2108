// Usable sizes of heap blocks held by standard containers, for exact accounting.
//
// malloc_usable_size() answers for whichever allocator serves malloc (mimalloc in
// production, the sanitizer's in ASan builds), so these work in every build.
//
// Thread-safety: pure functions over objects the caller owns.
#pragma once

#include <malloc.h>

#include <string>
#include <vector>

namespace strata {

inline size_t HeapBytes(const void* p) {
  return p == nullptr ? 0 : malloc_usable_size(const_cast<void*>(p));
}

// The heap block behind a string, or 0 while it is stored inline (short-string form).
inline size_t HeapBytes(const std::string& s) {
  const char* d = s.data();
  const char* self = reinterpret_cast<const char*>(&s);
  if (d >= self && d < self + sizeof(s)) return 0;
  return HeapBytes(static_cast<const void*>(d));
}

template <class T>
size_t HeapBytes(const std::vector<T>& v) {
  return v.capacity() == 0 ? 0 : HeapBytes(static_cast<const void*>(v.data()));
}

}  // namespace strata
