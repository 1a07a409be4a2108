// JSON rendering of `strata-mem report` (see report_render.h). One object:
//   {"server", "software", "db", "match", "grouping": {...}, "totals": {...},
//    "types": [...], "prefixes": [...], "histogram": [...], "top_keys": [...]}
#include <string>

#include "tools/strata-mem/escape.h"
#include "tools/strata-mem/report_render.h"

namespace strata::mem {
namespace {

std::string TallyFields(const Tally& t, uint64_t total) {
  return "\"keys\": " + std::to_string(t.keys) + ", \"bytes\": " + std::to_string(t.bytes) +
         ", \"share\": " + FormatFixed(SharePercent(t.bytes, total) / 100.0, 6);
}

}  // namespace

std::string RenderReportJson(const ReportMeta& meta, const ReportModel& model) {
  uint64_t total = model.bytes();
  const GroupingOptions& g = model.grouping();
  std::string out = "{\n";
  out += "  \"server\": " + JsonString(meta.server) + ",\n";
  out += "  \"software\": " + JsonString(meta.software) + ",\n";
  out += "  \"db\": " + std::to_string(meta.db) + ",\n";
  out +=
      "  \"match\": " + (meta.match.empty() ? std::string("null") : JsonString(meta.match)) + ",\n";
  out += "  \"generated_at\": " + JsonString(meta.generated_at) + ",\n";
  out += "  \"grouping\": {\"separators\": " + JsonString(g.separators) +
         ", \"depth\": " + std::to_string(g.depth) +
         ", \"collapse_numbers\": " + (g.collapse_numbers ? "true" : "false") +
         ", \"max_groups\": " + std::to_string(g.max_groups) + "},\n";
  double rate = meta.elapsed_s > 0 ? static_cast<double>(model.keys()) / meta.elapsed_s : 0;
  out += "  \"totals\": {\"keys\": " + std::to_string(model.keys()) +
         ", \"bytes\": " + std::to_string(total) +
         ", \"vanished\": " + std::to_string(model.vanished()) +
         ", \"duplicates\": " + std::to_string(model.duplicates()) + ", \"used_memory\": " +
         (meta.used_memory ? std::to_string(*meta.used_memory) : std::string("null")) +
         ", \"elapsed_s\": " + FormatFixed(meta.elapsed_s, 3) +
         ", \"keys_per_sec\": " + FormatFixed(rate, 1) +
         ", \"max_keys_per_sec\": " + std::to_string(meta.max_keys_per_sec) + "},\n";

  out += "  \"types\": [";
  bool first = true;
  for (int i = 0; i < kKeyTypeCount; i++) {
    const Tally& t = model.type_tally(static_cast<KeyType>(i));
    if (t.keys == 0) continue;
    out += first ? "\n" : ",\n";
    out += "    {\"type\": " + JsonString(KeyTypeName(static_cast<KeyType>(i))) + ", " +
           TallyFields(t, total) + "}";
    first = false;
  }
  out += first ? "],\n" : "\n  ],\n";

  out += "  \"prefixes\": [";
  first = true;
  for (const GroupRow& row : model.Groups()) {
    out += first ? "\n" : ",\n";
    out +=
        "    {\"prefix\": " + JsonString(row.prefix) + ", " + TallyFields(row.tally, total) + "}";
    first = false;
  }
  out += first ? "],\n" : "\n  ],\n";

  out += "  \"histogram\": [";
  first = true;
  auto [lo, hi] = model.histogram().Range();
  for (int b = lo; b <= hi; b++) {
    const Tally& t = model.histogram().bucket(b);
    out += first ? "\n" : ",\n";
    out += "    {\"min\": " + std::to_string(SizeHistogram::BucketLow(b)) +
           ", \"max\": " + std::to_string(SizeHistogram::BucketHigh(b)) + ", " +
           TallyFields(t, total) + "}";
    first = false;
  }
  out += first ? "],\n" : "\n  ],\n";

  out += "  \"top_keys\": [";
  first = true;
  for (const KeyEntry& e : model.Top()) {
    out += first ? "\n" : ",\n";
    out += "    {\"key\": " + JsonString(e.key) + ", \"type\": " + JsonString(KeyTypeName(e.type)) +
           ", \"bytes\": " + std::to_string(e.bytes) + "}";
    first = false;
  }
  out += first ? "]\n" : "\n  ]\n";
  out += "}\n";
  return out;
}

}  // namespace strata::mem
