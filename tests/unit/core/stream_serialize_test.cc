#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/stream_type.h"
#include "stream_test_util.h"
#include "tests/unit/scaled.h"

namespace strata {
namespace {

using test::Id;

// A stream with a bit of everything: mixed field shapes (binary, 7-bit, empty), tombstones,
// metadata set by XSETID, groups with and without consumers and pending entries.
std::unique_ptr<StreamObject> RichStream() {
  auto s = std::make_unique<StreamObject>();
  std::mt19937_64 rng(99);
  for (int i = 0; i < 300; i++) {
    std::vector<std::string> parts;
    int shape = i % 5;
    size_t n = shape == 4 ? 1 + i % 3 : 3;
    for (size_t k = 0; k < n; k++) {
      parts.push_back(shape == 4 ? "other" + std::to_string(k) : "field" + std::to_string(k));
      std::string v(shape == 3 ? 0 : 5 + rng() % 30, ' ');
      for (char& c : v) c = static_cast<char>(shape == 2 ? rng() % 256 : 'a' + rng() % 26);
      parts.push_back(v);
    }
    std::vector<std::string_view> fv(parts.begin(), parts.end());
    StreamId id;
    EXPECT_EQ(s->Add({}, fv, 1000 + i / 4, &id), StreamStatus::kOk);
  }
  for (uint64_t ms = 1010; ms < 1030; ms += 3) s->Delete(Id(ms, 1));
  EXPECT_EQ(s->SetId(Id(5000, 7), 400, Id(0, 0)), StreamStatus::kOk);
  StreamGroup* g = s->CreateGroup("workers", Id(0, 0), -1);
  StreamConsumer* a = s->TouchConsumer(g, "alice", 10);
  StreamConsumer* b = s->TouchConsumer(g, "bob-with-a-long-consumer-name", 20);
  s->TouchConsumer(g, "idle", 30);
  s->ReadGroupNew(g, a, 40, false, 100, [](const StreamEntry&) {});
  s->ReadGroupNew(g, b, 25, false, 200, [](const StreamEntry&) {});
  std::vector<StreamId> claimed, dropped;
  std::vector<StreamId> ids = {Id(1000, 2), Id(1001, 0)};
  StreamClaimOptions o;
  o.retry_count = 7;
  s->Claim(g, b, ids, o, 300, &claimed, &dropped);
  s->CreateGroup("empty", Id(1005, 2), 17);
  s->CreateGroup("future", Id(9999, 0), -1);
  return s;
}

void ExpectSameStream(const StreamObject& x, const StreamObject& y) {
  EXPECT_EQ(x.Length(), y.Length());
  EXPECT_EQ(x.last_id(), y.last_id());
  EXPECT_EQ(x.first_id(), y.first_id());
  EXPECT_EQ(x.last_entry_id(), y.last_entry_id());
  EXPECT_EQ(x.max_deleted_id(), y.max_deleted_id());
  EXPECT_EQ(x.entries_added(), y.entries_added());
  StreamIterator i = x.Range(StreamId::Min(), StreamId::Max());
  StreamIterator j = y.Range(StreamId::Min(), StreamId::Max());
  for (; i.Valid() && j.Valid(); i.Next(), j.Next()) {
    ASSERT_EQ(i.id(), j.id());
    ASSERT_EQ(i.entry().fields, j.entry().fields);
  }
  EXPECT_FALSE(i.Valid());
  EXPECT_FALSE(j.Valid());
  ASSERT_EQ(x.groups().size(), y.groups().size());
  for (auto gx = x.groups().begin(), gy = y.groups().begin(); gx != x.groups().end(); ++gx, ++gy) {
    const StreamGroup& a = *gx->second;
    const StreamGroup& b = *gy->second;
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.last_id, b.last_id);
    EXPECT_EQ(a.entries_read, b.entries_read);
    ASSERT_EQ(a.pel.size(), b.pel.size());
    for (auto pa = a.pel.begin(), pb = b.pel.begin(); pa != a.pel.end(); ++pa, ++pb) {
      EXPECT_EQ(pa->first, pb->first);
      EXPECT_EQ(pa->second.delivery_ms, pb->second.delivery_ms);
      EXPECT_EQ(pa->second.delivery_count, pb->second.delivery_count);
      EXPECT_EQ(pa->second.consumer->name, pb->second.consumer->name);
    }
    ASSERT_EQ(a.consumers.size(), b.consumers.size());
    for (auto ca = a.consumers.begin(), cb = b.consumers.begin(); ca != a.consumers.end();
         ++ca, ++cb) {
      EXPECT_EQ(ca->second->name, cb->second->name);
      EXPECT_EQ(ca->second->seen_ms, cb->second->seen_ms);
      EXPECT_EQ(ca->second->active_ms, cb->second->active_ms);
      EXPECT_EQ(std::vector<StreamId>(ca->second->pending.begin(), ca->second->pending.end()),
                std::vector<StreamId>(cb->second->pending.begin(), cb->second->pending.end()));
    }
  }
}

TEST(StreamSerializeTest, RoundTripsEverything) {
  std::unique_ptr<StreamObject> s = RichStream();
  std::string ser;
  s->Serialize(&ser);
  std::string error;
  std::unique_ptr<StreamObject> back = StreamObject::Parse(ser, &error);
  ASSERT_NE(back, nullptr) << error;
  ExpectSameStream(*s, *back);
  std::string again;
  back->Serialize(&again);
  EXPECT_EQ(again, ser);  // canonical
  const StreamGroup* g = back->FindGroup("workers");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->pel.at(Id(1000, 2)).delivery_count, 7u);
  EXPECT_EQ(g->consumers.at("idle")->active_ms, -1);
  EXPECT_EQ(back->FindGroup("empty")->entries_read, 17);
  // The parsed stream works like any other.
  std::vector<std::string_view> fv = {"k", "v"};
  StreamId id;
  ASSERT_EQ(back->Add({}, fv, 1, &id), StreamStatus::kOk);
  EXPECT_EQ(id, Id(5000, 8));
}

TEST(StreamSerializeTest, FormIsIndependentOfNodeSizes) {
  std::unique_ptr<StreamObject> s = RichStream();
  std::string ser;
  s->Serialize(&ser);
  GlobalStreamLimits().node_max_entries = 3;
  std::string error;
  std::unique_ptr<StreamObject> small = StreamObject::Parse(ser, &error);
  GlobalStreamLimits().node_max_entries = 100;
  ASSERT_NE(small, nullptr) << error;
  EXPECT_GT(small->node_count(), s->node_count());
  std::string again;
  small->Serialize(&again);
  EXPECT_EQ(again, ser);
}

TEST(StreamSerializeTest, EmptyStreamWithGroups) {
  auto s_owner = std::make_unique<StreamObject>();
  StreamObject& s = *s_owner;
  s.CreateGroup("g", Id(0, 0), -1);
  ASSERT_EQ(s.SetId(Id(7, 7), 3, Id(7, 1)), StreamStatus::kOk);
  std::string ser;
  s.Serialize(&ser);
  std::string error;
  std::unique_ptr<StreamObject> back = StreamObject::Parse(ser, &error);
  ASSERT_NE(back, nullptr) << error;
  ExpectSameStream(s, *back);
  EXPECT_EQ(back->entries_added(), 3u);
  EXPECT_EQ(back->max_deleted_id(), Id(7, 1));
}

TEST(StreamSerializeTest, EveryTruncationIsRefused) {
  std::unique_ptr<StreamObject> s = RichStream();
  std::string ser;
  s->Serialize(&ser);
  ASSERT_GT(ser.size(), 1000u);
  // Every length up to 512, then every kDivisor-th (all of them in the Release build).
  for (size_t len = 0; len < ser.size(); len += len < 512 ? 1 : test_scale::kDivisor) {
    std::string error;
    EXPECT_EQ(StreamObject::Parse(std::string_view(ser.data(), len), &error), nullptr) << len;
    EXPECT_FALSE(error.empty()) << len;
  }
  std::string longer = ser + "x";
  std::string error;
  EXPECT_EQ(StreamObject::Parse(longer, &error), nullptr);
  EXPECT_NE(error.find("trailing"), std::string::npos) << error;
}

TEST(StreamSerializeTest, RandomCorruptionNeverCrashes) {
  std::unique_ptr<StreamObject> s = RichStream();
  std::string ser;
  s->Serialize(&ser);
  std::mt19937_64 rng(5);
  int accepted = 0;
  for (int round = 0; round < test_scale::Steps(4000); round++) {
    std::string bad = ser;
    int flips = 1 + static_cast<int>(rng() % 3);
    for (int f = 0; f < flips; f++) {
      size_t at = rng() % bad.size();
      // Mostly early bytes, where counts and IDs live, and some anywhere.
      if (round % 2 == 0) at = rng() % std::min<size_t>(bad.size(), 64);
      bad[at] = static_cast<char>(rng() % 4 == 0 ? bad[at] ^ (1 << (rng() % 8)) : rng() % 256);
    }
    std::string error;
    std::unique_ptr<StreamObject> p = StreamObject::Parse(bad, &error);
    if (p == nullptr) {
      EXPECT_FALSE(error.empty());
      continue;
    }
    // Whatever was accepted is a consistent stream that round-trips.
    accepted++;
    std::string again;
    p->Serialize(&again);
    std::unique_ptr<StreamObject> q = StreamObject::Parse(again, &error);
    ASSERT_NE(q, nullptr) << error;
    std::string third;
    q->Serialize(&third);
    EXPECT_EQ(third, again);
  }
  // Random bytes.
  for (int round = 0; round < 2000; round++) {
    std::string junk(rng() % 200, '\0');
    for (char& c : junk) c = static_cast<char>(rng() % 256);
    if (!junk.empty() && round % 2 == 0) junk[0] = static_cast<char>(kStreamFormatVersion);
    std::string error;
    std::unique_ptr<StreamObject> p = StreamObject::Parse(junk, &error);
    if (p == nullptr) {
      EXPECT_FALSE(error.empty());
    }
  }
  std::printf("stream corruption: %d of 4000 altered forms still parsed\n", accepted);
}

TEST(StreamSerializeTest, ParseChecksConsistency) {
  // Hand-made forms: version, length, last, first, max-deleted, entries-added, entries...
  auto form = [](std::initializer_list<int> bytes) {
    std::string s;
    for (int b : bytes) s.push_back(static_cast<char>(b));
    return s;
  };
  std::string error;
  // One entry 5-1 {a: b}, no groups: valid.
  std::string ok = form({1, 1, 5, 1, 5, 1, 0, 0, 1, 5, 1, 2, 1, 'a', 1, 'b', 0});
  ASSERT_NE(StreamObject::Parse(ok, &error), nullptr) << error;
  // Wrong version.
  EXPECT_EQ(
      StreamObject::Parse(form({2, 1, 5, 1, 5, 1, 0, 0, 1, 5, 1, 2, 1, 'a', 1, 'b', 0}), &error),
      nullptr);
  // Recorded first ID differs from the entry.
  EXPECT_EQ(
      StreamObject::Parse(form({1, 1, 5, 1, 5, 0, 0, 0, 1, 5, 1, 2, 1, 'a', 1, 'b', 0}), &error),
      nullptr);
  EXPECT_NE(error.find("first"), std::string::npos) << error;
  // Last ID below the entry.
  EXPECT_EQ(
      StreamObject::Parse(form({1, 1, 4, 1, 5, 1, 0, 0, 1, 5, 1, 2, 1, 'a', 1, 'b', 0}), &error),
      nullptr);
  // entries-added below the length.
  EXPECT_EQ(
      StreamObject::Parse(form({1, 1, 5, 1, 5, 1, 0, 0, 0, 5, 1, 2, 1, 'a', 1, 'b', 0}), &error),
      nullptr);
  // An entry without fields; "same names" on the first entry.
  EXPECT_EQ(StreamObject::Parse(form({1, 1, 5, 1, 5, 1, 0, 0, 1, 5, 1, 0, 0}), &error), nullptr);
  EXPECT_EQ(StreamObject::Parse(form({1, 1, 5, 1, 5, 1, 0, 0, 1, 5, 1, 3, 1, 'b', 0}), &error),
            nullptr);
  // A varint running past 64 bits.
  EXPECT_EQ(StreamObject::Parse(form({1,    0,    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                      0xff, 0x7f, 0,    0,    0,    0,    0,    0,    0,    0}),
                                &error),
            nullptr);
  // A huge entry count is refused before any work.
  EXPECT_EQ(StreamObject::Parse(form({1, 0xff, 0xff, 0xff, 0xff, 0x0f, 0, 0}), &error), nullptr);
  EXPECT_NE(error.find("count"), std::string::npos) << error;
  // A group whose PEL names a consumer that does not exist.
  std::string bad_owner = ok;
  bad_owner.back() = 1;  // one group
  bad_owner += form({1, 'g', 0, 0, 0, 0, 1, 5, 1, 0, 1, 3});
  EXPECT_EQ(StreamObject::Parse(bad_owner, &error), nullptr);
  EXPECT_NE(error.find("unknown consumer"), std::string::npos) << error;
  // The same with consumer "c" (seen 0, active -1) is fine.
  std::string good_owner = ok;
  good_owner.back() = 1;
  good_owner += form({1, 'g', 0, 0, 0, 1, 1, 'c', 0, 1, 1, 5, 1, 0, 1, 0});
  std::unique_ptr<StreamObject> p = StreamObject::Parse(good_owner, &error);
  ASSERT_NE(p, nullptr) << error;
  const StreamGroup* g = p->FindGroup("g");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->pel.at(Id(5, 1)).consumer->name, "c");
  EXPECT_EQ(g->consumers.at("c")->active_ms, -1);
}

TEST(StreamBuilderTest, BuildsFromRdbShapedParts) {
  StreamBuilder b;
  std::vector<std::string_view> e1 = {"temp", "20", "hum", "40"};
  std::vector<std::string_view> e2 = {"temp", "21", "hum", "41"};
  std::vector<std::string_view> e3 = {"note", "hello"};
  b.AppendRaw(Id(10, 0), e1);
  b.AppendRaw(Id(10, 1), e2);
  b.AppendRaw(Id(12, 0), e3);
  b.SetMetadata(Id(15, 0), 9, Id(11, 0));
  b.AddGroup("g", Id(10, 1), 8);
  b.AddPending(Id(10, 0), 1000, 2);
  b.AddPending(Id(10, 1), 2000, 1);
  b.AddPending(Id(11, 0), 3000, 5);  // an entry deleted since: PELs may name those
  b.AddConsumer("c1", 500, 900);
  b.AddConsumerPending(Id(10, 0));
  b.AddConsumerPending(Id(11, 0));
  b.AddConsumer("c2", 600, -1);
  b.AddConsumerPending(Id(10, 1));
  b.AddGroup("h", Id(0, 0), -1);
  std::string error;
  std::unique_ptr<StreamObject> s = b.Finish(&error);
  ASSERT_NE(s, nullptr) << error;
  EXPECT_EQ(s->Length(), 3u);
  EXPECT_EQ(s->first_id(), Id(10, 0));
  EXPECT_EQ(s->last_id(), Id(15, 0));
  EXPECT_EQ(s->entries_added(), 9u);
  EXPECT_EQ(s->max_deleted_id(), Id(11, 0));
  const StreamGroup* g = s->FindGroup("g");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->pel.size(), 3u);
  EXPECT_EQ(g->pel.at(Id(11, 0)).consumer->name, "c1");
  EXPECT_EQ(g->consumers.at("c1")->pending.size(), 2u);
  EXPECT_EQ(g->consumers.at("c2")->active_ms, -1);
  int64_t lag;
  EXPECT_FALSE(s->GroupLag(*g, &lag));  // 11-0 was deleted after the group's position
  StreamIterator it = s->Range(Id(12, 0), Id(12, 0));
  ASSERT_TRUE(it.Valid());
  EXPECT_EQ(it.entry().fields[0].second, "hello");

  // Without metadata: last ID is the last entry's, entries-added the length.
  StreamBuilder plain;
  plain.AppendRaw(Id(3, 0), e1);
  std::unique_ptr<StreamObject> p = plain.Finish(&error);
  ASSERT_NE(p, nullptr) << error;
  EXPECT_EQ(p->last_id(), Id(3, 0));
  EXPECT_EQ(p->entries_added(), 1u);
}

TEST(StreamBuilderTest, RefusesInconsistentParts) {
  std::vector<std::string_view> fv = {"f", "v"};
  std::vector<std::string_view> odd = {"f"};
  auto refused = [](StreamBuilder& b, const char* what) {
    std::string error;
    EXPECT_EQ(b.Finish(&error), nullptr) << what;
    EXPECT_FALSE(error.empty()) << what;
  };
  {
    StreamBuilder b;
    b.AppendRaw(Id(2, 0), fv);
    b.AppendRaw(Id(2, 0), fv);
    refused(b, "IDs out of order");
  }
  {
    StreamBuilder b;
    b.AppendRaw(Id(2, 0), odd);
    refused(b, "odd field list");
  }
  {
    StreamBuilder b;
    b.AppendRaw(Id(2, 0), fv);
    b.SetMetadata(Id(1, 0), 5, Id(0, 0));
    refused(b, "last ID below the last entry");
  }
  {
    StreamBuilder b;
    b.AppendRaw(Id(2, 0), fv);
    b.AppendRaw(Id(3, 0), fv);
    b.SetMetadata(Id(3, 0), 1, Id(0, 0));
    refused(b, "entries-added below the length");
  }
  {
    StreamBuilder b;
    b.AddGroup("g", Id(0, 0), -1);
    b.AddGroup("g", Id(0, 0), -1);
    refused(b, "duplicate group");
  }
  {
    StreamBuilder b;
    b.AddGroup("g", Id(0, 0), -1);
    b.AddConsumer("c", 0, 0);
    b.AddConsumer("c", 0, 0);
    refused(b, "duplicate consumer");
  }
  {
    StreamBuilder b;
    b.AddGroup("g", Id(0, 0), -1);
    b.AddPending(Id(1, 0), 0, 1);
    b.AddConsumer("c", 0, 0);
    refused(b, "PEL entry without an owner");
  }
  {
    StreamBuilder b;
    b.AddGroup("g", Id(0, 0), -1);
    b.AddPending(Id(1, 0), 0, 1);
    b.AddConsumer("c", 0, 0);
    b.AddConsumerPending(Id(1, 0));
    b.AddConsumer("d", 0, 0);
    b.AddConsumerPending(Id(1, 0));
    refused(b, "PEL entry owned twice");
  }
  {
    StreamBuilder b;
    b.AddGroup("g", Id(0, 0), -1);
    b.AddConsumer("c", 0, 0);
    b.AddConsumerPending(Id(4, 0));
    refused(b, "consumer entry not in the PEL");
  }
  {
    StreamBuilder b;
    b.AddGroup("g", Id(0, 0), -1);
    b.AddPending(Id(2, 0), 0, 1);
    b.AddPending(Id(1, 0), 0, 1);
    refused(b, "PEL out of order");
  }
  {
    StreamBuilder b;
    b.AddGroup("g", Id(0, 0), -1);
    b.AppendRaw(Id(1, 0), fv);
    refused(b, "entry after the groups");
  }
  {
    StreamBuilder b;
    b.AddGroup("g", Id(0, 0), -2);
    refused(b, "bad entries-read");
  }
  {
    StreamBuilder b;
    b.AddConsumer("c", 0, 0);
    refused(b, "consumer outside a group");
  }
}

}  // namespace
}  // namespace strata
