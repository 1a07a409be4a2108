// Output of `strata-mem report`: the run's facts (ReportMeta) plus the aggregation
// (ReportModel), rendered as a text table, JSON, or a self-contained HTML page.
//
// Text and HTML show the `prefix_rows` biggest prefix groups; JSON lists every group.
// The HTML page has inline CSS and inline SVG bar charts only: no scripts, fonts or
// other files, so it can be mailed or archived as one file.
// Implementations: report_render_text.cc, report_render_json.cc, report_render_html.cc.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "tools/strata-mem/report_model.h"

namespace strata::mem {

struct ReportMeta {
  std::string server;    // host:port
  std::string software;  // "redis 7.0.15", "strata 0.1.0", or "unknown"
  int db = 0;
  std::string match;                    // SCAN MATCH pattern, empty for all keys
  std::optional<uint64_t> used_memory;  // INFO memory used_memory after the scan
  double elapsed_s = 0;
  uint64_t max_keys_per_sec = 0;  // 0 = unlimited
  size_t prefix_rows = 30;
  std::string generated_at;  // local time, "2026-01-31 12:00:00"
};

std::string RenderReportText(const ReportMeta& meta, const ReportModel& model);
std::string RenderReportJson(const ReportMeta& meta, const ReportModel& model);
std::string RenderReportHtml(const ReportMeta& meta, const ReportModel& model);

// Shared by the renderers: part / whole as a percentage (0 when whole is 0).
double SharePercent(uint64_t part, uint64_t whole);
// "64 B - 127 B" style label of a histogram bucket.
std::string BucketLabel(int bucket);

}  // namespace strata::mem
