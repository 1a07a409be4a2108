#include "server/cluster/bus_message.h"

#include <cstring>

namespace strata::bus {
namespace {

// Header field offsets (docs/CLUSTER_BUS.md).
constexpr size_t kOffTotlen = 4;
constexpr size_t kOffVer = 8;
constexpr size_t kOffPort = 10;
constexpr size_t kOffType = 12;
constexpr size_t kOffCount = 14;
constexpr size_t kOffCurrentEpoch = 16;
constexpr size_t kOffConfigEpoch = 24;
constexpr size_t kOffOffset = 32;
constexpr size_t kOffSender = 40;
constexpr size_t kOffSlots = 80;
constexpr size_t kOffMaster = 2128;
constexpr size_t kOffIp = 2168;
constexpr size_t kOffExtensions = 2214;
constexpr size_t kOffPport = 2246;
constexpr size_t kOffCport = 2248;
constexpr size_t kOffFlags = 2250;
constexpr size_t kOffState = 2252;
constexpr size_t kOffMflags = 2253;
constexpr size_t kPublishFixed = 8;  // channel and message lengths
constexpr size_t kModuleFixed = 13;  // module id, length, type
constexpr size_t kExtHeader = 8;

uint64_t Get(std::string_view b, size_t off, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) v = (v << 8) | static_cast<uint8_t>(b[off + i]);
  return v;
}

void Put(std::string* b, size_t off, uint64_t v, size_t n) {
  for (size_t i = 0; i < n; i++) (*b)[off + n - 1 - i] = static_cast<char>((v >> (8 * i)) & 0xFF);
}

// A NUL-padded field: the bytes before the first NUL.
std::string Padded(std::string_view b, size_t off, size_t n) {
  std::string_view f = b.substr(off, n);
  size_t nul = f.find('\0');
  return std::string(nul == std::string_view::npos ? f : f.substr(0, nul));
}

void PutPadded(std::string* b, size_t off, std::string_view s, size_t n) {
  std::memcpy(b->data() + off, s.data(), std::min(s.size(), n));
}

size_t Pad8(size_t n) { return (n + 7) & ~size_t{7}; }

void AppendExt(std::string* out, uint16_t type, std::string_view payload) {
  size_t len = kExtHeader + Pad8(payload.size());
  size_t at = out->size();
  out->resize(at + len, '\0');
  Put(out, at, len, 4);
  Put(out, at + 4, type, 2);
  std::memcpy(out->data() + at + kExtHeader, payload.data(), payload.size());
}

// A string extension: its payload up to the required NUL.
bool StringExt(std::string_view payload, std::string* out) {
  size_t nul = payload.find('\0');
  if (nul == std::string_view::npos) return false;
  *out = std::string(payload.substr(0, nul));
  return true;
}

}  // namespace

uint16_t PeekType(std::string_view msg) {
  if (msg.size() < kOffType + 2) return kTypeCount;
  return static_cast<uint16_t>((static_cast<uint8_t>(msg[kOffType]) << 8) |
                               static_cast<uint8_t>(msg[kOffType + 1]));
}

const char* TypeName(uint16_t type) {
  static const char* const kNames[] = {"ping",    "pong",     "meet",        "fail",
                                       "publish", "auth-req", "auth-ack",    "update",
                                       "mfstart", "module",   "publishshard"};
  return type < kTypeCount ? kNames[type] : "unknown";
}

Frame PeekFrame(std::string_view buf, size_t max_len, uint32_t* total_len) {
  if (buf.size() < 8) return Frame::kNeedMore;
  if (buf.substr(0, 4) != "RCmb") return Frame::kBad;
  uint32_t len = static_cast<uint32_t>(Get(buf, kOffTotlen, 4));
  if (len < kHeaderLen || len > max_len) return Frame::kBad;
  *total_len = len;
  return Frame::kReady;
}

bool Decode(std::string_view b, Message* out, std::string* why) {
  *out = Message();
  if (b.size() < kHeaderLen || b.substr(0, 4) != "RCmb") {
    *why = "not a cluster bus message";
    return false;
  }
  uint64_t totlen = Get(b, kOffTotlen, 4);
  if (totlen != b.size()) {
    *why = "length " + std::to_string(totlen) + " in a message of " + std::to_string(b.size());
    return false;
  }
  if (Get(b, kOffVer, 2) != kVersion) {
    *why = "protocol version " + std::to_string(Get(b, kOffVer, 2));
    return false;
  }
  Header& h = out->h;
  h.type = static_cast<uint16_t>(Get(b, kOffType, 2));
  h.port = static_cast<uint16_t>(Get(b, kOffPort, 2));
  h.current_epoch = Get(b, kOffCurrentEpoch, 8);
  h.config_epoch = Get(b, kOffConfigEpoch, 8);
  h.offset = Get(b, kOffOffset, 8);
  h.sender = std::string(b.substr(kOffSender, kNameLen));
  std::memcpy(h.slots.data(), b.data() + kOffSlots, kSlotBytes);
  std::string_view master = b.substr(kOffMaster, kNameLen);
  if (master.find_first_not_of('\0') != std::string_view::npos) h.master = std::string(master);
  h.ip = Padded(b, kOffIp, kIpLen);
  h.pport = static_cast<uint16_t>(Get(b, kOffPport, 2));
  h.cport = static_cast<uint16_t>(Get(b, kOffCport, 2));
  h.flags = static_cast<uint16_t>(Get(b, kOffFlags, 2));
  h.state = static_cast<uint8_t>(b[kOffState]);
  h.mflags = static_cast<uint8_t>(b[kOffMflags]);
  std::string type_name = TypeName(h.type);
  auto bad_len = [&](size_t want) {
    *why = "a " + type_name + " message of length " + std::to_string(totlen) + " (expected " +
           std::to_string(want) + ")";
    return false;
  };
  std::string_view body = b.substr(kHeaderLen);
  switch (h.type) {
    case kPing:
    case kPong:
    case kMeet: {
      size_t count = Get(b, kOffCount, 2);
      if (count * kGossipLen > body.size()) {
        *why = "a " + type_name + " message with " + std::to_string(count) + " gossip entries in " +
               std::to_string(body.size()) + " bytes";
        return false;
      }
      out->gossip.resize(count);
      for (size_t i = 0; i < count; i++) {
        std::string_view g = body.substr(i * kGossipLen, kGossipLen);
        Gossip& e = out->gossip[i];
        e.name = std::string(g.substr(0, kNameLen));
        e.ping_sent_s = static_cast<uint32_t>(Get(g, 40, 4));
        e.pong_received_s = static_cast<uint32_t>(Get(g, 44, 4));
        e.ip = Padded(g, 48, kIpLen);
        e.port = static_cast<uint16_t>(Get(g, 94, 2));
        e.cport = static_cast<uint16_t>(Get(g, 96, 2));
        e.flags = static_cast<uint16_t>(Get(g, 98, 2));
        e.pport = static_cast<uint16_t>(Get(g, 100, 2));
      }
      std::string_view ext = body.substr(count * kGossipLen);
      size_t n_ext = (h.mflags & kExtData) ? Get(b, kOffExtensions, 2) : 0;
      for (size_t i = 0; i < n_ext; i++) {
        if (ext.size() < kExtHeader) {
          *why = "a " + type_name + " message whose extension " + std::to_string(i) +
                 " runs past its end";
          return false;
        }
        uint64_t len = Get(ext, 0, 4);
        if (len < kExtHeader || len % 8 != 0) {
          *why = "a " + type_name + " message with an extension of " + std::to_string(len) +
                 " bytes (not a multiple of 8 of at least 8)";
          return false;
        }
        if (len > ext.size()) {
          *why = "a " + type_name + " message whose extension " + std::to_string(i) +
                 " runs past its end";
          return false;
        }
        uint16_t type = static_cast<uint16_t>(Get(ext, 4, 2));
        std::string_view payload = ext.substr(kExtHeader, len - kExtHeader);
        bool ok = true;
        switch (type) {
          case kExtHostname:
            ok = StringExt(payload, &out->hostname);
            break;
          case kExtHumanNodename:
            ok = StringExt(payload, &out->human_nodename);
            break;
          case kExtShardId:
            ok = payload.size() >= kNameLen;
            if (ok) out->shard_id = std::string(payload.substr(0, kNameLen));
            break;
          case kExtForgottenNode:
            ok = payload.size() >= kNameLen + 8;
            if (ok) {
              out->forgotten.push_back(ForgottenNode{std::string(payload.substr(0, kNameLen)),
                                                     Get(payload, kNameLen, 8)});
            }
            break;
          default:
            out->unknown_extensions++;
            break;
        }
        if (!ok) {
          *why = "a " + type_name + " message with a malformed extension of type " +
                 std::to_string(type);
          return false;
        }
        ext.remove_prefix(len);
      }
      if (!ext.empty()) return bad_len(totlen - ext.size());
      return true;
    }
    case kFail:
      if (totlen != kFailLen) return bad_len(kFailLen);
      out->node = std::string(body.substr(0, kNameLen));
      return true;
    case kPublish:
    case kPublishShard: {
      if (body.size() < kPublishFixed) return bad_len(kHeaderLen + kPublishFixed);
      uint64_t clen = Get(body, 0, 4);
      uint64_t mlen = Get(body, 4, 4);
      uint64_t want = kHeaderLen + kPublishFixed + clen + mlen;
      if (want != totlen) return bad_len(want);
      out->channel = std::string(body.substr(kPublishFixed, clen));
      out->payload = std::string(body.substr(kPublishFixed + clen, mlen));
      return true;
    }
    case kAuthRequest:
    case kAuthAck:
    case kMfStart:
      if (totlen != kHeaderLen) return bad_len(kHeaderLen);
      return true;
    case kUpdate:
      if (totlen != kUpdateLen) return bad_len(kUpdateLen);
      out->update_epoch = Get(body, 0, 8);
      out->node = std::string(body.substr(8, kNameLen));
      std::memcpy(out->update_slots.data(), body.data() + 8 + kNameLen, kSlotBytes);
      return true;
    case kModule: {
      if (body.size() < kModuleFixed) return bad_len(kHeaderLen + kModuleFixed);
      uint64_t len = Get(body, 8, 4);
      uint64_t want = kHeaderLen + kModuleFixed + len;
      if (want != totlen) return bad_len(want);
      std::memcpy(&out->module_id, body.data(), 8);  // as the module gave it
      out->module_type = static_cast<uint8_t>(body[12]);
      out->payload = std::string(body.substr(kModuleFixed, len));
      return true;
    }
    default:
      return true;  // a later version's type: the caller ignores it
  }
}

std::string Encode(const Message& m) {
  const Header& h = m.h;
  std::string out(kHeaderLen, '\0');
  std::memcpy(out.data(), "RCmb", 4);
  Put(&out, kOffVer, kVersion, 2);
  Put(&out, kOffPort, h.port, 2);
  Put(&out, kOffType, h.type, 2);
  Put(&out, kOffCurrentEpoch, h.current_epoch, 8);
  Put(&out, kOffConfigEpoch, h.config_epoch, 8);
  Put(&out, kOffOffset, h.offset, 8);
  PutPadded(&out, kOffSender, h.sender, kNameLen);
  std::memcpy(out.data() + kOffSlots, h.slots.data(), kSlotBytes);
  PutPadded(&out, kOffMaster, h.master, kNameLen);
  PutPadded(&out, kOffIp, h.ip, kIpLen - 1);
  Put(&out, kOffPport, h.pport, 2);
  Put(&out, kOffCport, h.cport, 2);
  Put(&out, kOffFlags, h.flags, 2);
  out[kOffState] = static_cast<char>(h.state);
  uint8_t mflags = static_cast<uint8_t>(h.mflags & ~kExtData);
  switch (h.type) {
    case kPing:
    case kPong:
    case kMeet: {
      Put(&out, kOffCount, m.gossip.size(), 2);
      for (const Gossip& g : m.gossip) {
        size_t at = out.size();
        out.resize(at + kGossipLen, '\0');
        PutPadded(&out, at, g.name, kNameLen);
        Put(&out, at + 40, g.ping_sent_s, 4);
        Put(&out, at + 44, g.pong_received_s, 4);
        PutPadded(&out, at + 48, g.ip, kIpLen - 1);
        Put(&out, at + 94, g.port, 2);
        Put(&out, at + 96, g.cport, 2);
        Put(&out, at + 98, g.flags, 2);
        Put(&out, at + 100, g.pport, 2);
      }
      uint16_t n_ext = 0;
      auto string_ext = [&](uint16_t type, const std::string& s) {
        if (s.empty()) return;
        std::string payload = s;
        payload += '\0';
        AppendExt(&out, type, payload);
        n_ext++;
      };
      string_ext(kExtHostname, m.hostname);
      string_ext(kExtHumanNodename, m.human_nodename);
      for (const ForgottenNode& f : m.forgotten) {
        std::string payload(kNameLen + 8, '\0');
        PutPadded(&payload, 0, f.name, kNameLen);
        Put(&payload, kNameLen, f.ttl_s, 8);
        AppendExt(&out, kExtForgottenNode, payload);
        n_ext++;
      }
      if (!m.shard_id.empty()) {
        AppendExt(&out, kExtShardId, m.shard_id.substr(0, kNameLen));
        n_ext++;
      }
      if (n_ext > 0) {
        Put(&out, kOffExtensions, n_ext, 2);
        mflags |= kExtData;
      }
      break;
    }
    case kFail:
      out.resize(kFailLen, '\0');
      PutPadded(&out, kHeaderLen, m.node, kNameLen);
      break;
    case kPublish:
    case kPublishShard: {
      size_t at = out.size();
      out.resize(at + kPublishFixed, '\0');
      Put(&out, at, m.channel.size(), 4);
      Put(&out, at + 4, m.payload.size(), 4);
      out += m.channel;
      out += m.payload;
      break;
    }
    case kUpdate: {
      out.resize(kUpdateLen, '\0');
      Put(&out, kHeaderLen, m.update_epoch, 8);
      PutPadded(&out, kHeaderLen + 8, m.node, kNameLen);
      std::memcpy(out.data() + kHeaderLen + 8 + kNameLen, m.update_slots.data(), kSlotBytes);
      break;
    }
    case kModule: {
      size_t at = out.size();
      out.resize(at + kModuleFixed, '\0');
      std::memcpy(out.data() + at, &m.module_id, 8);
      Put(&out, at + 8, m.payload.size(), 4);
      out[at + 12] = static_cast<char>(m.module_type);
      out += m.payload;
      break;
    }
    default:
      break;  // AUTH_REQUEST, AUTH_ACK, MFSTART: the header alone
  }
  out[kOffMflags] = static_cast<char>(mflags);
  Put(&out, kOffTotlen, out.size(), 4);
  return out;
}

}  // namespace strata::bus
