// A stream's canonical serialized form (StreamObject::Serialize and Parse; the format is
// in stream_type.h) and StreamBuilder, which both Parse and the RDB loader build with.
#include <string>
#include <unordered_map>

#include "core/packed_list.h"
#include "core/stream_type.h"

namespace strata {

namespace {

uint64_t ZigZag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}

int64_t UnZigZag(uint64_t v) { return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1); }

void PutId(std::string* out, StreamId id) {
  packed::AppendVarint(out, id.ms);
  packed::AppendVarint(out, id.seq);
}

// An ID of a delta-coded list (see the format).
void PutIdDelta(std::string* out, StreamId id, StreamId prev, bool first) {
  if (first) {
    PutId(out, id);
    return;
  }
  packed::AppendVarint(out, id.ms - prev.ms);
  packed::AppendVarint(out, id.ms == prev.ms ? id.seq - prev.seq - 1 : id.seq);
}

void PutString(std::string* out, std::string_view s) {
  packed::AppendVarint(out, s.size());
  out->append(s);
}

// Bounds-checked reads of a serialized stream. After the first failure every read fails.
class Input {
 public:
  explicit Input(std::string_view s) : s_(s) {}
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  size_t remaining() const { return s_.size() - pos_; }
  bool done() const { return pos_ == s_.size(); }

  bool Fail(const char* what) {
    if (error_.empty()) {
      error_ = std::string("corrupt stream at byte ") + std::to_string(pos_) + ": " + what;
    }
    return false;
  }
  bool U8(uint8_t* v) {
    if (!ok() || pos_ >= s_.size()) return Fail("truncated");
    *v = static_cast<uint8_t>(s_[pos_++]);
    return true;
  }
  // A varint of at most 10 bytes whose value fits 64 bits.
  bool Varint(uint64_t* v) {
    if (!ok()) return false;
    uint64_t r = 0;
    for (int i = 0; i < 10; i++) {
      if (pos_ >= s_.size()) return Fail("truncated");
      uint8_t b = static_cast<uint8_t>(s_[pos_++]);
      if (i == 9 && b > 1) return Fail("varint overflows 64 bits");
      r |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
      if (b < 0x80) {
        *v = r;
        return true;
      }
    }
    return Fail("varint too long");
  }
  bool Signed(int64_t* v) {
    uint64_t u = 0;
    if (!Varint(&u)) return false;
    *v = UnZigZag(u);
    return true;
  }
  // A count of items of at least min_bytes each: never more than the bytes left allow.
  bool Count(uint64_t* n, size_t min_bytes) {
    if (!Varint(n)) return false;
    if (*n > remaining() / min_bytes) return Fail("count exceeds the bytes left");
    return true;
  }
  bool String(std::string_view* out) {
    uint64_t len = 0;
    if (!Varint(&len)) return false;
    if (len > remaining()) return Fail("string runs past the end");
    *out = s_.substr(pos_, static_cast<size_t>(len));
    pos_ += static_cast<size_t>(len);
    return true;
  }
  bool Id(StreamId* id) { return Varint(&id->ms) && Varint(&id->seq); }
  bool IdDelta(StreamId* id, StreamId prev, bool first) {
    if (first) return Id(id);
    uint64_t dms = 0, x = 0;
    if (!Varint(&dms) || !Varint(&x)) return false;
    if (dms > UINT64_MAX - prev.ms) return Fail("ID overflows");
    if (dms == 0) {
      if (prev.seq == UINT64_MAX || x > UINT64_MAX - prev.seq - 1) return Fail("ID overflows");
      *id = StreamId{prev.ms, prev.seq + 1 + x};
    } else {
      *id = StreamId{prev.ms + dms, x};
    }
    return true;
  }

 private:
  std::string_view s_;
  size_t pos_ = 0;
  std::string error_;
};

}  // namespace

// ---- Serialize ----

void StreamObject::Serialize(std::string* out) const {
  out->push_back(static_cast<char>(kStreamFormatVersion));
  packed::AppendVarint(out, length_);
  PutId(out, last_id_);
  PutId(out, first_id_);
  PutId(out, max_deleted_id_);
  packed::AppendVarint(out, entries_added_);
  // Names stay valid across the walk: they are views into the nodes (values of packed
  // entries are the ones decoded into the iterator's scratch).
  std::vector<std::string_view> prev_names;
  StreamId prev;
  bool first = true;
  for (StreamIterator it = Range(StreamId::Min(), StreamId::Max()); it.Valid(); it.Next()) {
    const StreamEntry& e = it.entry();
    PutIdDelta(out, e.id, prev, first);
    bool same = !first && prev_names.size() == e.fields.size();
    for (size_t i = 0; same && i < e.fields.size(); i++) same = prev_names[i] == e.fields[i].first;
    packed::AppendVarint(out, (uint64_t{e.fields.size()} << 1) | (same ? 1 : 0));
    if (!same) {
      prev_names.clear();
      for (const auto& [f, v] : e.fields) {
        PutString(out, f);
        prev_names.push_back(f);
      }
    }
    for (const auto& [f, v] : e.fields) PutString(out, v);
    prev = e.id;
    first = false;
  }
  packed::AppendVarint(out, groups_.size());
  for (const auto& [name, g] : groups_) {
    PutString(out, name);
    PutId(out, g->last_id);
    packed::AppendVarint(out, static_cast<uint64_t>(g->entries_read) + 1);
    packed::AppendVarint(out, g->consumers.size());
    std::unordered_map<const StreamConsumer*, uint64_t> index;
    for (const auto& [cname, c] : g->consumers) {
      index.emplace(c.get(), index.size());
      PutString(out, cname);
      packed::AppendVarint(out, ZigZag(c->seen_ms));
      packed::AppendVarint(out, ZigZag(c->active_ms));
    }
    packed::AppendVarint(out, g->pel.size());
    bool first_pending = true;
    StreamId prev_pending;
    for (const auto& [id, p] : g->pel) {
      PutIdDelta(out, id, prev_pending, first_pending);
      packed::AppendVarint(out, ZigZag(p.delivery_ms));
      packed::AppendVarint(out, p.delivery_count);
      packed::AppendVarint(out, index.at(p.consumer));
      prev_pending = id;
      first_pending = false;
    }
  }
}

// ---- Parse ----

std::unique_ptr<StreamObject> StreamObject::Parse(std::string_view serialized, std::string* error) {
  Input in(serialized);
  StreamBuilder b;
  uint8_t version = 0;
  uint64_t length = 0, entries_added = 0;
  StreamId last_id, first_id, max_deleted;
  if (in.U8(&version) && version != kStreamFormatVersion) in.Fail("unknown format version");
  // An entry takes at least 4 bytes (ID delta, header, one name, one value).
  in.Count(&length, 4);
  in.Id(&last_id);
  in.Id(&first_id);
  in.Id(&max_deleted);
  in.Varint(&entries_added);
  std::vector<std::string_view> names, field_values;
  StreamId prev;
  for (uint64_t i = 0; in.ok() && b.ok() && i < length; i++) {
    StreamId id;
    uint64_t header = 0;
    if (!in.IdDelta(&id, prev, i == 0) || !in.Varint(&header)) break;
    uint64_t n = header >> 1;
    bool same = header & 1;
    if (n == 0) {
      in.Fail("entry without fields");
      break;
    }
    if (same ? (i == 0 || n != names.size()) : n > in.remaining() / 2) {
      in.Fail("bad field count");
      break;
    }
    if (!same) {
      names.resize(static_cast<size_t>(n));
      for (auto& name : names) in.String(&name);
    }
    field_values.clear();
    for (std::string_view name : names) {
      std::string_view value;
      if (!in.String(&value)) break;
      field_values.push_back(name);
      field_values.push_back(value);
    }
    if (!in.ok()) break;
    b.AppendRaw(id, field_values);
    prev = id;
  }
  b.SetMetadata(last_id, entries_added, max_deleted);
  uint64_t groups = 0;
  if (in.ok()) in.Count(&groups, 5);
  for (uint64_t gi = 0; in.ok() && b.ok() && gi < groups; gi++) {
    std::string_view name;
    StreamId group_last;
    uint64_t read_plus_one = 0, consumers = 0, pending = 0;
    if (!in.String(&name) || !in.Id(&group_last) || !in.Varint(&read_plus_one)) break;
    if (read_plus_one > uint64_t{INT64_MAX} + 1) {
      in.Fail("bad entries-read");
      break;
    }
    b.AddGroup(name, group_last, static_cast<int64_t>(read_plus_one - 1));
    if (!in.Count(&consumers, 3)) break;
    for (uint64_t ci = 0; in.ok() && b.ok() && ci < consumers; ci++) {
      std::string_view cname;
      int64_t seen = 0, active = 0;
      if (!in.String(&cname) || !in.Signed(&seen) || !in.Signed(&active)) break;
      b.AddConsumer(cname, seen, active);
    }
    if (!in.ok() || !in.Count(&pending, 5)) break;
    StreamId prev_pending;
    for (uint64_t pi = 0; in.ok() && b.ok() && pi < pending; pi++) {
      StreamId id;
      int64_t delivery_ms = 0;
      uint64_t delivery_count = 0, owner = 0;
      if (!in.IdDelta(&id, prev_pending, pi == 0) || !in.Signed(&delivery_ms) ||
          !in.Varint(&delivery_count) || !in.Varint(&owner)) {
        break;
      }
      b.AddPendingOwned(id, delivery_ms, delivery_count, owner);
      prev_pending = id;
    }
  }
  if (in.ok() && b.ok() && !in.done()) in.Fail("trailing bytes");
  if (!in.ok()) {
    *error = in.error();
    return nullptr;
  }
  std::unique_ptr<StreamObject> s = b.Finish(error);
  if (s == nullptr) return nullptr;
  if (s->first_id_ != first_id) {
    *error = "corrupt stream: recorded first ID " + first_id.ToString() +
             " is not the first entry's " + s->first_id_.ToString();
    return nullptr;
  }
  return s;
}

// ---- StreamBuilder ----

StreamBuilder::StreamBuilder() : s_(std::make_unique<StreamObject>()) {}
StreamBuilder::~StreamBuilder() = default;

void StreamBuilder::Fail(std::string message) {
  if (error_.empty()) error_ = "corrupt stream: " + std::move(message);
}

void StreamBuilder::AppendRaw(StreamId id, std::span<const std::string_view> field_values) {
  if (!ok()) return;
  if (group_ != nullptr) return Fail("entry after the consumer groups");
  if (field_values.size() < 2 || field_values.size() % 2 != 0) {
    return Fail("entry " + id.ToString() + " has no field/value pairs");
  }
  if (have_entry_ && id <= last_entry_) return Fail("entry IDs out of order at " + id.ToString());
  uint64_t total = 0;
  for (std::string_view s : field_values) total += s.size();
  if (total > kStreamEntryBytesMax) return Fail("entry " + id.ToString() + " is too large");
  s_->AppendEntry(id, field_values);
  s_->length_++;
  s_->last_entry_id_ = id;
  if (s_->length_ == 1) s_->first_id_ = id;
  have_entry_ = true;
  last_entry_ = id;
}

void StreamBuilder::SetMetadata(StreamId last_id, uint64_t entries_added, StreamId max_deleted_id) {
  if (!ok()) return;
  metadata_set_ = true;
  s_->last_id_ = last_id;
  s_->entries_added_ = entries_added;
  s_->max_deleted_id_ = max_deleted_id;
}

void StreamBuilder::CloseGroup() {
  if (group_ != nullptr && unowned_ != 0) {
    Fail("consumer group '" + group_->name + "' has pending entries without a consumer");
  }
}

void StreamBuilder::AddGroup(std::string_view name, StreamId last_id, int64_t entries_read) {
  CloseGroup();
  if (!ok()) return;
  if (entries_read < -1) return Fail("bad entries-read of group '" + std::string(name) + "'");
  StreamGroup* g = s_->CreateGroup(name, last_id, entries_read);
  if (g == nullptr) return Fail("duplicate consumer group '" + std::string(name) + "'");
  group_ = g;
  consumer_ = nullptr;
  consumers_.clear();
  have_pending_ = false;
  unowned_ = 0;
}

void StreamBuilder::AddPending(StreamId id, int64_t delivery_ms, uint64_t delivery_count) {
  if (!ok()) return;
  if (group_ == nullptr) return Fail("pending entry outside a group");
  if (have_pending_ && id <= last_pending_) {
    return Fail("pending entries out of order at " + id.ToString());
  }
  group_->pel.emplace_hint(group_->pel.end(), id,
                           StreamPending{delivery_ms, delivery_count, nullptr});
  have_pending_ = true;
  last_pending_ = id;
  unowned_++;
}

void StreamBuilder::AddConsumer(std::string_view name, int64_t seen_ms, int64_t active_ms) {
  if (!ok()) return;
  if (group_ == nullptr) return Fail("consumer outside a group");
  StreamConsumer* c = s_->CreateConsumer(group_, name, seen_ms);
  if (c == nullptr) return Fail("duplicate consumer '" + std::string(name) + "'");
  c->active_ms = active_ms;
  consumer_ = c;
  consumers_.push_back(c);
}

void StreamBuilder::Own(StreamConsumer* c, StreamId id) {
  auto it = group_->pel.find(id);
  if (it == group_->pel.end()) {
    return Fail("consumer's pending entry " + id.ToString() + " is not in its group's PEL");
  }
  if (it->second.consumer != nullptr)
    return Fail("pending entry " + id.ToString() + " owned twice");
  it->second.consumer = c;
  c->pending.insert(id);
  unowned_--;
}

void StreamBuilder::AddConsumerPending(StreamId id) {
  if (!ok()) return;
  if (consumer_ == nullptr) return Fail("consumer pending entry outside a consumer");
  Own(consumer_, id);
}

void StreamBuilder::AddPendingOwned(StreamId id, int64_t delivery_ms, uint64_t delivery_count,
                                    uint64_t consumer_index) {
  if (!ok()) return;
  if (consumer_index >= consumers_.size()) return Fail("pending entry of an unknown consumer");
  AddPending(id, delivery_ms, delivery_count);
  if (!ok()) return;
  Own(consumers_[static_cast<size_t>(consumer_index)], id);
}

std::unique_ptr<StreamObject> StreamBuilder::Finish(std::string* error) {
  CloseGroup();
  if (ok()) {
    if (!metadata_set_) {
      s_->last_id_ = s_->last_entry_id_;
      s_->entries_added_ = s_->length_;
    } else if (s_->last_id_ < s_->last_entry_id_) {
      Fail("last ID " + s_->last_id_.ToString() + " is below the last entry");
    } else if (s_->entries_added_ < s_->length_) {
      Fail("entries-added is below the length");
    }
  }
  if (!ok()) {
    *error = error_;
    return nullptr;
  }
  if (!s_->nodes_.empty()) s_->ShrinkNode(std::prev(s_->nodes_.end()));
  return std::move(s_);
}

}  // namespace strata
