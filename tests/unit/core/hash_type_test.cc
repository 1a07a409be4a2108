#include "core/hash_type.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>

#include "core/hash.h"
#include "core/keyspace.h"
#include "core/packed_list.h"

namespace strata {
namespace {

std::map<std::string, std::string> Contents(const Entry* e) {
  std::map<std::string, std::string> m;
  hash_access::ForEach(e, [&](std::string_view f, std::string_view v) {
    m.emplace(std::string(f), std::string(v));
  });
  return m;
}

using Pairs = std::vector<std::pair<std::string, std::string>>;

TEST(HashTypeTest, SmallFormStaysInsideTheEntry) {
  Keyspace ks(1);
  Pairs kv = {{"f1", "v1"}, {"f2", "v2"}};
  std::string packed;
  EXPECT_EQ(BuildHash(kv, ks.heap(), &packed), nullptr);
  Entry* e = ks.SetRaw(0, "h", packed, ValueType::kHash, Entry::kNoExpire);
  EXPECT_FALSE(e->IsExternal());
  EXPECT_EQ(hash_access::Length(e), 2u);
  std::string v;
  EXPECT_TRUE(hash_access::Get(e, "f2", &v));
  EXPECT_EQ(v, "v2");
  EXPECT_FALSE(hash_access::Get(e, "nope", &v));
  EXPECT_EQ(Contents(e), (std::map<std::string, std::string>{{"f1", "v1"}, {"f2", "v2"}}));
  EXPECT_STREQ(PackedEncodingName(ValueType::kHash, Keyspace::Serialize(e)), "listpack");
}

TEST(HashTypeTest, ConvertsPastTheThresholdsAndRoundTrips) {
  Keyspace ks(1);
  Pairs many;
  for (int i = 0; i < 600; i++)
    many.push_back({"field" + std::to_string(i), "v" + std::to_string(i)});
  std::string packed;
  std::unique_ptr<HashObject> obj = BuildHash(many, ks.heap(), &packed);
  ASSERT_NE(obj, nullptr);
  EXPECT_TRUE(packed.empty());
  EXPECT_EQ(obj->Length(), 600u);
  Entry* e = ks.SetObject(0, "big", ValueType::kHash, std::move(obj), Entry::kNoExpire);
  EXPECT_TRUE(e->IsExternal());
  EXPECT_STREQ(e->Object()->Encoding(), "hashtable");
  // Serialized form is a packed list that materializes back into an equal hash.
  std::string ser = Keyspace::Serialize(e);
  EXPECT_TRUE(packed::Valid(ser));
  Entry* copy = ks.SetRaw(0, "copy", ser, ValueType::kHash, Entry::kNoExpire);
  EXPECT_TRUE(copy->IsExternal());
  EXPECT_EQ(Contents(copy), Contents(ks.Find(0, "big", 0)));
  // One long value is enough to leave the small form.
  Pairs long_value = {{"f", std::string(65, 'x')}};
  EXPECT_NE(BuildHash(long_value, ks.heap(), &packed), nullptr);
  Pairs at_limit = {{"f", std::string(64, 'x')}};
  EXPECT_EQ(BuildHash(at_limit, ks.heap(), &packed), nullptr);
}

TEST(HashTypeTest, ObjectBytesAreChargedAndReleased) {
  Keyspace ks(2);
  size_t base = ks.used_bytes();
  auto obj = std::make_unique<HashObject>(ks.heap());
  for (int i = 0; i < 1000; i++) obj->Set("f" + std::to_string(i), std::string(50, 'v'));
  size_t obj_bytes = obj->Bytes();
  EXPECT_GT(obj_bytes, 1000u * 50);
  Entry* e = ks.SetObject(1, "h", ValueType::kHash, std::move(obj), Entry::kNoExpire);
  EXPECT_GE(ks.type_bytes(ValueType::kHash), obj_bytes);
  EXPECT_EQ(ks.type_keys(ValueType::kHash), 1u);
  // In-place changes are re-charged.
  auto* h = static_cast<HashObject*>(e->Object());
  size_t before = h->Bytes();
  for (int i = 0; i < 500; i++) EXPECT_TRUE(h->Delete("f" + std::to_string(i)));
  EXPECT_FALSE(h->Delete("f0"));
  ks.Recharge(e, before);
  EXPECT_LT(ks.type_bytes(ValueType::kHash), obj_bytes);
  EXPECT_EQ(
      ks.MemoryUsage(1, "h", 0),
      ks.type_bytes(ValueType::kHash) + Table::ShareBytes(ks.table(1).Locate("h", TableHash("h"))));
  // A TTL change keeps the object (no copy) and the accounting.
  size_t hash_bytes = ks.type_bytes(ValueType::kHash);
  Entry* e2 = ks.SetExpire(1, "h", 1000);
  EXPECT_EQ(e2->Object(), h);
  // Only the entry grows, by the 8-byte expiry (plus slab rounding).
  EXPECT_GE(ks.type_bytes(ValueType::kHash), hash_bytes + 8);
  EXPECT_LE(ks.type_bytes(ValueType::kHash), hash_bytes + 12);
  EXPECT_EQ(ks.type_keys(ValueType::kHash), 1u);
  // Deleting, overwriting and flushing give everything back.
  ks.SetString(1, "h", "now a string", Entry::kNoExpire);
  EXPECT_EQ(ks.type_bytes(ValueType::kHash), 0u);
  EXPECT_EQ(ks.type_keys(ValueType::kHash), 0u);
  ks.SetObject(0, "h2", ValueType::kHash, std::make_unique<HashObject>(ks.heap()),
               Entry::kNoExpire);
  ks.FlushAll();
  EXPECT_EQ(ks.used_bytes(), base);
}

TEST(HashTypeTest, RandomOperationsMatchAMap) {
  Keyspace ks(1);
  auto obj = std::make_unique<HashObject>(ks.heap());
  HashObject* h = obj.get();
  ks.SetObject(0, "h", ValueType::kHash, std::move(obj), Entry::kNoExpire);
  std::map<std::string, std::string> ref;
  std::mt19937 rng(5);
  for (int i = 0; i < 50000; i++) {
    std::string f = "f" + std::to_string(rng() % 3000);
    if (rng() % 3 == 0) {
      EXPECT_EQ(h->Delete(f), ref.erase(f) == 1);
    } else {
      std::string v(rng() % 40, static_cast<char>('a' + rng() % 26));
      EXPECT_EQ(h->Set(f, v), ref.count(f) == 0);
      ref[f] = v;
    }
  }
  EXPECT_EQ(Contents(ks.Find(0, "h", 0)), ref);
}

}  // namespace
}  // namespace strata
