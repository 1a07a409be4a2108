// strata-bench --cluster-mode's pure logic: reading CLUSTER SLOTS into the slot map,
// parsing -MOVED / -ASK, and what a MOVED does to the map (one slot moves, node indexes
// stay, a new node is added).
#include "tools/strata-bench/cluster_map.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/key_slot.h"
#include "tools/strata-mem/reply.h"

namespace strata::bench {
namespace {

using mem::Reply;

Reply Int(int64_t v) {
  Reply r;
  r.type = Reply::Type::kInteger;
  r.integer = v;
  return r;
}

Reply Bulk(std::string s) {
  Reply r;
  r.type = Reply::Type::kBulk;
  r.str = std::move(s);
  return r;
}

Reply Array(std::vector<Reply> elements) {
  Reply r;
  r.type = Reply::Type::kArray;
  r.elements = std::move(elements);
  return r;
}

Reply Node(const std::string& host, int64_t port, const std::string& id) {
  return Array({Bulk(host), Int(port), Bulk(id)});
}

// CLUSTER SLOTS of a 3-master cluster, each master with one replica, as Redis 7 sends it
// (master first, then replicas; extra fields ignored).
Reply ThreeMasters() {
  return Array({
      Array({Int(0), Int(5460), Node("127.0.0.1", 7000, "a"), Node("127.0.0.1", 7003, "d")}),
      Array({Int(5461), Int(10922), Node("127.0.0.1", 7001, "b"), Node("127.0.0.1", 7004, "e")}),
      Array({Int(10923), Int(16383), Node("127.0.0.1", 7002, "c"), Node("127.0.0.1", 7005, "f")}),
  });
}

TEST(StrataBenchClusterMap, ParsesClusterSlotsIntoMastersAndTheirSlots) {
  std::vector<SlotRange> ranges;
  std::string error;
  ASSERT_TRUE(ParseClusterSlots(ThreeMasters(), "seed", &ranges, &error)) << error;
  ASSERT_EQ(ranges.size(), 3u);
  EXPECT_EQ(ranges[1].first, 5461u);
  EXPECT_EQ(ranges[1].last, 10922u);
  EXPECT_EQ(ranges[1].host, "127.0.0.1");
  EXPECT_EQ(ranges[1].port, 7001);

  ClusterMap map;
  EXPECT_EQ(map.covered_slots(), 0u);
  EXPECT_EQ(map.OwnerOf(0), ClusterMap::kNoNode);
  ASSERT_TRUE(map.Apply(ranges));
  ASSERT_EQ(map.nodes().size(), 3u);  // masters only: replicas get no requests
  EXPECT_EQ(map.nodes()[0].name, "127.0.0.1:7000");
  EXPECT_EQ(map.nodes()[2].name, "127.0.0.1:7002");
  EXPECT_EQ(map.covered_slots(), kClusterSlots);
  EXPECT_EQ(map.OwnerOf(0), 0u);
  EXPECT_EQ(map.OwnerOf(5460), 0u);
  EXPECT_EQ(map.OwnerOf(5461), 1u);
  EXPECT_EQ(map.OwnerOf(10922), 1u);
  EXPECT_EQ(map.OwnerOf(10923), 2u);
  EXPECT_EQ(map.OwnerOf(16383), 2u);
}

TEST(StrataBenchClusterMap, UnknownHostMeansTheNodeAskedAndGapsGoToTheFirstNode) {
  const Reply reply = Array({
      Array({Int(100), Int(199), Node("", 7000, "a")}),
      Array({Int(300), Int(300), Node("?", 7001, "b")}),
      Array({Int(400), Int(499), Node("::1", 7002, "c")}),
  });
  std::vector<SlotRange> ranges;
  std::string error;
  ASSERT_TRUE(ParseClusterSlots(reply, "10.0.0.9", &ranges, &error)) << error;
  EXPECT_EQ(ranges[0].host, "10.0.0.9");
  EXPECT_EQ(ranges[1].host, "10.0.0.9");
  ClusterMap map;
  ASSERT_TRUE(map.Apply(ranges));
  EXPECT_EQ(map.nodes()[2].name, "[::1]:7002");
  EXPECT_EQ(map.covered_slots(), 100u + 1 + 100);
  EXPECT_EQ(map.OwnerOf(99), ClusterMap::kNoNode);
  EXPECT_EQ(map.NodeForSlot(99), 0u);  // the first node answers -MOVED or an error
  EXPECT_EQ(map.NodeForSlot(300), 1u);

  // An empty reply parses (the caller decides that no slots is an error).
  ASSERT_TRUE(ParseClusterSlots(Array({}), "h", &ranges, &error)) << error;
  EXPECT_TRUE(ranges.empty());
}

TEST(StrataBenchClusterMap, RejectsRepliesOfAnotherShapeNamingTheProblem) {
  std::vector<SlotRange> ranges;
  std::string error;
  Reply err;
  err.type = Reply::Type::kError;
  err.str = "ERR This instance has cluster support disabled";
  EXPECT_FALSE(ParseClusterSlots(err, "h", &ranges, &error));
  EXPECT_NE(error.find("cluster support disabled"), std::string::npos) << error;

  EXPECT_FALSE(ParseClusterSlots(Bulk("x"), "h", &ranges, &error));
  EXPECT_NE(error.find("not an array"), std::string::npos) << error;

  const std::vector<Reply> bad = {
      Array({Int(0), Int(5460)}),                                  // no master
      Array({Int(5461), Int(100), Node("127.0.0.1", 7000, "a")}),  // last < first
      Array({Int(0), Int(16384), Node("127.0.0.1", 7000, "a")}),   // past the last slot
      Array({Int(-1), Int(10), Node("127.0.0.1", 7000, "a")}),     // negative
      Array({Int(0), Int(10), Node("127.0.0.1", 0, "a")}),         // port 0
      Array({Int(0), Int(10), Array({Bulk("127.0.0.1")})}),        // no port
      Array({Int(0), Int(10), Array({Int(1), Int(7000)})}),        // host not a string
      Bulk("0-10"),
  };
  for (const Reply& entry : bad) {
    EXPECT_FALSE(ParseClusterSlots(Array({entry}), "h", &ranges, &error)) << entry.Describe();
    EXPECT_NE(error.find("CLUSTER SLOTS entry 0"), std::string::npos) << error;
  }
}

TEST(StrataBenchClusterMap, ParsesMovedAndAskRedirects) {
  Redirect r = ParseRedirect("MOVED 3999 127.0.0.1:6381");
  EXPECT_EQ(r.kind, RedirectKind::kMoved);
  EXPECT_EQ(r.slot, 3999u);
  EXPECT_EQ(r.host, "127.0.0.1");
  EXPECT_EQ(r.port, 6381);

  r = ParseRedirect("ASK 16383 10.1.2.3:7000");
  EXPECT_EQ(r.kind, RedirectKind::kAsk);
  EXPECT_EQ(r.slot, 16383u);
  EXPECT_EQ(r.host, "10.1.2.3");
  EXPECT_EQ(r.port, 7000);

  r = ParseRedirect("MOVED 0 ::1:7000");  // Redis writes IPv6 without brackets
  EXPECT_EQ(r.kind, RedirectKind::kMoved);
  EXPECT_EQ(r.host, "::1");
  EXPECT_EQ(r.port, 7000);
  EXPECT_EQ(ParseRedirect("MOVED 0 [::1]:7000").host, "::1");

  r = ParseRedirect("MOVED 12 :7000");  // unknown endpoint: the replying node's host
  EXPECT_EQ(r.kind, RedirectKind::kMoved);
  EXPECT_TRUE(r.host.empty());
  EXPECT_EQ(r.port, 7000);

  for (const char* other :
       {"ERR wrong number of arguments", "MOVED", "MOVED 3999", "MOVED 16384 127.0.0.1:7000",
        "MOVED -1 127.0.0.1:7000", "MOVED x 127.0.0.1:7000", "MOVED 1 127.0.0.1",
        "MOVED 1 127.0.0.1:0", "MOVED 1 127.0.0.1:65536", "MOVED 1 127.0.0.1:70x",
        "ASKING 1 127.0.0.1:7000", "moved 1 127.0.0.1:7000", "TRYAGAIN Multiple keys",
        "CLUSTERDOWN Hash slot not served", "MOVED 1 a b:7000"}) {
    EXPECT_EQ(ParseRedirect(other).kind, RedirectKind::kNone) << other;
  }
}

TEST(StrataBenchClusterMap, MovedMovesOneSlotAndKeepsNodeIndexes) {
  std::vector<SlotRange> ranges;
  std::string error;
  ASSERT_TRUE(ParseClusterSlots(ThreeMasters(), "seed", &ranges, &error)) << error;
  ClusterMap map;
  ASSERT_TRUE(map.Apply(ranges));

  // What a client does with "-MOVED <slot> <host>:<port>": the named node (new or known)
  // owns that slot from now on; nothing else changes.
  const uint32_t slot = KeySlot("memtier-42");
  const uint32_t before = map.NodeForSlot(slot);
  // The redirect's host points into the text, which must outlive it.
  const std::string text = "MOVED " + std::to_string(slot) + " 127.0.0.1:7009";
  const Redirect to = ParseRedirect(text);
  ASSERT_EQ(to.kind, RedirectKind::kMoved);
  ASSERT_EQ(to.slot, slot);
  const uint32_t node = map.FindOrAddNode(to.host, to.port);
  EXPECT_EQ(node, 3u);
  map.SetOwner(to.slot, node);
  EXPECT_EQ(map.NodeForSlot(slot), 3u);
  EXPECT_EQ(map.nodes()[3].name, "127.0.0.1:7009");
  for (uint32_t s = 0; s < kClusterSlots; ++s) {
    if (s != slot) {
      ASSERT_NE(map.OwnerOf(s), 3u) << s;
    }
  }
  EXPECT_EQ(map.covered_slots(), kClusterSlots);

  // A known node keeps its index; moving the slot back restores the old owner.
  EXPECT_EQ(map.FindOrAddNode(map.nodes()[before].host, map.nodes()[before].port), before);
  map.SetOwner(slot, before);
  EXPECT_EQ(map.NodeForSlot(slot), before);

  // A refresh (CLUSTER SLOTS again) overwrites the slots it lists, keeping indexes.
  const Reply moved_range = Array({
      Array({Int(0), Int(99), Node("127.0.0.1", 7009, "z")}),
  });
  ASSERT_TRUE(ParseClusterSlots(moved_range, "seed", &ranges, &error)) << error;
  ASSERT_TRUE(map.Apply(ranges));
  EXPECT_EQ(map.nodes().size(), 4u);
  EXPECT_EQ(map.OwnerOf(0), 3u);
  EXPECT_EQ(map.OwnerOf(99), 3u);
  EXPECT_EQ(map.OwnerOf(100), 0u);
}

TEST(StrataBenchClusterMap, HashTagsPickTheSlotAsRedisDoes) {
  // The key a request names decides its node: Redis's CRC16 of the hash tag.
  EXPECT_EQ(KeySlot("123456789"), 0x31C3u % kClusterSlots);
  EXPECT_EQ(KeySlot("{user1000}.following"), KeySlot("{user1000}.followers"));
  EXPECT_EQ(KeySlot("{tag}memtier-1"), KeySlot("tag"));
  EXPECT_EQ(KeySlot("foo{}{bar}"), KeySlot(std::string("foo{}{bar}")));
  EXPECT_NE(KeySlot("foo{}{bar}"), KeySlot("bar"));
}

TEST(StrataBenchClusterMap, NodeListIsBounded) {
  ClusterMap map;
  for (uint32_t i = 0; i < ClusterMap::kMaxNodes; ++i) {
    ASSERT_EQ(map.FindOrAddNode("10.0.0.1", static_cast<int>(1000 + i)), i);
  }
  EXPECT_EQ(map.FindOrAddNode("10.0.0.2", 1), ClusterMap::kNoNode);
  EXPECT_EQ(map.FindOrAddNode("10.0.0.1", 1000), 0u);  // known ones still resolve
  std::vector<SlotRange> ranges = {SlotRange{0, 10, "10.0.0.3", 7000}};
  EXPECT_FALSE(map.Apply(ranges));
}

}  // namespace
}  // namespace strata::bench
