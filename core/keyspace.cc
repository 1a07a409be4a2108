#include "core/keyspace.h"

#include <algorithm>

#include "core/hash.h"

namespace strata {

Keyspace::Keyspace(uint32_t db_count) : dbs_(db_count) {
  for (Db& d : dbs_) d.table = std::make_unique<Table>(heap_, &table_bytes_);
}

Keyspace::~Keyspace() {
  // Tearing down is not a change: the snapshot hook and the change tracker belong to the
  // server's snapshot manager, which may already be gone.
  snap_hook_ = nullptr;
  tracker_ = nullptr;
  cold_hook_ = nullptr;
  FlushAll();
  while (LazyFreeStep(SIZE_MAX)) {
  }
}

// The write path's helpers are inlined where they are used: with StringForWrite as one
// more caller the compiler stopped inlining them into SetString's path on its own
// (SET went from 1727 to 1768 instructions per request under callgrind).
[[gnu::always_inline]] inline Entry* Keyspace::NewEntry(Db& d, std::string_view key,
                                                        std::string_view value, ValueType type,
                                                        int64_t expire_ms) {
  size_t usable = 0;
  Entry* e = Entry::CreateKey(heap_, key, value, type, expire_ms, &usable, initial_access_);
  Charge(e, usable);
  if (e->HasExpire()) d.expires++;
  return e;
}

[[gnu::always_inline]] inline void Keyspace::FreeEntry(Db& d, Entry* e, bool lazy) {
  if (e->IsExternalOrCold()) {  // one test on the common path
    if (e->IsCold()) {
      NoteColdFreed(e);
    } else {
      CollectionObject* obj = e->Object();
      int t = static_cast<int>(e->Type());
      if (lazy && obj->Length() > kLazyFreeMinElements) {
        // The object's bytes stay charged until LazyFreeStep releases them.
        lazy_pending_bytes_ += obj->Bytes();
        lazy_.push_back(LazyItem{obj, e->Type(), nullptr, 0});
      } else {
        entry_bytes_ -= obj->Bytes();
        type_bytes_[t] -= obj->Bytes();
        delete obj;
      }
    }
  }
  DestroyEntryKeepObject(d, e);
}

void Keyspace::FreeDetached(Entry* e) {
  int t = static_cast<int>(e->Type());
  if (e->IsCold()) NoteColdFreed(e);
  if (e->IsExternal()) {
    CollectionObject* obj = e->Object();
    if (obj->Length() > kLazyFreeMinElements) {
      lazy_pending_bytes_ += obj->Bytes();
      lazy_.push_back(LazyItem{obj, e->Type(), nullptr, 0});
    } else {
      entry_bytes_ -= obj->Bytes();
      type_bytes_[t] -= obj->Bytes();
      delete obj;
    }
  }
  size_t n = Entry::Destroy(heap_, e);
  entry_bytes_ -= n;
  type_bytes_[t] -= n;
  type_keys_[t]--;
}

bool Keyspace::LazyFreeStep(size_t budget) {
  while (budget > 0 && !lazy_.empty()) {
    LazyItem& item = lazy_.front();
    if (item.table != nullptr) {
      // A detached table: free its entries chunk by chunk.
      size_t before = item.table->size();
      do {
        item.cursor = item.table->ScanChunk(item.cursor, [&](Entry* e) {
          FreeDetached(e);
          return true;
        });
      } while (item.cursor != 0 && before - item.table->size() < budget);
      size_t freed = before - item.table->size();
      budget = freed >= budget ? 0 : budget - freed;
      if (item.cursor == 0) lazy_.pop_front();  // table destructor frees the segments
      continue;
    }
    CollectionObject* obj = item.obj;
    int t = static_cast<int>(item.type);
    size_t before = obj->Bytes();
    size_t left = obj->ReleaseSome(budget);
    size_t after = obj->Bytes();
    entry_bytes_ -= before - after;
    type_bytes_[t] -= before - after;
    lazy_pending_bytes_ -= std::min(lazy_pending_bytes_, before - after);
    budget = 0;
    if (left == 0) {
      entry_bytes_ -= after;
      type_bytes_[t] -= after;
      lazy_pending_bytes_ -= std::min(lazy_pending_bytes_, after);
      delete obj;
      lazy_.pop_front();
    }
  }
  return !lazy_.empty();
}

[[gnu::always_inline]] inline void Keyspace::DestroyEntryKeepObject(Db& d, Entry* e) {
  if (e->HasExpire()) d.expires--;
  int t = static_cast<int>(e->Type());
  size_t n = Entry::Destroy(heap_, e);
  entry_bytes_ -= n;
  type_bytes_[t] -= n;
  type_keys_[t]--;
}

void Keyspace::DestroyEntry(Db& d, Entry* e, bool lazy) { FreeEntry(d, e, lazy); }

[[gnu::always_inline]] inline Entry* Keyspace::Insert(Db& d, std::string_view key, Entry* e) {
  uint64_t hash = TableHash(key);
  return InsertAt(d, key, hash, d.table->Locate(key, hash), e);
}

[[gnu::always_inline]] inline Entry* Keyspace::InsertAt(Db& d, std::string_view key, uint64_t hash,
                                                        Table::Ref ref, Entry* e) {
  if (PreWrite(d, hash, ref ? Table::At(ref) : nullptr)) e->SetSnapSkip(true);
  Mark(d, hash);
  if (ref) {
    // LFU keeps the key's frequency across overwrites (as Redis), a write counting as
    // one access: the command's own lookup, or here when it made none. LRU: the new
    // entry was created with the current clock.
    if (access_clock_.mode == access::Mode::kLfu) [[unlikely]]
      CarryLfu(Table::At(ref), e);
    FreeEntry(d, d.table->Replace(ref, e));
  } else {
    d.table->Insert(e, hash);
    IndexCreated(d, key, hash);
    if (event_hook_ != nullptr) [[unlikely]]
      event_hook_->KeyCreated(static_cast<uint32_t>(&d - dbs_.data()), key);
  }
  return e;
}

Entry* Keyspace::SetObject(uint32_t db, std::string_view key, ValueType type,
                           std::unique_ptr<CollectionObject> obj, int64_t expire_ms) {
  Db& d = dbs_[db];
  size_t usable = 0;
  size_t obj_bytes = obj->Bytes();
  Entry* e =
      Entry::CreateExternal(heap_, key, type, obj.release(), expire_ms, &usable, initial_access_);
  Charge(e, usable + obj_bytes);
  if (e->HasExpire()) d.expires++;
  return Insert(d, key, e);
}

void Keyspace::Recharge(const Entry* e, size_t old_object_bytes) {
  size_t now = e->Object()->Bytes();
  int t = static_cast<int>(e->Type());
  changes_++;
  entry_bytes_ += now - old_object_bytes;
  type_bytes_[t] += now - old_object_bytes;
}

void Keyspace::Prefetch(uint32_t db, std::string_view key) const {
  dbs_[db].table->Prefetch(TableHash(key));
}

void Keyspace::PrefetchLookups(uint32_t db, const uint64_t* hashes, size_t n) const {
  dbs_[db].table->PrefetchLookups(hashes, n);
}

void Keyspace::PrefetchKeys(uint32_t db, const std::string_view* keys, size_t n) const {
  const Table& table = *dbs_[db].table;
  if (n < 2 || table.size() < kLookaheadMinKeys) return;
  uint64_t hashes[Table::kLookaheadMax];
  size_t m = 0;
  for (size_t i = 0; i < n && m < Table::kLookaheadMax; i++) {
    if (keys[i].size() <= kLookaheadKeyMax) hashes[m++] = TableHash(keys[i]);
  }
  table.PrefetchLookups(hashes, m);
}

std::string Keyspace::Serialize(const Entry* e) {
  if (!e->IsExternal()) return e->ValueString();
  std::string out;
  e->Object()->Serialize(&out);
  return out;
}

std::string_view Keyspace::SerializedView(const Entry* e, std::string* scratch) {
  if (!e->IsExternal()) return e->Value(scratch);
  scratch->clear();
  e->Object()->Serialize(scratch);
  return *scratch;
}

void Keyspace::CarryLfu(Entry* old, Entry* e) {
  if (!old->HasAccess() || !e->HasAccess()) return;
  if (old != last_touched_) TouchLfu(old);
  last_touched_ = nullptr;
  e->SetAccess(old->Access());
}

void Keyspace::TouchLfu(Entry* e) {
  rng_ ^= rng_ << 13;
  rng_ ^= rng_ >> 7;
  rng_ ^= rng_ << 17;
  double r = static_cast<double>(rng_ >> 11) * 0x1.0p-53;
  e->SetAccess(access_clock_.Touched(e->Access(), r));
}

template <bool kWrite, bool kTouch, bool kLoad>
Entry* Keyspace::Lookup(uint32_t db, std::string_view key, int64_t now_ms) {
  Db& d = dbs_[db];
  uint64_t hash = TableHash(key);
  Entry* e = d.table->Find(key, hash);
  // A caller of Find() may change what it gets: pre-image first, and tell the tracker.
  // The watch hook gets the previous write lookup's notice now (see WatchHook).
  if constexpr (kWrite) {
    PreWrite(d, hash, e);
    if (tracker_ != nullptr) [[unlikely]]
      tracker_->KeyChanged(db, hash);
    if (watch_ != nullptr) [[unlikely]]
      FlushWatchNotice();
  }
  if (e == nullptr) return nullptr;
  if (e->IsExpired(now_ms)) [[unlikely]] {
    ExpiredIs expired = OnExpired<kWrite>();
    if (expired == ExpiredIs::kHidden) return nullptr;
    if (expired == ExpiredIs::kDeleted) {
      PreWrite(d, hash, e);
      Mark(d, hash, true);
      if (event_hook_ != nullptr) [[unlikely]]
        event_hook_->KeyExpired(db, key);
      IndexDeleted(d, key, hash);
      FreeEntry(d, d.table->Erase(d.table->Locate(key, hash)));
      stats_.expired_keys++;
      return nullptr;
    }
  }
  // Live (or, for the master's own commands on a replica, taken as live).
  if constexpr (kLoad) {
    if (e->IsCold()) [[unlikely]] {
      e = LoadColdNow(db, e);
      if (e == nullptr) return nullptr;
    }
  }
  if constexpr (kTouch) Touch<kWrite>(e);
  if constexpr (kWrite) {
    if (watch_ != nullptr) [[unlikely]] {
      FlushWatchNotice();
      watch_pending_ = true;
      watch_pending_db_ = db;
      watch_pending_hash_ = hash;
    }
  }
  return e;
}

Entry* Keyspace::Find(uint32_t db, std::string_view key, int64_t now_ms) {
  return Lookup<true, true>(db, key, now_ms);
}

Entry* Keyspace::FindNoTouch(uint32_t db, std::string_view key, int64_t now_ms) {
  return Lookup<false, false>(db, key, now_ms);
}

Entry* Keyspace::FindMeta(uint32_t db, std::string_view key, int64_t now_ms, bool count,
                          bool touch) {
  Entry* e = touch ? Lookup<false, true, false>(db, key, now_ms)
                   : Lookup<false, false, false>(db, key, now_ms);
  if (count) {
    if (e != nullptr) {
      stats_.keyspace_hits++;
    } else {
      stats_.keyspace_misses++;
    }
  }
  return e;
}

Entry* Keyspace::LoadColdNow(uint32_t db, Entry* e) {
  cold_sync_reads_++;
  std::string value;
  if (cold_hook_ == nullptr || !cold_hook_->ReadColdNow(e->ColdSeq(), &value)) {
    cold_sync_failures_++;
    return nullptr;
  }
  return MakeHot(db, e, value);
}

Entry* Keyspace::MakeCold(uint32_t db, Entry* e, uint64_t seq, uint32_t disk_len) {
  Db& d = dbs_[db];
  std::string_view key = e->Key();
  uint64_t hash = TableHash(key);
  Table::Ref ref = d.table->Locate(key, hash);
  assert(ref && Table::At(ref) == e);
  bool skip = PreWrite(d, hash, e);
  size_t usable = 0;
  uint32_t value_len = e->IsExternal() ? 0 : e->ValueLen();
  if (e->IsExternal() && e->Type() != ValueType::kString) value_len = disk_len;
  Entry* c = Entry::CreateCold(heap_, key, e->Type(), value_len, seq, disk_len, e->ExpireMs(),
                               &usable, e->HasAccess() ? e->Access() : initial_access_);
  Charge(c, usable);
  if (c->HasExpire()) d.expires++;
  if (skip) c->SetSnapSkip(true);
  cold_keys_++;
  cold_value_bytes_ += disk_len;
  if (last_touched_ == e) last_touched_ = nullptr;
  FreeEntry(d, d.table->Replace(ref, c));
  return c;
}

Entry* Keyspace::MakeHot(uint32_t db, Entry* e, std::string_view serialized) {
  Db& d = dbs_[db];
  std::string_view key = e->Key();
  uint64_t hash = TableHash(key);
  Table::Ref ref = d.table->Locate(key, hash);
  assert(ref && Table::At(ref) == e);
  bool skip = PreWrite(d, hash, e);
  if (tracker_ != nullptr) tracker_->KeyChanged(db, hash);
  Entry* h = nullptr;
  if (e->Type() != ValueType::kString) {
    std::unique_ptr<CollectionObject> obj = MaterializeCollection(e->Type(), serialized, heap_);
    if (obj != nullptr) {
      size_t usable = 0;
      size_t obj_bytes = obj->Bytes();
      h = Entry::CreateExternal(heap_, key, e->Type(), obj.release(), e->ExpireMs(), &usable,
                                initial_access_);
      Charge(h, usable + obj_bytes);
      if (h->HasExpire()) d.expires++;
    }
  }
  if (h == nullptr) h = NewEntry(d, key, serialized, e->Type(), e->ExpireMs());
  // Read back for a command: that is an access (and keeps the value from being chosen
  // to go cold again before the command runs).
  if (e->HasAccess()) h->SetAccess(e->Access());
  Touch<false>(h);
  if (skip) h->SetSnapSkip(true);
  if (last_touched_ == e) last_touched_ = nullptr;
  FreeEntry(d, d.table->Replace(ref, h));
  return h;
}

Entry* Keyspace::InsertCold(uint32_t db, std::string_view key, ValueType type, uint32_t value_len,
                            uint64_t seq, uint32_t disk_len, int64_t expire_ms) {
  Db& d = dbs_[db];
  size_t usable = 0;
  Entry* c = Entry::CreateCold(heap_, key, type, value_len, seq, disk_len, expire_ms, &usable,
                               initial_access_);
  Charge(c, usable);
  if (c->HasExpire()) d.expires++;
  cold_keys_++;
  cold_value_bytes_ += disk_len;
  return Insert(d, key, c);
}

Entry* Keyspace::FindRead(uint32_t db, std::string_view key, int64_t now_ms, bool touch) {
  Entry* e = touch ? Lookup<false, true>(db, key, now_ms) : Lookup<false, false>(db, key, now_ms);
  if (e != nullptr) {
    stats_.keyspace_hits++;
  } else {
    stats_.keyspace_misses++;
  }
  return e;
}

Entry* Keyspace::SetString(uint32_t db, std::string_view key, std::string_view value,
                           int64_t expire_ms) {
  return SetRaw(db, key, value, ValueType::kString, expire_ms);
}

Entry* Keyspace::SetRaw(uint32_t db, std::string_view key, std::string_view value, ValueType type,
                        int64_t expire_ms) {
  Db& d = dbs_[db];
  if (type != ValueType::kString) {
    std::unique_ptr<CollectionObject> obj = MaterializeCollection(type, value, heap_);
    if (obj != nullptr) return SetObject(db, key, type, std::move(obj), expire_ms);
    // A stream is an object or nothing: a form that does not parse is not stored.
    if (type == ValueType::kStream) [[unlikely]]
      return nullptr;
  }
  uint64_t hash = TableHash(key);
  Table::Ref ref = d.table->Locate(key, hash);
  if (ref && type == ValueType::kString) {
    Entry* old = Table::At(ref);
    if (old->FitsStringOverwrite(value, expire_ms != Entry::kNoExpire)) {
      // The same bytes hold the new value: no allocation, no free, the same charge. As
      // the replacement below would: the snapshot gets the pre-image first, and the entry
      // is skipped by its traversal when it did; the access state is a new key's (LRU),
      // or the old frequency counting this write (LFU).
      bool skip = PreWrite(d, hash, old);
      Mark(d, hash);
      old->SetSnapSkip(skip);
      if (access_clock_.mode == access::Mode::kLfu) [[unlikely]] {
        CarryLfu(old, old);
      } else {
        old->SetAccess(initial_access_);
      }
      old->OverwriteString(value, expire_ms);
      return old;
    }
  }
  return InsertAt(d, key, hash, ref, NewEntry(d, key, value, type, expire_ms));
}

Entry* Keyspace::StringForWrite(uint32_t db, std::string_view key, Entry* e, size_t len) {
  Db& d = dbs_[db];
  if (e != nullptr && e->IsRaw()) {
    size_t have = e->ValueLen();
    if (len <= have || e->GrowInPlace(len)) {
      // Changed in place: the write lookup told the snapshot and the tracker; the change
      // counter (rdb_changes_since_last_save, a master's propagation) counts it here.
      changes_++;
      return e;
    }
  }
  // A new entry: for a new key, a packed value, or one that must move to grow.
  std::string scratch;
  std::string_view old = e != nullptr ? e->Value(&scratch) : std::string_view();
  size_t n = std::max(len, old.size());
  size_t reserve = n > old.size() && e != nullptr ? StringReserve(n) : n;
  size_t usable = 0;
  uint32_t access = e != nullptr && e->HasAccess() ? e->Access() : initial_access_;
  Entry* ne =
      Entry::CreateRawString(heap_, key, old, n, reserve,
                             e != nullptr ? e->ExpireMs() : Entry::kNoExpire, &usable, access);
  Charge(ne, usable);
  if (ne->HasExpire()) d.expires++;
  if (e == nullptr) return Insert(d, key, ne);
  uint64_t hash = TableHash(key);
  Table::Ref ref = d.table->Locate(key, hash);
  bool skip = PreWrite(d, hash, e);
  Mark(d, hash);
  if (skip) ne->SetSnapSkip(true);
  if (last_touched_ == e) last_touched_ = nullptr;
  FreeEntry(d, d.table->Replace(ref, ne));
  return ne;
}

bool Keyspace::Delete(uint32_t db, std::string_view key, bool lazy) {
  Db& d = dbs_[db];
  uint64_t hash = TableHash(key);
  Table::Ref ref = d.table->Locate(key, hash);
  if (!ref) return false;
  PreWrite(d, hash, Table::At(ref));
  Mark(d, hash, true);
  IndexDeleted(d, key, hash);
  FreeEntry(d, d.table->Erase(ref), lazy);
  return true;
}

Entry* Keyspace::SetExpire(uint32_t db, std::string_view key, int64_t expire_ms) {
  Db& d = dbs_[db];
  uint64_t hash = TableHash(key);
  Table::Ref ref = d.table->Locate(key, hash);
  Entry* old = Table::At(ref);
  bool skip = PreWrite(d, hash, old);
  Mark(d, hash);
  bool want = expire_ms != Entry::kNoExpire;
  if (old->HasExpire() == want) {
    if (want) old->SetExpireInPlace(expire_ms);
    return old;
  }
  if (old->IsCold()) {
    // The locator moves to the new entry; the disk copy stays.
    size_t usable = 0;
    Entry* e = Entry::CreateCold(heap_, old->Key(), old->Type(), old->ValueLen(), old->ColdSeq(),
                                 old->ColdDiskLen(), expire_ms, &usable,
                                 old->HasAccess() ? old->Access() : initial_access_);
    Charge(e, usable);
    if (want) d.expires++;
    if (skip) e->SetSnapSkip(true);
    DestroyEntryKeepObject(d, d.table->Replace(ref, e));
    return e;
  }
  if (old->IsExternal()) {
    // The object moves to the new entry; only the entry's own bytes change.
    size_t usable = 0;
    Entry* e = Entry::CreateExternal(heap_, old->Key(), old->Type(), old->Object(), expire_ms,
                                     &usable, old->HasAccess() ? old->Access() : initial_access_);
    Charge(e, usable);
    if (want) d.expires++;
    if (skip) e->SetSnapSkip(true);
    DestroyEntryKeepObject(d, d.table->Replace(ref, e));
    return e;
  }
  std::string scratch;
  Entry* e = NewEntry(d, old->Key(), old->Value(&scratch), old->Type(), expire_ms);
  if (old->HasAccess()) e->SetAccess(old->Access());
  if (skip) e->SetSnapSkip(true);
  FreeEntry(d, d.table->Replace(ref, e));
  return e;
}

int64_t Keyspace::SampleAvgTtl(uint32_t db, int64_t now_ms) const {
  const Db& d = dbs_[db];
  if (d.expires == 0) return 0;
  // Exact for small tables; sampled over the first buckets for large ones.
  int64_t sum = 0;
  int64_t n = 0;
  d.table->ForEach([&](Entry* e) {
    if (n >= 10000 || !e->HasExpire()) return;
    int64_t ttl = e->ExpireMs() - now_ms;
    if (ttl > 0) {
      sum += ttl;
      n++;
    }
  });
  return n == 0 ? 0 : sum / n;
}

void Keyspace::FlushDb(uint32_t db, bool lazy) {
  Db& d = dbs_[db];
  if (snap_hook_ != nullptr) CaptureAll();
  if (tracker_ != nullptr) tracker_->DbChanged(db);
  if (watch_ != nullptr) watch_->BeforeFlush(db);
  changes_ += d.table->size();
  if (d.slots != nullptr) d.slots->Clear();
  if (lazy && d.table->size() > kLazyFlushMinKeys) {
    LazyItem item;
    item.table = std::move(d.table);
    lazy_.push_back(std::move(item));
    d.table = std::make_unique<Table>(heap_, &table_bytes_);
    d.expires = 0;
    d.expire_cursor = 0;
    return;
  }
  // Per-type counters need each entry's type, so entries are destroyed one by one.
  d.table->ForEach([&](Entry* e) {
    int t = static_cast<int>(e->Type());
    size_t n = Entry::UsableSize(e);
    if (e->IsCold()) NoteColdFreed(e);
    if (e->IsExternal()) {
      n += e->Object()->Bytes();
      delete e->Object();  // Clear() below frees the entries themselves
    }
    entry_bytes_ -= n;
    type_bytes_[t] -= n;
    type_keys_[t]--;
  });
  (void)d.table->Clear();
  d.expires = 0;
  d.expire_cursor = 0;
}

void Keyspace::FlushAll(bool lazy) {
  for (uint32_t i = 0; i < dbs_.size(); i++) FlushDb(i, lazy);
}

void Keyspace::SwapDb(uint32_t a, uint32_t b) {
  if (snap_hook_ != nullptr) CaptureAll();
  if (tracker_ != nullptr) {
    tracker_->DbChanged(a);
    tracker_->DbChanged(b);
  }
  if (watch_ != nullptr) watch_->BeforeSwap(a, b);
  changes_++;
  std::swap(dbs_[a], dbs_[b]);
  if (slot_index_ != nullptr && (a == 0 || b == 0) && a != b) {
    // Cluster mode refuses SWAPDB; should another path swap database 0, the index
    // follows its new keys.
    std::swap(dbs_[a].slots, dbs_[b].slots);
    RebuildSlotIndex();
  }
}

void Keyspace::EnableSlotIndex() {
  if (slot_index_ != nullptr) return;
  slot_index_ = std::make_unique<SlotIndex>();
  dbs_[0].slots = slot_index_.get();
  RebuildSlotIndex();
}

void Keyspace::RebuildSlotIndex() {
  slot_index_->Clear();
  dbs_[0].table->ForEach(
      [&](Entry* e) { slot_index_->Add(KeySlot(e->Key()), TableHash(e->Key())); });
}

bool Keyspace::PreWriteSlow(Db& d, uint64_t hash, Entry* e) {
  uint32_t db = DbIndex(d);
  if (!snap_hook_->NeedsPreImage(db, hash)) return false;
  if (e != nullptr && !e->SnapSkip()) {
    snap_hook_->CaptureEntry(db, e);
    e->SetSnapSkip(true);
  }
  return true;
}

size_t Keyspace::ActiveExpireCycle(int64_t now_ms, size_t bucket_budget) {
  size_t deleted = 0;
  size_t with_ttl = 0;  // keys with a TTL visited, expired or not
  size_t visited_dbs = 0;
  while (bucket_budget > 0 && visited_dbs < dbs_.size()) {
    Db& d = dbs_[expire_db_];
    if (d.expires == 0) {
      d.expire_cursor = 0;
      expire_db_ = (expire_db_ + 1) % dbs_.size();
      visited_dbs++;
      continue;
    }
    d.expire_cursor = d.table->ScanChunk(d.expire_cursor, [&](Entry* e) {
      if (!e->HasExpire()) return false;
      with_ttl++;
      if (!e->IsExpired(now_ms)) return false;
      uint64_t h = TableHash(e->Key());
      PreWrite(d, h, e);
      Mark(d, h, true);
      if (event_hook_ != nullptr) [[unlikely]]
        event_hook_->KeyExpired(static_cast<uint32_t>(&d - dbs_.data()), e->Key());
      IndexDeleted(d, e->Key(), h);
      FreeEntry(d, e);
      stats_.expired_keys++;
      deleted++;
      return true;
    });
    bucket_budget--;
    if (d.expire_cursor == 0) {
      expire_db_ = (expire_db_ + 1) % dbs_.size();
      visited_dbs++;
    }
  }
  if (with_ttl > 0) {
    double share = static_cast<double>(deleted) / static_cast<double>(with_ttl);
    expired_stale_ratio_ = share * 0.05 + expired_stale_ratio_ * 0.95;
  }
  return deleted;
}

Entry* Keyspace::RandomKey(uint32_t db, int64_t now_ms, uint64_t seed) {
  Db& d = dbs_[db];
  // Expired entries found are deleted and another pick is made, a bounded number of times.
  for (int attempt = 0; attempt < 100; attempt++) {
    Entry* e = d.table->RandomEntry(seed + attempt * 0x9E3779B97F4A7C15ull);
    if (e == nullptr) return nullptr;
    if (!e->IsExpired(now_ms)) return e;
    ExpiredIs is = OnExpired<false>();
    if (is == ExpiredIs::kLive) return e;
    if (is == ExpiredIs::kDeleted) Find(db, e->Key(), now_ms);
  }
  return nullptr;
}

size_t Keyspace::key_count() const {
  size_t n = 0;
  for (const Db& d : dbs_) n += d.table->size();
  return n;
}

size_t Keyspace::expires_count() const {
  size_t n = 0;
  for (const Db& d : dbs_) n += d.expires;
  return n;
}

size_t Keyspace::MemoryUsage(uint32_t db, std::string_view key, int64_t now_ms) {
  if (Lookup<false, false, false>(db, key, now_ms) == nullptr) return 0;
  Table::Ref ref = dbs_[db].table->Locate(key, TableHash(key));
  Entry* e = Table::At(ref);
  return Entry::UsableSize(e) + Table::ShareBytes(ref) +
         (e->IsExternal() ? e->Object()->Bytes() : 0);
}

}  // namespace strata
