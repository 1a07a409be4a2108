// Keyspace: one shard's databases (a Table each), expiry and memory counters.
//
// Every key lives in exactly one shard; the shard's thread owns its Keyspace. Expiry is
// stored in the entry (Entry::ExpireMs). It is enforced two ways:
//   - lazily: Find() deletes an expired entry it meets and reports it absent;
//   - actively: ActiveExpireCycle() walks the buckets of every database from a
//     persistent cursor, deleting expired entries, and stops after a bounded number of
//     buckets per call, so a tick never stalls the shard.
// Memory: entries come from the shard's SlabHeap (fine size classes; see slab.h).
// used_bytes() is every entry's usable allocation size plus the tables' directory and
// segment arrays at their usable sizes; entry bytes are also kept per value type.
//
// Snapshots (fork-free, point-in-time; docs/ARCHITECTURE.md "Snapshots")
//   A snapshot of this shard starts with BeginCapture(hook). Its traversal walks hash
//   space a slice at a time and writes what it passes. Before an entry the traversal has
//   not reached yet changes or goes, the hook writes that one entry as it still is (its
//   pre-image) and the entry is marked kSnapSkip; an entry created there after the cut is
//   marked too. The traversal writes the unmarked entries and clears the marks. So every
//   key is written once, as it was at the cut, no data is copied, and a write pays for
//   at most one record. "Changes" means any lookup through Find() (callers may modify
//   what it returns), Insert, Delete, SetExpire and expiry; FLUSHDB and SWAPDB finish
//   the traversal first (CaptureAll). A delta takes only keys the hook wants.
//   Separately, a ChangeTracker (incremental snapshots) is told the table hash of every
//   key that may have changed, and of whole databases that did.
//   With no snapshot running and no tracker, all of this is one predictable branch.
//
// Cluster mode keeps a SlotIndex of database 0 (core/slot_index.h): EnableSlotIndex()
// builds it from the keys there, and every key created or deleted in database 0 updates
// it. Off, it costs one predictable branch where a key is created or deleted.
//
// Cold entries (the spill tier, docs/ARCHITECTURE.md "The tier")
//   MakeCold() replaces an entry by the locator of its value on disk, MakeHot() puts the
//   value back. Lookups that hand an entry to a command (Find, FindRead, FindNoTouch)
//   never return a cold entry: the server brings the values a command needs back
//   without blocking before the command runs, and a lookup that still meets one (a
//   command whose keys are not known in advance) reads it now through the ColdHook.
//   FindMeta() and the traversals (ScanBucket, RandomKey, eviction's sampling) do see
//   cold entries: they use only the key, type, expiry and access state. Freeing a cold
//   entry (delete, overwrite, expiry, eviction, flush) tells the hook, which deletes the
//   disk copy.
//
// Thread-safety: one owning thread; no synchronisation inside.
#pragma once

#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/access.h"
#include "core/entry.h"
#include "core/hash.h"
#include "core/object.h"
#include "core/slab.h"
#include "core/slot_index.h"
#include "core/table.h"

namespace strata {

struct KeyspaceStats {
  uint64_t expired_keys = 0;
  uint64_t evicted_keys = 0;
  uint64_t keyspace_hits = 0;
  uint64_t keyspace_misses = 0;
};

// A snapshot's side of the capture (see "Snapshots" above).
class SnapshotHook {
 public:
  virtual ~SnapshotHook() = default;
  // Whether the key with this table hash, about to change, still needs its pre-image:
  // the traversal has not passed it and the image wants it (deltas take only changed
  // ranges).
  virtual bool NeedsPreImage(uint32_t db, uint64_t hash) const = 0;
  // Writes e's record as it is now: e is about to change or go.
  virtual void CaptureEntry(uint32_t db, const Entry* e) = 0;
  // Runs the traversal to its end (before FLUSHDB or SWAPDB).
  virtual void CaptureRest() = 0;
};

// Told which keys may have changed (incremental snapshots).
class ChangeTracker {
 public:
  virtual ~ChangeTracker() = default;
  virtual void KeyChanged(uint32_t db, uint64_t table_hash) = 0;
  virtual void DbChanged(uint32_t db) = 0;  // any key of db, flushed or swapped
};

// Told of changes to the keys some client watches (WATCH; the server sets it only while
// a key of this shard is watched, so it costs one predictable branch otherwise).
// "Modified" is what Mark() sees - Insert, Delete, SetExpire, expiry - and every lookup
// through Find() that returns an entry (its caller may change it). A lookup's notice is
// held back until the next write lookup or FlushWatchNotice(), so that a command that
// found nothing to change (SADD of a member already there) can withdraw it with
// NoChange(); Redis does not count those as changes either.
class WatchHook {
 public:
  virtual ~WatchHook() = default;
  // deleted: the key is gone now (DEL, UNLINK, expiry, eviction, a range delete).
  virtual void KeyModified(uint32_t db, uint64_t table_hash, bool deleted) = 0;
  // Before db is emptied (FLUSHDB, FLUSHALL, a load) or swapped with another (SWAPDB):
  // the keys are still there to be looked up.
  virtual void BeforeFlush(uint32_t db) = 0;
  virtual void BeforeSwap(uint32_t a, uint32_t b) = 0;
};

// Told, by name, of keys that expire (met by a lookup or by the active cycle), of keys
// created and of keys evicted: the server's keyspace notifications ("expired", "new",
// "evicted"). The server sets it
// only while the notification settings ask for those events, so it costs one
// predictable branch otherwise.
class KeyEventHook {
 public:
  virtual ~KeyEventHook() = default;
  // Just before the expired entry is freed.
  virtual void KeyExpired(uint32_t db, std::string_view key) = 0;
  // A key that did not exist was just inserted.
  virtual void KeyCreated(uint32_t db, std::string_view key) = 0;
  // The maxmemory policy evicted a key (core/eviction.h, after the delete).
  virtual void KeyEvicted(uint32_t db, std::string_view key) = 0;
  // A load (DEBUG RELOAD) left out a key whose TTL had passed: it is gone, as if it had
  // expired now (a master's replicas still hold it).
  virtual void KeyDroppedOnLoad(uint32_t db, std::string_view key) {
    (void)db;
    (void)key;
  }
};

// The spill tier's side of cold entries (on the shard's thread).
class ColdHook {
 public:
  virtual ~ColdHook() = default;
  // A cold entry was freed: the disk copy named by seq is garbage.
  virtual void ColdFreed(uint64_t seq) = 0;
  // A lookup met a cold entry outside the asynchronous path: reads its serialized value
  // now (blocking the shard); false when the disk read failed (logged by the hook).
  virtual bool ReadColdNow(uint64_t seq, std::string* out) = 0;
};

class Keyspace {
 public:
  explicit Keyspace(uint32_t db_count);
  ~Keyspace();  // frees every entry and collection object

  uint32_t db_count() const { return static_cast<uint32_t>(dbs_.size()); }

  // Expiry on a replica, as Redis's expireIfNeeded with a master: there a key goes only
  // by its master's DEL, which arrives in the stream.
  //   - A master (no replica flag, or it is false): a lookup that meets an expired key
  //     deletes it and reports it missing.
  //   - A replica (the flag is true): a read lookup reports an expired key missing but
  //     keeps it; a write lookup (a writable replica's own write) still deletes it.
  //     SCAN and RANDOMKEY skip expired keys without deleting them.
  //   - Under a MasterCallScope (the master's own commands, applied on a replica):
  //     an expired key is live. The master ran the command and found the key there.
  //   - While clients are paused (set_pause_hold), a master reads as a replica does: a
  //     paused dataset stays as it is (Redis's expireIfNeeded during a pause), so its
  //     replicas' offset can reach the master's; the key goes once the pause ends.
  // The flag is the process's replication role (any thread writes it); it is read
  // only when a lookup meets an expired key.
  void set_replica_flag(const std::atomic<bool>* f) { replica_flag_ = f; }
  // The owning worker, when it sees a client pause begin and end.
  void set_pause_hold(bool on) { pause_hold_ = on; }
  bool keeps_expired() const {
    return replica_flag_ != nullptr && replica_flag_->load(std::memory_order_relaxed);
  }
  // Sets "expired keys are live" for the scope of one master's command on this shard.
  class MasterCallScope {
   public:
    // Costs one test of `on` when off (every command passes here).
    MasterCallScope(Keyspace& ks, bool on) : ks_(on ? &ks : nullptr) {
      if (on) [[unlikely]] {
        saved_ = ks.expired_live_;
        ks.expired_live_ = true;
      }
    }
    ~MasterCallScope() {
      if (ks_ != nullptr) [[unlikely]]
        ks_->expired_live_ = saved_;
    }
    MasterCallScope(const MasterCallScope&) = delete;
    MasterCallScope& operator=(const MasterCallScope&) = delete;

   private:
    Keyspace* ks_;
    bool saved_ = false;
  };

  // A loader left out `key` because its TTL had passed (KeyEventHook::KeyDroppedOnLoad).
  void NoteDroppedOnLoad(uint32_t db, std::string_view key) {
    if (event_hook_ != nullptr) [[unlikely]]
      event_hook_->KeyDroppedOnLoad(db, key);
  }

  // Returns the live entry for key, or nullptr; deletes it first if it has expired
  // (on a master: see set_replica_flag).
  Entry* Find(uint32_t db, std::string_view key, int64_t now_ms);
  // Find() that also counts a keyspace hit or miss (read commands use this).
  Entry* FindRead(uint32_t db, std::string_view key, int64_t now_ms, bool touch = true);
  // Find() that leaves the key's access state alone and may not change the entry
  // (OBJECT, TYPE, EXISTS, TTL: Redis's LOOKUP_NOTOUCH).
  Entry* FindNoTouch(uint32_t db, std::string_view key, int64_t now_ms);
  // Like FindNoTouch, but a cold entry is returned as it is (EXISTS, TYPE, TTL, OBJECT
  // IDLETIME, MEMORY USAGE: what needs only the key's metadata). Counts a hit or miss
  // when `count`.
  // `touch`: counts as an access (EXPIRE, PERSIST, as Redis's write lookup).
  Entry* FindMeta(uint32_t db, std::string_view key, int64_t now_ms, bool count = false,
                  bool touch = false);

  // The spill tier (null: none, and no entry is ever cold).
  void set_cold_hook(ColdHook* h) { cold_hook_ = h; }
  ColdHook* cold_hook() const { return cold_hook_; }
  // Replaces the hot entry e of `key` by a cold one naming disk record seq, whose
  // serialized value is disk_len bytes long. Not a change: snapshots and the tracker
  // see the same value. Returns the cold entry.
  Entry* MakeCold(uint32_t db, Entry* e, uint64_t seq, uint32_t disk_len);
  // Replaces the cold entry e by a hot one holding `serialized` (the value read back).
  // The tracker is told (the next delta writes the key again: its old disk record is
  // deleted). Returns the hot entry.
  Entry* MakeHot(uint32_t db, Entry* e, std::string_view serialized);
  // A snapshot load's cold record: inserts the key as a cold entry.
  Entry* InsertCold(uint32_t db, std::string_view key, ValueType type, uint32_t value_len,
                    uint64_t seq, uint32_t disk_len, int64_t expire_ms);
  // The cold entry e's value is in disk record seq now (the same value: not a change).
  void RelocateCold(Entry* e, uint64_t seq) { e->SetColdSeq(seq); }
  size_t cold_keys() const { return cold_keys_; }
  // Sum of the cold entries' serialized value lengths (the bytes they keep on disk).
  uint64_t cold_value_bytes() const { return cold_value_bytes_; }
  // Cold entries met by lookups and read back synchronously; and those reads failed.
  uint64_t cold_sync_reads() const { return cold_sync_reads_; }
  uint64_t cold_sync_failures() const { return cold_sync_failures_; }

  // Access state (core/access.h): Find and FindRead record an access with this clock,
  // and new keys start from it. The owner refreshes it once per loop turn.
  void SetAccessClock(const access::Clock& c) {
    access_clock_ = c;
    initial_access_ = c.Initial();
  }
  const access::Clock& access_clock() const { return access_clock_; }

  // Creates or overwrites key with a string value. expire_ms == Entry::kNoExpire
  // clears any TTL. Returns the new entry.
  Entry* SetString(uint32_t db, std::string_view key, std::string_view value, int64_t expire_ms);
  // Creates or overwrites key with a value of any type. For a collection, `value` is its
  // canonical serialized form (object.h): it is stored as is when small, or turned into
  // a CollectionObject when big (COPY, RENAME, MOVE, and collection writes). A stream
  // is always an object: for a form that does not parse nothing is stored and the
  // result is null (callers validate forms they did not make).
  Entry* SetRaw(uint32_t db, std::string_view key, std::string_view value, ValueType type,
                int64_t expire_ms);
  // Strings changed in place (SETBIT, SETRANGE, APPEND, BITFIELD, PFADD). For key,
  // absent or a hot string found by the command's write lookup (Find), returns an entry
  // whose value is raw bytes at least `len` long - the old value, then zero bytes - for
  // the caller to change through Entry::MutableValue() (its length stays as returned):
  // the same entry when it was raw and long enough or had room to grow, otherwise a new
  // one that replaced it (keeping its expiry and access state). A value that grows past
  // Entry's slab sizes gets room as Redis's strings do (sdsMakeRoomFor: the length
  // doubled below 1 MB, 1 MB more above), so growing one costs amortized O(bytes added).
  // A key created here (e null) has no expiry.
  Entry* StringForWrite(uint32_t db, std::string_view key, Entry* e, size_t len);
  // The room StringForWrite gives a value growing to len bytes.
  static size_t StringReserve(size_t len) {
    constexpr size_t kMb = size_t{1} << 20;
    return len < kMb ? 2 * len : len + kMb;
  }
  // Creates or overwrites key with a big collection; the entry takes ownership.
  Entry* SetObject(uint32_t db, std::string_view key, ValueType type,
                   std::unique_ptr<CollectionObject> obj, int64_t expire_ms);
  // After a command changed e's object in place: charges the change in its bytes.
  void Recharge(const Entry* e, size_t old_object_bytes);
  // The canonical serialized form of e's value (strings: the value itself).
  static std::string Serialize(const Entry* e);
  // The same, as a view: a string's value in place (when it is stored in one piece) or
  // the serialized form written into scratch, whose capacity is reused.
  static std::string_view SerializedView(const Entry* e, std::string* scratch);
  SlabHeap& heap() { return heap_; }
  // Deletes key if present (expired or not). Returns true when something was removed.
  // With lazy, a big collection's elements are freed a slice at a time by
  // LazyFreeStep() instead of at once (UNLINK); the key is gone immediately either way.
  bool Delete(uint32_t db, std::string_view key, bool lazy = false);
  // Sets or clears (Entry::kNoExpire) the expiry of an existing key.
  // REQUIRES: key present.
  Entry* SetExpire(uint32_t db, std::string_view key, int64_t expire_ms);

  size_t DbSize(uint32_t db) const { return dbs_[db].table->size(); }
  size_t ExpiresCount(uint32_t db) const { return dbs_[db].expires; }
  // Sum of remaining TTLs of keys with expiry, for INFO keyspace avg_ttl.
  int64_t SampleAvgTtl(uint32_t db, int64_t now_ms) const;
  // With lazy (FLUSHALL/FLUSHDB ASYNC), a big database's table is detached and its
  // entries freed a slice at a time by LazyFreeStep(); DBSIZE is 0 at once.
  void FlushDb(uint32_t db, bool lazy = false);
  void FlushAll(bool lazy = false);
  // Frees up to about `budget` elements of detached collections and tables; returns
  // true while work remains. Bytes stay charged (used_memory, per type) until freed.
  bool LazyFreeStep(size_t budget);
  size_t lazyfree_pending() const { return lazy_.size(); }
  // Bytes of deleted collections still charged while LazyFreeStep frees them (detached
  // tables are not counted).
  size_t lazyfree_pending_bytes() const { return lazy_pending_bytes_; }
  // Collections with more elements than this are freed lazily by UNLINK.
  static constexpr size_t kLazyFreeMinElements = 64;
  // Tables with more keys than this are detached by FLUSH ... ASYNC.
  static constexpr size_t kLazyFlushMinKeys = 1024;
  void SwapDb(uint32_t a, uint32_t b);

  // SCAN step over one chunk of db; see Table::ScanChunk for the cursor contract.
  // Expired entries met on the way are deleted and not reported.
  template <class F>
  uint64_t ScanBucket(uint32_t db, uint64_t cursor, int64_t now_ms, F&& fn);
  // Bytes the key costs: its entry's usable size plus its share of the table (MEMORY
  // USAGE). 0 when absent.
  size_t MemoryUsage(uint32_t db, std::string_view key, int64_t now_ms);
  Table& table(uint32_t db) { return *dbs_[db].table; }
  // Before loading about n keys into db (Table::Reserve).
  void Reserve(uint32_t db, size_t n) { dbs_[db].table->Reserve(n); }
  // Prefetches where key would live in db (loaders, a few keys ahead). REQUIRES: db valid.
  void Prefetch(uint32_t db, std::string_view key) const;
  // Starts loading what lookups of the keys with these TableHashes in db will read, for
  // a caller about to run a batch of commands on them (Table::PrefetchLookups, at most
  // Table::kLookaheadMax). A hint: any hash may be given. REQUIRES: db valid.
  void PrefetchLookups(uint32_t db, const uint64_t* hashes, size_t n) const;
  // Lookahead (the client's pipeline, a batch from another worker, a command's own keys)
  // is for databases of kLookaheadMinKeys keys or more: smaller tables stay in the
  // caches, where the look's ~240 instructions a request have no misses to hide (A/B at
  // pipeline 16: within the noise at 10k keys, 1.14-1.16x at 100k, 1.36-1.40x at 1M;
  // bench/results/README.md, "Lookahead"). Keys longer than kLookaheadKeyMax are not
  // hashed for it.
  static constexpr size_t kLookaheadMinKeys = 32768;
  static constexpr size_t kLookaheadKeyMax = 512;
  // A command's keys looked up one after another (MGET): prefetches the lookups of
  // keys[0, n), at most Table::kLookaheadMax of them, together, so that their cache
  // misses overlap, where db is big enough (above). REQUIRES: db valid.
  void PrefetchKeys(uint32_t db, const std::string_view* keys, size_t n) const;

  // Deletes expired keys, visiting at most `bucket_budget` buckets in total.
  // Returns the number of keys deleted.
  size_t ActiveExpireCycle(int64_t now_ms, size_t bucket_budget);
  // Of the keys with a TTL that active expiry visits, the share that had expired but was
  // still there, as Redis estimates it (INFO expired_stale_perc): each cycle that met
  // such keys moves the estimate 5% of the way to its own share.
  double expired_stale_ratio() const { return expired_stale_ratio_; }
  void ResetExpiredStaleRatio() { expired_stale_ratio_ = 0; }  // CONFIG RESETSTAT

  Entry* RandomKey(uint32_t db, int64_t now_ms, uint64_t seed);

  // Snapshot capture (see "Snapshots" above); hook must stay valid until EndCapture.
  void BeginCapture(SnapshotHook* hook) { snap_hook_ = hook; }
  void EndCapture() { snap_hook_ = nullptr; }
  bool capturing() const { return snap_hook_ != nullptr; }
  // Deletes the keys of db whose table hash is in [first, last] and for which pred(e)
  // holds (loading a delta). Returns how many were deleted.
  template <class P>
  size_t DeleteHashRange(uint32_t db, uint64_t first, uint64_t last, P&& pred);
  // Finishes a running snapshot's traversal (before FLUSHDB/SWAPDB).
  void CaptureAll() {
    if (snap_hook_ != nullptr) snap_hook_->CaptureRest();
  }
  void set_change_tracker(ChangeTracker* t) { tracker_ = t; }
  void set_event_hook(KeyEventHook* h) { event_hook_ = h; }
  bool has_event_hook() const { return event_hook_ != nullptr; }
  // Eviction tells the hook (if any) of a key it removed.
  void ReportEvicted(uint32_t db, std::string_view key) {
    if (event_hook_ != nullptr) [[unlikely]]
      event_hook_->KeyEvicted(db, key);
  }
  void set_watch_hook(WatchHook* h) {
    FlushWatchNotice();
    watch_ = h;
  }
  // The command that just looked key up with Find() left it as it was: its notice to the
  // watch hook is withdrawn (only the latest lookup's, and only when it was this key).
  void NoChange(uint32_t db, std::string_view key) {
    if (watch_pending_ && watch_pending_db_ == db && watch_pending_hash_ == TableHash(key))
      watch_pending_ = false;
  }
  // Gives the hook the notice held back, if any (before anything reads the hook's state).
  void FlushWatchNotice() {
    if (watch_pending_) [[unlikely]] {
      watch_pending_ = false;
      if (watch_ != nullptr) watch_->KeyModified(watch_pending_db_, watch_pending_hash_, false);
    }
  }
  // Count of changes (writes, deletions, expirations) since the shard started:
  // rdb_changes_since_last_save is its growth since the last snapshot's cut.
  uint64_t changes() const { return changes_; }

  size_t used_bytes() const { return entry_bytes_ + table_bytes(); }
  size_t entry_bytes() const { return entry_bytes_; }
  // The tables' directories and segments, and the slot index when there is one.
  size_t table_bytes() const {
    return table_bytes_ + (slot_index_ != nullptr ? slot_index_->Bytes() : 0);
  }

  // Cluster mode: indexes database 0's keys by hash slot from now on (see above).
  void EnableSlotIndex();
  // Null unless EnableSlotIndex() ran.
  const SlotIndex* slot_index() const { return slot_index_.get(); }
  // Calls fn(entry) for database 0's keys of `slot`, expired ones not yet deleted
  // included, until fn returns false. REQUIRES: the slot index is on. fn must not
  // change the keyspace.
  template <class F>
  void ForEachKeyInSlot(uint32_t slot, F&& fn) const;
  size_t type_bytes(ValueType t) const { return type_bytes_[static_cast<int>(t)]; }
  size_t type_keys(ValueType t) const { return type_keys_[static_cast<int>(t)]; }
  size_t key_count() const;
  size_t expires_count() const;
  const SlabHeap& heap() const { return heap_; }
  KeyspaceStats& stats() { return stats_; }

 private:
  struct Db {
    std::unique_ptr<Table> table;
    size_t expires = 0;
    uint64_t expire_cursor = 0;
    SlotIndex* slots = nullptr;  // database 0 in cluster mode: slot_index_
  };
  void RebuildSlotIndex();
  // The slot index's side of a key created in / deleted from d (hash: its TableHash).
  void IndexCreated(Db& d, std::string_view key, uint64_t hash) {
    if (d.slots != nullptr) [[unlikely]]
      d.slots->Add(KeySlot(key), hash);
  }
  void IndexDeleted(Db& d, std::string_view key, uint64_t hash) {
    if (d.slots != nullptr) [[unlikely]]
      d.slots->Remove(KeySlot(key), hash);
  }
  void Charge(const Entry* e, size_t n) {
    entry_bytes_ += n;
    type_bytes_[static_cast<int>(e->Type())] += n;
    type_keys_[static_cast<int>(e->Type())]++;
  }
  Entry* NewEntry(Db& d, std::string_view key, std::string_view value, ValueType type,
                  int64_t expire_ms);
  void DestroyEntry(Db& d, Entry* e, bool lazy = false);
  // DestroyEntry's body, inlined into the write paths of keyspace.cc.
  void FreeEntry(Db& d, Entry* e, bool lazy = false);
  // Accounting and freeing for an entry of a detached table (no Db any more).
  void FreeDetached(Entry* e);
  struct LazyItem {
    CollectionObject* obj = nullptr;  // a collection whose elements are being freed
    ValueType type = ValueType::kString;
    std::unique_ptr<Table> table;  // or a detached table
    uint64_t cursor = 0;
  };
  std::deque<LazyItem> lazy_;
  // Frees e's allocation but not its object (the object moved to a new entry).
  void DestroyEntryKeepObject(Db& d, Entry* e);
  Entry* Insert(Db& d, std::string_view key, Entry* e);
  // Insert with the key's hash and its table position (Locate's) already known; no table
  // change may come between them.
  Entry* InsertAt(Db& d, std::string_view key, uint64_t hash, Table::Ref ref, Entry* e);
  // kWrite: the caller may change the entry (snapshot pre-image, change tracking);
  // kTouch: record an access.
  template <bool kWrite, bool kTouch, bool kLoad = true>
  Entry* Lookup(uint32_t db, std::string_view key, int64_t now_ms);
  // A lookup met cold entry e: reads it through the hook and returns the hot entry, or
  // nullptr when the read failed.
  Entry* LoadColdNow(uint32_t db, Entry* e);
  void NoteColdFreed(const Entry* e) {
    cold_keys_--;
    cold_value_bytes_ -= e->ColdDiskLen();
    if (cold_hook_ != nullptr) cold_hook_->ColdFreed(e->ColdSeq());
  }
  // What a lookup does with an expired entry (set_replica_flag).
  enum class ExpiredIs : uint8_t { kLive, kHidden, kDeleted };
  template <bool kWrite>
  ExpiredIs OnExpired() const {
    if (expired_live_) return ExpiredIs::kLive;
    if (!kWrite && (pause_hold_ || keeps_expired())) return ExpiredIs::kHidden;
    return ExpiredIs::kDeleted;
  }
  const std::atomic<bool>* replica_flag_ = nullptr;
  bool pause_hold_ = false;
  bool expired_live_ = false;
  ColdHook* cold_hook_ = nullptr;
  size_t cold_keys_ = 0;
  uint64_t cold_value_bytes_ = 0;
  uint64_t cold_sync_reads_ = 0;
  uint64_t cold_sync_failures_ = 0;
  // REQUIRES: e is one of this keyspace's entries (they all carry the access field).
  // Under LFU a write counts as one access, as in Redis: a write command's own lookup
  // (kWrite) is remembered, so that overwriting that entry does not count again.
  template <bool kWrite>
  void Touch(Entry* e) {
    assert(e->HasAccess());
    if (access_clock_.mode == access::Mode::kLru) {
      e->SetAccess(access_clock_.lru_clock);
    } else {
      TouchLfu(e);
      if constexpr (kWrite) last_touched_ = e;
    }
  }
  void TouchLfu(Entry* e);
  void CarryLfu(Entry* old, Entry* e);
  // LFU: the entry a write lookup last counted (cleared when an overwrite uses it).
  const Entry* last_touched_ = nullptr;
  access::Clock access_clock_;
  uint32_t initial_access_ = 0;  // access_clock_.Initial()
  uint64_t rng_ = 0x9E3779B97F4A7C15ull;
  size_t lazy_pending_bytes_ = 0;
  uint32_t DbIndex(const Db& d) const { return static_cast<uint32_t>(&d - dbs_.data()); }
  // Before e (null for a key being created) changes or goes: writes its pre-image when
  // a running snapshot still needs it. Returns true when an entry created now for this
  // key must be marked kSnapSkip.
  bool PreWrite(Db& d, uint64_t hash, Entry* e) {
    if (snap_hook_ == nullptr) [[likely]]
      return false;
    return PreWriteSlow(d, hash, e);
  }
  bool PreWriteSlow(Db& d, uint64_t hash, Entry* e);
  // A change to the key with this hash: counted, and told to the tracker and watchers.
  void Mark(Db& d, uint64_t hash, bool deleted = false) {
    changes_++;
    if (tracker_ != nullptr) [[unlikely]]
      tracker_->KeyChanged(DbIndex(d), hash);
    if (watch_ != nullptr) [[unlikely]]
      watch_->KeyModified(DbIndex(d), hash, deleted);
  }
  SnapshotHook* snap_hook_ = nullptr;
  ChangeTracker* tracker_ = nullptr;
  WatchHook* watch_ = nullptr;
  KeyEventHook* event_hook_ = nullptr;
  bool watch_pending_ = false;  // a write lookup's notice, held back (see WatchHook)
  uint32_t watch_pending_db_ = 0;
  uint64_t watch_pending_hash_ = 0;
  uint64_t changes_ = 0;

  // Declared before the tables: their entries are freed into it, and they keep
  // table_bytes_ (every table's OverheadBytes()) up to date until they are destroyed.
  SlabHeap heap_;
  size_t table_bytes_ = 0;
  std::vector<Db> dbs_;
  std::unique_ptr<SlotIndex> slot_index_;
  size_t entry_bytes_ = 0;
  size_t type_bytes_[kValueTypeCount] = {};
  size_t type_keys_[kValueTypeCount] = {};
  uint32_t expire_db_ = 0;
  double expired_stale_ratio_ = 0;  // ActiveExpireCycle's estimate
  KeyspaceStats stats_;
};

template <class F>
uint64_t Keyspace::ScanBucket(uint32_t db, uint64_t cursor, int64_t now_ms, F&& fn) {
  Db& d = dbs_[db];
  return d.table->ScanChunk(cursor, [&](Entry* e) {
    if (e->IsExpired(now_ms)) {
      ExpiredIs is = OnExpired<false>();
      if (is == ExpiredIs::kHidden) return false;
      if (is == ExpiredIs::kLive) {
        fn(e);
        return false;
      }
      uint64_t h = TableHash(e->Key());
      PreWrite(d, h, e);
      Mark(d, h, true);
      // Told as an expiry: "expired" events, and a master's DEL to its replicas.
      if (event_hook_ != nullptr) [[unlikely]]
        event_hook_->KeyExpired(db, e->Key());
      IndexDeleted(d, e->Key(), h);
      DestroyEntry(d, e);
      stats_.expired_keys++;
      return true;
    }
    fn(e);
    return false;
  });
}

template <class P>
size_t Keyspace::DeleteHashRange(uint32_t db, uint64_t first, uint64_t last, P&& pred) {
  Db& d = dbs_[db];
  size_t deleted = 0;
  constexpr int kShift = 64 - Table::kCursorBits;
  uint64_t cursor = first >> kShift;
  uint64_t end = last >> kShift;
  while (true) {
    uint64_t next = d.table->ScanChunk(cursor, [&](Entry* e) {
      uint64_t h = TableHash(e->Key());
      if (h < first || h > last || !pred(e)) return false;
      PreWrite(d, h, e);
      Mark(d, h, true);
      IndexDeleted(d, e->Key(), h);
      DestroyEntry(d, e);
      deleted++;
      return true;
    });
    if (next == 0 || next > end) break;
    cursor = next;
  }
  return deleted;
}

template <class F>
void Keyspace::ForEachKeyInSlot(uint32_t slot, F&& fn) const {
  const Table& t = *dbs_[0].table;
  slot_index_->ForEachHash(slot, [&](uint64_t hash) {
    bool more = true;
    t.ForEachWithTag(hash, [&](Entry* e) {
      if (more && TableHash(e->Key()) == hash && KeySlot(e->Key()) == slot) more = fn(e);
    });
    return more;
  });
}

}  // namespace strata
