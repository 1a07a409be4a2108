#include "tools/strata-mem/bench_result.h"

#include <gtest/gtest.h>

#include "tools/strata-mem/info.h"

namespace strata::mem {
namespace {

TEST(InfoTest, ParseAndIdentify) {
  InfoFields f = ParseInfo(
      "# Server\r\nredis_version:7.0.15\r\nstrata_version:0.1.0\r\n\r\n# Memory\r\n"
      "used_memory:1048576\r\nused_memory_rss:2097152\r\nweird line\r\nmaxmemory_policy:"
      "noeviction\n");
  EXPECT_EQ(f["redis_version"], "7.0.15");
  EXPECT_EQ(f["maxmemory_policy"], "noeviction");
  EXPECT_EQ(InfoUint(f, "used_memory"), 1048576u);
  EXPECT_EQ(InfoUint(f, "used_memory_rss"), 2097152u);
  EXPECT_FALSE(InfoUint(f, "maxmemory_policy").has_value());
  EXPECT_FALSE(InfoUint(f, "absent").has_value());
  EXPECT_EQ(f.count("weird line"), 0u);

  ServerIdentity id = IdentifyServer(f);
  EXPECT_EQ(id.name, "strata");
  EXPECT_EQ(id.version, "0.1.0");
  EXPECT_EQ(id.Describe(), "strata 0.1.0");
  id =
      IdentifyServer(ParseInfo("redis_version:7.2.4\r\nserver_name:valkey\r\n"
                               "valkey_version:8.0.1\r\n"));
  EXPECT_EQ(id.Describe(), "valkey 8.0.1");
  EXPECT_EQ(IdentifyServer(ParseInfo("redis_version:7.0.15\r\n")).Describe(), "redis 7.0.15");
  EXPECT_EQ(IdentifyServer(ParseInfo("")).Describe(), "unknown");
}

BenchResult Sample(std::string server, uint64_t before, uint64_t after) {
  BenchResult r;
  r.server = std::move(server);
  r.identity = {"redis", "7.0.15"};
  r.type = "string";
  r.keys = 1000;
  r.data_size = 100;
  r.fields = 10;
  r.key_prefix = "memtier-";
  r.before = {before, before * 2};
  r.after = {after, after * 2};
  r.populate_seconds = 0.5;
  return r;
}

TEST(BenchResultTest, Figures) {
  BenchResult r = Sample("a:1", 1000000, 1180000);
  EXPECT_EQ(r.used_delta(), 180000);
  EXPECT_DOUBLE_EQ(r.bytes_per_key_used(), 180.0);
  EXPECT_DOUBLE_EQ(r.bytes_per_key_rss(), 360.0);
  BenchResult shrink = Sample("a:1", 2000, 1000);
  EXPECT_EQ(shrink.used_delta(), -1000);
  EXPECT_DOUBLE_EQ(shrink.bytes_per_key_used(), -1.0);
}

TEST(BenchResultTest, Csv) {
  std::vector<BenchResult> rs = {Sample("a:1", 1000000, 1180000), Sample("b,\"x\":2", 0, 5000)};
  rs[1].type = "hash";
  std::string csv = RenderBenchCsv(rs);
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos < csv.size()) {
    size_t nl = csv.find('\n', pos);
    lines.push_back(csv.substr(pos, nl - pos));
    pos = nl + 1;
  }
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].rfind("server,server_name,version,type,keys,data_size,fields,", 0), 0u);
  EXPECT_NE(lines[0].find(",bytes_per_key_used_memory,"), std::string::npos);
  EXPECT_EQ(lines[1].rfind("a:1,redis,7.0.15,string,1000,100,,memtier-,0.500,1000000,", 0), 0u);
  EXPECT_NE(lines[1].find(",180.00,"), std::string::npos);
  EXPECT_EQ(lines[2].rfind("\"b,\"\"x\"\":2\",redis,7.0.15,hash,1000,100,10,", 0), 0u);
}

TEST(BenchResultTest, Json) {
  std::string json = RenderBenchJson({Sample("a:1", 1000, 2000)});
  EXPECT_EQ(json.front(), '[');
  EXPECT_NE(json.find("\"server\": \"a:1\""), std::string::npos);
  EXPECT_NE(json.find("\"fields\": null"), std::string::npos);
  EXPECT_NE(json.find("\"keys\": 1000,"), std::string::npos);
  EXPECT_NE(json.find("\"bytes_per_key_used_memory\": 1.00"), std::string::npos);
  EXPECT_EQ(RenderBenchJson({}), "[]\n");
}

TEST(BenchResultTest, TextHasOneColumnPerServer) {
  std::string text = RenderBenchText({Sample("a:1", 0, 180000), Sample("b:2", 0, 90000)});
  size_t header_end = text.find('\n');
  std::string header = text.substr(0, header_end);
  EXPECT_NE(header.find("a:1"), std::string::npos);
  EXPECT_NE(header.find("b:2"), std::string::npos);
  EXPECT_NE(text.find("bytes/key (used_memory)"), std::string::npos);
  EXPECT_NE(text.find("180.0"), std::string::npos);
  EXPECT_NE(text.find("90.0"), std::string::npos);
}

}  // namespace
}  // namespace strata::mem
