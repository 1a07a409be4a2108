#include <gtest/gtest.h>

#include <string>

#include "core/hash_type.h"
#include "core/keyspace.h"
#include "core/list_type.h"

namespace strata {
namespace {

TEST(LazyFreeTest, UnlinkedCollectionIsFreedInSlices) {
  Keyspace ks(1);
  size_t base = ks.used_bytes();
  auto h = std::make_unique<HashObject>(ks.heap());
  for (int i = 0; i < 20000; i++) h->Set("field" + std::to_string(i), "value");
  ks.SetObject(0, "h", ValueType::kHash, std::move(h), Entry::kNoExpire);
  size_t full = ks.type_bytes(ValueType::kHash);
  ASSERT_TRUE(ks.Delete(0, "h", /*lazy=*/true));
  EXPECT_EQ(ks.Find(0, "h", 0), nullptr);
  EXPECT_EQ(ks.type_keys(ValueType::kHash), 0u);
  EXPECT_EQ(ks.lazyfree_pending(), 1u);
  // Still charged until freed, then released slice by slice.
  size_t last = ks.type_bytes(ValueType::kHash);
  EXPECT_GT(last, full / 2);
  int steps = 0;
  while (ks.LazyFreeStep(1000)) {
    size_t now = ks.type_bytes(ValueType::kHash);
    EXPECT_LT(now, last);
    last = now;
    steps++;
  }
  EXPECT_GE(steps, 10);  // 20000 fields, 1000 per step
  EXPECT_EQ(ks.type_bytes(ValueType::kHash), 0u);
  EXPECT_EQ(ks.used_bytes(), base);
}

TEST(LazyFreeTest, SmallCollectionsAndSyncDeletesFreeAtOnce) {
  Keyspace ks(1);
  auto l = std::make_unique<ListObject>();
  for (int i = 0; i < 10; i++) l->PushBack("x");
  ks.SetObject(0, "small", ValueType::kList, std::move(l), Entry::kNoExpire);
  ks.Delete(0, "small", true);
  EXPECT_EQ(ks.lazyfree_pending(), 0u);
  auto big = std::make_unique<ListObject>();
  for (int i = 0; i < 100000; i++) big->PushBack("element");
  ks.SetObject(0, "big", ValueType::kList, std::move(big), Entry::kNoExpire);
  ks.Delete(0, "big");  // DEL: at once
  EXPECT_EQ(ks.lazyfree_pending(), 0u);
  EXPECT_EQ(ks.type_bytes(ValueType::kList), 0u);
}

TEST(LazyFreeTest, FlushAsyncDetachesTheTable) {
  Keyspace ks(2);
  size_t base = ks.used_bytes();
  for (int i = 0; i < 10000; i++) ks.SetString(1, "k" + std::to_string(i), "v", Entry::kNoExpire);
  auto l = std::make_unique<ListObject>();
  for (int i = 0; i < 5000; i++) l->PushBack("element");
  ks.SetObject(1, "list", ValueType::kList, std::move(l), 1234);
  ks.SetString(0, "other", "kept", Entry::kNoExpire);
  ks.FlushDb(1, /*lazy=*/true);
  EXPECT_EQ(ks.DbSize(1), 0u);
  EXPECT_EQ(ks.ExpiresCount(1), 0u);
  EXPECT_EQ(ks.DbSize(0), 1u);
  EXPECT_GE(ks.lazyfree_pending(), 1u);
  ks.SetString(1, "new", "v", Entry::kNoExpire);  // the database is usable at once
  while (ks.LazyFreeStep(500)) {
  }
  EXPECT_EQ(ks.type_keys(ValueType::kString), 2u);
  EXPECT_EQ(ks.type_keys(ValueType::kList), 0u);
  EXPECT_EQ(ks.type_bytes(ValueType::kList), 0u);
  ks.Delete(0, "other");
  ks.Delete(1, "new");
  EXPECT_EQ(ks.used_bytes(), base);
}

}  // namespace
}  // namespace strata
