#include "core/stream_node.h"

#include <cstring>

#include "core/ascii7.h"
#include "core/packed_list.h"

namespace strata {

bool StreamId::Increment() {
  if (seq != UINT64_MAX) {
    seq++;
    return true;
  }
  if (ms == UINT64_MAX) return false;
  ms++;
  seq = 0;
  return true;
}

bool StreamId::Decrement() {
  if (seq != 0) {
    seq--;
    return true;
  }
  if (ms == 0) return false;
  ms--;
  seq = UINT64_MAX;
  return true;
}

void StreamId::AppendTo(std::string* out) const {
  out->append(std::to_string(ms));
  out->push_back('-');
  out->append(std::to_string(seq));
}

std::string StreamId::ToString() const {
  std::string s;
  AppendTo(&s);
  return s;
}

namespace {

bool ParseU64(std::string_view s, uint64_t* v) {
  if (s.empty() || s.size() > 20) return false;
  uint64_t r = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (r > (UINT64_MAX - d) / 10) return false;
    r = r * 10 + d;
  }
  *v = r;
  return true;
}

}  // namespace

bool ParseStreamId(std::string_view text, uint64_t missing_seq, bool strict, StreamId* id,
                   bool* seq_given) {
  if (text.size() > 127) return false;
  if (seq_given != nullptr) *seq_given = true;
  if (text == "-" || text == "+") {
    if (strict) return false;
    *id = text == "-" ? StreamId::Min() : StreamId::Max();
    return true;
  }
  size_t dash = text.find('-');
  StreamId r;
  if (!ParseU64(text.substr(0, dash), &r.ms)) return false;
  if (dash == std::string_view::npos) {
    r.seq = missing_seq;
  } else {
    std::string_view seq = text.substr(dash + 1);
    if (seq_given != nullptr && seq == "*") {
      r.seq = 0;
      *seq_given = false;
    } else if (!ParseU64(seq, &r.seq)) {
      return false;
    }
  }
  *id = r;
  return true;
}

namespace stream_node {

namespace {

// Nodes are written by this file only, so reads need no bounds checks.
inline uint64_t ReadVarint(const char* p, uint32_t* off) {
  uint64_t r = 0;
  int shift = 0;
  while (true) {
    uint8_t b = static_cast<uint8_t>(p[(*off)++]);
    r |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (b < 0x80) return r;
    shift += 7;
  }
}

}  // namespace

void ParseMaster(const char* node, Master* m) {
  Header h;
  std::memcpy(&h, node, sizeof(h));
  uint32_t n = h.master_fields;
  m->names.resize(n);
  m->lengths.resize(n);
  uint32_t off = sizeof(Header);
  for (uint32_t i = 0; i < n; i++) {
    uint32_t len = static_cast<uint32_t>(ReadVarint(node, &off));
    m->names[i] = std::string_view(node + off, len);
    off += len;
  }
  for (uint32_t i = 0; i < n; i++) m->lengths[i] = static_cast<uint32_t>(ReadVarint(node, &off));
}

void ReadEntry(const char* node, const Master& m, uint32_t off, StreamId prev, bool first,
               EntryHead* e) {
  uint8_t flags = static_cast<uint8_t>(node[off++]);
  e->flags = flags;
  if (flags & kNewMs) {
    e->id.ms = prev.ms + ReadVarint(node, &off);
    e->id.seq = ReadVarint(node, &off);
  } else {
    uint64_t d = flags >> kInlineDeltaShift;
    if (d == kInlineDeltaMax) d += ReadVarint(node, &off);
    e->id.ms = prev.ms;
    e->id.seq = prev.seq + (first ? 0 : 1) + d;
  }
  e->body_off = off;
  if (flags & kSameFields) {
    e->field_count = static_cast<uint32_t>(m.names.size());
  } else {
    e->field_count = static_cast<uint32_t>(ReadVarint(node, &off));
    e->names_off = off;
    for (uint32_t i = 0; i < e->field_count; i++)
      off += static_cast<uint32_t>(ReadVarint(node, &off));
  }
  uint64_t total = 0;
  if (flags & kSameLengths) {
    e->lengths.assign(m.lengths.begin(), m.lengths.end());
    for (uint32_t len : m.lengths) total += len;
  } else {
    e->lengths.resize(e->field_count);
    for (uint32_t i = 0; i < e->field_count; i++) {
      e->lengths[i] = static_cast<uint32_t>(ReadVarint(node, &off));
      total += e->lengths[i];
    }
  }
  e->values_off = off;
  e->values_len = total;
  uint64_t stored = (flags & kPacked) ? ascii7::PackedSize(total) : total;
  e->next = off + static_cast<uint32_t>(stored);
}

void EntryFields(const char* node, const Master& m, const EntryHead& e,
                 std::vector<std::pair<std::string_view, std::string_view>>* out,
                 std::string* scratch) {
  out->resize(e.field_count);
  const char* values = node + e.values_off;
  if (e.flags & kPacked) {
    scratch->resize(e.values_len);
    ascii7::Unpack(values, e.values_len, scratch->data());
    values = scratch->data();
  }
  uint32_t names = e.names_off;
  for (uint32_t i = 0; i < e.field_count; i++) {
    std::string_view name;
    if (e.flags & kSameFields) {
      name = m.names[i];
    } else {
      uint32_t len = static_cast<uint32_t>(ReadVarint(node, &names));
      name = std::string_view(node + names, len);
      names += len;
    }
    (*out)[i] = {name, std::string_view(values, e.lengths[i])};
    values += e.lengths[i];
  }
}

void EncodeEntry(const Master& m, StreamId prev, bool first, StreamId id,
                 std::span<const std::string_view> field_values, std::string* out,
                 std::string* concat) {
  size_t n = field_values.size() / 2;
  uint8_t flags = 0;
  bool same_fields = n == m.names.size();
  for (size_t i = 0; same_fields && i < n; i++) same_fields = field_values[2 * i] == m.names[i];
  bool same_lengths = same_fields;
  for (size_t i = 0; same_lengths && i < n; i++) {
    same_lengths = field_values[2 * i + 1].size() == m.lengths[i];
  }
  if (same_fields) flags |= kSameFields;
  if (same_lengths) flags |= kSameLengths;
  concat->clear();
  for (size_t i = 0; i < n; i++) concat->append(field_values[2 * i + 1]);
  bool packed = ascii7::PackedSize(concat->size()) < concat->size() && ascii7::IsAscii(*concat);
  if (packed) flags |= kPacked;
  size_t at = out->size();
  out->push_back(0);
  EncodeId(prev, first, id, &flags, out);
  (*out)[at] = static_cast<char>(flags);
  if (!same_fields) {
    packed::AppendVarint(out, n);
    for (size_t i = 0; i < n; i++) {
      packed::AppendVarint(out, field_values[2 * i].size());
      out->append(field_values[2 * i]);
    }
  }
  if (!same_lengths) {
    for (size_t i = 0; i < n; i++) packed::AppendVarint(out, field_values[2 * i + 1].size());
  }
  if (packed) {
    size_t at = out->size();
    out->resize(at + ascii7::PackedSize(concat->size()));
    ascii7::Pack(*concat, out->data() + at);
  } else {
    out->append(*concat);
  }
}

void EncodeId(StreamId prev, bool first, StreamId id, uint8_t* flags, std::string* out) {
  if (id.ms != prev.ms) {
    *flags |= kNewMs;
    packed::AppendVarint(out, id.ms - prev.ms);
    packed::AppendVarint(out, id.seq);
    return;
  }
  uint64_t delta = id.seq - prev.seq - (first ? 0 : 1);
  uint64_t inline_delta = delta < kInlineDeltaMax ? delta : kInlineDeltaMax;
  *flags |= static_cast<uint8_t>(inline_delta << kInlineDeltaShift);
  if (delta >= kInlineDeltaMax) packed::AppendVarint(out, delta - kInlineDeltaMax);
}

void EncodeHeaderAndMaster(std::span<const std::string_view> field_values, std::string* out) {
  size_t n = field_values.size() / 2;
  size_t names = 0;
  for (size_t i = 0; i < n; i++) names += field_values[2 * i].size();
  if (n > kMasterFieldsMax || names > kMasterNamesMax) n = 0;
  size_t at = out->size();
  out->resize(at + sizeof(Header));
  for (size_t i = 0; i < n; i++) {
    packed::AppendVarint(out, field_values[2 * i].size());
    out->append(field_values[2 * i]);
  }
  for (size_t i = 0; i < n; i++) packed::AppendVarint(out, field_values[2 * i + 1].size());
  Header h{};
  h.used = static_cast<uint32_t>(out->size() - at);
  h.entries_off = static_cast<uint16_t>(h.used);
  h.master_fields = static_cast<uint16_t>(n);
  std::memcpy(out->data() + at, &h, sizeof(h));
}

}  // namespace stream_node
}  // namespace strata
