// ReportModel: the aggregation behind `strata-mem report`, with no I/O, so it is tested
// without a server. Each visited key adds (name, type, MEMORY USAGE bytes) to:
//   - its prefix group (KeyPrefix below),
//   - its type (string/hash/list/set/zset/stream/other),
//   - a power-of-two size histogram,
//   - the top-N biggest keys.
//
// Prefix grouping: a key is split at every separator character (any byte of
// `separators`). A key without separators is grouped under "(no prefix)". Otherwise the
// first min(depth, separators in key) segments are kept, each followed by its separator,
// and "*" is appended: at depth 2, "user:1234:name" -> "user:1234:*", "user:1234" ->
// "user:*" (only one segment before the last separator). With collapse_numbers, a segment
// of decimal digits only becomes "#": "user:1234:name" -> "user:#:*". The number of
// distinct groups is capped at max_groups; keys whose group would go over the cap count
// under "(other groups)".
//
// Histogram bucket i holds sizes in [2^i, 2^(i+1)), bucket 0 also holds size 0.
// Top keys: ties in size are broken by key name, so the output is deterministic.
// Thread-safety: a value type.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace strata::mem {

inline constexpr std::string_view kNoPrefixGroup = "(no prefix)";
inline constexpr std::string_view kOtherGroups = "(other groups)";

struct GroupingOptions {
  std::string separators = ":";
  int depth = 2;
  bool collapse_numbers = true;
  size_t max_groups = 100000;
};

std::string KeyPrefix(std::string_view key, const GroupingOptions& options);

enum class KeyType { kString, kHash, kList, kSet, kZset, kStream, kOther };
inline constexpr int kKeyTypeCount = 7;
const char* KeyTypeName(KeyType type);
// A TYPE reply ("string", "zset", "ReJSON-RL", ...) as a KeyType; "none" is nullopt
// (the key is gone).
std::optional<KeyType> ParseKeyType(std::string_view type_reply);

struct Tally {
  uint64_t keys = 0;
  uint64_t bytes = 0;
};

class SizeHistogram {
 public:
  static constexpr int kBuckets = 64;
  static int BucketOf(uint64_t bytes);
  static uint64_t BucketLow(int bucket);   // inclusive
  static uint64_t BucketHigh(int bucket);  // inclusive

  void Add(uint64_t bytes);
  const Tally& bucket(int i) const { return buckets_[static_cast<size_t>(i)]; }
  // First and last non-empty bucket; {0, -1} when empty.
  std::pair<int, int> Range() const;

 private:
  std::array<Tally, kBuckets> buckets_{};
};

struct KeyEntry {
  std::string key;
  KeyType type = KeyType::kOther;
  uint64_t bytes = 0;
};

class TopKeys {
 public:
  explicit TopKeys(size_t n) : n_(n) {}
  void Add(std::string_view key, KeyType type, uint64_t bytes);
  // Biggest first.
  std::vector<KeyEntry> Sorted() const;

 private:
  size_t n_;
  std::vector<KeyEntry> heap_;  // min-heap by (bytes, key) of at most n_ entries
};

struct GroupRow {
  std::string prefix;
  Tally tally;
};

class ReportModel {
 public:
  ReportModel(GroupingOptions grouping, size_t top_n);

  void Add(std::string_view key, KeyType type, uint64_t bytes);
  void AddVanished() { vanished_++; }
  void AddDuplicate() { duplicates_++; }

  uint64_t keys() const { return total_.keys; }
  uint64_t bytes() const { return total_.bytes; }
  uint64_t vanished() const { return vanished_; }
  uint64_t duplicates() const { return duplicates_; }
  const Tally& type_tally(KeyType type) const { return types_[static_cast<size_t>(type)]; }
  const SizeHistogram& histogram() const { return histogram_; }
  // Groups by bytes, biggest first (ties by name).
  std::vector<GroupRow> Groups() const;
  std::vector<KeyEntry> Top() const { return top_.Sorted(); }
  const GroupingOptions& grouping() const { return grouping_; }

 private:
  GroupingOptions grouping_;
  Tally total_;
  uint64_t vanished_ = 0;
  uint64_t duplicates_ = 0;
  std::unordered_map<std::string, Tally> groups_;
  Tally other_groups_;
  std::array<Tally, kKeyTypeCount> types_{};
  SizeHistogram histogram_;
  TopKeys top_;
};

}  // namespace strata::mem
