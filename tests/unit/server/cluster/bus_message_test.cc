#include "server/cluster/bus_message.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <utility>
#include <vector>

namespace strata::bus {
namespace {

std::string Unhex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  }
  return out;
}

// A MEET as redis-server 7.0.15 sent it (captured from its bus): port 30001, bus port
// 40001, flags myself|master, state fail, no slots, no gossip, and one extension, the
// hostname "myhost.example". Only its non-zero bytes are listed.
std::string RedisMeet() {
  std::string b(2280, '\0');
  std::vector<std::pair<size_t, std::string>> runs = {
      {0, "52436d62"},
      {6, "08e8000175310002"},
      {40, "33656239306137333537363766303662383363373264386166626564646437356432353030316564"},
      {2215, "01"},
      {2248, "9c4100110104"},
      {2259, "18"},
      {2264, "6d79686f73742e6578616d706c65"},
  };
  for (auto& [at, hex] : runs) {
    std::string bytes = Unhex(hex);
    b.replace(at, bytes.size(), bytes);
  }
  return b;
}

TEST(BusMessageTest, ReadsAndWritesRedisMeetByteForByte) {
  std::string wire = RedisMeet();
  uint32_t len = 0;
  ASSERT_EQ(PeekFrame(wire.substr(0, 8), 1 << 20, &len), Frame::kReady);
  EXPECT_EQ(len, 2280u);
  Message m;
  std::string why;
  ASSERT_TRUE(Decode(wire, &m, &why)) << why;
  EXPECT_EQ(m.h.type, kMeet);
  EXPECT_EQ(m.h.port, 30001);
  EXPECT_EQ(m.h.cport, 40001);
  EXPECT_EQ(m.h.sender, "3eb90a735767f06b83c72d8afbeddd75d25001ed");
  EXPECT_EQ(m.h.flags, 17);
  EXPECT_EQ(m.h.state, 1);
  EXPECT_EQ(m.h.mflags, kExtData);
  EXPECT_TRUE(m.h.master.empty());
  EXPECT_TRUE(m.h.ip.empty());
  EXPECT_TRUE(m.gossip.empty());
  EXPECT_EQ(m.hostname, "myhost.example");
  // What this side writes for the same facts is the same bytes.
  Message ours;
  ours.h.type = kMeet;
  ours.h.port = 30001;
  ours.h.cport = 40001;
  ours.h.sender = "3eb90a735767f06b83c72d8afbeddd75d25001ed";
  ours.h.flags = 17;
  ours.h.state = 1;
  ours.hostname = "myhost.example";
  EXPECT_EQ(Encode(ours), wire);
}

TEST(BusMessageTest, EveryTypeRoundTrips) {
  Message base;
  base.h.port = 7000;
  base.h.cport = 17000;
  base.h.current_epoch = 0x0102030405060708ull;
  base.h.config_epoch = 9;
  base.h.offset = 123456789;
  base.h.sender = std::string(40, 'a');
  base.h.master = std::string(40, 'b');
  base.h.ip = "10.1.2.3";
  base.h.flags = 2;
  SetSlot(&base.h.slots, 0);
  SetSlot(&base.h.slots, 16383);
  for (uint16_t type = 0; type < kTypeCount; type++) {
    Message m = base;
    m.h.type = type;
    if (type <= kMeet) {
      m.gossip.push_back(Gossip{std::string(40, 'c'), 5, 6, "::1", 7001, 17001, 1, 0});
      m.gossip.push_back(Gossip{std::string(40, 'd'), 0, 0, "10.0.0.9", 7002, 17002, 5, 0});
      m.hostname = "node-1.example";
      m.human_nodename = "n1";
      m.shard_id = std::string(40, 'e');
      m.forgotten.push_back(ForgottenNode{std::string(40, 'f'), 60});
    }
    if (type == kFail || type == kUpdate) m.node = std::string(40, 'c');
    if (type == kUpdate) {
      m.update_epoch = 77;
      SetSlot(&m.update_slots, 100);
    }
    if (type == kPublish || type == kPublishShard) {
      m.channel = "news";
      m.payload = std::string("hello\0world", 11);
    }
    if (type == kModule) {
      m.module_id = 0x1122334455667788ull;
      m.module_type = 7;
      m.payload = "module bytes";
    }
    if (type == kAuthRequest) m.h.mflags = kForceAck;
    std::string wire = Encode(m);
    Message back;
    std::string why;
    ASSERT_TRUE(Decode(wire, &back, &why)) << TypeName(type) << ": " << why;
    EXPECT_EQ(Encode(back), wire) << TypeName(type);
    EXPECT_EQ(back.h.current_epoch, base.h.current_epoch);
    EXPECT_EQ(back.h.master, base.h.master);
    EXPECT_EQ(back.h.ip, "10.1.2.3");
    EXPECT_TRUE(SlotSet(back.h.slots, 16383));
    EXPECT_FALSE(SlotSet(back.h.slots, 1));
    if (type <= kMeet) {
      ASSERT_EQ(back.gossip.size(), 2u);
      EXPECT_EQ(back.gossip[0].ip, "::1");
      EXPECT_EQ(back.gossip[1].flags, 5);
      EXPECT_EQ(back.hostname, "node-1.example");
      EXPECT_EQ(back.shard_id, std::string(40, 'e'));
      EXPECT_EQ(back.forgotten.at(0).ttl_s, 60u);
    }
    if (type == kPublish) {
      EXPECT_EQ(back.payload, std::string("hello\0world", 11));
    }
    if (type == kUpdate) {
      EXPECT_TRUE(SlotSet(back.update_slots, 100));
    }
    if (type == kModule) {
      EXPECT_EQ(back.module_id, 0x1122334455667788ull);
    }
  }
  // Lengths Redis computes: FAIL 2296, UPDATE 4352, the failover messages the header.
  Message f = base;
  f.h.type = kFail;
  EXPECT_EQ(Encode(f).size(), 2296u);
  f.h.type = kUpdate;
  EXPECT_EQ(Encode(f).size(), 4352u);
  f.h.type = kMfStart;
  EXPECT_EQ(Encode(f).size(), 2256u);
  // No extension: no count and no EXT_DATA flag.
  Message p = base;
  std::string wire = Encode(p);
  EXPECT_EQ(wire.size(), 2256u);
  EXPECT_EQ(wire[2253], 0);
  EXPECT_EQ(wire[2215], 0);
}

TEST(BusMessageTest, FramingRefusesWhatRedisCloses) {
  uint32_t len = 0;
  EXPECT_EQ(PeekFrame("RCmb", 1 << 20, &len), Frame::kNeedMore);
  EXPECT_EQ(PeekFrame(std::string("RCmx\0\0\x08\xd0", 8), 1 << 20, &len), Frame::kBad);
  EXPECT_EQ(PeekFrame(std::string("RCmb\0\0\x08\xcf", 8), 1 << 20, &len), Frame::kBad);  // 2255
  EXPECT_EQ(PeekFrame(std::string("RCmb\0\0\x08\xd0", 8), 1 << 20, &len), Frame::kReady);
  EXPECT_EQ(len, 2256u);
  EXPECT_EQ(PeekFrame(std::string("RCmb\0\x20\0\0", 8), 1 << 20, &len), Frame::kBad);  // 2 MiB
}

TEST(BusMessageTest, DropsWhatDoesNotHoldTogether) {
  std::string meet = RedisMeet();
  auto dropped = [](std::string wire, const std::string& want) {
    Message m;
    std::string why;
    EXPECT_FALSE(Decode(wire, &m, &why)) << want;
    EXPECT_NE(why.find(want), std::string::npos) << why;
  };
  auto set_len = [](std::string* w) {
    uint32_t n = static_cast<uint32_t>(w->size());
    for (int i = 0; i < 4; i++) (*w)[4 + i] = static_cast<char>(n >> (24 - 8 * i));
  };
  {
    std::string w = meet;
    w[9] = 2;  // version 2
    dropped(w, "protocol version 2");
  }
  {
    std::string w = meet + std::string(8, '\0');  // trailing bytes
    set_len(&w);
    dropped(w, "a meet message of length 2288 (expected 2280)");
  }
  {
    std::string w = meet;
    w[2253] = 0;  // the extension's bytes without the EXT_DATA flag
    dropped(w, "(expected 2256)");
  }
  {
    std::string w = meet;
    w[2259] = 0x14;  // an extension of 20 bytes
    dropped(w, "not a multiple of 8");
  }
  {
    std::string w = meet;
    w[2259] = 0x20;  // 32 bytes, past the end
    dropped(w, "runs past its end");
  }
  {
    std::string w = meet;
    w[2215] = 2;  // two extensions announced, one there
    dropped(w, "runs past its end");
  }
  {
    std::string w = meet;
    for (size_t i = 2264; i < 2280; i++) w[i] = 'x';  // a hostname without its NUL
    dropped(w, "malformed extension of type 0");
  }
  {
    std::string w = meet;
    w[15] = 1;  // one gossip entry announced, none there
    dropped(w, "gossip entries in 24 bytes");
  }
  {
    // Redis 7.0 crashes on an extension count without the flag and without bytes; here
    // the count is not read without the flag.
    std::string w = meet.substr(0, 2256);
    set_len(&w);
    w[2253] = 0;
    w[2215] = 2;
    Message m;
    std::string why;
    EXPECT_TRUE(Decode(w, &m, &why)) << why;
    EXPECT_TRUE(m.hostname.empty());
  }
  {
    Message f;
    f.h.type = kFail;
    f.h.sender = std::string(40, 'a');
    f.node = std::string(40, 'b');
    std::string w = Encode(f) + "x";
    set_len(&w);
    dropped(w, "a fail message of length 2297 (expected 2296)");
  }
  {
    Message p;
    p.h.type = kPublish;
    p.channel = "c";
    p.payload = "m";
    std::string w = Encode(p);
    w[2256 + 3] = 100;  // a channel longer than the message
    dropped(w, "a publish message of length 2266");
  }
  // An unknown type is read with no body, for the caller to ignore.
  std::string w = meet;
  w[13] = 42;
  Message m;
  std::string why;
  EXPECT_TRUE(Decode(w, &m, &why)) << why;
  EXPECT_EQ(m.h.type, 42);
}

// Random damage to valid messages never crashes or reads out of bounds (the fuzz target
// tests/fuzz/cluster_bus_fuzz.cc goes further under libFuzzer).
TEST(BusMessageTest, RandomDamageIsSafe) {
  Message m;
  m.h.type = kPing;
  m.h.sender = std::string(40, 'a');
  m.gossip.push_back(Gossip{std::string(40, 'c'), 5, 6, "::1", 7001, 17001, 1, 0});
  m.hostname = "h";
  std::vector<std::string> seeds = {Encode(m), RedisMeet()};
  std::mt19937 rng(3);
  for (int i = 0; i < 20000; i++) {
    std::string w = seeds[i % seeds.size()];
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; e++) w[rng() % w.size()] = static_cast<char>(rng());
    if (rng() % 4 == 0) w.resize(rng() % (w.size() + 1));
    Message out;
    std::string why;
    uint32_t len = 0;
    (void)PeekFrame(w, 1 << 20, &len);
    if (Decode(w, &out, &why)) (void)Encode(out);
  }
}

}  // namespace
}  // namespace strata::bus
