#include "server/cluster/cluster_state.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "server/engine/cluster_routing.h"

namespace strata {
namespace {

const std::string kMe(40, 'a');
const std::string kOther(40, 'b');
const std::string kReplica(40, 'c');

// A file as Redis 7.0 writes it: myself with a migrating and an importing slot, another
// master with a hostname, and that master's replica.
std::string RedisFile() {
  return kMe + " 127.0.0.1:30001@40001 myself,master - 0 0 1 connected 0-99 200-4999 " +
         "5001-16383 [50->-" + kOther + "] [150-<-" + kOther + "]\n" + kOther +
         " 127.0.0.1:30010@30011,other.example master - 0 1796450097793 7 connected 100-199 " +
         "5000\n" + kReplica + " 127.0.0.1:30020@40020 slave,fail? " + kOther +
         " 1796449990949 1796449989135 0 disconnected\n" + "vars currentEpoch 7 lastVoteEpoch 3\n";
}

TEST(ClusterStateTest, ReadsWhatRedisWritesAndWritesItBack) {
  std::unique_ptr<ClusterState> st;
  std::string error;
  ASSERT_TRUE(ClusterState::Parse(RedisFile(), &st, &error)) << error;
  EXPECT_EQ(st->myself().id, kMe);
  EXPECT_EQ(st->nodes().size(), 3u);
  EXPECT_EQ(st->current_epoch(), 7u);
  EXPECT_EQ(st->last_vote_epoch(), 3u);
  const ClusterNode* other = st->FindNode(kOther);
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(other->hostname, "other.example");
  EXPECT_EQ(other->cport, 30011);
  EXPECT_EQ(other->config_epoch, 7u);
  EXPECT_EQ(st->SlotOwner(150), other);
  EXPECT_EQ(st->SlotOwner(5000), other);
  EXPECT_EQ(st->SlotOwner(0), &st->myself());
  EXPECT_EQ(st->SlotsAssigned(), 16384u);
  EXPECT_EQ(st->ServingMasters(), 2u);
  EXPECT_EQ(st->migrating().at(50), kOther);
  EXPECT_EQ(st->importing().at(150), kOther);
  const ClusterNode* rep = st->FindNode(kReplica);
  EXPECT_EQ(rep->flags, kNodeReplica | kNodePFail);
  EXPECT_EQ(st->ReplicasOf(*other).size(), 1u);
  // A replica's line shows its master's config epoch.
  EXPECT_NE(st->NodeLine(*rep).find(" 7 disconnected"), std::string::npos);
  // What it writes reads back the same.
  std::string text = st->Serialize();
  std::unique_ptr<ClusterState> again;
  ASSERT_TRUE(ClusterState::Parse(text, &again, &error)) << error;
  EXPECT_EQ(again->Serialize(), text);
  EXPECT_NE(text.find(" 0-99 200-4999 5001-16383 [50->-" + kOther + "] [150-<-" + kOther + "]"),
            std::string::npos);
}

TEST(ClusterStateTest, RefusesABadFileNamingTheLine) {
  struct Case {
    std::string text;
    std::string error;
  };
  std::string me = kMe + " 127.0.0.1:1@2 myself,master - 0 0 0 connected";
  std::vector<Case> cases = {
      {"", "no node is marked myself"},
      {kOther + " 127.0.0.1:1@2 master - 0 0 0 connected\n", "no node is marked myself"},
      {me + " 0-16384\n", "line 1: bad slot range '0-16384'"},
      {me + " 9-3\n", "line 1: bad slot range '9-3'"},
      {me + " x\n", "line 1: bad slot 'x'"},
      {me + "\n" + "short line\n", "line 2: a node line has fewer than 8 fields"},
      {"zz 127.0.0.1:1@2 myself,master - 0 0 0 connected\n", "line 1: 'zz' is not a node id"},
      {kMe + " 127.0.0.1:1@2 myself,boss - 0 0 0 connected\n", "line 1: unknown flag 'boss'"},
      {kMe + " 127.0.0.1:99999@2 myself,master - 0 0 0 connected\n", "line 1: bad port"},
      {kMe + " 127.0.0.1:1@2 myself,master - 0 0 0 linked\n", "line 1: bad link state"},
      {me + "\n" + me + "\n", "line 2: node " + kMe + " twice"},
      {me + " [5->-nobody]\n", "line 1: bad slot entry '[5->-nobody]'"},
      {me + "\nvars currentEpoch x\n", "line 2: currentEpoch is not a number"},
  };
  for (const Case& c : cases) {
    std::unique_ptr<ClusterState> st;
    std::string error;
    EXPECT_FALSE(ClusterState::Parse(c.text, &st, &error)) << c.text;
    EXPECT_EQ(error, c.error) << c.text;
  }
  // A slot two nodes claim keeps its first owner, as Redis keeps it.
  {
    std::unique_ptr<ClusterState> st;
    std::string error;
    ASSERT_TRUE(ClusterState::Parse(kMe + " 127.0.0.1:1@2 myself,master - 0 0 0 connected 0-10\n" +
                                        kOther + " 127.0.0.1:3@4 master - 0 0 0 connected 5-20\n",
                                    &st, &error))
        << error;
    EXPECT_EQ(st->SlotOwner(5), &st->myself());
    EXPECT_EQ(st->SlotOwner(11), st->FindNode(kOther));
  }
  // A missing bus port is port + 10000; unknown vars are skipped.
  std::unique_ptr<ClusterState> st;
  std::string error;
  ASSERT_TRUE(ClusterState::Parse(kMe + " 10.0.0.1:7000 myself,master - 0 0 0 connected\n" +
                                      "vars currentEpoch 2 lastVoteEpoch 1 futureVar 9\n",
                                  &st, &error))
      << error;
  EXPECT_EQ(st->myself().cport, 17000);
  EXPECT_EQ(st->current_epoch(), 2u);
}

TEST(ClusterStateTest, StateAndRouting) {
  ClusterState st(kMe);
  st.myself().ip = "10.0.0.1";
  st.myself().port = 7000;
  // Serving nothing and knowing no one: down.
  EXPECT_FALSE(st.Ok(true));
  EXPECT_FALSE(st.Ok(false));
  for (uint32_t s = 0; s < 100; s++) st.AssignToMyself(s);
  EXPECT_FALSE(st.Ok(true));  // slots without an owner
  EXPECT_TRUE(st.Ok(false));
  std::string k;  // a key of a slot below 100
  for (int i = 0; k.empty(); i++) {
    std::string c = "k" + std::to_string(i);
    if (KeySlot(c) < 100) k = c;
  }
  std::vector<std::string_view> keys = {k};
  auto r = st.BuildRouting(false, false);
  EXPECT_TRUE(r->ok);
  EXPECT_EQ(RouteKeys(*r, keys, true), "");
  // The slot of "a" (15495) has no owner.
  std::vector<std::string_view> unowned = {"a"};
  EXPECT_EQ(RouteKeys(*r, unowned, false), "CLUSTERDOWN Hash slot not served");
  // Full coverage required: down; reads still served when allowed.
  r = st.BuildRouting(true, true);
  EXPECT_FALSE(r->ok);
  EXPECT_EQ(RouteKeys(*r, keys, false), "");
  EXPECT_EQ(RouteKeys(*r, keys, true),
            "CLUSTERDOWN The cluster is down and only accepts read commands");
  r = st.BuildRouting(true, false);
  EXPECT_EQ(RouteKeys(*r, keys, false), "CLUSTERDOWN The cluster is down");
  st.Reset(true, kOther);
  EXPECT_EQ(st.myself().id, kOther);
  EXPECT_EQ(st.SlotsAssigned(), 0u);
}

TEST(ClusterStateTest, RedirectsAndCrossSlot) {
  std::unique_ptr<ClusterState> st;
  std::string error;
  ASSERT_TRUE(ClusterState::Parse(
      kMe + " 127.0.0.1:7000@17000 myself,master - 0 0 1 connected " + "0-8191\n" + kOther +
          " 127.0.0.2:7001@17001 master - 0 0 2 connected " + "8192-16383\n",
      &st, &error))
      << error;
  auto r = st->BuildRouting(true, false);
  ASSERT_TRUE(r->ok);
  std::string mine_a, mine_b, theirs_a, theirs_b;
  for (int i = 0; mine_b.empty() || theirs_b.empty(); i++) {
    std::string k = "key" + std::to_string(i);
    std::string& a = KeySlot(k) < 8192 ? mine_a : theirs_a;
    std::string& b = KeySlot(k) < 8192 ? mine_b : theirs_b;
    if (a.empty()) {
      a = k;
    } else if (b.empty() && KeySlot(k) != KeySlot(a)) {
      b = k;
    }
  }
  std::vector<std::string_view> k1 = {theirs_a};
  EXPECT_EQ(RouteKeys(*r, k1, false),
            "MOVED " + std::to_string(KeySlot(theirs_a)) + " 127.0.0.2:7001");
  // Several slots all served here run; several slots not all here are CROSSSLOT.
  std::vector<std::string_view> k2 = {mine_a, mine_b};
  EXPECT_EQ(RouteKeys(*r, k2, true), "");
  std::vector<std::string_view> k3 = {mine_a, theirs_a};
  EXPECT_EQ(RouteKeys(*r, k3, true), "CROSSSLOT Keys in request don't hash to the same slot");
  std::vector<std::string_view> k4 = {theirs_a, theirs_b};
  EXPECT_EQ(RouteKeys(*r, k4, true), "CROSSSLOT Keys in request don't hash to the same slot");
  // FORGET: the other node's slots have no owner any more.
  st->Forget(st->FindNode(kOther));
  EXPECT_EQ(st->SlotsAssigned(), 8192u);
  EXPECT_EQ(st->nodes().size(), 1u);
}

// Resharding: a slot this node migrates, and one it imports (cluster_routing.h).
TEST(ClusterStateTest, OpenSlotsAskAndTryAgain) {
  std::unique_ptr<ClusterState> st;
  std::string error;
  ASSERT_TRUE(ClusterState::Parse(
      kMe + " 127.0.0.1:7000@17000 myself,master - 0 0 1 connected " + "0-8191\n" + kOther +
          " 127.0.0.2:7001@17001 master - 0 0 2 connected " + "8192-16383\n",
      &st, &error))
      << error;
  // Keys of one slot of each side, and a key of another slot of mine.
  std::string mine, mine2, theirs, other_mine;
  for (int i = 0; other_mine.empty() || theirs.empty(); i++) {
    std::string k = "{tag" + std::to_string(i) + "}";
    if (KeySlot(k) < 8192 && mine.empty()) {
      mine = k + "a";
      mine2 = k + "b";
    } else if (KeySlot(k) < 8192 && KeySlot(k) != KeySlot(mine)) {
      other_mine = k;
    } else if (KeySlot(k) >= 8192 && theirs.empty()) {
      theirs = k + "a";
    }
  }
  uint32_t out_slot = KeySlot(mine), in_slot = KeySlot(theirs);
  st->SetMigrating(out_slot, kOther);
  st->SetImporting(in_slot, kOther);
  EXPECT_NE(st->NodesText().find(" [" + std::to_string(out_slot) + "->-" + kOther + "]"),
            std::string::npos);
  EXPECT_NE(st->NodesText().find(" [" + std::to_string(in_slot) + "-<-" + kOther + "]"),
            std::string::npos);
  auto r = st->BuildRouting(true, false);
  // The one-key fast path compares the owner with myself: a migrating slot never passes.
  EXPECT_EQ(r->owner[out_slot], SlotRouting::kMigrating);

  std::vector<std::string_view> one = {mine};
  std::vector<std::string_view> two = {mine, mine2};
  RouteDecision d = Route(*r, one, RouteQuery{false, false, false, nullptr});
  EXPECT_EQ(d.kind, RouteDecision::kNeedsPresence);
  KeyPresence here{1, 0}, gone{0, 1}, some{1, 1}, none{0, 2};
  EXPECT_EQ(Route(*r, one, RouteQuery{false, false, false, &here}).kind, RouteDecision::kHere);
  d = Route(*r, one, RouteQuery{true, false, false, &gone});
  EXPECT_EQ(d.error, "ASK " + std::to_string(out_slot) + " 127.0.0.2:7001");
  EXPECT_EQ(Route(*r, two, RouteQuery{false, false, false, &some}).error, kTryAgainError);
  EXPECT_EQ(Route(*r, two, RouteQuery{false, false, false, &none}).error,
            "ASK " + std::to_string(out_slot) + " 127.0.0.2:7001");
  // Keys of two slots, one of them migrating: tried again (all here otherwise).
  std::vector<std::string_view> mixed = {mine, other_mine};
  EXPECT_EQ(Route(*r, mixed, RouteQuery{false, false, false, nullptr}).error, kTryAgainError);
  // Without the presence, RouteKeys (EXEC, the tools) answers TRYAGAIN.
  EXPECT_EQ(RouteKeys(*r, one, false), kTryAgainError);

  // Importing: MOVED to the owner without ASKING; here with it.
  std::vector<std::string_view> in_one = {theirs};
  EXPECT_EQ(Route(*r, in_one, RouteQuery{false, false, false, nullptr}).error,
            "MOVED " + std::to_string(in_slot) + " 127.0.0.2:7001");
  EXPECT_EQ(Route(*r, in_one, RouteQuery{true, false, true, nullptr}).kind, RouteDecision::kHere);
  std::string theirs2 = theirs.substr(0, theirs.size() - 1) + "b";
  std::vector<std::string_view> in_two = {theirs, theirs2};
  EXPECT_EQ(Route(*r, in_two, RouteQuery{false, false, true, nullptr}).kind,
            RouteDecision::kNeedsPresence);
  EXPECT_EQ(Route(*r, in_two, RouteQuery{false, false, true, &some}).error, kTryAgainError);
  EXPECT_EQ(Route(*r, in_two, RouteQuery{false, false, true, &here}).kind, RouteDecision::kHere);
  // The same key twice is one key (Redis).
  std::vector<std::string_view> same = {theirs, theirs};
  EXPECT_EQ(Route(*r, same, RouteQuery{false, false, true, nullptr}).kind, RouteDecision::kHere);

  // Closed again: the plain layout.
  st->ClearMigrating(out_slot);
  st->ClearImporting(in_slot);
  r = st->BuildRouting(true, false);
  EXPECT_EQ(RouteKeys(*r, one, false), "");
  EXPECT_TRUE(r->migrating_to.empty() && r->importing_from.empty());
  // A replica has no open slots of its own.
  st->SetMigrating(out_slot, kOther);
  st->myself().flags = kNodeMyself | kNodeReplica;
  st->myself().master_id = kOther;
  r = st->BuildRouting(true, false);
  EXPECT_NE(r->owner[out_slot], SlotRouting::kMigrating);
}

}  // namespace
}  // namespace strata
