#include "tools/strata-mem/bench_result.h"

#include "tools/strata-mem/escape.h"
#include "tools/strata-mem/text_table.h"

namespace strata::mem {
namespace {

int64_t Delta(uint64_t before, uint64_t after) {
  return static_cast<int64_t>(after) - static_cast<int64_t>(before);
}

double PerKey(int64_t delta, uint64_t keys) {
  return keys == 0 ? 0.0 : static_cast<double>(delta) / static_cast<double>(keys);
}

double KeysPerSec(const BenchResult& r) {
  return r.populate_seconds > 0 ? static_cast<double>(r.keys) / r.populate_seconds : 0;
}

}  // namespace

int64_t BenchResult::used_delta() const { return Delta(before.used_memory, after.used_memory); }
int64_t BenchResult::rss_delta() const {
  return Delta(before.used_memory_rss, after.used_memory_rss);
}
double BenchResult::bytes_per_key_used() const { return PerKey(used_delta(), keys); }
double BenchResult::bytes_per_key_rss() const { return PerKey(rss_delta(), keys); }

std::string RenderBenchText(const std::vector<BenchResult>& results) {
  TextTable t;
  t.AddColumn("", TextTable::Align::kLeft);
  for (const auto& r : results) t.AddColumn(TextEscape(r.server), TextTable::Align::kRight);
  auto row = [&](std::string label, auto cell) {
    std::vector<std::string> cells{std::move(label)};
    for (const auto& r : results) cells.push_back(cell(r));
    t.AddRow(std::move(cells));
  };
  using R = const BenchResult&;
  row("server", [](R r) { return TextEscape(r.identity.Describe()); });
  row("type", [](R r) { return r.type; });
  row("keys", [](R r) { return std::to_string(r.keys); });
  row("data size (bytes)", [](R r) { return std::to_string(r.data_size); });
  row("fields per key", [](R r) { return r.has_fields() ? std::to_string(r.fields) : "-"; });
  row("populate (s)", [](R r) { return FormatFixed(r.populate_seconds, 2); });
  row("populate (keys/s)", [](R r) { return FormatFixed(KeysPerSec(r), 0); });
  row("used_memory before", [](R r) { return std::to_string(r.before.used_memory); });
  row("used_memory after", [](R r) { return std::to_string(r.after.used_memory); });
  row("used_memory delta", [](R r) { return std::to_string(r.used_delta()); });
  row("used_memory_rss before", [](R r) { return std::to_string(r.before.used_memory_rss); });
  row("used_memory_rss after", [](R r) { return std::to_string(r.after.used_memory_rss); });
  row("used_memory_rss delta", [](R r) { return std::to_string(r.rss_delta()); });
  row("bytes/key (used_memory)", [](R r) { return FormatFixed(r.bytes_per_key_used(), 1); });
  row("bytes/key (rss)", [](R r) { return FormatFixed(r.bytes_per_key_rss(), 1); });
  return t.Render();
}

namespace {

// The columns of the CSV and the fields of each JSON object, in order. `numeric` values
// are written bare in JSON; the others as strings. An empty numeric value is JSON null.
struct Field {
  std::string name;
  std::string value;
  bool numeric;
};

std::vector<Field> Fields(const BenchResult& r) {
  return {
      {"server", r.server, false},
      {"server_name", r.identity.name, false},
      {"version", r.identity.version, false},
      {"type", r.type, false},
      {"keys", std::to_string(r.keys), true},
      {"data_size", std::to_string(r.data_size), true},
      {"fields", r.has_fields() ? std::to_string(r.fields) : "", true},
      {"key_prefix", r.key_prefix, false},
      {"populate_seconds", FormatFixed(r.populate_seconds, 3), true},
      {"used_memory_before", std::to_string(r.before.used_memory), true},
      {"used_memory_after", std::to_string(r.after.used_memory), true},
      {"used_memory_delta", std::to_string(r.used_delta()), true},
      {"bytes_per_key_used_memory", FormatFixed(r.bytes_per_key_used(), 2), true},
      {"used_memory_rss_before", std::to_string(r.before.used_memory_rss), true},
      {"used_memory_rss_after", std::to_string(r.after.used_memory_rss), true},
      {"used_memory_rss_delta", std::to_string(r.rss_delta()), true},
      {"bytes_per_key_rss", FormatFixed(r.bytes_per_key_rss(), 2), true},
  };
}

}  // namespace

std::string RenderBenchCsv(const std::vector<BenchResult>& results) {
  std::string out;
  bool first = true;
  for (const auto& f : Fields(BenchResult{})) {
    if (!first) out += ',';
    out += f.name;
    first = false;
  }
  out += '\n';
  for (const auto& r : results) {
    first = true;
    for (const auto& f : Fields(r)) {
      if (!first) out += ',';
      out += CsvField(f.value);
      first = false;
    }
    out += '\n';
  }
  return out;
}

std::string RenderBenchJson(const std::vector<BenchResult>& results) {
  std::string out = "[";
  for (size_t i = 0; i < results.size(); i++) {
    out += i == 0 ? "\n  {" : ",\n  {";
    bool first = true;
    for (const auto& f : Fields(results[i])) {
      out += first ? "" : ", ";
      out += JsonString(f.name);
      out += ": ";
      if (!f.numeric) {
        out += JsonString(f.value);
      } else {
        out += f.value.empty() ? "null" : f.value;
      }
      first = false;
    }
    out += "}";
  }
  out += results.empty() ? "]\n" : "\n]\n";
  return out;
}

std::string RenderBench(const std::vector<BenchResult>& results, OutputFormat format) {
  switch (format) {
    case OutputFormat::kText:
      return RenderBenchText(results);
    case OutputFormat::kCsv:
      return RenderBenchCsv(results);
    case OutputFormat::kJson:
      return RenderBenchJson(results);
  }
  return "";
}

}  // namespace strata::mem
