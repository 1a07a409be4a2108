// WatchTable: one shard's WATCHed keys, and which of their watchers saw them change.
//
// WATCH key registers (client id, key) on the key's shard; EXEC asks each shard that
// holds some of its watched keys whether any changed, under the transaction's locks, so
// that nothing can change between the check and the commands. The table is the
// Keyspace's WatchHook while it watches anything (set and cleared here), so a shard
// with no watched key pays one predictable branch per write and nothing else.
//
// What counts as a change (Redis 7's rules):
//   - any write the keyspace reports (keyspace.h WatchHook: a lookup for writing that
//     found the key, Insert, Delete, SetExpire, expiry, eviction, a range delete);
//   - FLUSHDB/FLUSHALL (and a load) when the key exists, SWAPDB when it exists in either
//     database;
//   - a key that was alive at WATCH and is logically expired at EXEC, even when nothing
//     has deleted it yet.
//   A key already expired (stale) at WATCH time is not changed by being deleted
//   (expiry, DEL, FLUSHDB): logically it was already gone. Once gone it counts as an
//   absent key, so creating it later is a change.
// A write that found the key and left it as it was is no change when the command says so
// (Keyspace::NoChange: SADD of a member already there, HDEL of a missing field...), as in
// Redis; a command that does not say so counts as a change (an EXEC fails needlessly and
// an optimistic loop retries), so a real change is never missed.
//
// Keys are named by (database, table hash) as the keyspace reports them; two watched
// keys whose 64-bit hashes collide share a record, which can only make an EXEC fail
// needlessly. The key itself is kept for the flush and swap checks.
// Thread-safety: owned by its shard's thread, like the Keyspace it watches.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/keyspace.h"

namespace strata {

class WatchTable final : public WatchHook {
 public:
  explicit WatchTable(Keyspace& ks) : ks_(ks) {}
  ~WatchTable() override;

  // Client `owner` watches key in db (again: no effect).
  void Watch(uint64_t owner, uint32_t db, std::string_view key, int64_t now_ms);
  // Forgets every key the owner watches on this shard.
  void Unwatch(uint64_t owner);
  // EXEC's check: true when a key the owner watches here changed since WATCH, or was
  // alive then and is expired now.
  bool Changed(uint64_t owner, int64_t now_ms);

  size_t watched_keys() const { return keys_.size(); }
  bool empty() const { return keys_.empty(); }

  // WatchHook
  void KeyModified(uint32_t db, uint64_t table_hash, bool deleted) override;
  void BeforeFlush(uint32_t db) override;
  void BeforeSwap(uint32_t a, uint32_t b) override;

 private:
  struct Watcher {
    uint64_t owner;
    bool stale;  // expired but not yet deleted when watched
  };
  struct WatchedKey {
    uint32_t db = 0;
    std::string key;
    std::vector<Watcher> watchers;
  };
  struct OwnerState {
    bool dirty = false;
    std::vector<uint64_t> keys;  // into keys_
  };
  static uint64_t Slot(uint32_t db, uint64_t table_hash) {
    return table_hash ^ (static_cast<uint64_t>(db) * 0x9E3779B97F4A7C15ull);
  }
  bool Exists(uint32_t db, std::string_view key) const;
  // The key changed for every watcher but those who saw it stale, when it is gone
  // (deleted) - for them it stays gone, and now counts as absent.
  void Touch(WatchedKey& wk, bool deleted);

  Keyspace& ks_;
  std::unordered_map<uint64_t, WatchedKey> keys_;
  std::unordered_map<uint64_t, OwnerState> owners_;
};

}  // namespace strata
