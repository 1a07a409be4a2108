#include "core/keyspace.h"

#include "core/hash.h"

namespace strata {

Keyspace::Keyspace(uint32_t db_count) : dbs_(db_count) {}

void Keyspace::DestroyEntry(Db& d, Entry* e) {
  if (e->HasExpire()) d.expires--;
  Release(Entry::Destroy(e));
}

Entry* Keyspace::Find(uint32_t db, std::string_view key, int64_t now_ms) {
  Db& d = dbs_[db];
  uint64_t hash = TableHash(key);
  Entry* e = d.table->Find(key, hash);
  if (e == nullptr || !e->IsExpired(now_ms)) return e;
  Entry** link = d.table->FindLink(key, hash);
  DestroyEntry(d, d.table->UnlinkAt(link));
  stats_.expired_keys++;
  return nullptr;
}

Entry* Keyspace::FindRead(uint32_t db, std::string_view key, int64_t now_ms) {
  Entry* e = Find(db, key, now_ms);
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
  uint64_t hash = TableHash(key);
  size_t usable = 0;
  Entry* e = Entry::Create(key, value, type, expire_ms, &usable);
  Charge(usable);
  if (e->HasExpire()) d.expires++;
  Entry** link = d.table->FindLink(key, hash);
  if (link != nullptr) {
    DestroyEntry(d, d.table->ReplaceAt(link, e));
  } else {
    d.table->Insert(e, hash);
  }
  return e;
}

bool Keyspace::Delete(uint32_t db, std::string_view key) {
  Db& d = dbs_[db];
  Entry** link = d.table->FindLink(key, TableHash(key));
  if (link == nullptr) return false;
  DestroyEntry(d, d.table->UnlinkAt(link));
  return true;
}

Entry* Keyspace::SetExpire(uint32_t db, std::string_view key, int64_t expire_ms) {
  Db& d = dbs_[db];
  uint64_t hash = TableHash(key);
  Entry** link = d.table->FindLink(key, hash);
  Entry* old = *link;
  bool want = expire_ms != Entry::kNoExpire;
  if (old->HasExpire() == want) {
    if (want) old->SetExpireInPlace(expire_ms);
    return old;
  }
  size_t usable = 0;
  Entry* e = Entry::Create(old->Key(), old->Value(), old->Type(), expire_ms, &usable);
  Charge(usable);
  if (want) d.expires++;
  DestroyEntry(d, d.table->ReplaceAt(link, e));
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

void Keyspace::FlushDb(uint32_t db) {
  Db& d = dbs_[db];
  Release(d.table->Clear());
  d.expires = 0;
  d.expire_cursor = 0;
}

void Keyspace::FlushAll() {
  for (uint32_t i = 0; i < dbs_.size(); i++) FlushDb(i);
}

void Keyspace::SwapDb(uint32_t a, uint32_t b) { std::swap(dbs_[a], dbs_[b]); }

size_t Keyspace::ActiveExpireCycle(int64_t now_ms, size_t bucket_budget) {
  size_t deleted = 0;
  size_t visited_dbs = 0;
  while (bucket_budget > 0 && visited_dbs < dbs_.size()) {
    Db& d = dbs_[expire_db_];
    if (d.expires == 0) {
      d.expire_cursor = 0;
      expire_db_ = (expire_db_ + 1) % dbs_.size();
      visited_dbs++;
      continue;
    }
    d.expire_cursor = d.table->ScanBucket(d.expire_cursor, [&](Entry** link) {
      Entry* e = *link;
      if (!e->IsExpired(now_ms)) return false;
      DestroyEntry(d, d.table->UnlinkAt(link));
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
  return deleted;
}

Entry* Keyspace::RandomKey(uint32_t db, int64_t now_ms, uint64_t seed) {
  Db& d = dbs_[db];
  // Expired entries found are deleted and another pick is made, a bounded number of times.
  for (int attempt = 0; attempt < 100; attempt++) {
    Entry* e = d.table->RandomEntry(seed + attempt * 0x9E3779B97F4A7C15ull);
    if (e == nullptr) return nullptr;
    if (!e->IsExpired(now_ms)) return e;
    Find(db, e->Key(), now_ms);
  }
  return nullptr;
}

size_t Keyspace::used_bytes() const {
  size_t n = entry_bytes_;
  for (const Db& d : dbs_) n += d.table->OverheadBytes();
  return n;
}

}  // namespace strata
