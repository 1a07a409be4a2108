#include "storage/rdb_stream.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <unordered_set>

#include "core/stream_type.h"
#include "storage/rdb_containers.h"
#include "storage/rdb_format.h"
#include "storage/rdb_input_checks.h"

namespace strata::rdb {

namespace {

strata::StreamId ToCore(const StreamId& id) { return strata::StreamId{id.ms, id.seq}; }

bool ReadStreamId16(RdbInput* in, StreamId* id, const char* what) {
  std::string_view raw;
  if (!in->ReadBytes(16, &raw, what)) return false;
  const auto* p = reinterpret_cast<const unsigned char*>(raw.data());
  id->ms = 0;
  id->seq = 0;
  for (int i = 0; i < 8; i++) id->ms = id->ms << 8 | p[i];
  for (int i = 8; i < 16; i++) id->seq = id->seq << 8 | p[i];
  return true;
}

bool ReadIdPair(RdbInput* in, StreamId* id, const char* what) {
  return in->ReadLength(&id->ms, what) && in->ReadLength(&id->seq, what);
}

// One node of a stream: its master ID and listpack (docs/FORMAT.md "RDB", streams).
bool DecodeStreamNode(RdbInput* in, RdbStream* s, std::string* blob) {
  uint64_t at = in->offset();
  std::string key;
  if (!in->ReadString(&key, "a stream node's master ID")) return false;
  if (key.size() != 16) return in->Fail(at, "a stream node's master ID is not 16 bytes");
  StreamId master;
  RdbInput kin(key, at);
  ReadStreamId16(&kin, &master, "a stream node's master ID");
  std::vector<PackedItem> items;
  at = in->offset();
  if (!ReadBlob(in, blob, DecodeListpack, &items, "a stream node's listpack")) return false;
  auto bad = [&](const char* what) {
    return in->Fail(at, std::string("stream listpack: ") + what);
  };
  size_t i = 0;
  auto next_int = [&](int64_t* v) {
    if (i >= items.size() || !items[i].is_int) return false;
    *v = items[i++].num;
    return true;
  };
  char buf[24];
  auto next_str = [&](std::string* v) {
    if (i >= items.size()) return false;
    v->assign(items[i++].Text(buf));
    return true;
  };
  if (items.empty()) return bad("empty node");
  int64_t count, deleted, nfields;
  if (!next_int(&count) || !next_int(&deleted) || !next_int(&nfields) || count < 0 || deleted < 0 ||
      nfields < 0 || static_cast<uint64_t>(nfields) > items.size()) {
    return bad("malformed master entry");
  }
  std::vector<std::string> master_fields(static_cast<size_t>(nfields));
  for (auto& f : master_fields) {
    if (!next_str(&f)) return bad("master entry runs past the end");
  }
  int64_t zero;
  if (!next_int(&zero) || zero != 0) return bad("master entry has no terminator");
  int64_t seen_valid = 0, seen_deleted = 0;
  while (i < items.size()) {
    int64_t flags, msdiff, seqdiff;
    if (!next_int(&flags) || !next_int(&msdiff) || !next_int(&seqdiff)) {
      return bad("malformed entry header");
    }
    RdbStream::Entry e;
    e.id.ms = master.ms + static_cast<uint64_t>(msdiff);
    e.id.seq = master.seq + static_cast<uint64_t>(seqdiff);
    int64_t lp_count;
    if (flags & 2) {  // same fields as the master entry
      for (const std::string& f : master_fields) {
        std::string v;
        if (!next_str(&v)) return bad("entry runs past the end");
        e.fields.emplace_back(f, std::move(v));
      }
      lp_count = 3 + nfields;
    } else {
      int64_t n;
      if (!next_int(&n) || n < 0 || static_cast<uint64_t>(n) > items.size()) {
        return bad("malformed field count");
      }
      for (int64_t k = 0; k < n; k++) {
        std::string f, v;
        if (!next_str(&f) || !next_str(&v)) return bad("entry runs past the end");
        e.fields.emplace_back(std::move(f), std::move(v));
      }
      lp_count = 4 + 2 * n;
    }
    int64_t lc;
    if (!next_int(&lc) || lc != lp_count) return bad("entry's element count is wrong");
    if (flags & 1) {
      seen_deleted++;
      continue;
    }
    seen_valid++;
    if (!s->entries.empty() && !(s->entries.back().id < e.id)) return bad("entry IDs out of order");
    s->entries.push_back(std::move(e));
  }
  if (seen_valid != count || seen_deleted != deleted) return bad("entry counts are wrong");
  return true;
}

void AppendStreamId16(std::string* out, strata::StreamId id) {
  for (int i = 7; i >= 0; i--) out->push_back(static_cast<char>(id.ms >> (8 * i)));
  for (int i = 7; i >= 0; i--) out->push_back(static_cast<char>(id.seq >> (8 * i)));
}

}  // namespace

bool StreamCanonicalForm(const RdbStream& s, std::string* out, std::string* error) {
  StreamBuilder b;
  std::vector<std::string_view> fv;
  for (const RdbStream::Entry& e : s.entries) {
    fv.clear();
    for (const auto& [f, v] : e.fields) {
      fv.push_back(f);
      fv.push_back(v);
    }
    b.AppendRaw(ToCore(e.id), fv);
  }
  b.SetMetadata(ToCore(s.last_id), s.entries_added, ToCore(s.max_deleted_id));
  for (const RdbStream::Group& g : s.groups) {
    b.AddGroup(g.name, ToCore(g.last_id), g.entries_read);
    for (const RdbStream::Pending& p : g.pel) {
      b.AddPending(ToCore(p.id), p.delivery_ms, p.delivery_count);
    }
    for (const RdbStream::Consumer& c : g.consumers) {
      b.AddConsumer(c.name, c.seen_ms, c.active_ms);
      for (const StreamId& id : c.pending) b.AddConsumerPending(ToCore(id));
    }
  }
  std::unique_ptr<StreamObject> obj = b.Finish(error);
  if (obj == nullptr) return false;
  out->clear();
  obj->Serialize(out);
  return true;
}

DecodeResult DecodeStream(uint8_t type, RdbInput* in, RdbValue* out) {
  auto s = std::make_unique<RdbStream>();
  uint64_t at = in->offset();
  uint64_t nodes;
  if (!in->ReadLength(&nodes, "a stream's node count") || !CheckCount(in, nodes, at, "stream")) {
    return DecodeResult::kError;
  }
  std::string blob;
  for (uint64_t n = 0; n < nodes; n++) {
    if (!DecodeStreamNode(in, s.get(), &blob)) return DecodeResult::kError;
  }
  at = in->offset();
  if (!in->ReadLength(&s->length, "a stream's length") ||
      !ReadIdPair(in, &s->last_id, "a stream's last ID")) {
    return DecodeResult::kError;
  }
  if (s->length != s->entries.size()) {
    in->Fail(at, "stream length " + std::to_string(s->length) + " differs from its " +
                     std::to_string(s->entries.size()) + " entries");
    return DecodeResult::kError;
  }
  if (type >= kTypeStreamListpacks2) {
    if (!ReadIdPair(in, &s->first_id, "a stream's first ID") ||
        !ReadIdPair(in, &s->max_deleted_id, "a stream's max deleted ID") ||
        !in->ReadLength(&s->entries_added, "a stream's entries added")) {
      return DecodeResult::kError;
    }
  } else {
    s->entries_added = s->length;
    if (!s->entries.empty()) s->first_id = s->entries.front().id;
  }
  if (!s->entries.empty() && s->last_id < s->entries.back().id) {
    in->Fail(at, "stream's last ID is below its last entry");
    return DecodeResult::kError;
  }
  uint64_t ngroups;
  at = in->offset();
  if (!in->ReadLength(&ngroups, "a stream's group count") ||
      !CheckCount(in, ngroups, at, "stream groups")) {
    return DecodeResult::kError;
  }
  std::unordered_set<std::string> group_names;  // duplicates, in linear time
  for (uint64_t g = 0; g < ngroups; g++) {
    RdbStream::Group grp;
    at = in->offset();
    if (!in->ReadString(&grp.name, "a consumer group's name") ||
        !ReadIdPair(in, &grp.last_id, "a consumer group's last ID")) {
      return DecodeResult::kError;
    }
    if (!group_names.insert(grp.name).second) {
      in->Fail(at, "stream has a duplicate consumer group");
      return DecodeResult::kError;
    }
    if (type >= kTypeStreamListpacks2) {
      uint64_t er;
      if (!in->ReadLength(&er, "a consumer group's entries read")) return DecodeResult::kError;
      grp.entries_read = static_cast<int64_t>(er);
    }
    uint64_t npel;
    at = in->offset();
    if (!in->ReadLength(&npel, "a group's pending count") || !CheckCount(in, npel, at, "PEL")) {
      return DecodeResult::kError;
    }
    for (uint64_t k = 0; k < npel; k++) {
      RdbStream::Pending p;
      if (!ReadStreamId16(in, &p.id, "a pending entry's ID") ||
          !ReadMs(in, &p.delivery_ms, "a pending entry's delivery time") ||
          !in->ReadLength(&p.delivery_count, "a pending entry's delivery count")) {
        return DecodeResult::kError;
      }
      if (!grp.pel.empty() && !(grp.pel.back().id < p.id)) {
        in->Fail(at, "group's pending entries are duplicated or out of order");
        return DecodeResult::kError;
      }
      grp.pel.push_back(p);
    }
    uint64_t nconsumers;
    at = in->offset();
    if (!in->ReadLength(&nconsumers, "a group's consumer count") ||
        !CheckCount(in, nconsumers, at, "consumers")) {
      return DecodeResult::kError;
    }
    std::vector<bool> owned(grp.pel.size(), false);
    std::unordered_set<std::string> consumer_names;
    for (uint64_t c = 0; c < nconsumers; c++) {
      RdbStream::Consumer con;
      at = in->offset();
      if (!in->ReadString(&con.name, "a consumer's name") ||
          !ReadMs(in, &con.seen_ms, "a consumer's seen time")) {
        return DecodeResult::kError;
      }
      if (!consumer_names.insert(con.name).second) {
        in->Fail(at, "group has a duplicate consumer");
        return DecodeResult::kError;
      }
      if (type >= kTypeStreamListpacks3 &&
          !ReadMs(in, &con.active_ms, "a consumer's active time")) {
        return DecodeResult::kError;
      }
      uint64_t ncp;
      at = in->offset();
      if (!in->ReadLength(&ncp, "a consumer's pending count") ||
          !CheckCount(in, ncp, at, "consumer PEL")) {
        return DecodeResult::kError;
      }
      for (uint64_t k = 0; k < ncp; k++) {
        StreamId id;
        uint64_t id_at = in->offset();
        if (!ReadStreamId16(in, &id, "a consumer's pending ID")) return DecodeResult::kError;
        auto it = std::lower_bound(
            grp.pel.begin(), grp.pel.end(), id,
            [](const RdbStream::Pending& p, const StreamId& x) { return p.id < x; });
        if (it == grp.pel.end() || !(it->id == id)) {
          in->Fail(id_at, "consumer's pending entry is not in its group's PEL");
          return DecodeResult::kError;
        }
        size_t idx = static_cast<size_t>(it - grp.pel.begin());
        if (owned[idx]) {
          in->Fail(id_at, "pending entry owned twice");
          return DecodeResult::kError;
        }
        owned[idx] = true;
        con.pending.push_back(id);
      }
      grp.consumers.push_back(std::move(con));
    }
    s->groups.push_back(std::move(grp));
  }
  // strata's own form of the stream (core/stream_type.h), which also checks what the
  // framing above cannot (the PEL against the groups' IDs, the metadata's order).
  std::string error;
  if (!StreamCanonicalForm(*s, &out->data, &error)) {
    in->Fail(in->offset(), "stream: " + error);
    return DecodeResult::kError;
  }
  out->kind = RdbKind::kStream;
  out->elements = s->entries.size();
  out->stream = std::move(s);
  return DecodeResult::kOk;
}

// Redis's stream encoding (docs/FORMAT.md "RDB", streams): nodes of up to 100 entries
// and about 4 KB, each a master ID and a listpack whose master entry names the first
// entry's fields; then the metadata, the groups, their PELs and consumers. Type 19
// (Redis 7.0, RDB 10) unless the version allows 21, which adds consumers' active time.
uint8_t EncodeStream(std::string_view data, const EncodeOptions& o, std::string* out) {
  using strata::StreamId;
  std::string error;
  std::unique_ptr<StreamObject> s = StreamObject::Parse(data, &error);
  // A stored value's form is strata's own and parses; should it not, an empty stream.
  if (s == nullptr) s = std::make_unique<StreamObject>();
  uint8_t type = o.version >= 11 ? kTypeStreamListpacks3 : kTypeStreamListpacks2;
  out->push_back(static_cast<char>(type));

  struct OwnedEntry {
    StreamId id;
    std::vector<std::pair<std::string, std::string>> fields;
  };
  constexpr size_t kNodeEntries = 100, kNodeBytes = 4096;
  std::string nodes;
  uint64_t node_count = 0;
  std::vector<OwnedEntry> node;
  auto write_node = [&] {
    if (node.empty()) return;
    const OwnedEntry& first = node.front();
    ListpackBuilder lp;
    lp.AddInt(static_cast<int64_t>(node.size()));  // live entries
    lp.AddInt(0);                                  // deleted entries
    lp.AddInt(static_cast<int64_t>(first.fields.size()));
    for (const auto& fv : first.fields) lp.Add(fv.first);
    lp.AddInt(0);  // the master entry's terminator
    for (const OwnedEntry& e : node) {
      bool same = e.fields.size() == first.fields.size();
      for (size_t i = 0; same && i < e.fields.size(); i++)
        same = e.fields[i].first == first.fields[i].first;
      lp.AddInt(same ? 2 : 0);  // flags: 2 = the master entry's fields
      lp.AddInt(static_cast<int64_t>(e.id.ms - first.id.ms));
      lp.AddInt(static_cast<int64_t>(e.id.seq - first.id.seq));
      if (same) {
        for (const auto& fv : e.fields) lp.Add(fv.second);
      } else {
        lp.AddInt(static_cast<int64_t>(e.fields.size()));
        for (const auto& fv : e.fields) {
          lp.Add(fv.first);
          lp.Add(fv.second);
        }
      }
      lp.AddInt(static_cast<int64_t>(same ? 3 + first.fields.size() : 4 + 2 * e.fields.size()));
    }
    std::string key;
    AppendStreamId16(&key, first.id);
    AppendString(&nodes, key, false);
    AppendString(&nodes, lp.Finish(), o.compression);
    node_count++;
    node.clear();
  };
  size_t node_bytes = 0;
  for (StreamIterator it = s->Range(StreamId::Min(), StreamId::Max()); it.Valid(); it.Next()) {
    const StreamEntry& e = it.entry();
    size_t bytes = 16;
    for (const auto& fv : e.fields) bytes += fv.first.size() + fv.second.size() + 4;
    if (!node.empty() && (node.size() >= kNodeEntries || node_bytes + bytes > kNodeBytes)) {
      write_node();
      node_bytes = 0;
    }
    node_bytes += bytes;
    OwnedEntry owned{e.id, {}};
    for (const auto& fv : e.fields) owned.fields.emplace_back(fv.first, fv.second);
    node.push_back(std::move(owned));
  }
  write_node();
  AppendLength(out, node_count);
  out->append(nodes);
  AppendLength(out, s->Length());
  AppendLength(out, s->last_id().ms);
  AppendLength(out, s->last_id().seq);
  AppendLength(out, s->first_id().ms);
  AppendLength(out, s->first_id().seq);
  AppendLength(out, s->max_deleted_id().ms);
  AppendLength(out, s->max_deleted_id().seq);
  AppendLength(out, s->entries_added());
  AppendLength(out, s->groups().size());
  for (const auto& [gname, g] : s->groups()) {
    AppendString(out, g->name, false);
    AppendLength(out, g->last_id.ms);
    AppendLength(out, g->last_id.seq);
    AppendLength(out, static_cast<uint64_t>(g->entries_read));  // -1 as Redis writes it
    AppendLength(out, g->pel.size());
    for (const auto& [id, p] : g->pel) {
      AppendStreamId16(out, id);
      AppendLE(out, static_cast<uint64_t>(p.delivery_ms), 8);
      AppendLength(out, p.delivery_count);
    }
    AppendLength(out, g->consumers.size());
    for (const auto& [cname, c] : g->consumers) {
      AppendString(out, c->name, false);
      AppendLE(out, static_cast<uint64_t>(c->seen_ms), 8);
      if (type >= kTypeStreamListpacks3) {
        AppendLE(out, static_cast<uint64_t>(c->active_ms), 8);  // -1: never active, as Redis
      }
      AppendLength(out, c->pending.size());
      for (const StreamId& id : c->pending) AppendStreamId16(out, id);
    }
  }
  return type;
}

}  // namespace strata::rdb
