#include "core/set_type.h"

#include <malloc.h>

#include <algorithm>
#include <cstring>

#include "core/hash.h"
#include "core/packed_list.h"
#include "core/slab.h"
#include "core/string_util.h"

namespace strata {

namespace {

constexpr size_t kIntSetHeader = 2;  // tag, width

int64_t Limit(const std::atomic<int64_t>& v) { return v.load(std::memory_order_relaxed); }

// Redis's intsetMaxEntries(): set-max-intset-entries, capped at 2^30.
size_t IntSetMaxEntries() {
  int64_t v = Limit(GlobalEncodingLimits().set_max_intset_entries);
  if (v < 0) return 0;
  return std::min<size_t>(static_cast<size_t>(v), size_t{1} << 30);
}

// a <= limit for a count or length against a config value that may be negative.
bool AtMost(size_t a, int64_t limit) { return limit >= 0 && a <= static_cast<uint64_t>(limit); }

bool FitsListpack(size_t count, size_t longest) {
  EncodingLimits& l = GlobalEncodingLimits();
  return AtMost(count, Limit(l.set_max_listpack_entries)) &&
         AtMost(longest, Limit(l.set_max_listpack_value));
}

// Formats v into buf (at least 21 bytes) and returns the view.
std::string_view FormatInt(int64_t v, char* buf) {
  uint64_t u = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  char* end = buf + 21;
  char* p = end;
  do {
    *--p = static_cast<char>('0' + u % 10);
    u /= 10;
  } while (u != 0);
  if (v < 0) *--p = '-';
  return {p, static_cast<size_t>(end - p)};
}

// Length of v in decimal, sign included (Redis's sdigits10).
size_t Digits(int64_t v) {
  char buf[24];
  return FormatInt(v, buf).size();
}

bool IsIntSet(std::string_view v) {
  return !v.empty() && static_cast<uint8_t>(v[0]) == static_cast<uint8_t>(PackedTag::kIntSet);
}

}  // namespace

const char* SetEncodingName(SetEncoding enc) {
  switch (enc) {
    case SetEncoding::kIntSet:
      return "intset";
    case SetEncoding::kListpack:
      return "listpack";
    case SetEncoding::kHashtable:
      return "hashtable";
  }
  return "unknown";
}

// ---- SetObject ----

SetObject::SetObject(SlabHeap& heap) : heap_(heap), table_(heap) {}

SetObject::~SetObject() { (void)table_.Clear(); }

size_t SetObject::ReleaseSome(size_t budget) {
  entry_bytes_ -= table_.DestroySome(&release_cursor_, budget);
  return table_.size();
}

bool SetObject::Add(std::string_view member) {
  uint64_t hash = TableHash(member);
  if (table_.Locate(member, hash)) return false;
  size_t usable = 0;
  Entry* e = Entry::Create(heap_, member, {}, ValueType::kString, Entry::kNoExpire, &usable);
  entry_bytes_ += usable;
  table_.Insert(e, hash);
  return true;
}

bool SetObject::Remove(std::string_view member) {
  Table::Ref ref = table_.Locate(member, TableHash(member));
  if (!ref) return false;
  entry_bytes_ -= Entry::Destroy(heap_, table_.Erase(ref));
  return true;
}

bool SetObject::Contains(std::string_view member) const {
  return table_.Find(member, TableHash(member)) != nullptr;
}

std::string_view SetObject::Random(uint64_t seed) const { return table_.RandomEntry(seed)->Key(); }

size_t SetObject::Bytes() const {
  return malloc_usable_size(const_cast<SetObject*>(this)) + table_.OverheadBytes() + entry_bytes_;
}

void SetObject::Serialize(std::string* out) const {
  packed::Builder b;
  table_.ForEach([&](Entry* e) { b.Add(e->Key()); });
  out->append(b.Finish());
}

// ---- intset ----

namespace intset {

bool ToInt(std::string_view member, int64_t* v) { return ParseInt64(member, v); }

size_t WidthFor(int64_t v) {
  if (v >= INT16_MIN && v <= INT16_MAX) return 2;
  if (v >= INT32_MIN && v <= INT32_MAX) return 4;
  return 8;
}

std::string Encode(const std::vector<int64_t>& sorted) {
  size_t width = 2;
  if (!sorted.empty()) width = std::max(WidthFor(sorted.front()), WidthFor(sorted.back()));
  std::string out(kIntSetHeader + sorted.size() * width, '\0');
  out[0] = static_cast<char>(PackedTag::kIntSet);
  out[1] = static_cast<char>(width);
  char* p = out.data() + kIntSetHeader;
  for (int64_t v : sorted) {
    // Little-endian two's complement, truncated to the width (every value fits it).
    uint64_t u = static_cast<uint64_t>(v);
    for (size_t b = 0; b < width; b++) p[b] = static_cast<char>(u >> (8 * b));
    p += width;
  }
  return out;
}

namespace {

size_t WidthOf(std::string_view buf) { return static_cast<uint8_t>(buf[1]); }

}  // namespace

size_t Count(std::string_view buf) {
  return buf.size() < kIntSetHeader ? 0 : (buf.size() - kIntSetHeader) / WidthOf(buf);
}

int64_t At(std::string_view buf, size_t i) {
  size_t width = WidthOf(buf);
  const char* p = buf.data() + kIntSetHeader + i * width;
  switch (width) {
    case 2: {
      int16_t v;
      std::memcpy(&v, p, 2);
      return v;
    }
    case 4: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    default: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return v;
    }
  }
}

bool Find(std::string_view buf, int64_t v) {
  size_t lo = 0, hi = Count(buf);
  // Values outside the width cannot be present.
  if (hi == 0 || WidthFor(v) > WidthOf(buf)) return false;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int64_t m = At(buf, mid);
    if (m == v) return true;
    if (m < v) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return false;
}

std::vector<int64_t> Decode(std::string_view buf) {
  size_t n = Count(buf);
  std::vector<int64_t> out(n);
  for (size_t i = 0; i < n; i++) out[i] = At(buf, i);
  return out;
}

bool Valid(std::string_view buf) {
  if (buf.size() < kIntSetHeader || !IsIntSet(buf)) return false;
  size_t width = WidthOf(buf);
  if (width != 2 && width != 4 && width != 8) return false;
  if ((buf.size() - kIntSetHeader) % width != 0) return false;
  size_t n = Count(buf);
  for (size_t i = 1; i < n; i++) {
    if (At(buf, i - 1) >= At(buf, i)) return false;
  }
  return true;
}

}  // namespace intset

// ---- set_access ----

namespace set_access {

SetEncoding Encoding(const Entry* e) {
  if (e->IsExternal()) return SetEncoding::kHashtable;
  std::string scratch;
  return IsIntSet(e->Value(&scratch)) ? SetEncoding::kIntSet : SetEncoding::kListpack;
}

size_t Length(const Entry* e) {
  if (e->IsExternal()) return e->Object()->Length();
  std::string scratch;
  std::string_view v = e->Value(&scratch);
  return IsIntSet(v) ? intset::Count(v) : packed::Count(v);
}

bool Contains(const Entry* e, std::string_view member) {
  if (e->IsExternal()) return static_cast<SetObject*>(e->Object())->Contains(member);
  std::string scratch;
  std::string_view v = e->Value(&scratch);
  if (IsIntSet(v)) {
    int64_t n;
    return intset::ToInt(member, &n) && intset::Find(v, n);
  }
  for (packed::Reader r(v); !r.Done(); r.Next()) {
    if (r.Item() == member) return true;
  }
  return false;
}

void ForEach(const Entry* e, const std::function<void(std::string_view)>& fn) {
  if (e->IsExternal()) {
    static_cast<SetObject*>(e->Object())->table().ForEach([&](Entry* m) { fn(m->Key()); });
    return;
  }
  std::string scratch;
  std::string_view v = e->Value(&scratch);
  if (IsIntSet(v)) {
    char buf[24];
    size_t n = intset::Count(v);
    for (size_t i = 0; i < n; i++) fn(FormatInt(intset::At(v, i), buf));
    return;
  }
  for (packed::Reader r(v); !r.Done(); r.Next()) fn(r.Item());
}

std::vector<std::string> Members(const Entry* e) {
  std::vector<std::string> out;
  out.reserve(Length(e));
  ForEach(e, [&](std::string_view m) { out.emplace_back(m); });
  return out;
}

std::string Random(const Entry* e, uint64_t seed) {
  if (e->IsExternal()) return std::string(static_cast<SetObject*>(e->Object())->Random(seed));
  std::string scratch;
  std::string_view v = e->Value(&scratch);
  if (IsIntSet(v)) {
    char buf[24];
    return std::string(FormatInt(intset::At(v, seed % intset::Count(v)), buf));
  }
  packed::Reader r(v);
  for (size_t i = seed % r.count(); i > 0; i--) r.Next();
  return std::string(r.Item());
}

}  // namespace set_access

// ---- SetBuilder ----

SetBuilder::SetBuilder(SetEncoding start) : enc_(start) {}

SetBuilder SetBuilder::ForNew(std::string_view first, size_t size_hint) {
  int64_t unused;
  EncodingLimits& l = GlobalEncodingLimits();
  if (intset::ToInt(first, &unused) && AtMost(size_hint, Limit(l.set_max_intset_entries)))
    return SetBuilder(SetEncoding::kIntSet);
  if (AtMost(size_hint, Limit(l.set_max_listpack_entries)))
    return SetBuilder(SetEncoding::kListpack);
  return SetBuilder(SetEncoding::kHashtable);
}

SetBuilder SetBuilder::FromPacked(std::string_view value) {
  if (IsIntSet(value)) {
    SetBuilder b(SetEncoding::kIntSet);
    b.ints_ = intset::Decode(value);
    return b;
  }
  SetBuilder b(SetEncoding::kListpack);
  packed::Reader r(value);
  b.strs_.reserve(r.count());
  for (; !r.Done(); r.Next()) b.strs_.emplace_back(r.Item());
  return b;
}

size_t SetBuilder::size() const {
  switch (enc_) {
    case SetEncoding::kIntSet:
      return ints_.size();
    case SetEncoding::kListpack:
      return strs_.size();
    case SetEncoding::kHashtable:
      return hash_.size();
  }
  return 0;
}

void SetBuilder::ToListpack() {
  // An intset's members enter the listpack in ascending order, as Redis converts.
  char buf[24];
  strs_.reserve(ints_.size() + 1);
  for (int64_t v : ints_) strs_.emplace_back(FormatInt(v, buf));
  ints_.clear();
  ints_.shrink_to_fit();
  enc_ = SetEncoding::kListpack;
}

void SetBuilder::ToHashtable() {
  if (enc_ == SetEncoding::kIntSet) {
    char buf[24];
    hash_.reserve(ints_.size() + 1);
    for (int64_t v : ints_) hash_.emplace(FormatInt(v, buf));
    ints_.clear();
    ints_.shrink_to_fit();
  } else if (enc_ == SetEncoding::kListpack) {
    hash_.reserve(strs_.size() + 1);
    for (std::string& s : strs_) hash_.insert(std::move(s));
    strs_.clear();
    strs_.shrink_to_fit();
  }
  enc_ = SetEncoding::kHashtable;
}

bool SetBuilder::Add(std::string_view member) {
  EncodingLimits& l = GlobalEncodingLimits();
  switch (enc_) {
    case SetEncoding::kHashtable:
      return hash_.emplace(member).second;
    case SetEncoding::kListpack: {
      for (const std::string& s : strs_) {
        if (s == member) return false;
      }
      if (AtMost(strs_.size() + 1, Limit(l.set_max_listpack_entries)) &&
          AtMost(member.size(), Limit(l.set_max_listpack_value))) {
        strs_.emplace_back(member);
      } else {
        ToHashtable();
        hash_.emplace(member);
      }
      return true;
    }
    case SetEncoding::kIntSet: {
      int64_t v;
      if (intset::ToInt(member, &v)) {
        auto it = std::lower_bound(ints_.begin(), ints_.end(), v);
        if (it != ints_.end() && *it == v) return false;
        ints_.insert(it, v);
        if (ints_.size() > IntSetMaxEntries()) ToHashtable();
        return true;
      }
      // A non-integer: a listpack if the members (the integers at their longest) and the
      // new one fit it, else a hashtable.
      size_t longest_int =
          ints_.empty() ? 0 : std::max(Digits(ints_.front()), Digits(ints_.back()));
      if (AtMost(ints_.size() + 1, Limit(l.set_max_listpack_entries)) &&
          AtMost(member.size(), Limit(l.set_max_listpack_value)) &&
          AtMost(longest_int, Limit(l.set_max_listpack_value))) {
        ToListpack();
        strs_.emplace_back(member);
      } else {
        ToHashtable();
        hash_.emplace(member);
      }
      return true;
    }
  }
  return false;
}

bool SetBuilder::Remove(std::string_view member) {
  switch (enc_) {
    case SetEncoding::kHashtable: {
      auto it = hash_.find(member);
      if (it == hash_.end()) return false;
      hash_.erase(it);
      return true;
    }
    case SetEncoding::kListpack:
      for (size_t i = 0; i < strs_.size(); i++) {
        if (strs_[i] == member) {
          strs_.erase(strs_.begin() + static_cast<std::ptrdiff_t>(i));
          return true;
        }
      }
      return false;
    case SetEncoding::kIntSet: {
      int64_t v;
      if (!intset::ToInt(member, &v)) return false;
      auto it = std::lower_bound(ints_.begin(), ints_.end(), v);
      if (it == ints_.end() || *it != v) return false;
      ints_.erase(it);
      return true;
    }
  }
  return false;
}

bool SetBuilder::Contains(std::string_view member) const {
  switch (enc_) {
    case SetEncoding::kHashtable:
      return hash_.find(member) != hash_.end();
    case SetEncoding::kListpack:
      return std::find(strs_.begin(), strs_.end(), member) != strs_.end();
    case SetEncoding::kIntSet: {
      int64_t v;
      return intset::ToInt(member, &v) && std::binary_search(ints_.begin(), ints_.end(), v);
    }
  }
  return false;
}

void SetBuilder::MaybeConvert(size_t size_hint) {
  EncodingLimits& l = GlobalEncodingLimits();
  if ((enc_ == SetEncoding::kListpack && !AtMost(size_hint, Limit(l.set_max_listpack_entries))) ||
      (enc_ == SetEncoding::kIntSet && !AtMost(size_hint, Limit(l.set_max_intset_entries)))) {
    ToHashtable();
  }
}

void SetBuilder::ConvertToIntSetIfFits() {
  if (enc_ == SetEncoding::kIntSet || size() > IntSetMaxEntries()) return;
  std::vector<int64_t> ints;
  ints.reserve(size());
  bool all_ints = true;
  ForEach([&](std::string_view m) {
    int64_t v;
    if (intset::ToInt(m, &v)) {
      ints.push_back(v);
    } else {
      all_ints = false;
    }
  });
  if (!all_ints) return;
  std::sort(ints.begin(), ints.end());
  ints_ = std::move(ints);
  strs_.clear();
  hash_.clear();
  enc_ = SetEncoding::kIntSet;
}

std::string SetBuilder::MemberAt(size_t i) const {
  if (enc_ == SetEncoding::kIntSet) return IntToString(ints_[i]);
  if (enc_ == SetEncoding::kListpack) return strs_[i];
  auto it = hash_.begin();
  std::advance(it, static_cast<std::ptrdiff_t>(i));
  return *it;
}

void SetBuilder::RemoveAt(size_t i) {
  if (enc_ == SetEncoding::kIntSet) {
    ints_.erase(ints_.begin() + static_cast<std::ptrdiff_t>(i));
  } else if (enc_ == SetEncoding::kListpack) {
    strs_.erase(strs_.begin() + static_cast<std::ptrdiff_t>(i));
  } else {
    auto it = hash_.begin();
    std::advance(it, static_cast<std::ptrdiff_t>(i));
    hash_.erase(it);
  }
}

void SetBuilder::ForEach(const std::function<void(std::string_view)>& fn) const {
  switch (enc_) {
    case SetEncoding::kIntSet: {
      char buf[24];
      for (int64_t v : ints_) fn(FormatInt(v, buf));
      break;
    }
    case SetEncoding::kListpack:
      for (const std::string& s : strs_) fn(s);
      break;
    case SetEncoding::kHashtable:
      for (const std::string& s : hash_) fn(s);
      break;
  }
}

std::string SetBuilder::Packed() const {
  if (enc_ == SetEncoding::kIntSet) return intset::Encode(ints_);
  packed::Builder b;
  for (const std::string& s : strs_) b.Add(s);
  return b.Finish();
}

void SetBuilder::Store(Keyspace& ks, uint32_t db, std::string_view key, int64_t expire_ms) const {
  if (empty()) {
    ks.Delete(db, key);
    return;
  }
  if (enc_ != SetEncoding::kHashtable) {
    ks.SetRaw(db, key, Packed(), ValueType::kSet, expire_ms);
    return;
  }
  auto obj = std::make_unique<SetObject>(ks.heap());
  for (const std::string& s : hash_) obj->Add(s);
  ks.SetObject(db, key, ValueType::kSet, std::move(obj), expire_ms);
}

// ---- SetEditor ----

SetEditor::SetEditor(Keyspace& ks, uint32_t db, std::string_view key, Entry* e)
    : ks_(ks), db_(db), key_(key), e_(e), expire_ms_(e->ExpireMs()) {
  if (e->IsExternal()) {
    obj_ = static_cast<SetObject*>(e->Object());
    obj_bytes_before_ = obj_->Bytes();
  } else {
    std::string scratch;
    builder_ = SetBuilder::FromPacked(e->Value(&scratch));
  }
}

SetEditor::SetEditor(Keyspace& ks, uint32_t db, std::string_view key, std::string_view first,
                     size_t size_hint)
    : ks_(ks),
      db_(db),
      key_(key),
      e_(nullptr),
      expire_ms_(Entry::kNoExpire),
      builder_(SetBuilder::ForNew(first, size_hint)),
      changed_(true) {}

SetEncoding SetEditor::encoding() const {
  return obj_ != nullptr ? SetEncoding::kHashtable : builder_.encoding();
}

size_t SetEditor::size() const { return obj_ != nullptr ? obj_->Length() : builder_.size(); }

bool SetEditor::Add(std::string_view member) {
  if (obj_ != nullptr) return obj_->Add(member);
  bool added = builder_.Add(member);
  changed_ |= added;
  return added;
}

bool SetEditor::Remove(std::string_view member) {
  if (obj_ != nullptr) return obj_->Remove(member);
  bool removed = builder_.Remove(member);
  changed_ |= removed;
  return removed;
}

bool SetEditor::Contains(std::string_view member) const {
  return obj_ != nullptr ? obj_->Contains(member) : builder_.Contains(member);
}

void SetEditor::MaybeConvert(size_t size_hint) {
  if (obj_ != nullptr) return;
  SetEncoding before = builder_.encoding();
  builder_.MaybeConvert(size_hint);
  changed_ |= builder_.encoding() != before;
}

std::string SetEditor::PopRandom(uint64_t seed) {
  if (obj_ != nullptr) {
    std::string m(obj_->Random(seed));
    obj_->Remove(m);
    return m;
  }
  size_t i = seed % builder_.size();
  std::string m = builder_.MemberAt(i);
  builder_.RemoveAt(i);
  changed_ = true;
  return m;
}

void SetEditor::Commit() {
  if (obj_ != nullptr) {
    // Re-charged first: deleting releases the object's bytes as they are now.
    ks_.Recharge(e_, obj_bytes_before_);
    if (obj_->Length() == 0) ks_.Delete(db_, key_);
    return;
  }
  if (changed_) builder_.Store(ks_, db_, key_, expire_ms_);
}

// ---- materialize ----

std::unique_ptr<CollectionObject> MaterializeSet(std::string_view serialized, SlabHeap& heap) {
  if (IsIntSet(serialized)) return nullptr;
  size_t count = 0, longest = 0;
  for (packed::Reader r(serialized); !r.Done(); r.Next()) {
    longest = std::max(longest, r.Item().size());
    count++;
  }
  if (FitsListpack(count, longest)) return nullptr;
  auto obj = std::make_unique<SetObject>(heap);
  for (packed::Reader r(serialized); !r.Done(); r.Next()) obj->Add(r.Item());
  return obj;
}

}  // namespace strata
