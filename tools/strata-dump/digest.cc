#include "tools/strata-dump/digest.h"

#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/packed_list.h"
#include "core/set_type.h"
#include "core/zset_type.h"
#include "storage/dump_payload.h"

namespace strata::dump {

namespace {

uint64_t HashOf(std::string_view s) { return XXH3_64bits(s.data(), s.size()); }

// An order-independent combination of element hashes (sorted, then hashed).
uint64_t Combine(std::vector<uint64_t>* hs, bool sort) {
  if (sort) std::sort(hs->begin(), hs->end());
  return XXH3_64bits(hs->data(), hs->size() * sizeof(uint64_t));
}

}  // namespace

bool DigestOf(const Item& item, KeyDigest* out, std::string* error) {
  out->expire_ms = item.expire_ms;
  rdb::RdbValue v;
  std::string why;
  rdb::DecodeOptions o;
  o.skip_modules = true;
  if (rdb::ParseDumpPayload(item.Payload(), o, &v, &why) != rdb::PayloadStatus::kOk) {
    *error = "key '" + item.key + "': " + why;
    return false;
  }
  out->type = rdb::RdbKindName(v.kind);
  out->elements = v.elements;
  std::vector<uint64_t> hs;
  switch (v.kind) {
    case rdb::RdbKind::kString:
      out->hash = HashOf(v.data);
      return true;
    case rdb::RdbKind::kModule:
      out->hash = HashOf(item.value);
      return true;
    case rdb::RdbKind::kStream: {
      std::string flat;
      for (const auto& e : v.stream->entries) {
        flat += e.id.ToString() + "\n";
        for (const auto& [f, val] : e.fields) {
          flat += std::to_string(f.size()) + ":" + f + std::to_string(val.size()) + ":" + val;
        }
      }
      for (const auto& g : v.stream->groups) {
        flat += "group " + g.name + " " + g.last_id.ToString() + " " +
                std::to_string(g.pel.size()) + " " + std::to_string(g.consumers.size()) + "\n";
        // Who owns which pending entry (not the times, which a copy cannot keep).
        std::vector<std::string> owners;
        for (const auto& con : g.consumers) {
          std::vector<rdb::StreamId> ids = con.pending;
          std::sort(ids.begin(), ids.end());
          std::string o = std::to_string(con.name.size()) + ":" + con.name;
          for (const auto& id : ids) o += " " + id.ToString();
          owners.push_back(std::move(o));
        }
        std::sort(owners.begin(), owners.end());
        for (const auto& o : owners) flat += "consumer " + o + "\n";
      }
      out->hash = HashOf(flat);
      return true;
    }
    case rdb::RdbKind::kList:
      for (packed::Reader r(v.data); !r.Done(); r.Next()) hs.push_back(HashOf(r.Item()));
      out->hash = Combine(&hs, false);
      return true;
    case rdb::RdbKind::kSet:
      if (!v.data.empty() &&
          static_cast<uint8_t>(v.data[0]) == static_cast<uint8_t>(PackedTag::kIntSet)) {
        for (int64_t x : intset::Decode(v.data)) hs.push_back(HashOf(std::to_string(x)));
      } else {
        for (packed::Reader r(v.data); !r.Done(); r.Next()) hs.push_back(HashOf(r.Item()));
      }
      out->hash = Combine(&hs, true);
      return true;
    case rdb::RdbKind::kZSet: {
      std::vector<ZMember> items;
      zpacked::Decode(v.data, &items);
      for (const ZMember& m : items) {
        uint64_t bits;
        double score = m.score == 0 ? 0.0 : m.score;
        std::memcpy(&bits, &score, 8);
        hs.push_back(HashOf(m.member) ^ XXH3_64bits(&bits, 8));
      }
      out->hash = Combine(&hs, true);
      return true;
    }
    case rdb::RdbKind::kHash: {
      std::string_view field;
      size_t i = 0;
      for (packed::Reader r(v.data); !r.Done(); r.Next(), i++) {
        if (i % 2 == 0) {
          field = r.Item();
        } else {
          hs.push_back(HashOf(field) * 31 + HashOf(r.Item()));
        }
      }
      out->hash = Combine(&hs, true);
      return true;
    }
  }
  return true;
}

}  // namespace strata::dump
