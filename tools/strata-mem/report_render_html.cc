// HTML rendering of `strata-mem report` (see report_render.h): one self-contained page
// with inline CSS and inline SVG horizontal bar charts (prefixes, types, size histogram)
// followed by tables. No scripts, no external fonts, styles or images.
#include <algorithm>
#include <string>
#include <vector>

#include "tools/strata-mem/escape.h"
#include "tools/strata-mem/report_render.h"

namespace strata::mem {
namespace {

constexpr int kChartWidth = 860;
constexpr int kLabelWidth = 300;
constexpr int kValueWidth = 150;
constexpr int kRowHeight = 22;
constexpr size_t kLabelChars = 40;

constexpr const char* kStyle = R"css(
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 2em;
       color: #1d2330; background: #fff; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; }
h2 { font-size: 1.15em; margin-top: 2em; border-bottom: 1px solid #dde1e8; padding-bottom: 4px; }
.meta { color: #5a6473; margin-top: 0; }
table { border-collapse: collapse; margin-top: 0.8em; font-size: 0.9em; }
th, td { padding: 3px 10px; border-bottom: 1px solid #eef0f4; text-align: left; }
th { background: #f5f7fa; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.key { font-family: ui-monospace, Menlo, Consolas, monospace; word-break: break-all; }
dl.totals { display: grid; grid-template-columns: max-content auto; gap: 4px 16px; }
dl.totals dt { color: #5a6473; }
dl.totals dd { margin: 0; font-variant-numeric: tabular-nums; }
svg text { font-size: 12px; fill: #1d2330; }
svg text.label { font-family: ui-monospace, Menlo, Consolas, monospace; }
)css";

struct Bar {
  std::string label;  // raw; escaped when written
  uint64_t value;
  std::string value_text;
  std::string tooltip;
};

std::string SvgBars(const std::vector<Bar>& bars, const char* color) {
  if (bars.empty()) return "<p>No data.</p>\n";
  uint64_t max = 1;
  for (const Bar& b : bars) max = std::max(max, b.value);
  int bar_area = kChartWidth - kLabelWidth - kValueWidth;
  int height = static_cast<int>(bars.size()) * kRowHeight + 4;
  std::string out = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                    std::to_string(kChartWidth) + "\" height=\"" + std::to_string(height) +
                    "\" viewBox=\"0 0 " + std::to_string(kChartWidth) + " " +
                    std::to_string(height) + "\" role=\"img\">\n";
  for (size_t i = 0; i < bars.size(); i++) {
    const Bar& b = bars[i];
    int y = static_cast<int>(i) * kRowHeight + 2;
    int w = static_cast<int>(static_cast<double>(b.value) / static_cast<double>(max) * bar_area);
    if (b.value > 0 && w < 1) w = 1;
    out += "<g><title>" + HtmlEscape(b.tooltip) + "</title>";
    out += "<text class=\"label\" x=\"" + std::to_string(kLabelWidth - 8) + "\" y=\"" +
           std::to_string(y + 15) + "\" text-anchor=\"end\">" +
           HtmlEscape(TextEscapeTruncated(b.label, kLabelChars)) + "</text>";
    out += "<rect x=\"" + std::to_string(kLabelWidth) + "\" y=\"" + std::to_string(y + 3) +
           "\" width=\"" + std::to_string(w) + "\" height=\"" + std::to_string(kRowHeight - 6) +
           "\" fill=\"" + color + "\" rx=\"2\"/>";
    out += "<text x=\"" + std::to_string(kLabelWidth + w + 6) + "\" y=\"" + std::to_string(y + 15) +
           "\">" + HtmlEscape(b.value_text) + "</text></g>\n";
  }
  out += "</svg>\n";
  return out;
}

std::string Cell(const std::string& text, const char* cls = nullptr) {
  std::string out = cls ? std::string("<td class=\"") + cls + "\">" : std::string("<td>");
  return out + text + "</td>";
}

std::string Num(uint64_t v) { return Cell(std::to_string(v), "num"); }

std::string Share(uint64_t part, uint64_t whole) {
  return FormatFixed(SharePercent(part, whole), 1) + "%";
}

std::string TallyTable(const char* first_header, const std::vector<std::string>& names,
                       const std::vector<Tally>& tallies, uint64_t total, bool names_are_keys) {
  std::string out = "<table><tr><th>" + std::string(first_header) +
                    "</th><th class=\"num\">keys</th><th class=\"num\">bytes</th>"
                    "<th class=\"num\">human</th><th class=\"num\">share</th></tr>\n";
  for (size_t i = 0; i < names.size(); i++) {
    const Tally& t = tallies[i];
    out += "<tr>" + Cell(HtmlEscape(names[i]), names_are_keys ? "key" : nullptr) + Num(t.keys) +
           Num(t.bytes) + Cell(HumanBytes(static_cast<double>(t.bytes)), "num") +
           Cell(Share(t.bytes, total), "num") + "</tr>\n";
  }
  out += "</table>\n";
  return out;
}

}  // namespace

std::string RenderReportHtml(const ReportMeta& meta, const ReportModel& model) {
  uint64_t total = model.bytes();
  const GroupingOptions& g = model.grouping();
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<title>strata-mem report: " +
      HtmlEscape(meta.server) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n";
  out += "<h1>Memory report: " + HtmlEscape(meta.server) + "</h1>\n";
  out += "<p class=\"meta\">" + HtmlEscape(meta.software) + ", db " + std::to_string(meta.db) +
         (meta.match.empty() ? "" : ", MATCH " + HtmlEscape(meta.match)) +
         (meta.generated_at.empty() ? "" : ", " + HtmlEscape(meta.generated_at)) + "</p>\n";

  double rate = meta.elapsed_s > 0 ? static_cast<double>(model.keys()) / meta.elapsed_s : 0;
  out += "<dl class=\"totals\">\n";
  auto dt = [&](const std::string& name, const std::string& value) {
    out += "<dt>" + name + "</dt><dd>" + value + "</dd>\n";
  };
  dt("keys counted", std::to_string(model.keys()));
  dt("total (MEMORY USAGE)",
     std::to_string(total) + " bytes (" + HumanBytes(static_cast<double>(total)) + ")");
  if (meta.used_memory) {
    dt("used_memory (INFO)", std::to_string(*meta.used_memory) + " bytes (" +
                                 HumanBytes(static_cast<double>(*meta.used_memory)) +
                                 "); keys account for " + Share(total, *meta.used_memory));
  } else {
    dt("used_memory (INFO)", "not reported");
  }
  dt("vanished during scan", std::to_string(model.vanished()));
  dt("returned twice by SCAN", std::to_string(model.duplicates()));
  dt("elapsed", FormatFixed(meta.elapsed_s, 2) + " s (" + FormatFixed(rate, 0) + " keys/s)");
  out += "</dl>\n";

  std::vector<GroupRow> groups = model.Groups();
  size_t shown = std::min(groups.size(), meta.prefix_rows);
  out += "<h2>By prefix</h2>\n<p class=\"meta\">separators \"" + HtmlEscape(g.separators) +
         "\", depth " + std::to_string(g.depth) +
         (g.collapse_numbers ? ", numeric segments shown as #" : "") + "; biggest " +
         std::to_string(shown) + " of " + std::to_string(groups.size()) + " groups</p>\n";
  std::vector<Bar> bars;
  std::vector<std::string> names;
  std::vector<Tally> tallies;
  for (size_t i = 0; i < shown; i++) {
    const GroupRow& row = groups[i];
    bars.push_back({row.prefix, row.tally.bytes,
                    HumanBytes(static_cast<double>(row.tally.bytes)) + " (" +
                        Share(row.tally.bytes, total) + ")",
                    row.prefix + ": " + std::to_string(row.tally.keys) + " keys, " +
                        std::to_string(row.tally.bytes) + " bytes"});
    names.push_back(row.prefix);
    tallies.push_back(row.tally);
  }
  out += SvgBars(bars, "#3b73c8");
  out += TallyTable("prefix", names, tallies, total, true);

  out += "<h2>By type</h2>\n";
  bars.clear();
  names.clear();
  tallies.clear();
  for (int i = 0; i < kKeyTypeCount; i++) {
    const Tally& t = model.type_tally(static_cast<KeyType>(i));
    if (t.keys == 0) continue;
    std::string name = KeyTypeName(static_cast<KeyType>(i));
    bars.push_back({name, t.bytes,
                    HumanBytes(static_cast<double>(t.bytes)) + " (" + Share(t.bytes, total) + ")",
                    name + ": " + std::to_string(t.keys) + " keys"});
    names.push_back(name);
    tallies.push_back(t);
  }
  out += SvgBars(bars, "#2f9e74");
  out += TallyTable("type", names, tallies, total, false);

  out +=
      "<h2>Size histogram</h2>\n<p class=\"meta\">keys per MEMORY USAGE size bucket "
      "(powers of two)</p>\n";
  bars.clear();
  names.clear();
  tallies.clear();
  auto [lo, hi] = model.histogram().Range();
  for (int b = lo; b <= hi; b++) {
    const Tally& t = model.histogram().bucket(b);
    bars.push_back({BucketLabel(b), t.keys, std::to_string(t.keys) + " keys",
                    BucketLabel(b) + ": " + std::to_string(t.keys) + " keys, " +
                        std::to_string(t.bytes) + " bytes"});
    names.push_back(BucketLabel(b));
    tallies.push_back(t);
  }
  out += SvgBars(bars, "#c8793b");
  out += TallyTable("size", names, tallies, total, false);

  out +=
      "<h2>Biggest keys</h2>\n<table><tr><th>key</th><th>type</th>"
      "<th class=\"num\">bytes</th><th class=\"num\">human</th></tr>\n";
  for (const KeyEntry& e : model.Top()) {
    out += "<tr>" + Cell(HtmlEscape(e.key), "key") + Cell(KeyTypeName(e.type)) + Num(e.bytes) +
           Cell(HumanBytes(static_cast<double>(e.bytes)), "num") + "</tr>\n";
  }
  out += "</table>\n</body>\n</html>\n";
  return out;
}

}  // namespace strata::mem
