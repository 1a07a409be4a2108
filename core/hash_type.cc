#include "core/hash_type.h"

#include <malloc.h>

#include "core/hash.h"
#include "core/packed_list.h"
#include "core/slab.h"

namespace strata {

HashObject::HashObject(SlabHeap& heap) : heap_(heap), table_(heap) {}

HashObject::~HashObject() { (void)table_.Clear(); }

size_t HashObject::ReleaseSome(size_t budget) {
  entry_bytes_ -= table_.DestroySome(&release_cursor_, budget);
  return table_.size();
}

bool HashObject::Set(std::string_view field, std::string_view value) {
  uint64_t hash = TableHash(field);
  size_t usable = 0;
  Entry* e = Entry::Create(heap_, field, value, ValueType::kString, Entry::kNoExpire, &usable);
  entry_bytes_ += usable;
  Table::Ref ref = table_.Locate(field, hash);
  if (ref) {
    entry_bytes_ -= Entry::Destroy(heap_, table_.Replace(ref, e));
    return false;
  }
  table_.Insert(e, hash);
  return true;
}

bool HashObject::Delete(std::string_view field) {
  Table::Ref ref = table_.Locate(field, TableHash(field));
  if (!ref) return false;
  entry_bytes_ -= Entry::Destroy(heap_, table_.Erase(ref));
  return true;
}

Entry* HashObject::Find(std::string_view field) const {
  return table_.Find(field, TableHash(field));
}

size_t HashObject::Bytes() const {
  return malloc_usable_size(const_cast<HashObject*>(this)) + table_.OverheadBytes() + entry_bytes_;
}

void HashObject::Serialize(std::string* out) const {
  packed::Builder b;
  std::string scratch;
  table_.ForEach([&](Entry* e) {
    b.Add(e->Key());
    b.Add(e->Value(&scratch));
  });
  out->append(b.Finish());
}

namespace hash_access {

size_t Length(const Entry* e) {
  if (e->IsExternal()) return e->Object()->Length();
  std::string scratch;
  return packed::Count(e->Value(&scratch)) / 2;
}

bool Get(const Entry* e, std::string_view field, std::string* out) {
  if (e->IsExternal()) {
    Entry* f = static_cast<HashObject*>(e->Object())->Find(field);
    if (f == nullptr) return false;
    out->resize(f->ValueLen());
    f->CopyValue(out->data());
    return true;
  }
  std::string scratch;
  for (packed::Reader r(e->Value(&scratch)); !r.Done(); r.Next()) {
    std::string_view f = r.Item();
    r.Next();
    if (f == field) {
      out->assign(r.Item());
      return true;
    }
  }
  return false;
}

bool Exists(const Entry* e, std::string_view field) {
  std::string unused;
  if (e->IsExternal()) return static_cast<HashObject*>(e->Object())->Find(field) != nullptr;
  return Get(e, field, &unused);
}

void ForEach(const Entry* e, const std::function<void(std::string_view, std::string_view)>& fn) {
  std::string scratch;
  if (e->IsExternal()) {
    static_cast<HashObject*>(e->Object())->table().ForEach([&](Entry* f) {
      fn(f->Key(), f->Value(&scratch));
    });
    return;
  }
  for (packed::Reader r(e->Value(&scratch)); !r.Done(); r.Next()) {
    std::string_view f = r.Item();
    r.Next();
    fn(f, r.Item());
  }
}

}  // namespace hash_access

bool HashFitsPacked(size_t fields, size_t longest_item) {
  EncodingLimits& l = GlobalEncodingLimits();
  return static_cast<int64_t>(fields) <=
             l.hash_max_listpack_entries.load(std::memory_order_relaxed) &&
         static_cast<int64_t>(longest_item) <=
             l.hash_max_listpack_value.load(std::memory_order_relaxed);
}

std::unique_ptr<HashObject> BuildHash(const std::vector<std::pair<std::string, std::string>>& kv,
                                      SlabHeap& heap, std::string* packed) {
  size_t longest = 0;
  for (auto& [f, v] : kv) longest = std::max({longest, f.size(), v.size()});
  packed->clear();
  if (HashFitsPacked(kv.size(), longest)) {
    packed::Builder b;
    for (auto& [f, v] : kv) {
      b.Add(f);
      b.Add(v);
    }
    *packed = b.Finish();
    return nullptr;
  }
  auto obj = std::make_unique<HashObject>(heap);
  for (auto& [f, v] : kv) obj->Set(f, v);
  return obj;
}

std::unique_ptr<CollectionObject> MaterializeHash(std::string_view serialized, SlabHeap& heap) {
  size_t fields = 0, longest = 0;
  for (packed::Reader r(serialized); !r.Done(); r.Next()) {
    longest = std::max(longest, r.Item().size());
    fields++;
  }
  fields /= 2;
  if (HashFitsPacked(fields, longest)) return nullptr;
  auto obj = std::make_unique<HashObject>(heap);
  for (packed::Reader r(serialized); !r.Done(); r.Next()) {
    std::string_view f = r.Item();
    r.Next();
    obj->Set(f, r.Item());
  }
  return obj;
}

}  // namespace strata
