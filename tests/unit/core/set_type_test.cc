#include "core/set_type.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>

#include "core/hash.h"
#include "core/keyspace.h"
#include "core/packed_list.h"

namespace strata {
namespace {

std::set<std::string> Contents(const Entry* e) {
  std::set<std::string> s;
  set_access::ForEach(e, [&](std::string_view m) { s.emplace(m); });
  return s;
}

std::set<std::string> Contents(const SetBuilder& b) {
  std::set<std::string> s;
  b.ForEach([&](std::string_view m) { s.emplace(m); });
  return s;
}

std::string EncodingOf(const Entry* e) { return SetEncodingName(set_access::Encoding(e)); }

// Restores the process-wide limits a test changed.
class SetTypeTest : public ::testing::Test {
 protected:
  void TearDown() override {
    EncodingLimits& l = GlobalEncodingLimits();
    l.set_max_intset_entries = 512;
    l.set_max_listpack_entries = 128;
    l.set_max_listpack_value = 64;
  }
};

// Adds members one at a time through SetEditor (SADD key m).
Entry* Add(Keyspace& ks, std::string_view key, std::string_view member) {
  Entry* e = ks.Find(0, key, 0);
  if (e == nullptr) {
    SetEditor ed(ks, 0, key, member, 1);
    ed.Add(member);
    ed.Commit();
  } else {
    SetEditor ed(ks, 0, key, e);
    ed.MaybeConvert(1);
    ed.Add(member);
    ed.Commit();
  }
  return ks.Find(0, key, 0);
}

TEST_F(SetTypeTest, IntSetWidensFrom16To32To64Bits) {
  Keyspace ks(1);
  Entry* e = Add(ks, "s", "5");
  e = Add(ks, "s", "-32768");
  e = Add(ks, "s", "32767");
  std::string scratch;
  std::string_view v = e->Value(&scratch);
  EXPECT_EQ(EncodingOf(e), "intset");
  EXPECT_STREQ(PackedEncodingName(ValueType::kSet, v), "intset");
  ASSERT_TRUE(intset::Valid(v));
  EXPECT_EQ(v.size(), 2u + 3 * 2);
  e = Add(ks, "s", "32768");
  v = e->Value(&scratch);
  EXPECT_EQ(v.size(), 2u + 4 * 4);
  e = Add(ks, "s", "-2147483649");
  v = e->Value(&scratch);
  EXPECT_EQ(v.size(), 2u + 5 * 8);
  EXPECT_TRUE(intset::Valid(v));
  EXPECT_EQ(intset::Decode(v), (std::vector<int64_t>{-2147483649LL, -32768, 5, 32767, 32768}));
  e = Add(ks, "s", "9223372036854775807");
  e = Add(ks, "s", "-9223372036854775808");
  EXPECT_EQ(EncodingOf(e), "intset");
  EXPECT_EQ(set_access::Length(e), 7u);
  for (const char* m : {"5", "-32768", "32767", "32768", "-2147483649", "9223372036854775807",
                        "-9223372036854775808"}) {
    EXPECT_TRUE(set_access::Contains(e, m)) << m;
  }
  for (const char* m : {"6", "+5", "05", "-0", " 5", "5 ", "9223372036854775808", "", "x"}) {
    EXPECT_FALSE(set_access::Contains(e, m)) << m;
  }
  // Storage order is ascending.
  std::vector<std::string> order = set_access::Members(e);
  EXPECT_EQ(order.front(), "-9223372036854775808");
  EXPECT_EQ(order.back(), "9223372036854775807");
}

TEST_F(SetTypeTest, OnlyCanonicalIntegersGoIntoAnIntSet) {
  int64_t v = 0;
  EXPECT_TRUE(intset::ToInt("0", &v));
  EXPECT_TRUE(intset::ToInt("-1", &v));
  EXPECT_EQ(v, -1);
  for (const char* s : {"", "-", "-0", "00", "01", "+1", " 1", "1 ", "1.0", "1e3",
                        "9223372036854775808", "-9223372036854775809", "0x10"}) {
    EXPECT_FALSE(intset::ToInt(s, &v)) << s;
  }
  Keyspace ks(1);
  Entry* e = Add(ks, "s", "01");
  EXPECT_EQ(EncodingOf(e), "listpack");
}

TEST_F(SetTypeTest, IntSetBecomesListpackOnANonInteger) {
  Keyspace ks(1);
  for (int i = 0; i < 10; i++) Add(ks, "s", std::to_string(i * 1000));
  Entry* e = Add(ks, "s", "hello");
  EXPECT_EQ(EncodingOf(e), "listpack");
  std::string scratch;
  EXPECT_TRUE(packed::Valid(e->Value(&scratch)));
  EXPECT_EQ(set_access::Length(e), 11u);
  // The integers come first, ascending, then the new member (as Redis converts).
  std::vector<std::string> order = set_access::Members(e);
  EXPECT_EQ(order[0], "0");
  EXPECT_EQ(order[9], "9000");
  EXPECT_EQ(order[10], "hello");
  // Never back to an intset, even when only integers remain.
  SetEditor ed(ks, 0, "s", e);
  EXPECT_TRUE(ed.Remove("hello"));
  ed.Commit();
  EXPECT_EQ(EncodingOf(ks.Find(0, "s", 0)), "listpack");
}

TEST_F(SetTypeTest, IntSetPastItsLimitBecomesHashtable) {
  GlobalEncodingLimits().set_max_intset_entries = 20;
  Keyspace ks(1);
  Entry* e = nullptr;
  for (int i = 0; i < 20; i++) e = Add(ks, "s", std::to_string(i));
  EXPECT_EQ(EncodingOf(e), "intset");
  // One at a time, the 21st integer turns the intset into a hashtable (as Redis's
  // maybeConvertIntset), although 21 members would fit a listpack.
  e = Add(ks, "s", "20");
  EXPECT_EQ(EncodingOf(e), "hashtable");
  EXPECT_EQ(set_access::Length(e), 21u);
  // A new set whose size hint is past the intset limit but within the listpack one
  // starts as a listpack (setTypeCreate).
  SetEditor ed(ks, 0, "n", "1", 30);
  for (int i = 0; i < 30; i++) ed.Add(std::to_string(i));
  ed.Commit();
  EXPECT_EQ(EncodingOf(ks.Find(0, "n", 0)), "listpack");
  // A non-integer arriving at an intset too big for a listpack goes straight to hashtable.
  GlobalEncodingLimits().set_max_listpack_entries = 10;
  for (int i = 0; i < 15; i++) Add(ks, "t", std::to_string(i));
  EXPECT_EQ(EncodingOf(ks.Find(0, "t", 0)), "intset");
  EXPECT_EQ(EncodingOf(Add(ks, "t", "x")), "hashtable");
}

TEST_F(SetTypeTest, ListpackBecomesHashtableOnCountOrLength) {
  Keyspace ks(1);
  Entry* e = nullptr;
  for (int i = 0; i < 128; i++) e = Add(ks, "s", "m" + std::to_string(i));
  EXPECT_EQ(EncodingOf(e), "listpack");
  e = Add(ks, "s", "m128");
  EXPECT_EQ(EncodingOf(e), "hashtable");
  EXPECT_TRUE(e->IsExternal());
  EXPECT_STREQ(e->Object()->Encoding(), "hashtable");
  EXPECT_EQ(set_access::Length(e), 129u);

  e = Add(ks, "l", std::string(64, 'a'));
  EXPECT_EQ(EncodingOf(e), "listpack");
  e = Add(ks, "l", std::string(65, 'b'));
  EXPECT_EQ(EncodingOf(e), "hashtable");
  // Removing everything long does not convert back.
  SetEditor ed(ks, 0, "l", e);
  EXPECT_TRUE(ed.Remove(std::string(65, 'b')));
  ed.Commit();
  EXPECT_EQ(EncodingOf(ks.Find(0, "l", 0)), "hashtable");

  // A size hint past the listpack limit converts even when nothing new is added
  // (setTypeMaybeConvert).
  Add(ks, "h", "a");
  SetEditor hint(ks, 0, "h", ks.Find(0, "h", 0));
  hint.MaybeConvert(129);
  EXPECT_FALSE(hint.Add("a"));
  hint.Commit();
  EXPECT_EQ(EncodingOf(ks.Find(0, "h", 0)), "hashtable");
}

TEST_F(SetTypeTest, MaterializeRoundTrips) {
  Keyspace ks(1);
  // intset: stored as it is.
  for (int i = 0; i < 100; i++) Add(ks, "i", std::to_string(i * 7));
  Entry* e = ks.Find(0, "i", 0);
  std::string ser = Keyspace::Serialize(e);
  EXPECT_TRUE(intset::Valid(ser));
  EXPECT_EQ(MaterializeSet(ser, ks.heap()), nullptr);
  Entry* c = ks.SetRaw(0, "i2", ser, ValueType::kSet, Entry::kNoExpire);
  EXPECT_EQ(EncodingOf(c), "intset");
  EXPECT_EQ(Contents(c), Contents(ks.Find(0, "i", 0)));
  // listpack: stored as it is.
  for (int i = 0; i < 50; i++) Add(ks, "l", "member:" + std::to_string(i));
  ser = Keyspace::Serialize(ks.Find(0, "l", 0));
  EXPECT_TRUE(packed::Valid(ser));
  c = ks.SetRaw(0, "l2", ser, ValueType::kSet, Entry::kNoExpire);
  EXPECT_EQ(EncodingOf(c), "listpack");
  EXPECT_EQ(Contents(c), Contents(ks.Find(0, "l", 0)));
  // hashtable: serialized as a packed list, materialized back into a SetObject.
  for (int i = 0; i < 1000; i++) Add(ks, "h", "member:" + std::to_string(i));
  e = ks.Find(0, "h", 0);
  EXPECT_EQ(EncodingOf(e), "hashtable");
  ser = Keyspace::Serialize(e);
  EXPECT_TRUE(packed::Valid(ser));
  EXPECT_EQ(packed::Count(ser), 1000u);
  c = ks.SetRaw(0, "h2", ser, ValueType::kSet, Entry::kNoExpire);
  EXPECT_TRUE(c->IsExternal());
  EXPECT_EQ(Contents(c), Contents(ks.Find(0, "h", 0)));
  // Binary members survive every form.
  std::string bin("\x00\xff\r\n", 4);
  Add(ks, "b", bin);
  c = ks.SetRaw(0, "b2", Keyspace::Serialize(ks.Find(0, "b", 0)), ValueType::kSet,
                Entry::kNoExpire);
  EXPECT_TRUE(set_access::Contains(c, bin));
}

TEST_F(SetTypeTest, BuilderFollowsRedisRulesForResults) {
  // SUNIONSTORE-style: an empty intset filled member by member.
  SetBuilder u;
  for (int i = 0; i < 5; i++) u.Add(std::to_string(10 - i));
  EXPECT_EQ(u.encoding(), SetEncoding::kIntSet);
  std::vector<std::string> order;
  u.ForEach([&](std::string_view m) { order.emplace_back(m); });
  EXPECT_EQ(order, (std::vector<std::string>{"6", "7", "8", "9", "10"}));
  EXPECT_TRUE(u.Add("x"));
  EXPECT_FALSE(u.Add("x"));
  EXPECT_EQ(u.encoding(), SetEncoding::kListpack);
  EXPECT_TRUE(u.Remove("7"));
  EXPECT_FALSE(u.Remove("7"));
  EXPECT_EQ(Contents(u), (std::set<std::string>{"10", "6", "8", "9", "x"}));
  // SINTERSTORE-style: integers only end as an intset.
  SetBuilder inter(SetEncoding::kListpack);
  inter.Add("3");
  inter.Add("1");
  inter.ConvertToIntSetIfFits();
  EXPECT_EQ(inter.encoding(), SetEncoding::kIntSet);
  EXPECT_EQ(intset::Decode(inter.Packed()), (std::vector<int64_t>{1, 3}));
  SetBuilder mixed(SetEncoding::kListpack);
  mixed.Add("1");
  mixed.Add("a");
  mixed.ConvertToIntSetIfFits();
  EXPECT_EQ(mixed.encoding(), SetEncoding::kListpack);
  // A hashtable result is stored as a SetObject; an empty one deletes the key.
  Keyspace ks(1);
  SetBuilder big;
  for (int i = 0; i < 600; i++) big.Add(std::to_string(i));
  EXPECT_EQ(big.encoding(), SetEncoding::kHashtable);
  ks.SetString(0, "k", "a string", Entry::kNoExpire);
  big.Store(ks, 0, "k", Entry::kNoExpire);
  Entry* e = ks.Find(0, "k", 0);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->Type(), ValueType::kSet);
  EXPECT_EQ(set_access::Length(e), 600u);
  SetBuilder().Store(ks, 0, "k", Entry::kNoExpire);
  EXPECT_EQ(ks.Find(0, "k", 0), nullptr);
}

TEST_F(SetTypeTest, PopRandomEmptiesEveryForm) {
  Keyspace ks(1);
  std::mt19937_64 rng(3);
  for (const char* prefix : {"", "m", "long"}) {
    std::set<std::string> ref;
    int n = std::string(prefix) == "long" ? 300 : 50;
    for (int i = 0; i < n; i++) {
      std::string m = std::string(prefix) + std::to_string(i);
      Add(ks, "s", m);
      ref.insert(m);
    }
    while (!ref.empty()) {
      Entry* e = ks.Find(0, "s", 0);
      ASSERT_NE(e, nullptr);
      std::string r = set_access::Random(e, rng());
      EXPECT_EQ(ref.count(r), 1u);
      SetEditor ed(ks, 0, "s", e);
      std::string m = ed.PopRandom(rng());
      ed.Commit();
      EXPECT_EQ(ref.erase(m), 1u) << m;
    }
    EXPECT_EQ(ks.Find(0, "s", 0), nullptr);
  }
  EXPECT_EQ(ks.type_bytes(ValueType::kSet), 0u);
  EXPECT_EQ(ks.type_keys(ValueType::kSet), 0u);
}

TEST_F(SetTypeTest, AccountingGoesBackToZero) {
  Keyspace ks(2);
  size_t base = ks.used_bytes();
  for (int i = 0; i < 2000; i++) Add(ks, "big", "member-" + std::to_string(i));
  for (int i = 0; i < 10; i++) Add(ks, "ints", std::to_string(i));
  for (int i = 0; i < 10; i++) Add(ks, "strs", "s" + std::to_string(i));
  Entry* e = ks.Find(0, "big", 0);
  ASSERT_TRUE(e->IsExternal());
  size_t obj_bytes = e->Object()->Bytes();
  EXPECT_GT(obj_bytes, 2000u * 10);
  EXPECT_GE(ks.type_bytes(ValueType::kSet), obj_bytes);
  EXPECT_EQ(ks.type_keys(ValueType::kSet), 3u);
  EXPECT_EQ(ks.MemoryUsage(0, "big", 0),
            Entry::UsableSize(e) + obj_bytes +
                Table::ShareBytes(ks.table(0).Locate("big", TableHash("big"))));
  // In-place removals are re-charged.
  size_t before = ks.type_bytes(ValueType::kSet);
  {
    SetEditor ed(ks, 0, "big", e);
    for (int i = 0; i < 1000; i++) EXPECT_TRUE(ed.Remove("member-" + std::to_string(i)));
    ed.Commit();
  }
  EXPECT_LT(ks.type_bytes(ValueType::kSet), before);
  // A TTL change keeps the object.
  CollectionObject* obj = ks.Find(0, "big", 0)->Object();
  EXPECT_EQ(ks.SetExpire(0, "big", 1000)->Object(), obj);
  // Removing every member deletes the key.
  {
    Entry* s = ks.Find(0, "strs", 0);
    SetEditor ed(ks, 0, "strs", s);
    for (int i = 0; i < 10; i++) ed.Remove("s" + std::to_string(i));
    ed.Commit();
  }
  EXPECT_EQ(ks.Find(0, "strs", 0), nullptr);
  ks.Delete(0, "big");
  ks.SetString(0, "ints", "overwritten", Entry::kNoExpire);
  EXPECT_EQ(ks.type_bytes(ValueType::kSet), 0u);
  EXPECT_EQ(ks.type_keys(ValueType::kSet), 0u);
  for (int i = 0; i < 500; i++) Add(ks, "again", "x" + std::to_string(i));
  ks.FlushAll();
  EXPECT_EQ(ks.type_bytes(ValueType::kSet), 0u);
  EXPECT_EQ(ks.used_bytes(), base);
}

TEST_F(SetTypeTest, RandomOperationsMatchStdSet) {
  // Small limits so that every form and conversion is visited many times.
  GlobalEncodingLimits().set_max_intset_entries = 40;
  GlobalEncodingLimits().set_max_listpack_entries = 30;
  GlobalEncodingLimits().set_max_listpack_value = 8;
  Keyspace ks(1);
  std::mt19937 rng(11);
  std::set<std::string> encodings_seen;
  for (int round = 0; round < 40; round++) {
    std::string key = "k" + std::to_string(round % 4);
    std::set<std::string> ref;
    ks.Delete(0, key);
    int universe = 10 + static_cast<int>(rng() % 200);
    for (int op = 0; op < 600; op++) {
      std::string m;
      switch (rng() % 4) {
        case 0:
          m = std::string(1 + rng() % 12, static_cast<char>('a' + rng() % 3));
          break;
        default:
          m = std::to_string(static_cast<int64_t>(rng() % universe) - universe / 2);
      }
      if (rng() % 10 == 0) m = std::to_string(static_cast<int64_t>(rng()) << 33);
      Entry* e = ks.Find(0, key, 0);
      bool remove = rng() % 3 == 0;
      if (remove) {
        bool expect = ref.erase(m) == 1;
        if (e == nullptr) {
          EXPECT_FALSE(expect);
          continue;
        }
        SetEditor ed(ks, 0, key, e);
        EXPECT_EQ(ed.Remove(m), expect);
        ed.Commit();
      } else {
        bool expect = ref.insert(m).second;
        if (e == nullptr) {
          SetEditor ed(ks, 0, key, m, 1);
          EXPECT_TRUE(ed.Add(m));
          ed.Commit();
        } else {
          SetEditor ed(ks, 0, key, e);
          EXPECT_EQ(ed.Add(m), expect);
          ed.Commit();
        }
      }
      e = ks.Find(0, key, 0);
      if (ref.empty()) {
        EXPECT_EQ(e, nullptr);
        continue;
      }
      ASSERT_NE(e, nullptr);
      EXPECT_EQ(set_access::Length(e), ref.size());
      EXPECT_TRUE(set_access::Contains(e, m) != remove);
      encodings_seen.insert(EncodingOf(e));
    }
    Entry* e = ks.Find(0, key, 0);
    if (e != nullptr) {
      EXPECT_EQ(Contents(e), ref);
      std::string ser = Keyspace::Serialize(e);
      EXPECT_TRUE(packed::Valid(ser) || intset::Valid(ser));
    }
  }
  EXPECT_EQ(encodings_seen, (std::set<std::string>{"intset", "listpack", "hashtable"}));
  ks.FlushAll();
  EXPECT_EQ(ks.type_bytes(ValueType::kSet), 0u);
}

}  // namespace
}  // namespace strata
