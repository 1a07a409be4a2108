#include "server/engine/tracking.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "server/base/notify_flags.h"

namespace strata {
namespace {

std::vector<std::pair<std::string, uint64_t>> Matches(const BcastRegistry& r,
                                                      std::string_view key) {
  std::vector<std::pair<std::string, uint64_t>> out;
  r.Match(key, [&](const std::string& prefix, const BcastRegistry::Ref& ref) {
    out.emplace_back(prefix, ref.client);
  });
  std::sort(out.begin(), out.end());
  return out;
}

TEST(BcastRegistryTest, EveryPrefixThatBeginsTheKeyMatchesOncePerClient) {
  BcastRegistry r;
  EXPECT_TRUE(r.empty());
  r.Add("", 1, 0);
  r.Add("user:", 2, 1);
  r.Add("user:1", 3, 0);
  r.Add("user:", 2, 1);  // again: no second registration
  r.Add("obj:", 2, 1);
  EXPECT_FALSE(r.empty());
  EXPECT_EQ(r.distinct_prefixes(), 4u);
  using M = std::vector<std::pair<std::string, uint64_t>>;
  EXPECT_EQ(Matches(r, "user:12"), (M{{"", 1}, {"user:", 2}, {"user:1", 3}}));
  EXPECT_EQ(Matches(r, "user:"), (M{{"", 1}, {"user:", 2}}));
  EXPECT_EQ(Matches(r, "use"), (M{{"", 1}}));
  EXPECT_EQ(Matches(r, "obj:x"), (M{{"", 1}, {"obj:", 2}}));
}

TEST(BcastRegistryTest, RemovingAClientLeavesTheOthers) {
  BcastRegistry r;
  r.Add("a:", 1, 0);
  r.Add("a:", 2, 1);
  r.Add("b:", 1, 0);
  r.Remove({"a:", "b:"}, 1);
  using M = std::vector<std::pair<std::string, uint64_t>>;
  EXPECT_EQ(Matches(r, "a:x"), (M{{"a:", 2}}));
  EXPECT_EQ(Matches(r, "b:x"), M{});
  EXPECT_EQ(r.distinct_prefixes(), 1u);
  r.Remove({"a:"}, 2);
  EXPECT_TRUE(r.empty());
  EXPECT_EQ(r.distinct_prefixes(), 0u);
  r.Remove({"never:"}, 9);  // nothing there: no effect
  EXPECT_TRUE(r.empty());
}

TEST(NotifyGateTest, TrackingOpensEveryChangeClassAndLeavesTheSettingAlone) {
  std::atomic<int64_t> refs{0};
  SetNotifyFlags(kNotifyKeyevent | kNotifyString);
  SetTrackingGate(refs);
  EXPECT_EQ(g_notify_gate.load(), kNotifyKeyevent | kNotifyString);
  refs = 2;
  SetTrackingGate(refs);
  uint32_t gate = g_notify_gate.load();
  EXPECT_TRUE(gate & kNotifyTracking);
  EXPECT_EQ(gate & kNotifyAll, static_cast<uint32_t>(kNotifyAll));
  EXPECT_FALSE(gate & kNotifyKeyMiss);  // not a change
  EXPECT_EQ(g_notify_flags.load(), kNotifyKeyevent | kNotifyString);
  // A new setting keeps the tracking bits while clients track.
  SetNotifyFlags(0);
  EXPECT_TRUE(g_notify_gate.load() & kNotifyTracking);
  refs = 0;
  SetTrackingGate(refs);
  EXPECT_EQ(g_notify_gate.load(), 0u);
}

}  // namespace
}  // namespace strata
