#include "tools/strata-mem/escape.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tools/strata-mem/text_table.h"

namespace strata::mem {
namespace {

using namespace std::string_literals;

TEST(EscapeTest, Csv) {
  EXPECT_EQ(CsvField("plain"), "plain");
  EXPECT_EQ(CsvField(""), "");
  EXPECT_EQ(CsvField("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvField("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(CsvField("line\nbreak"), "\"line\nbreak\"");
  EXPECT_EQ(CsvField(" padded"), "\" padded\"");
}

TEST(EscapeTest, Json) {
  EXPECT_EQ(JsonString("abc"), "\"abc\"");
  EXPECT_EQ(JsonString("q\"b\\"), "\"q\\\"b\\\\\"");
  EXPECT_EQ(JsonString("a\nb\tc\r"), "\"a\\nb\\tc\\r\"");
  EXPECT_EQ(JsonString("\x01\x7f"), "\"\\u0001\\u007f\"");
  EXPECT_EQ(JsonString("nul\0x"s), "\"nul\\u0000x\"");
  // Valid UTF-8 passes through; invalid bytes become \u00XX.
  EXPECT_EQ(JsonString("caf\xc3\xa9"), "\"caf\xc3\xa9\"");
  EXPECT_EQ(JsonString("\xff\xc3"), "\"\\u00ff\\u00c3\"");
  EXPECT_EQ(JsonString("\xed\xa0\x80"), "\"\\u00ed\\u00a0\\u0080\"");  // a surrogate
  EXPECT_EQ(JsonString("\xe0\x80\x80"), "\"\\u00e0\\u0080\\u0080\"");  // overlong
}

TEST(EscapeTest, Text) {
  EXPECT_EQ(TextEscape("user:1"), "user:1");
  EXPECT_EQ(TextEscape("a\nb\\"), "a\\x0ab\\\\");
  EXPECT_EQ(TextEscape("bin\0\xff"s), "bin\\x00\\xff");
  EXPECT_EQ(TextEscape("\xe2\x82\xac"), "\xe2\x82\xac");
}

TEST(EscapeTest, TextTruncated) {
  EXPECT_EQ(TextEscapeTruncated("short", 10), "short");
  EXPECT_EQ(TextEscapeTruncated("0123456789", 10), "0123456789");
  EXPECT_EQ(TextEscapeTruncated("0123456789ab", 10), "0123456...");
  // Counted in characters, never cutting a UTF-8 sequence.
  std::string euros;
  for (int i = 0; i < 12; i++) euros += "\xe2\x82\xac";
  std::string cut = TextEscapeTruncated(euros, 10);
  EXPECT_EQ(DisplayWidth(cut), 10u);
  EXPECT_EQ(cut.substr(cut.size() - 3), "...");
}

TEST(EscapeTest, Html) {
  EXPECT_EQ(HtmlEscape("<script>alert('x') & \"y\"</script>"),
            "&lt;script&gt;alert(&#39;x&#39;) &amp; &quot;y&quot;&lt;/script&gt;");
  EXPECT_EQ(HtmlEscape("k\x01"), "k\\x01");
}

TEST(EscapeTest, Numbers) {
  EXPECT_EQ(HumanBytes(0), "0 B");
  EXPECT_EQ(HumanBytes(1023), "1023 B");
  EXPECT_EQ(HumanBytes(1536), "1.5 KiB");
  EXPECT_EQ(HumanBytes(3.0 * 1024 * 1024 * 1024), "3.0 GiB");
  EXPECT_EQ(HumanBytes(-2048), "-2.0 KiB");
  EXPECT_EQ(FormatFixed(1.26, 1), "1.3");
  EXPECT_EQ(FormatFixed(std::nan(""), 2), "0.00");
}

TEST(TextTableTest, AlignsColumns) {
  TextTable t;
  t.AddColumn("name", TextTable::Align::kLeft);
  t.AddColumn("n", TextTable::Align::kRight);
  t.AddRow({"a", "1"});
  t.AddRow({"long name", "12345"});
  EXPECT_EQ(t.Render(),
            "name           n\n"
            "---------  -----\n"
            "a              1\n"
            "long name  12345\n");
}

}  // namespace
}  // namespace strata::mem
