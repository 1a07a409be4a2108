#include "tools/strata-mem/report_render.h"

#include <gtest/gtest.h>

#include <string>

namespace strata::mem {
namespace {

ReportModel SampleModel() {
  ReportModel m(GroupingOptions{}, 5);
  m.Add("user:1:name", KeyType::kString, 100);
  m.Add("user:2:name", KeyType::kString, 60);
  m.Add("<b>&\"evil\":1", KeyType::kHash, 5000);
  m.Add(std::string("bin\0key", 7), KeyType::kList, 3);
  m.AddVanished();
  return m;
}

ReportMeta SampleMeta() {
  ReportMeta meta;
  meta.server = "127.0.0.1:6379";
  meta.software = "redis 7.0.15";
  meta.used_memory = 10000;
  meta.elapsed_s = 0.5;
  meta.max_keys_per_sec = 50000;
  return meta;
}

TEST(ReportRenderTest, BucketLabels) {
  EXPECT_EQ(BucketLabel(0), "0 B - 1 B");
  EXPECT_EQ(BucketLabel(6), "64 B - 127 B");
  EXPECT_EQ(BucketLabel(10), "1.0 KiB - <2.0 KiB");
  EXPECT_DOUBLE_EQ(SharePercent(1, 4), 25.0);
  EXPECT_DOUBLE_EQ(SharePercent(1, 0), 0.0);
}

TEST(ReportRenderTest, Text) {
  std::string text = RenderReportText(SampleMeta(), SampleModel());
  EXPECT_NE(text.find("4 counted, 1 vanished"), std::string::npos) << text;
  EXPECT_NE(text.find("5163 bytes"), std::string::npos) << text;
  EXPECT_NE(text.find("used_memory: 10000 bytes"), std::string::npos) << text;
  EXPECT_NE(text.find("user:#:*"), std::string::npos) << text;
  EXPECT_NE(text.find("bin\\x00key"), std::string::npos) << text;
  EXPECT_NE(text.find("64 B - 127 B"), std::string::npos) << text;
  EXPECT_EQ(text.find('\0'), std::string::npos);
}

TEST(ReportRenderTest, TextCutsPrefixRows) {
  ReportModel m(GroupingOptions{}, 1);
  for (int i = 0; i < 10; i++) m.Add("g" + std::to_string(i) + ":x", KeyType::kString, 10 + i);
  ReportMeta meta = SampleMeta();
  meta.prefix_rows = 3;
  std::string text = RenderReportText(meta, m);
  EXPECT_NE(text.find("... 7 more groups"), std::string::npos) << text;
  EXPECT_NE(text.find("g9:*"), std::string::npos);
  EXPECT_EQ(text.find("g0:*"), std::string::npos);
}

TEST(ReportRenderTest, Json) {
  std::string json = RenderReportJson(SampleMeta(), SampleModel());
  EXPECT_NE(json.find("\"totals\": {\"keys\": 4, \"bytes\": 5163, \"vanished\": 1"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"prefix\": \"user:#:*\", \"keys\": 2, \"bytes\": 160"), std::string::npos)
      << json;
  EXPECT_NE(json.find("\"key\": \"bin\\u0000key\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"key\": \"<b>&\\\"evil\\\":1\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"match\": null"), std::string::npos);
  EXPECT_NE(json.find("{\"min\": 64, \"max\": 127, \"keys\": 1"), std::string::npos) << json;
}

TEST(ReportRenderTest, HtmlIsSelfContainedAndEscaped) {
  std::string html = RenderReportHtml(SampleMeta(), SampleModel());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("<style>"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("@import"), std::string::npos);
  EXPECT_EQ(html.find("<b>&"), std::string::npos);
  EXPECT_NE(html.find("&lt;b&gt;&amp;&quot;evil&quot;"), std::string::npos);
  EXPECT_NE(html.find("bin\\x00key"), std::string::npos);
  EXPECT_EQ(html.find('\0'), std::string::npos);
  // Three charts: prefixes, types, histogram.
  size_t charts = 0;
  for (size_t p = html.find("<svg"); p != std::string::npos; p = html.find("<svg", p + 1)) {
    charts++;
  }
  EXPECT_EQ(charts, 3u);
}

TEST(ReportRenderTest, EmptyModel) {
  ReportModel m(GroupingOptions{}, 5);
  ReportMeta meta = SampleMeta();
  meta.used_memory.reset();
  EXPECT_NE(RenderReportText(meta, m).find("not reported"), std::string::npos);
  EXPECT_NE(RenderReportJson(meta, m).find("\"used_memory\": null"), std::string::npos);
  std::string html = RenderReportHtml(meta, m);
  EXPECT_NE(html.find("No data."), std::string::npos);
}

}  // namespace
}  // namespace strata::mem
