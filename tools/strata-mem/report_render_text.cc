// Text rendering of `strata-mem report` (see report_render.h), plus the shared helpers.
#include <string>

#include "tools/strata-mem/escape.h"
#include "tools/strata-mem/report_render.h"
#include "tools/strata-mem/text_table.h"

namespace strata::mem {

namespace {

constexpr size_t kKeyColumnMax = 60;

std::string Percent(uint64_t part, uint64_t whole) {
  return FormatFixed(SharePercent(part, whole), 1) + "%";
}

}  // namespace

double SharePercent(uint64_t part, uint64_t whole) {
  return whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}

std::string BucketLabel(int bucket) {
  uint64_t lo = SizeHistogram::BucketLow(bucket);
  uint64_t hi = SizeHistogram::BucketHigh(bucket);
  auto fmt = [](uint64_t v) {
    return v < 1024 ? std::to_string(v) + " B" : HumanBytes(static_cast<double>(v));
  };
  if (bucket == 0) return "0 B - 1 B";
  // Above 1 KiB the high end is written as the next power of two, exclusive.
  if (hi >= 1024) return fmt(lo) + " - <" + fmt(hi + 1);
  return fmt(lo) + " - " + fmt(hi);
}

std::string RenderReportText(const ReportMeta& meta, const ReportModel& model) {
  std::string out;
  uint64_t total = model.bytes();
  out += "server:      " + TextEscape(meta.server) + " (" + TextEscape(meta.software) + "), db " +
         std::to_string(meta.db);
  if (!meta.match.empty()) out += ", MATCH " + TextEscape(meta.match);
  out += "\n";
  out += "keys:        " + std::to_string(model.keys()) + " counted, " +
         std::to_string(model.vanished()) + " vanished during the scan, " +
         std::to_string(model.duplicates()) + " returned twice by SCAN (counted once)\n";
  out += "total:       " + std::to_string(total) + " bytes (" + HumanBytes(total) +
         ") by MEMORY USAGE\n";
  if (meta.used_memory) {
    out += "used_memory: " + std::to_string(*meta.used_memory) + " bytes (" +
           HumanBytes(static_cast<double>(*meta.used_memory)) + "), keys account for " +
           Percent(total, *meta.used_memory) + "\n";
  } else {
    out += "used_memory: not reported by the server\n";
  }
  double rate = meta.elapsed_s > 0 ? static_cast<double>(model.keys()) / meta.elapsed_s : 0;
  out += "elapsed:     " + FormatFixed(meta.elapsed_s, 2) + " s (" + FormatFixed(rate, 0) +
         " keys/s; limit " +
         (meta.max_keys_per_sec ? std::to_string(meta.max_keys_per_sec) + " keys/s"
                                : std::string("none")) +
         ")\n";

  const GroupingOptions& g = model.grouping();
  out += "\nBy prefix (separators \"" + TextEscape(g.separators) + "\", depth " +
         std::to_string(g.depth) + (g.collapse_numbers ? ", numbers as #" : "") + ")\n";
  TextTable prefixes;
  prefixes.AddColumn("prefix", TextTable::Align::kLeft);
  prefixes.AddColumn("keys", TextTable::Align::kRight);
  prefixes.AddColumn("bytes", TextTable::Align::kRight);
  prefixes.AddColumn("human", TextTable::Align::kRight);
  prefixes.AddColumn("share", TextTable::Align::kRight);
  prefixes.AddColumn("avg/key", TextTable::Align::kRight);
  std::vector<GroupRow> groups = model.Groups();
  for (size_t i = 0; i < groups.size() && i < meta.prefix_rows; i++) {
    const Tally& t = groups[i].tally;
    prefixes.AddRow({TextEscapeTruncated(groups[i].prefix, kKeyColumnMax), std::to_string(t.keys),
                     std::to_string(t.bytes), HumanBytes(static_cast<double>(t.bytes)),
                     Percent(t.bytes, total),
                     FormatFixed(t.keys ? static_cast<double>(t.bytes) / t.keys : 0, 1)});
  }
  out += prefixes.Render();
  if (groups.size() > meta.prefix_rows) {
    out += "... " + std::to_string(groups.size() - meta.prefix_rows) +
           " more groups (all of them are in --json)\n";
  }

  out += "\nBy type\n";
  TextTable types;
  types.AddColumn("type", TextTable::Align::kLeft);
  types.AddColumn("keys", TextTable::Align::kRight);
  types.AddColumn("bytes", TextTable::Align::kRight);
  types.AddColumn("human", TextTable::Align::kRight);
  types.AddColumn("share", TextTable::Align::kRight);
  for (int i = 0; i < kKeyTypeCount; i++) {
    const Tally& t = model.type_tally(static_cast<KeyType>(i));
    if (t.keys == 0) continue;
    types.AddRow({KeyTypeName(static_cast<KeyType>(i)), std::to_string(t.keys),
                  std::to_string(t.bytes), HumanBytes(static_cast<double>(t.bytes)),
                  Percent(t.bytes, total)});
  }
  out += types.Render();

  out += "\nSize histogram (MEMORY USAGE per key)\n";
  TextTable hist;
  hist.AddColumn("size", TextTable::Align::kLeft);
  hist.AddColumn("keys", TextTable::Align::kRight);
  hist.AddColumn("bytes", TextTable::Align::kRight);
  hist.AddColumn("share of bytes", TextTable::Align::kRight);
  auto [lo, hi] = model.histogram().Range();
  for (int b = lo; b <= hi; b++) {
    const Tally& t = model.histogram().bucket(b);
    hist.AddRow(
        {BucketLabel(b), std::to_string(t.keys), std::to_string(t.bytes), Percent(t.bytes, total)});
  }
  out += hist.Render();

  std::vector<KeyEntry> top = model.Top();
  out += "\nBiggest keys\n";
  TextTable tt;
  tt.AddColumn("key", TextTable::Align::kLeft);
  tt.AddColumn("type", TextTable::Align::kLeft);
  tt.AddColumn("bytes", TextTable::Align::kRight);
  tt.AddColumn("human", TextTable::Align::kRight);
  for (const KeyEntry& e : top) {
    tt.AddRow({TextEscapeTruncated(e.key, kKeyColumnMax), KeyTypeName(e.type),
               std::to_string(e.bytes), HumanBytes(static_cast<double>(e.bytes))});
  }
  out += tt.Render();
  return out;
}

}  // namespace strata::mem
