#include "core/table.h"

#include <mimalloc.h>
#include <sys/mman.h>

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "core/hash.h"

namespace strata {

namespace {

constexpr size_t kHeaderBytes = sizeof(Table::Segment);
constexpr uint32_t kMinCap = 16;
constexpr size_t kOsPage = 4096;
constexpr size_t kMmapSegmentBytes = 16 * 1024;

}  // namespace

Table::Segment* Table::NewSegment(uint32_t depth, size_t min_cap) {
  size_t want = kHeaderBytes + (std::max<size_t>(min_cap, kMinCap) + kTailSlots) * 8;
  size_t bytes;
  void* mem;
  if (want >= kMmapSegmentBytes) {
    // Big segments come straight from the OS in whole pages and go straight back when
    // the segment grows or splits, so the arrays left behind by growth never linger
    // in RSS as allocator free space.
    bytes = (want + kOsPage - 1) & ~(kOsPage - 1);
    mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) throw std::bad_alloc();
  } else {
    mem = mi_zalloc(mi_good_size(want));
    if (mem == nullptr) throw std::bad_alloc();
    // FreeSegment tells the two kinds apart by size: an allocator block rounded up to
    // the mmap size must still look like one (using a few bytes less of it).
    bytes = std::min(mi_usable_size(mem), kMmapSegmentBytes - 8);
  }
  Segment* s = static_cast<Segment*>(mem);
  s->depth = depth;
  s->count = 0;
  s->nslots = static_cast<uint32_t>((bytes - kHeaderBytes) / 8);
  s->cap = s->nslots - kTailSlots;
  s->bytes = static_cast<uint32_t>(bytes);
  segment_bytes_ += bytes;
  *total_bytes_ += bytes;
  segments_++;
  return s;
}

void Table::FreeSegment(Segment* s) {
  segment_bytes_ -= s->bytes;
  *total_bytes_ -= s->bytes;
  segments_--;
  if (s->bytes >= kMmapSegmentBytes) {
    munmap(s, s->bytes);
  } else {
    mi_free(s);
  }
}

Table::Table(SlabHeap& heap, size_t* total_bytes)
    : heap_(heap), total_bytes_(total_bytes != nullptr ? total_bytes : &own_total_) {
  dir_.push_back(NewSegment(0, kMinCap));
  SetDirBytes(dir_.capacity() * sizeof(Segment*));
}

void Table::PrefetchLookups(const uint64_t* hashes, size_t n) const {
  n = std::min(n, kLookaheadMax);
  const Segment* segs[kLookaheadMax];
  for (size_t i = 0; i < n; i++) {
    segs[i] = dir_[DirIndex(hashes[i])];
    PrefetchLine(segs[i]);
  }
  for (size_t i = 0; i < n; i++) {
    const Segment* s = segs[i];
    PrefetchLine(&s->slots[Home(TagFor(hashes[i], s->depth), s->cap)]);
  }
  for (size_t i = 0; i < n; i++) {
    const Segment* s = segs[i];
    uint32_t tag = TagFor(hashes[i], s->depth);
    for (uint32_t pos = Home(tag, s->cap); pos < s->nslots; pos++) {
      uint64_t slot = s->slots[pos];
      if (slot == 0 || TagOf(slot) > tag) break;
      if (TagOf(slot) == tag) {
        const char* e = reinterpret_cast<const char*>(PtrOf(slot));
        PrefetchLine(e);
        PrefetchLine(e + 64);
        break;
      }
    }
  }
}

Table::~Table() {
  Clear();
  FreeSegment(dir_[0]);
  SetDirBytes(0);
}

void Table::Reserve(size_t n) {
  if (size_ != 0 || n == 0) return;
  size_t max_cap = (kMaxSegmentBytes - kHeaderBytes) / 8 - kTailSlots;
  size_t per_segment = max_cap * 7 / 10;
  uint32_t depth = 0;
  while ((n >> depth) > per_segment && depth < 20) depth++;
  if (depth == 0 && n * 10 / 7 <= dir_[0]->cap) return;
  size_t cap = std::min(max_cap, ((n >> depth) + 1) * 10 / 7);
  std::vector<Segment*> old = {dir_[0]};
  for (size_t i = 1; i < dir_.size(); i++) {
    if (dir_[i] != old.back()) old.push_back(dir_[i]);
  }
  for (Segment* s : old) FreeSegment(s);
  std::vector<Segment*> fresh(size_t{1} << depth);
  for (Segment*& s : fresh) s = NewSegment(depth, cap);
  dir_.swap(fresh);
  global_depth_ = depth;
  SetDirBytes(dir_.capacity() * sizeof(Segment*));
}

size_t Table::Clear() {
  size_t freed = 0;
  std::vector<Segment*> unique;
  const Segment* prev = nullptr;
  for (Segment* s : dir_) {
    if (s == prev) continue;
    prev = s;
    unique.push_back(s);
  }
  for (Segment* s : unique) {
    for (uint32_t i = 0; i < s->nslots; i++) {
      if (s->slots[i] != 0) freed += Entry::Destroy(heap_, PtrOf(s->slots[i]));
    }
    FreeSegment(s);
  }
  dir_.assign(1, nullptr);
  dir_.shrink_to_fit();
  dir_[0] = NewSegment(0, kMinCap);
  SetDirBytes(dir_.capacity() * sizeof(Segment*));
  global_depth_ = 0;
  size_ = 0;
  return freed;
}

size_t Table::DestroySome(uint64_t* cursor, size_t budget) {
  size_t freed = 0, n = 0;
  do {
    *cursor = ScanChunk(*cursor, [&](Entry* e) {
      freed += Entry::Destroy(heap_, e);
      n++;
      return true;
    });
  } while (*cursor != 0 && n < budget);
  return freed;
}

Table::Ref Table::Locate(std::string_view key, uint64_t hash) const {
  Segment* s = dir_[DirIndex(hash)];
  uint32_t tag = TagFor(hash, s->depth);
  for (uint32_t pos = Home(tag, s->cap); pos < s->nslots; pos++) {
    uint64_t slot = s->slots[pos];
    if (slot == 0) return {};
    uint32_t t = TagOf(slot);
    if (t > tag) return {};
    if (t == tag && PtrOf(slot)->KeyEquals(key)) return {s, pos};
  }
  return {};
}

Entry* Table::Find(std::string_view key, uint64_t hash) const {
  Ref r = Locate(key, hash);
  return r ? At(r) : nullptr;
}

Entry* Table::At(Ref r) { return PtrOf(r.seg->slots[r.pos]); }

size_t Table::ShareBytes(Ref r) {
  return r.seg->count == 0 ? 0 : (r.seg->bytes + r.seg->count - 1) / r.seg->count;
}

bool Table::InsertSorted(Segment* s, uint64_t slot) {
  uint32_t tag = TagOf(slot);
  uint32_t pos = Home(tag, s->cap);
  while (pos < s->nslots && s->slots[pos] != 0 && TagOf(s->slots[pos]) <= tag) pos++;
  uint32_t empty = pos;
  while (empty < s->nslots && s->slots[empty] != 0) empty++;
  if (empty >= s->nslots) return false;
  if (empty > pos) {
    std::memmove(&s->slots[pos + 1], &s->slots[pos], (empty - pos) * sizeof(uint64_t));
  }
  s->slots[pos] = slot;
  s->count++;
  return true;
}

void Table::EraseAt(Segment* s, uint32_t pos) {
  uint32_t q = pos + 1;
  while (q < s->nslots && s->slots[q] != 0 && Home(TagOf(s->slots[q]), s->cap) < q) q++;
  // Slots (pos, q) are displaced: each moves back by one.
  if (q > pos + 1) {
    std::memmove(&s->slots[pos], &s->slots[pos + 1], (q - pos - 1) * sizeof(uint64_t));
  }
  s->slots[q - 1] = 0;
  s->count--;
}

bool Table::PlaceSorted(Segment* s, const uint64_t* slots, size_t n) {
  uint32_t next = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t pos = std::max(Home(TagOf(slots[i]), s->cap), next);
    if (pos >= s->nslots) return false;
    s->slots[pos] = slots[i];
    next = pos + 1;
  }
  s->count = static_cast<uint32_t>(n);
  return true;
}

void Table::Insert(Entry* e, uint64_t hash) {
  if ((reinterpret_cast<uint64_t>(e) & ~kPtrMask) != 0) [[unlikely]] {
    // Slots keep the tag in the top 16 bits; Linux gives user space 47-bit addresses
    // unless a mapping above them is asked for explicitly, which nothing here does.
    std::fprintf(stderr, "strata: entry address %p does not fit in 48 bits\n",
                 static_cast<void*>(e));
    std::abort();
  }
  for (;;) {
    uint32_t di = DirIndex(hash);
    Segment* s = dir_[di];
    if (s->count + 1 <= s->cap - s->cap / 8 &&
        InsertSorted(s, MakeSlot(e, TagFor(hash, s->depth)))) {
      size_++;
      return;
    }
    // Full (7/8 of capacity) or the tail overflowed: grow, or split at the size limit.
    if (s->bytes >= kMaxSegmentBytes && s->depth < kDepthMax) {
      Split(di);
    } else {
      Grow(di);
    }
  }
}

Entry* Table::Replace(Ref r, Entry* e) {
  uint64_t old = r.seg->slots[r.pos];
  r.seg->slots[r.pos] = MakeSlot(e, TagOf(old));
  return PtrOf(old);
}

Entry* Table::Erase(Ref r) {
  Entry* e = PtrOf(r.seg->slots[r.pos]);
  EraseAt(r.seg, r.pos);
  size_--;
  return e;
}

void Table::Grow(uint32_t dir_index) {
  Segment* old = dir_[dir_index];
  std::vector<uint64_t> live;
  live.reserve(old->count);
  for (uint32_t i = 0; i < old->nslots; i++) {
    if (old->slots[i] != 0) live.push_back(old->slots[i]);
  }
  size_t cap = old->cap < 1024 ? old->cap * 2 : old->cap + old->cap / 4;
  size_t max_cap = (kMaxSegmentBytes - kHeaderBytes) / 8 - kTailSlots;
  if (old->bytes < kMaxSegmentBytes && cap > max_cap) cap = max_cap;
  Segment* s;
  for (;;) {
    s = NewSegment(old->depth, cap);
    if (PlaceSorted(s, live.data(), live.size())) break;
    FreeSegment(s);  // a rare pile-up at the end: try bigger
    cap += cap / 4;
  }
  uint32_t span = 1u << (global_depth_ - old->depth);
  uint32_t first = dir_index & ~(span - 1);
  for (uint32_t i = 0; i < span; i++) dir_[first + i] = s;
  FreeSegment(old);
}

void Table::Split(uint32_t dir_index) {
  Segment* old = dir_[dir_index];
  if (old->depth == global_depth_) {
    std::vector<Segment*> bigger(dir_.size() * 2);
    for (size_t i = 0; i < dir_.size(); i++) {
      bigger[2 * i] = dir_[i];
      bigger[2 * i + 1] = dir_[i];
    }
    dir_.swap(bigger);
    SetDirBytes(dir_.capacity() * sizeof(Segment*));
    global_depth_++;
    dir_index *= 2;
  }
  uint32_t depth = old->depth + 1;
  // The new tags need one hash bit the old tag lacks, so each key is hashed again.
  std::vector<uint64_t> halves[2];
  halves[0].reserve(old->count);
  halves[1].reserve(old->count);
  for (uint32_t i = 0; i < old->nslots; i++) {
    uint64_t slot = old->slots[i];
    if (slot == 0) continue;
    Entry* e = PtrOf(slot);
    uint64_t hash = TableHash(e->Key());
    halves[(TagOf(slot) >> 15) & 1].push_back(MakeSlot(e, TagFor(hash, depth)));
  }
  Segment* segs[2];
  for (int h = 0; h < 2; h++) {
    std::vector<uint64_t>& v = halves[h];
    // Old order is by the old tag; equal old tags may now be out of order by one bit.
    std::sort(v.begin(), v.end(), [](uint64_t a, uint64_t b) { return TagOf(a) < TagOf(b); });
    size_t cap = v.size() + v.size() * 3 / 7;  // load ~0.7
    for (;;) {
      segs[h] = NewSegment(depth, cap);
      if (PlaceSorted(segs[h], v.data(), v.size())) break;
      FreeSegment(segs[h]);
      cap += cap / 4;
    }
  }
  // The old segment owned 2^(G-depth_old) consecutive directory slots.
  uint32_t span = 1u << (global_depth_ - old->depth);
  uint32_t first = dir_index & ~(span - 1);
  for (uint32_t i = 0; i < span; i++) dir_[first + i] = segs[i < span / 2 ? 0 : 1];
  FreeSegment(old);
}

Entry* Table::RandomEntry(uint64_t seed) const {
  if (size_ == 0) return nullptr;
  uint32_t di = DirIndex(seed * 0x9E3779B97F4A7C15ull);
  // Walk from a random slot of a random segment to the next entry, across segments.
  const Segment* s = dir_[di];
  uint32_t pos = static_cast<uint32_t>((seed >> 20) % s->nslots);
  for (size_t steps = 0; steps <= dir_.size(); steps++) {
    for (uint32_t i = pos; i < s->nslots; i++) {
      if (s->slots[i] != 0) return PtrOf(s->slots[i]);
    }
    di = (di + 1) % static_cast<uint32_t>(dir_.size());
    s = dir_[di];
    pos = 0;
  }
  return nullptr;
}

}  // namespace strata
