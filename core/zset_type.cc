#include "core/zset_type.h"

#include <malloc.h>

#include <charconv>
#include <cmath>
#include <cstring>

#include "core/hash.h"
#include "core/packed_list.h"
#include "core/slab.h"

namespace strata {

// A member entry's value is its 8-byte score, stored raw right after the key: values
// that short are never ascii7-packed (entry.h), which ScoreOf and SetScoreInPlace rely on.
static_assert(Entry::kPackMinLen > sizeof(double));

// ---- score codec ----

namespace zscore {

std::string_view Encode(double s, char (&buf)[8]) {
  if (std::fabs(s) < 1e7 && !(s == 0 && std::signbit(s))) {
    int64_t v = static_cast<int64_t>(s);
    if (static_cast<double>(v) == s) {
      char tmp[24];
      auto [end, ec] = std::to_chars(tmp, tmp + sizeof(tmp), v);
      size_t len = static_cast<size_t>(end - tmp);
      if (len < 8) {
        std::memcpy(buf, tmp, len);
        return {buf, len};
      }
    }
  }
  std::memcpy(buf, &s, 8);
  return {buf, 8};
}

double Decode(std::string_view item) {
  if (item.size() == 8) {
    double d;
    std::memcpy(&d, item.data(), 8);
    return d;
  }
  size_t i = 0;
  bool neg = !item.empty() && item[0] == '-';
  if (neg) i = 1;
  int64_t v = 0;
  for (; i < item.size(); i++) v = v * 10 + (item[i] - '0');
  return static_cast<double>(neg ? -v : v);
}

// True when item is a score Encode could have produced.
bool ValidItem(std::string_view item) {
  if (item.size() == 8) return !std::isnan(Decode(item));
  if (item.empty()) return false;
  size_t i = item[0] == '-' ? 1 : 0;
  if (i == item.size()) return false;
  for (; i < item.size(); i++) {
    if (item[i] < '0' || item[i] > '9') return false;
  }
  return true;
}

}  // namespace zscore

// ---- small form ----

namespace zpacked {

void Decode(std::string_view buf, std::vector<ZMember>* out) {
  packed::Reader r(buf);
  out->reserve(out->size() + r.count() / 2);
  for (; !r.Done(); r.Next()) {
    std::string_view m = r.Item();
    r.Next();
    if (r.Done()) break;
    out->push_back(ZMember{m, zscore::Decode(r.Item())});
  }
}

std::string Encode(const std::vector<ZMember>& items) {
  packed::Builder b;
  char buf[8];
  for (const ZMember& m : items) {
    b.Add(m.member);
    b.Add(zscore::Encode(m.score, buf));
  }
  return b.Finish();
}

bool Valid(std::string_view buf) {
  if (!packed::Valid(buf)) return false;
  packed::Reader r(buf);
  if (r.count() % 2 != 0) return false;
  bool first = true;
  ZMember prev{};
  for (; !r.Done(); r.Next()) {
    std::string_view m = r.Item();
    r.Next();
    if (!zscore::ValidItem(r.Item())) return false;
    ZMember cur{m, zscore::Decode(r.Item())};
    if (!first && !ZLess(prev, cur)) return false;
    prev = cur;
    first = false;
  }
  return true;
}

}  // namespace zpacked

bool ZSetFitsPacked(size_t members, size_t longest_member) {
  EncodingLimits& l = GlobalEncodingLimits();
  return static_cast<int64_t>(members) <=
             l.zset_max_listpack_entries.load(std::memory_order_relaxed) &&
         static_cast<int64_t>(longest_member) <=
             l.zset_max_listpack_value.load(std::memory_order_relaxed);
}

size_t ZSetLength(const Entry* e) {
  if (e->IsExternal()) return e->Object()->Length();
  std::string unused;
  return packed::Count(e->Value(&unused)) / 2;
}

// ---- ZSetObject ----

ZSetObject::ZSetObject(SlabHeap& heap) : heap_(heap), table_(heap) {}

ZSetObject::~ZSetObject() {
  index_.Clear();
  (void)table_.Clear();
}

double ZSetObject::ScoreOf(const Entry* m) {
  std::string_view k = m->Key();
  double d;
  std::memcpy(&d, k.data() + k.size(), sizeof(d));
  return d;
}

void ZSetObject::SetScoreInPlace(Entry* m, double score) {
  std::string_view k = m->Key();
  std::memcpy(const_cast<char*>(k.data() + k.size()), &score, sizeof(score));
}

bool ZSetObject::Set(std::string_view member, double score) {
  uint64_t hash = TableHash(member);
  Table::Ref ref = table_.Locate(member, hash);
  if (ref) {
    Entry* m = Table::At(ref);
    index_.Erase(ScoreOf(m), m);
    SetScoreInPlace(m, score);
    index_.Insert(score, m);
    return false;
  }
  char value[sizeof(double)];
  std::memcpy(value, &score, sizeof(score));
  size_t usable = 0;
  Entry* m = Entry::Create(heap_, member, std::string_view(value, sizeof(value)),
                           ValueType::kString, Entry::kNoExpire, &usable);
  entry_bytes_ += usable;
  table_.Insert(m, hash);
  index_.Insert(score, m);
  return true;
}

bool ZSetObject::Remove(std::string_view member) {
  Table::Ref ref = table_.Locate(member, TableHash(member));
  if (!ref) return false;
  Entry* m = Table::At(ref);
  index_.Erase(ScoreOf(m), m);
  table_.Erase(ref);
  entry_bytes_ -= Entry::Destroy(heap_, m);
  return true;
}

void ZSetObject::RemoveEntry(Entry* m) {
  std::string_view k = m->Key();
  index_.Erase(ScoreOf(m), m);
  table_.Erase(table_.Locate(k, TableHash(k)));
  entry_bytes_ -= Entry::Destroy(heap_, m);
}

Entry* ZSetObject::Find(std::string_view member) const {
  return table_.Find(member, TableHash(member));
}

size_t ZSetObject::Bytes() const {
  return malloc_usable_size(const_cast<ZSetObject*>(this)) + table_.OverheadBytes() + entry_bytes_ +
         index_.Bytes();
}

void ZSetObject::Serialize(std::string* out) const {
  packed::Builder b;
  char buf[8];
  for (ScoreIndex::Pos p = index_.First(); p; ScoreIndex::Next(&p)) {
    b.Add(p.item().member());
    b.Add(zscore::Encode(p.item().score, buf));
  }
  out->append(b.Finish());
}

size_t ZSetObject::ReleaseSome(size_t budget) {
  index_.Clear();
  entry_bytes_ -= table_.DestroySome(&release_cursor_, budget);
  return table_.size();
}

// ---- ZSetReader ----

ZSetReader::ZSetReader(const Entry* e) {
  if (e->IsExternal()) {
    obj_ = static_cast<const ZSetObject*>(e->Object());
    return;
  }
  std::string unused;  // collection values are stored raw: Value() views the entry
  packed_ = e->Value(&unused);
  count_ = packed::Count(packed_) / 2;
}

const std::vector<ZMember>& ZSetReader::Items() const {
  if (!decoded_) {
    zpacked::Decode(packed_, &items_);
    decoded_ = true;
  }
  return items_;
}

bool ZSetReader::Score(std::string_view member, double* score) const {
  if (obj_ != nullptr) {
    Entry* m = obj_->Find(member);
    if (m == nullptr) return false;
    *score = ZSetObject::ScoreOf(m);
    return true;
  }
  size_t unused;
  return Rank(member, &unused, score);
}

bool ZSetReader::Rank(std::string_view member, size_t* rank, double* score) const {
  if (obj_ != nullptr) {
    Entry* m = obj_->Find(member);
    if (m == nullptr) return false;
    *score = ZSetObject::ScoreOf(m);
    *rank = obj_->index().Rank(*score, m);
    return true;
  }
  size_t i = 0;
  for (packed::Reader r(packed_); !r.Done(); r.Next(), i++) {
    bool match = r.Item() == member;
    r.Next();
    if (match && !r.Done()) {
      *rank = i;
      *score = zscore::Decode(r.Item());
      return true;
    }
  }
  return false;
}

ZMember ZSetReader::At(size_t r) const {
  if (obj_ == nullptr) return Items()[r];
  const ScoreIndex::Item& it = obj_->index().Seek(r).item();
  return ZMember{it.member(), it.score};
}

// ---- ZSetEditor ----

namespace {

// The small form stores zero as +0, as Redis's listpack does.
double PackedScore(double s) { return s == 0 ? 0.0 : s; }

void InsertSorted(std::vector<ZMember>* items, ZMember m) {
  auto at = std::lower_bound(items->begin(), items->end(), m, ZLess);
  items->insert(at, m);
}

}  // namespace

ZSetEditor::ZSetEditor(Keyspace& ks, uint32_t db, std::string_view key, Entry* e)
    : ks_(ks), db_(db), key_(key), e_(e) {
  if (e == nullptr) return;
  expire_ms_ = e->ExpireMs();
  if (e->IsExternal()) {
    obj_ = static_cast<ZSetObject*>(e->Object());
    obj_bytes_before_ = obj_->Bytes();
    return;
  }
  std::string unused;
  zpacked::Decode(e->Value(&unused), &items_);
}

size_t ZSetEditor::size() const { return big() != nullptr ? big()->Length() : items_.size(); }

bool ZSetEditor::Score(std::string_view member, double* score) const {
  if (ZSetObject* b = big()) {
    Entry* m = b->Find(member);
    if (m == nullptr) return false;
    *score = ZSetObject::ScoreOf(m);
    return true;
  }
  for (const ZMember& m : items_) {
    if (m.member == member) {
      *score = m.score;
      return true;
    }
  }
  return false;
}

void ZSetEditor::ToBig() {
  fresh_ = std::make_unique<ZSetObject>(ks_.heap());
  for (const ZMember& m : items_) fresh_->Set(m.member, m.score);
  items_.clear();
  changed_ = true;
}

bool ZSetEditor::Add(std::string_view member, double score, int in_flags, int* out_flags,
                     double* newscore) {
  *out_flags = 0;
  if (std::isnan(score)) {
    *out_flags = kZAddNaN;
    return false;
  }
  bool incr = in_flags & kZAddIncr;
  bool nx = in_flags & kZAddNx;
  bool xx = in_flags & kZAddXx;
  bool gt = in_flags & kZAddGt;
  bool lt = in_flags & kZAddLt;
  ZSetObject* b = big();
  double cur = 0;
  bool found = false;
  size_t idx = 0;
  if (b != nullptr) {
    Entry* m = b->Find(member);
    if (m != nullptr) {
      found = true;
      cur = ZSetObject::ScoreOf(m);
    }
  } else {
    for (; idx < items_.size(); idx++) {
      if (items_[idx].member == member) {
        found = true;
        cur = items_[idx].score;
        break;
      }
    }
  }
  if (found) {
    if (nx) {
      *out_flags |= kZAddNop;
      return true;
    }
    if (incr) {
      score += cur;
      if (std::isnan(score)) {
        *out_flags |= kZAddNaN;
        return false;
      }
    }
    if ((lt && score >= cur) || (gt && score <= cur)) {
      *out_flags |= kZAddNop;
      return true;
    }
    if (newscore != nullptr) *newscore = score;
    if (score != cur) {
      if (b != nullptr) {
        b->Set(member, score);
      } else {
        ZMember m{items_[idx].member, PackedScore(score)};
        items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(idx));
        InsertSorted(&items_, m);
      }
      *out_flags |= kZAddUpdated;
      changed_ = true;
    }
    return true;
  }
  if (xx) {
    *out_flags |= kZAddNop;
    return true;
  }
  if (b == nullptr && !ZSetFitsPacked(items_.size() + 1, member.size())) {
    ToBig();
    b = big();
  }
  if (b != nullptr) {
    b->Set(member, score);
  } else {
    InsertSorted(&items_, ZMember{member, PackedScore(score)});
  }
  if (newscore != nullptr) *newscore = score;
  *out_flags |= kZAddAdded;
  changed_ = true;
  return true;
}

bool ZSetEditor::Remove(std::string_view member) {
  if (ZSetObject* b = big()) {
    if (!b->Remove(member)) return false;
    changed_ = true;
    return true;
  }
  for (size_t i = 0; i < items_.size(); i++) {
    if (items_[i].member == member) {
      items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(i));
      changed_ = true;
      return true;
    }
  }
  return false;
}

void ZSetEditor::RemoveRanks(size_t start, size_t end) {
  if (start > end) return;
  changed_ = true;
  if (ZSetObject* b = big()) {
    std::vector<Entry*> doomed;
    doomed.reserve(end - start + 1);
    ScoreIndex::Pos p = b->index().Seek(start);
    for (size_t i = start; i <= end && p; i++, ScoreIndex::Next(&p)) doomed.push_back(p.item().e);
    for (Entry* m : doomed) b->RemoveEntry(m);
    return;
  }
  items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(start),
               items_.begin() + static_cast<std::ptrdiff_t>(end + 1));
}

void ZSetEditor::Pop(bool max, size_t count, std::vector<std::pair<std::string, double>>* out) {
  size_t n = std::min(count, size());
  if (n == 0) return;
  changed_ = true;
  if (ZSetObject* b = big()) {
    for (size_t i = 0; i < n; i++) {
      ScoreIndex::Pos p = max ? b->index().Last() : b->index().First();
      const ScoreIndex::Item& it = p.item();
      out->emplace_back(std::string(it.member()), it.score);
      b->RemoveEntry(it.e);
    }
    return;
  }
  for (size_t i = 0; i < n; i++) {
    const ZMember& m = max ? items_[items_.size() - 1 - i] : items_[i];
    out->emplace_back(std::string(m.member), m.score);
  }
  if (max) {
    items_.resize(items_.size() - n);
  } else {
    items_.erase(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(n));
  }
}

void ZSetEditor::Commit() {
  if (obj_ != nullptr) {
    // Charge the change first: Delete releases the object's bytes as they are now.
    ks_.Recharge(e_, obj_bytes_before_);
    if (obj_->Length() == 0) ks_.Delete(db_, key_);
    return;
  }
  if (fresh_ != nullptr) {
    if (fresh_->Length() > 0) {
      ks_.SetObject(db_, key_, ValueType::kZSet, std::move(fresh_), expire_ms_);
    } else if (e_ != nullptr) {
      ks_.Delete(db_, key_);
    }
    return;
  }
  if (!changed_) return;
  if (items_.empty()) {
    if (e_ != nullptr) ks_.Delete(db_, key_);
    return;
  }
  ks_.SetRaw(db_, key_, zpacked::Encode(items_), ValueType::kZSet, expire_ms_);
}

// ---- whole sets ----

void StoreZSet(Keyspace& ks, uint32_t db, std::string_view key, std::vector<ZMember>* items) {
  if (items->empty()) {
    ks.Delete(db, key);
    return;
  }
  std::sort(items->begin(), items->end(), ZLess);
  size_t longest = 0;
  for (const ZMember& m : *items) longest = std::max(longest, m.member.size());
  if (ZSetFitsPacked(items->size(), longest)) {
    for (ZMember& m : *items) m.score = PackedScore(m.score);
    ks.SetRaw(db, key, zpacked::Encode(*items), ValueType::kZSet, Entry::kNoExpire);
    return;
  }
  auto obj = std::make_unique<ZSetObject>(ks.heap());
  for (const ZMember& m : *items) obj->Set(m.member, m.score);
  ks.SetObject(db, key, ValueType::kZSet, std::move(obj), Entry::kNoExpire);
}

std::unique_ptr<CollectionObject> MaterializeZSet(std::string_view serialized, SlabHeap& heap) {
  size_t members = 0, longest = 0;
  for (packed::Reader r(serialized); !r.Done(); r.Next(), members++) {
    longest = std::max(longest, r.Item().size());
    r.Next();
  }
  if (ZSetFitsPacked(members, longest)) return nullptr;
  std::vector<ZMember> items;
  zpacked::Decode(serialized, &items);
  auto obj = std::make_unique<ZSetObject>(heap);
  for (const ZMember& m : items) obj->Set(m.member, m.score);
  return obj;
}

}  // namespace strata
