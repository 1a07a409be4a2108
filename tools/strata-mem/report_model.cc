#include "tools/strata-mem/report_model.h"

#include <algorithm>
#include <bit>

namespace strata::mem {
namespace {

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// Orders by bytes, then by name (smaller name counts as "bigger" so that, among equal
// sizes, names sort ascending in the output).
bool Smaller(const KeyEntry& a, const KeyEntry& b) {
  if (a.bytes != b.bytes) return a.bytes < b.bytes;
  return a.key > b.key;
}

}  // namespace

std::string KeyPrefix(std::string_view key, const GroupingOptions& options) {
  std::string out;
  int kept = 0;
  size_t start = 0;
  while (kept < options.depth) {
    size_t sep = key.find_first_of(options.separators, start);
    if (sep == std::string_view::npos) break;
    std::string_view segment = key.substr(start, sep - start);
    if (options.collapse_numbers && AllDigits(segment)) {
      out += '#';
    } else {
      out.append(segment);
    }
    out += key[sep];
    kept++;
    start = sep + 1;
  }
  if (kept == 0) return std::string(kNoPrefixGroup);
  out += '*';
  return out;
}

const char* KeyTypeName(KeyType type) {
  switch (type) {
    case KeyType::kString:
      return "string";
    case KeyType::kHash:
      return "hash";
    case KeyType::kList:
      return "list";
    case KeyType::kSet:
      return "set";
    case KeyType::kZset:
      return "zset";
    case KeyType::kStream:
      return "stream";
    case KeyType::kOther:
      return "other";
  }
  return "other";
}

std::optional<KeyType> ParseKeyType(std::string_view reply) {
  if (reply == "none") return std::nullopt;
  for (int i = 0; i < kKeyTypeCount - 1; i++) {
    auto t = static_cast<KeyType>(i);
    if (reply == KeyTypeName(t)) return t;
  }
  return KeyType::kOther;
}

int SizeHistogram::BucketOf(uint64_t bytes) {
  if (bytes == 0) return 0;
  return std::bit_width(bytes) - 1;
}

uint64_t SizeHistogram::BucketLow(int bucket) { return bucket == 0 ? 0 : uint64_t{1} << bucket; }

uint64_t SizeHistogram::BucketHigh(int bucket) {
  return bucket >= 63 ? UINT64_MAX : (uint64_t{1} << (bucket + 1)) - 1;
}

void SizeHistogram::Add(uint64_t bytes) {
  Tally& t = buckets_[static_cast<size_t>(BucketOf(bytes))];
  t.keys++;
  t.bytes += bytes;
}

std::pair<int, int> SizeHistogram::Range() const {
  int lo = -1;
  int hi = -1;
  for (int i = 0; i < kBuckets; i++) {
    if (buckets_[static_cast<size_t>(i)].keys == 0) continue;
    if (lo < 0) lo = i;
    hi = i;
  }
  if (lo < 0) return {0, -1};
  return {lo, hi};
}

void TopKeys::Add(std::string_view key, KeyType type, uint64_t bytes) {
  if (n_ == 0) return;
  auto greater = [](const KeyEntry& a, const KeyEntry& b) { return Smaller(b, a); };
  if (heap_.size() < n_) {
    heap_.push_back({std::string(key), type, bytes});
    std::push_heap(heap_.begin(), heap_.end(), greater);
    return;
  }
  const KeyEntry& smallest = heap_.front();
  if (bytes < smallest.bytes || (bytes == smallest.bytes && key >= smallest.key)) return;
  std::pop_heap(heap_.begin(), heap_.end(), greater);
  heap_.back() = {std::string(key), type, bytes};
  std::push_heap(heap_.begin(), heap_.end(), greater);
}

std::vector<KeyEntry> TopKeys::Sorted() const {
  std::vector<KeyEntry> out = heap_;
  std::sort(out.begin(), out.end(),
            [](const KeyEntry& a, const KeyEntry& b) { return Smaller(b, a); });
  return out;
}

ReportModel::ReportModel(GroupingOptions grouping, size_t top_n)
    : grouping_(std::move(grouping)), top_(top_n) {}

void ReportModel::Add(std::string_view key, KeyType type, uint64_t bytes) {
  total_.keys++;
  total_.bytes += bytes;
  Tally& t = types_[static_cast<size_t>(type)];
  t.keys++;
  t.bytes += bytes;
  std::string prefix = KeyPrefix(key, grouping_);
  auto it = groups_.find(prefix);
  Tally* group;
  if (it != groups_.end()) {
    group = &it->second;
  } else if (groups_.size() < grouping_.max_groups) {
    group = &groups_[std::move(prefix)];
  } else {
    group = &other_groups_;
  }
  group->keys++;
  group->bytes += bytes;
  histogram_.Add(bytes);
  top_.Add(key, type, bytes);
}

std::vector<GroupRow> ReportModel::Groups() const {
  std::vector<GroupRow> rows;
  rows.reserve(groups_.size() + 1);
  for (const auto& [prefix, tally] : groups_) rows.push_back({prefix, tally});
  if (other_groups_.keys > 0) rows.push_back({std::string(kOtherGroups), other_groups_});
  std::sort(rows.begin(), rows.end(), [](const GroupRow& a, const GroupRow& b) {
    if (a.tally.bytes != b.tally.bytes) return a.tally.bytes > b.tally.bytes;
    return a.prefix < b.prefix;
  });
  return rows;
}

}  // namespace strata::mem
