#include "core/stream_type.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace strata {

using stream_node::EntryHead;
using stream_node::Header;
using stream_node::HeaderOf;

namespace {

constexpr int64_t kNodeBytesCap = int64_t{1} << 30;
constexpr size_t kScratchKeepBytes = 16 * 1024;

// Encoding buffers of the calling (shard) thread, reused across writes to any stream so
// that no stream carries them: not part of any value's bytes.
struct Scratch {
  std::string entry;
  std::string concat;
  stream_node::Master master;
  stream_node::Master locate_master;  // Locate's: it runs between uses of master
  void Trim() {
    if (entry.capacity() > kScratchKeepBytes) std::string().swap(entry);
    if (concat.capacity() > kScratchKeepBytes) std::string().swap(concat);
  }
};
thread_local Scratch scratch;

size_t NodeMaxBytes() {
  int64_t v = GlobalStreamLimits().node_max_bytes.load(std::memory_order_relaxed);
  if (v <= 0 || v > kNodeBytesCap) v = kNodeBytesCap;
  return static_cast<size_t>(v);
}

size_t NodeMaxEntries() {
  int64_t v = GlobalStreamLimits().node_max_entries.load(std::memory_order_relaxed);
  if (v <= 0 || v > static_cast<int64_t>(stream_node::kEntriesMax)) {
    v = stream_node::kEntriesMax;
  }
  return static_cast<size_t>(v);
}

StreamId LastOf(const char* node) {
  const Header* h = HeaderOf(node);
  return StreamId{h->last_ms, h->last_seq};
}

char* AllocNode(size_t bytes) {
  void* p = std::malloc(bytes);
  if (p == nullptr) throw std::bad_alloc();
  return static_cast<char*>(p);
}

}  // namespace

StreamLimits& GlobalStreamLimits() {
  static StreamLimits limits;
  return limits;
}

const char* StreamStatusMessage(StreamStatus s) {
  switch (s) {
    case StreamStatus::kOk:
      return "";
    case StreamStatus::kIdZero:
      return "ERR The ID specified in XADD must be greater than 0-0";
    case StreamStatus::kIdExhausted:
      return "ERR The stream has exhausted the last possible ID, unable to add more items";
    case StreamStatus::kIdTooSmall:
      return "ERR The ID specified in XADD is equal or smaller than the target stream top item";
    case StreamStatus::kTooLarge:
      return "ERR Elements are too large to be stored";
    case StreamStatus::kSetIdBelowGivenMaxDeleted:
      return "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id";
    case StreamStatus::kSetIdBelowMaxDeleted:
      return "ERR The ID specified in XSETID is smaller than current max_deleted_entry_id";
    case StreamStatus::kSetIdBelowTop:
      return "ERR The ID specified in XSETID is smaller than the target stream top item";
    case StreamStatus::kEntriesAddedBelowLength:
      return "ERR The entries_added specified in XSETID is smaller than the target stream length";
  }
  return "ERR unknown stream error";
}

StreamBoundStatus ParseStreamBound(std::string_view text, bool is_end, StreamId* inclusive) {
  uint64_t missing = is_end ? UINT64_MAX : 0;
  bool exclusive = text.size() > 1 && text[0] == '(';
  if (!exclusive) {
    return ParseStreamId(text, missing, false, inclusive) ? StreamBoundStatus::kOk
                                                          : StreamBoundStatus::kInvalidId;
  }
  StreamId id;
  if (!ParseStreamId(text.substr(1), missing, true, &id)) return StreamBoundStatus::kInvalidId;
  if (is_end ? !id.Decrement() : !id.Increment()) {
    return is_end ? StreamBoundStatus::kInvalidEnd : StreamBoundStatus::kInvalidStart;
  }
  *inclusive = id;
  return StreamBoundStatus::kOk;
}

// ---- StreamObject: construction and bytes ----

StreamObject::StreamObject()
    : nodes_(stream_detail::CountingAllocator<std::pair<const StreamId, char*>>(&aux_bytes_)),
      groups_(stream_detail::CountingAllocator<
              std::pair<const std::string_view, std::unique_ptr<StreamGroup>>>(&aux_bytes_)) {}

StreamObject::~StreamObject() {
  for (auto& [base, node] : nodes_) std::free(node);
}

size_t StreamObject::Bytes() const {
  return malloc_usable_size(const_cast<StreamObject*>(this)) + node_bytes_ + aux_bytes_;
}

size_t StreamObject::ReleaseSome(size_t budget) {
  while (!groups_.empty()) {
    std::unique_ptr<StreamGroup> g = std::move(groups_.begin()->second);
    groups_.erase(groups_.begin());
    DestroyGroupObject(std::move(g));
  }
  size_t freed = 0;
  while (!nodes_.empty() && freed < budget) {
    size_t live = HeaderOf(nodes_.begin()->second)->live;
    length_ -= live;
    freed += live;
    FreeNode(nodes_.begin());
  }
  return length_;
}

// ---- nodes ----

void StreamObject::FreeNode(NodeMap::iterator it) {
  node_bytes_ -= malloc_usable_size(it->second);
  std::free(it->second);
  nodes_.erase(it);
}

void StreamObject::ShrinkNode(NodeMap::iterator it) {
  char* node = it->second;
  size_t used = HeaderOf(node)->used;
  size_t cap = malloc_usable_size(node);
  if (cap - used <= std::max<size_t>(64, cap / 16)) return;
  char* fresh = AllocNode(used);
  std::memcpy(fresh, node, used);
  node_bytes_ += malloc_usable_size(fresh);
  node_bytes_ -= cap;
  std::free(node);
  it->second = fresh;
}

void StreamObject::AppendEntry(StreamId id, std::span<const std::string_view> field_values) {
  size_t max_bytes = NodeMaxBytes();
  if (!nodes_.empty()) {
    auto it = std::prev(nodes_.end());
    char* node = it->second;
    Header* h = HeaderOf(node);
    StreamId tail_last = LastOf(node);
    if (id > tail_last && size_t{h->live} + h->dead < NodeMaxEntries()) {
      stream_node::ParseMaster(node, &scratch.master);
      scratch.entry.clear();
      stream_node::EncodeEntry(scratch.master, tail_last, false, id, field_values, &scratch.entry,
                               &scratch.concat);
      size_t need = h->used + scratch.entry.size();
      if (need <= max_bytes) {
        size_t cap = malloc_usable_size(node);
        if (need > cap) {
          size_t grown = std::max(need, cap + cap / 2);
          if (grown > max_bytes) grown = std::max(need, max_bytes);
          void* p = std::realloc(node, grown);
          if (p == nullptr) throw std::bad_alloc();
          node = static_cast<char*>(p);
          node_bytes_ += malloc_usable_size(node);
          node_bytes_ -= cap;
          it->second = node;
          h = HeaderOf(node);
        }
        std::memcpy(node + h->used, scratch.entry.data(), scratch.entry.size());
        h->used = static_cast<uint32_t>(need);
        h->live++;
        h->last_ms = id.ms;
        h->last_seq = id.seq;
        scratch.Trim();
        return;
      }
    }
    ShrinkNode(it);
  }
  std::string& out = scratch.entry;
  out.clear();
  stream_node::EncodeHeaderAndMaster(field_values, &out);
  stream_node::ParseMaster(out.data(), &scratch.master);
  stream_node::EncodeEntry(scratch.master, id, true, id, field_values, &out, &scratch.concat);
  char* node = AllocNode(out.size());
  std::memcpy(node, out.data(), out.size());
  Header* h = HeaderOf(node);
  h->used = static_cast<uint32_t>(out.size());
  h->live = 1;
  h->dead = 0;
  h->last_ms = id.ms;
  h->last_seq = id.seq;
  node_bytes_ += malloc_usable_size(node);
  auto placed = nodes_.emplace_hint(nodes_.end(), id, node);
  if (placed->second != node) [[unlikely]] {
    // A node's base ID is its first entry's, and every new ID is above every live one.
    std::fprintf(stderr, "strata: stream node %s exists already\n", id.ToString().c_str());
    std::abort();
  }
  scratch.Trim();
}

void StreamObject::CompactNode(NodeMap::iterator it) {
  const char* node = it->second;
  const Header* h = HeaderOf(node);
  stream_node::Master& master = scratch.master;
  stream_node::ParseMaster(node, &master);
  std::string& out = scratch.entry;
  out.assign(node, h->entries_off);
  EntryHead e;
  StreamId prev = it->first;  // previous entry read from the old node
  StreamId kept = it->first;  // previous entry written to the new one
  bool first_read = true, first_kept = true;
  for (uint32_t off = h->entries_off; off < h->used; off = e.next) {
    stream_node::ReadEntry(node, master, off, prev, first_read, &e);
    prev = e.id;
    first_read = false;
    if (e.flags & stream_node::kDeleted) continue;
    uint8_t flags =
        e.flags & (stream_node::kSameFields | stream_node::kSameLengths | stream_node::kPacked);
    size_t at = out.size();
    out.push_back(0);
    stream_node::EncodeId(kept, first_kept, e.id, &flags, &out);
    out[at] = static_cast<char>(flags);
    out.append(node + e.body_off, e.next - e.body_off);
    kept = e.id;
    first_kept = false;
  }
  char* fresh = AllocNode(out.size());
  std::memcpy(fresh, out.data(), out.size());
  Header* nh = HeaderOf(fresh);
  nh->used = static_cast<uint32_t>(out.size());
  nh->dead = 0;
  nh->last_ms = kept.ms;
  nh->last_seq = kept.seq;
  node_bytes_ += malloc_usable_size(fresh);
  node_bytes_ -= malloc_usable_size(it->second);
  std::free(it->second);
  it->second = fresh;
  scratch.Trim();
}

void StreamObject::MaybeCompact(NodeMap::iterator it) {
  const Header* h = HeaderOf(it->second);
  if (h->dead > h->live) CompactNode(it);
}

bool StreamObject::Locate(StreamId id, NodeMap::const_iterator* node_it, uint32_t* off) const {
  auto it = nodes_.upper_bound(id);
  if (it == nodes_.begin()) return false;
  --it;
  const char* node = it->second;
  const Header* h = HeaderOf(node);
  stream_node::Master& m = scratch.locate_master;
  stream_node::ParseMaster(node, &m);
  EntryHead e;
  StreamId prev = it->first;
  bool first = true;
  for (uint32_t o = h->entries_off; o < h->used; o = e.next) {
    stream_node::ReadEntry(node, m, o, prev, first, &e);
    if (e.id == id && !(e.flags & stream_node::kDeleted)) {
      *node_it = it;
      *off = o;
      return true;
    }
    if (e.id > id) return false;
    prev = e.id;
    first = false;
  }
  return false;
}

void StreamObject::RefreshFirstId() {
  StreamIterator it = Range(StreamId::Min(), StreamId::Max());
  first_id_ = it.Valid() ? it.id() : StreamId::Min();
}

void StreamObject::RefreshLastEntryId() {
  StreamIterator it = Range(StreamId::Min(), StreamId::Max(), true);
  last_entry_id_ = it.Valid() ? it.id() : StreamId::Min();
}

// ---- writes ----

StreamStatus StreamObject::Add(StreamAddId add, std::span<const std::string_view> field_values,
                               int64_t now_ms, StreamId* added) {
  if (add.kind == StreamAddId::kExplicit && add.id.IsZero()) return StreamStatus::kIdZero;
  if (last_id_ == StreamId::Max()) return StreamStatus::kIdExhausted;
  StreamId id;
  switch (add.kind) {
    case StreamAddId::kAuto: {
      uint64_t ms = now_ms > 0 ? static_cast<uint64_t>(now_ms) : 0;
      if (ms > last_id_.ms) {
        id = StreamId{ms, 0};
      } else {
        id = last_id_;
        id.Increment();
      }
      break;
    }
    case StreamAddId::kExplicit:
      id = add.id;
      break;
    case StreamAddId::kPartial:
      if (add.id.ms == last_id_.ms) {
        if (last_id_.seq == UINT64_MAX) return StreamStatus::kIdTooSmall;
        id = StreamId{last_id_.ms, last_id_.seq + 1};
      } else {
        id = StreamId{add.id.ms, 0};
      }
      break;
  }
  if (id <= last_id_) return StreamStatus::kIdTooSmall;
  uint64_t total = 0;
  for (std::string_view s : field_values) total += s.size();
  if (total > kStreamEntryBytesMax) return StreamStatus::kTooLarge;
  AppendEntry(id, field_values);
  length_++;
  entries_added_++;
  last_id_ = id;
  last_entry_id_ = id;
  if (length_ == 1) first_id_ = id;
  *added = id;
  return StreamStatus::kOk;
}

bool StreamObject::Delete(StreamId id) {
  NodeMap::const_iterator found;
  uint32_t off;
  if (!Locate(id, &found, &off)) return false;
  auto it = nodes_.find(found->first);
  char* node = it->second;
  node[off] = static_cast<char>(node[off] | stream_node::kDeleted);
  Header* h = HeaderOf(node);
  h->live--;
  h->dead++;
  length_--;
  if (id > max_deleted_id_) max_deleted_id_ = id;
  if (h->live == 0) {
    FreeNode(it);
  } else {
    MaybeCompact(it);
  }
  if (length_ == 0) {
    first_id_ = StreamId::Min();
    last_entry_id_ = StreamId::Min();
  } else {
    if (id == first_id_) RefreshFirstId();
    if (id == last_entry_id_) RefreshLastEntryId();
  }
  return true;
}

uint64_t StreamObject::Trim(const StreamTrimSpec& spec) {
  if (spec.strategy == StreamTrimSpec::kNone) return 0;
  bool by_len = spec.strategy == StreamTrimSpec::kMaxLen;
  uint64_t deleted = 0;
  while (!nodes_.empty()) {
    if (by_len && length_ <= spec.max_len) break;
    auto it = nodes_.begin();
    char* node = it->second;
    Header* h = HeaderOf(node);
    uint64_t entries = h->live;
    if (spec.limit != 0 && deleted + entries > spec.limit) break;
    bool remove = by_len ? length_ - entries >= spec.max_len : LastOf(node) < spec.min_id;
    if (remove) {
      length_ -= entries;
      deleted += entries;
      FreeNode(it);
      continue;
    }
    if (spec.approx) break;
    // Flag entries from the front of this node until the condition holds.
    stream_node::ParseMaster(node, &scratch.master);
    EntryHead e;
    StreamId prev = it->first;
    bool first = true;
    for (uint32_t off = h->entries_off; off < h->used; off = e.next) {
      stream_node::ReadEntry(node, scratch.master, off, prev, first, &e);
      prev = e.id;
      first = false;
      if (by_len ? length_ <= spec.max_len : e.id >= spec.min_id) break;
      if (e.flags & stream_node::kDeleted) continue;
      node[off] = static_cast<char>(node[off] | stream_node::kDeleted);
      h->live--;
      h->dead++;
      length_--;
      deleted++;
    }
    if (h->live == 0) {
      FreeNode(it);
    } else {
      MaybeCompact(it);
    }
    break;
  }
  if (length_ == 0) {
    first_id_ = StreamId::Min();
    last_entry_id_ = StreamId::Min();
  } else if (deleted != 0) {
    RefreshFirstId();
  }
  return deleted;
}

StreamStatus StreamObject::SetId(StreamId id, int64_t entries_added, StreamId max_deleted_id) {
  if (!max_deleted_id.IsZero() && id < max_deleted_id) {
    return StreamStatus::kSetIdBelowGivenMaxDeleted;
  }
  if (id < max_deleted_id_) return StreamStatus::kSetIdBelowMaxDeleted;
  if (length_ > 0) {
    if (id < last_entry_id_) return StreamStatus::kSetIdBelowTop;
    if (entries_added >= 0 && length_ > static_cast<uint64_t>(entries_added)) {
      return StreamStatus::kEntriesAddedBelowLength;
    }
  }
  last_id_ = id;
  if (entries_added >= 0) entries_added_ = static_cast<uint64_t>(entries_added);
  if (!max_deleted_id.IsZero()) max_deleted_id_ = max_deleted_id;
  return StreamStatus::kOk;
}

// ---- reads ----

StreamIterator StreamObject::Range(StreamId start, StreamId end, bool reverse) const {
  return StreamIterator(*this, start, end, reverse);
}

bool StreamObject::Contains(StreamId id) const {
  NodeMap::const_iterator it;
  uint32_t off;
  return Locate(id, &it, &off);
}

bool StreamObject::RangeHasTombstones(StreamId start, StreamId end) const {
  if (length_ == 0 || max_deleted_id_.IsZero()) return false;
  return start <= max_deleted_id_ && max_deleted_id_ <= end;
}

int64_t StreamObject::EstimateEntriesRead(StreamId id) const {
  int64_t added = static_cast<int64_t>(entries_added_);
  int64_t len = static_cast<int64_t>(length_);
  if (entries_added_ == 0) return 0;
  if (length_ == 0 && id <= last_id_) return added;
  if (!id.IsZero() && id < max_deleted_id_) return -1;
  if (id == last_id_) return added;
  if (id > last_id_) return -1;
  if (max_deleted_id_.IsZero() || max_deleted_id_ < first_id_) {
    if (id < first_id_) return added - len;
    if (id == first_id_) return added - len + 1;
  }
  return -1;
}

bool StreamObject::GroupLag(const StreamGroup& g, int64_t* lag) const {
  int64_t added = static_cast<int64_t>(entries_added_);
  if (entries_added_ == 0) {
    *lag = 0;
    return true;
  }
  if (g.entries_read != -1 && !RangeHasTombstones(g.last_id, StreamId::Max())) {
    *lag = added - g.entries_read;
    return true;
  }
  int64_t read = EstimateEntriesRead(g.last_id);
  if (read == -1) return false;
  *lag = added - read;
  return true;
}

// ---- StreamIterator ----

StreamIterator::StreamIterator(const StreamObject& s, StreamId start, StreamId end, bool reverse)
    : s_(&s), node_(s.nodes_.end()), start_(start), end_(end), reverse_(reverse) {
  if (start > end || s.nodes_.empty()) return;
  if (!reverse) {
    node_ = s.nodes_.upper_bound(start);
    if (node_ != s.nodes_.begin()) --node_;
  } else {
    node_ = s.nodes_.upper_bound(end);
    if (node_ == s.nodes_.begin()) {
      node_ = s.nodes_.end();
      return;
    }
    --node_;
  }
  EnterNode();
  Settle();
}

void StreamIterator::EnterNode() {
  const char* node = node_->second;
  const Header* h = HeaderOf(node);
  stream_node::ParseMaster(node, &master_);
  if (!reverse_) {
    off_ = h->entries_off;
    prev_ = node_->first;
    first_ = true;
    return;
  }
  positions_.clear();
  StreamId prev = node_->first;
  for (uint32_t off = h->entries_off; off < h->used; off = head_.next) {
    positions_.emplace_back(off, prev);
    stream_node::ReadEntry(node, master_, off, prev, positions_.size() == 1, &head_);
    prev = head_.id;
  }
  index_ = positions_.size();
}

void StreamIterator::Settle() {
  valid_ = false;
  loaded_ = false;
  while (true) {
    const char* node = node_->second;
    if (!reverse_) {
      uint32_t used = HeaderOf(node)->used;
      while (off_ < used) {
        stream_node::ReadEntry(node, master_, off_, prev_, first_, &head_);
        if (!(head_.flags & stream_node::kDeleted) && head_.id >= start_) {
          valid_ = head_.id <= end_;
          return;
        }
        prev_ = head_.id;
        first_ = false;
        off_ = head_.next;
      }
      if (++node_ == s_->nodes_.end()) return;
    } else {
      while (index_ > 0) {
        const auto& [off, prev] = positions_[index_ - 1];
        stream_node::ReadEntry(node, master_, off, prev, index_ == 1, &head_);
        if (!(head_.flags & stream_node::kDeleted) && head_.id <= end_) {
          valid_ = head_.id >= start_;
          return;
        }
        index_--;
      }
      if (node_ == s_->nodes_.begin()) return;
      --node_;
    }
    EnterNode();
  }
}

void StreamIterator::Next() {
  if (!valid_) return;
  if (!reverse_) {
    prev_ = head_.id;
    first_ = false;
    off_ = head_.next;
  } else {
    index_--;
  }
  Settle();
}

const StreamEntry& StreamIterator::entry() const {
  if (!loaded_) {
    entry_.id = head_.id;
    stream_node::EntryFields(node_->second, master_, head_, &entry_.fields, &scratch_);
    loaded_ = true;
  }
  return entry_;
}

}  // namespace strata
