// The Redis Cluster bus's messages, protocol version 1, byte for byte as redis-server 7.0
// sends and accepts them (docs/ARCHITECTURE.md "Cluster"; the layout is in
// docs/CLUSTER_BUS.md).
//
// Every message is a 2256-byte header ("RCmb", total length, version 1, the sender's
// ports, epochs, replication offset, id, slot bitmap, master id, address, flags, the
// cluster's state as it sees it, message flags) followed by a body that depends on the
// type: PING, PONG and MEET carry gossip entries about other nodes (104 bytes each) and
// ping extensions (the hostname, and from 7.2 a human node name, a forgotten node, the
// shard id); FAIL names a node; PUBLISH and PUBLISHSHARD a channel and a message; UPDATE
// a node's epoch and slots; MODULE a module's payload; the failover messages none.
// Integers are big-endian, except MODULE's module id, which Redis copies as it is.
//
// Reading, as a link does:
//   1. PeekFrame(first bytes): once 8 bytes are there, the message's length, or kBad when
//      the signature is wrong or the length is below the header's or above the link's
//      limit: the link is closed, as Redis closes it.
//   2. Decode(whole message): false with the reason when the message does not hold
//      together (its length is not what its type and counts say, an extension is not
//      padded to 8 bytes or runs past the end, a hostname has no terminating NUL): the
//      message is dropped, the link stays, as in Redis. Extensions are read only when the
//      header's EXT_DATA flag says there are some (Redis 7.0 walks the count without the
//      flag and can crash on it; this reader does not). A type it does not know decodes
//      with no body, for the caller to ignore.
// Encode() writes what Decode() reads; it sets the extension count and EXT_DATA only
// when there is an extension, as 7.0 does.
//
// Pure functions over bytes: no sockets, no state; any thread.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace strata::bus {

constexpr size_t kHeaderLen = 2256;
constexpr size_t kGossipLen = 104;
constexpr size_t kNameLen = 40;
constexpr size_t kIpLen = 46;  // NUL-padded; at most 45 characters
constexpr size_t kSlotBytes = 2048;
constexpr size_t kFailLen = kHeaderLen + kNameLen;
constexpr size_t kUpdateLen = kHeaderLen + 8 + kNameLen + kSlotBytes;
constexpr uint16_t kVersion = 1;

enum Type : uint16_t {
  kPing = 0,
  kPong = 1,
  kMeet = 2,
  kFail = 3,
  kPublish = 4,
  kAuthRequest = 5,
  kAuthAck = 6,
  kUpdate = 7,
  kMfStart = 8,
  kModule = 9,
  kPublishShard = 10,
  kTypeCount = 11,
};

// The header's mflags[0].
enum MessageFlag : uint8_t {
  kPaused = 0x01,    // a master paused for a manual failover
  kForceAck = 0x02,  // AUTH_REQUEST: vote even though the master is up
  kExtData = 0x04,   // ping extensions follow the gossip entries
};

// Ping extension types.
enum ExtType : uint16_t {
  kExtHostname = 0,
  kExtHumanNodename = 1,  // 7.2
  kExtForgottenNode = 2,  // 7.2
  kExtShardId = 3,        // 7.2
};

using SlotBitmap = std::array<uint8_t, kSlotBytes>;  // slot j: byte j/8, bit j&7

inline bool SlotSet(const SlotBitmap& b, uint32_t slot) { return (b[slot >> 3] >> (slot & 7)) & 1; }
inline void SetSlot(SlotBitmap* b, uint32_t slot) {
  (*b)[slot >> 3] = static_cast<uint8_t>((*b)[slot >> 3] | (1u << (slot & 7)));
}

struct Header {
  uint16_t type = kPing;
  uint16_t port = 0;   // the sender's client port
  uint16_t pport = 0;  // its plaintext port when `port` is TLS, else 0
  uint16_t cport = 0;  // its bus port
  uint64_t current_epoch = 0;
  uint64_t config_epoch = 0;  // a replica sends its master's
  uint64_t offset = 0;        // replication offset
  std::string sender;         // 40 characters
  SlotBitmap slots{};         // a replica sends its master's
  std::string master;         // a replica's master's id; empty for a master
  std::string ip;             // empty unless the sender announces one
  uint16_t flags = 0;         // the sender's node flags, myself included
  uint8_t state = 0;          // the cluster as the sender sees it: 0 ok, 1 fail
  uint8_t mflags = 0;         // MessageFlag bits
};

struct Gossip {
  std::string name;
  uint32_t ping_sent_s = 0;      // seconds
  uint32_t pong_received_s = 0;  // seconds
  std::string ip;
  uint16_t port = 0;
  uint16_t cport = 0;
  uint16_t flags = 0;
  uint16_t pport = 0;
};

struct ForgottenNode {
  std::string name;
  uint64_t ttl_s = 0;
};

struct Message {
  Header h;
  // PING, PONG, MEET.
  std::vector<Gossip> gossip;
  std::string hostname;                  // empty: no hostname extension
  std::string human_nodename;            // 7.2
  std::string shard_id;                  // 7.2; empty or 40 characters
  std::vector<ForgottenNode> forgotten;  // 7.2
  uint16_t unknown_extensions = 0;       // read past (logged by the caller)
  // FAIL: the failed node. UPDATE: the node whose slots these are.
  std::string node;
  // UPDATE.
  uint64_t update_epoch = 0;
  SlotBitmap update_slots{};
  // PUBLISH, PUBLISHSHARD.
  std::string channel;
  std::string payload;  // the published message; MODULE: the module's payload
  // MODULE.
  uint64_t module_id = 0;
  uint8_t module_type = 0;
};

enum class Frame { kNeedMore, kBad, kReady };
// The first bytes of a message: kNeedMore until 8 are there; then kBad (close the link)
// or kReady with *total_len, the whole message's length (it may not all be there yet).
Frame PeekFrame(std::string_view buf, size_t max_len, uint32_t* total_len);

// A whole message (exactly its total length). False with *why when it is to be dropped.
bool Decode(std::string_view msg, Message* out, std::string* why);

// The message's bytes. REQUIRES: names of 40 characters, addresses of at most 45.
std::string Encode(const Message& m);

// The type of an encoded message (kTypeCount when it is too short to say).
uint16_t PeekType(std::string_view msg);

// "ping", "pong"... as Redis names the types in CLUSTER INFO's counters; "unknown".
const char* TypeName(uint16_t type);

}  // namespace strata::bus
