#include "core/spill_picker.h"

#include <algorithm>

#include "core/entry.h"
#include "core/keyspace.h"
#include "core/object.h"
#include "core/table.h"

namespace strata {

size_t SpillPicker::ValueBytes(const Entry* e) {
  if (e->IsExternal()) return e->Object()->Bytes();
  return e->ValueLen();
}

size_t SpillPicker::Round(Keyspace& ks, size_t min_value_bytes, int samples,
                          const std::function<bool(uint32_t, const Entry*)>& skip,
                          std::vector<Pick>* out) {
  scratch_.clear();
  if (sweeps_.size() < ks.db_count()) {
    sweeps_.resize(ks.db_count());
    for (Sweep& sw : sweeps_) {
      if (sw.cursor == 0) {
        sw.cursor = Next() & ((uint64_t{1} << Table::kCursorBits) - 1);
        sw.found = true;  // the first sweep starts part-way: it proves nothing
      }
    }
  }
  const access::Clock& clock = ks.access_clock();
  bool lfu = clock.mode == access::Mode::kLfu;
  bool all_empty = true;
  for (uint32_t db = 0; db < ks.db_count(); db++) {
    Sweep& sw = sweeps_[db];
    if (ks.DbSize(db) == 0) {
      sw.empty = true;
      continue;
    }
    Table& t = ks.table(db);
    size_t before = scratch_.size();
    for (int chunk = 0; chunk < kChunksPerRound; chunk++) {
      sw.cursor = t.ScanChunk(sw.cursor, [&](Entry* e) {
        if (e->IsCold() || ValueBytes(e) < min_value_bytes) return false;
        if (skip(db, e)) {
          sw.found = true;  // eligible later: not an empty sweep
          return false;
        }
        uint64_t score;
        if (!e->HasAccess()) {
          score = UINT64_MAX;
        } else if (lfu) {
          score = 255 - access::LfuDecayed(e->Access(), clock.lfu_minutes, clock.lfu_decay_time);
        } else {
          score = access::LruIdleMs(clock.lru_clock, e->Access());
        }
        scratch_.push_back(Scored{score, Pick{db, e}});
        return false;
      });
      if (scratch_.size() > before) sw.found = true;
      if (sw.cursor == 0) {
        // A sweep ended: it tells whether this database has anything left to spill.
        sw.empty = !sw.found;
        sw.found = false;
      }
      if (sw.cursor == 0 || scratch_.size() - before >= static_cast<size_t>(samples)) break;
    }
    if (scratch_.size() > before) sw.empty = false;
    all_empty = all_empty && sw.empty;
  }
  exhausted_ = scratch_.empty() && all_empty;
  if (scratch_.empty()) return 0;
  size_t take = std::max<size_t>(1, scratch_.size() / 2);
  std::nth_element(scratch_.begin(), scratch_.begin() + static_cast<std::ptrdiff_t>(take - 1),
                   scratch_.end(),
                   [](const Scored& a, const Scored& b) { return a.score > b.score; });
  for (size_t i = 0; i < take; i++) out->push_back(scratch_[i].pick);
  return take;
}

}  // namespace strata
