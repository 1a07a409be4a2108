#include "storage/cold_sources.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace strata {
namespace {

class ColdSourcesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::TempDir() + "strata-sources-" + std::to_string(getpid()) + "-" +
            testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  // A checkpoint of a store holding records 1..n ("v<seq>").
  std::string Checkpoint(ColdCache* cache, const std::string& name, int n) {
    ColdStoreOptions o;
    o.dir = root_ + "/live-" + name;
    std::unique_ptr<ColdStore> s;
    EXPECT_TRUE(ColdStore::Open(o, cache, &s).ok());
    std::vector<ColdWrite> batch;
    for (int i = 1; i <= n; i++) {
      ColdWrite w;
      w.seq = static_cast<uint64_t>(i);
      w.value = "v" + name + std::to_string(i);
      batch.push_back(std::move(w));
    }
    EXPECT_TRUE(s->Write(batch).ok());
    std::string cp = root_ + "/" + name + ".cold";
    EXPECT_TRUE(s->Checkpoint(cp).ok());
    return cp;
  }

  std::string root_;
};

TEST_F(ColdSourcesTest, TagsKeepTheShardAndTheRecord) {
  uint64_t t = ColdSources::TagSeq(3, 12345);
  EXPECT_TRUE(ColdSources::IsTagged(t));
  EXPECT_FALSE(ColdSources::IsTagged(12345));
  EXPECT_EQ(ColdSources::TagShard(t), 3u);
  EXPECT_EQ(ColdSources::TagRecord(t), 12345u);
  EXPECT_EQ(ColdSources::TagShard(ColdSources::TagSeq(0, 1)), 0u);
}

TEST_F(ColdSourcesTest, ReadsEachOldStoreAndRemovesItsWorkDirectories) {
  ColdCache cache(8 << 20);
  std::string a = Checkpoint(&cache, "a", 10);
  std::string b = Checkpoint(&cache, "b", 5);
  std::string work = root_ + "/spill";
  std::filesystem::create_directories(work);
  {
    std::unique_ptr<ColdSources> src;
    ColdStoreOptions o;
    // Old shard 1 had no spilled values: no checkpoint.
    Status st = ColdSources::Open({a, "", b}, work, o, &cache, &src);
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(src->count(), 3u);
    std::vector<std::optional<std::string>> got;
    ASSERT_TRUE(src->Read(0, {1, 10, 11}, &got).ok());
    ASSERT_EQ(got.size(), 3u);
    EXPECT_EQ(got[0], "va1");
    EXPECT_EQ(got[1], "va10");
    EXPECT_FALSE(got[2].has_value());  // not in that store
    ASSERT_TRUE(src->Read(2, {5}, &got).ok());
    EXPECT_EQ(got[0], "vb5");
    Status none = src->Read(1, {1}, &got);
    EXPECT_FALSE(none.ok());
    EXPECT_FALSE(src->Read(7, {1}, &got).ok());
    EXPECT_TRUE(std::filesystem::exists(work + "/reshard-0"));
  }
  EXPECT_FALSE(std::filesystem::exists(work + "/reshard-0"));
  EXPECT_FALSE(std::filesystem::exists(work + "/reshard-2"));
  // The checkpoints themselves are untouched: they open again.
  std::unique_ptr<ColdSources> again;
  ASSERT_TRUE(ColdSources::Open({a}, work, ColdStoreOptions(), &cache, &again).ok());
  again.reset();
  // What a stopped run left is removed, and nothing else.
  std::filesystem::create_directories(work + "/reshard-4/x");
  std::filesystem::create_directories(work + "/shard-0");
  ColdSources::RemoveStale(work);
  EXPECT_FALSE(std::filesystem::exists(work + "/reshard-4"));
  EXPECT_TRUE(std::filesystem::exists(work + "/shard-0"));
}

TEST_F(ColdSourcesTest, AMissingCheckpointIsAnError) {
  ColdCache cache(8 << 20);
  std::unique_ptr<ColdSources> src;
  Status st = ColdSources::Open({root_ + "/nowhere.cold"}, root_, ColdStoreOptions(), &cache, &src);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("nowhere.cold"), std::string::npos) << st.ToString();
  EXPECT_FALSE(std::filesystem::exists(root_ + "/reshard-0"));
}

}  // namespace
}  // namespace strata
