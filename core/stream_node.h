// Stream IDs and the packed nodes that hold a stream's entries (the codec under
// StreamObject, stream_type.h, which owns the nodes and says what they cost).
//
// A node is one malloc block holding up to stream-node-max-entries entries in at most
// stream-node-max-bytes bytes (the first entry of a node always fits). The stream keeps
// its nodes in an ordered map keyed by each node's base ID, which is the ID of the first
// entry the node was created with: no entry of the node is below it and every entry of
// the previous node is below it.
//
// Layout, byte by byte (offsets from the start of the block):
//   0   u64  last_ms     } ID of the last entry written to the node (live or deleted):
//   8   u64  last_seq    } the next entry's ID is encoded against it
//   16  u32  used        bytes in use, header included (entries end there)
//   20  u16  live        entries not deleted
//   22  u16  dead        entries flagged deleted (tombstones)
//   24  u16  entries_off offset of the first entry (the end of the master section)
//   26  u16  master_fields
//   28  u32  (padding)
//   32  master section: master_fields x (varint length, field name bytes), then
//       master_fields x varint value length (the lengths of the first entry's values).
//       The field names of the node's first entry, so that later entries with the same
//       names store none; left empty when those names total more than kMasterNamesMax
//       bytes or there are more than kMasterFieldsMax of them.
//   entries_off: entries, back to back, each:
//       u8  flags   bit 0 deleted (a tombstone: XDEL and exact trimming flag in place)
//                   bit 1 same fields: names and count are the master's, not stored
//                   bit 2 same lengths: value lengths are the master's, not stored
//                         (only with same fields)
//                   bit 3 new ms: the ID's ms differs from the previous entry's
//                   bit 4 packed: the values are 7-bit text, stored ascii7-packed as one
//                         run (core/ascii7.h), 16 characters in 14 bytes
//                   bits 5-7 without new ms: the sequence delta d (0-6) inline; 7 means
//                         "d - 7 follows as a varint"
//       ID     against the previous entry's ID p (for the node's first entry, against the
//              base ID b, with no implicit step): without new ms, seq = p.seq + 1 + d
//              (first: b.seq + d), ms unchanged; with new ms, varint ms delta (>= 1)
//              then varint seq.
//       names  without same fields: varint count (>= 1), count x (varint length, bytes)
//       lengths without same lengths: count x varint value length
//       values the values' bytes back to back (their total length, or its ascii7 size)
//   The common entry (same names and lengths as the first, an ID one above the previous,
//   7-bit values) costs one byte plus its packed values.
// A node whose tombstones outnumber its live entries is rewritten without them
// (Compact), and a node whose last live entry is deleted is freed by its owner.
//
// Thread-safety: pure functions over buffers their caller owns (a stream's nodes belong
// to the thread of the shard holding the stream).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace strata {

// A stream entry ID: milliseconds and a sequence number, ordered as a pair.
struct StreamId {
  uint64_t ms = 0;
  uint64_t seq = 0;

  static constexpr StreamId Min() { return {0, 0}; }
  static constexpr StreamId Max() { return {UINT64_MAX, UINT64_MAX}; }
  bool IsZero() const { return ms == 0 && seq == 0; }
  friend auto operator<=>(const StreamId&, const StreamId&) = default;
  // The next ID (seq + 1, carrying into ms). False, and the ID unchanged, at Max().
  bool Increment();
  // The previous ID. False, and the ID unchanged, at Min().
  bool Decrement();
  // "<ms>-<seq>".
  std::string ToString() const;
  void AppendTo(std::string* out) const;
};

// Parses an ID as stream commands take it: "<ms>-<seq>", or "<ms>" (seq = missing_seq);
// "-" and "+" (Min and Max) unless strict; and "<ms>-*" only when seq_given is not null,
// which receives false for that form and true for the others. Numbers are decimal digits
// up to UINT64_MAX; anything else (or text over 127 bytes) is refused, as Redis refuses it
// with "Invalid stream ID specified as stream command argument".
bool ParseStreamId(std::string_view text, uint64_t missing_seq, bool strict, StreamId* id,
                   bool* seq_given = nullptr);

namespace stream_node {

struct Header {
  uint64_t last_ms;
  uint64_t last_seq;
  uint32_t used;
  uint16_t live;
  uint16_t dead;
  uint16_t entries_off;
  uint16_t master_fields;
  uint32_t padding;
};
static_assert(sizeof(Header) == 32);

inline Header* HeaderOf(char* node) { return reinterpret_cast<Header*>(node); }
inline const Header* HeaderOf(const char* node) { return reinterpret_cast<const Header*>(node); }

enum Flag : uint8_t {
  kDeleted = 1,
  kSameFields = 2,
  kSameLengths = 4,
  kNewMs = 8,
  kPacked = 16,
};
constexpr int kInlineDeltaShift = 5;
constexpr uint8_t kInlineDeltaMax = 7;  // the "varint follows" marker

constexpr size_t kMasterNamesMax = 1024;  // bytes of field names a master keeps at most
constexpr size_t kMasterFieldsMax = 255;
// Entries one node holds at most whatever the configuration (the counts are 16-bit).
constexpr size_t kEntriesMax = 65535;

// A node's master section, parsed (views into the node: valid until it is reallocated).
struct Master {
  std::vector<std::string_view> names;
  std::vector<uint32_t> lengths;
};
void ParseMaster(const char* node, Master* m);

// One decoded entry header (positions are offsets into the node).
struct EntryHead {
  uint8_t flags = 0;
  StreamId id;
  uint32_t body_off = 0;  // the first byte after the ID: the rest does not depend on it
  uint32_t field_count = 0;
  uint32_t names_off = 0;  // explicit names (count already read), when !(flags & kSameFields)
  std::vector<uint32_t> lengths;
  uint32_t values_off = 0;
  uint64_t values_len = 0;  // unpacked total
  uint32_t next = 0;        // offset of the following entry
};

// Decodes the header of the entry at `off`. prev is the previous entry's ID, or the base
// ID when first is set.
void ReadEntry(const char* node, const Master& m, uint32_t off, StreamId prev, bool first,
               EntryHead* e);

// The entry's field/value pairs: views into the node, or (packed values) into *scratch,
// which must not change while they are used.
void EntryFields(const char* node, const Master& m, const EntryHead& e,
                 std::vector<std::pair<std::string_view, std::string_view>>* out,
                 std::string* scratch);

// Appends to *out the encoding of an entry (id, alternating field and value) that
// follows an entry with ID prev (the base ID when first). REQUIRES: id > prev (>= when
// first). *concat is scratch.
void EncodeEntry(const Master& m, StreamId prev, bool first, StreamId id,
                 std::span<const std::string_view> field_values, std::string* out,
                 std::string* concat);

// Appends the ID part of an entry (after its flags byte) and sets the ID bits of *flags.
void EncodeId(StreamId prev, bool first, StreamId id, uint8_t* flags, std::string* out);

// Appends a header and the master section built from an entry's fields.
void EncodeHeaderAndMaster(std::span<const std::string_view> field_values, std::string* out);

}  // namespace stream_node
}  // namespace strata
