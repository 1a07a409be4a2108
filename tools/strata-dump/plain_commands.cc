#include "tools/strata-dump/plain_commands.h"

#include <algorithm>
#include <cstdio>

#include "core/packed_list.h"
#include "core/set_type.h"
#include "core/zset_type.h"
#include "storage/dump_payload.h"

namespace strata::dump {

namespace {

std::string Score(double d) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.17g", d);
  return buf;
}

// Starts a command of `name key` and adds args until chunk_bytes, then starts another.
class Chunker {
 public:
  Chunker(std::vector<Command>* out, std::string name, const std::string& key, size_t chunk)
      : out_(out), name_(std::move(name)), key_(key), chunk_(chunk) {}
  void Add(std::initializer_list<std::string_view> args) {
    size_t n = 0;
    for (std::string_view a : args) n += a.size() + 16;
    if (cur_ == nullptr || bytes_ + n > chunk_) {
      out_->push_back({name_, key_});
      cur_ = &out_->back();
      bytes_ = 0;
    }
    for (std::string_view a : args) cur_->emplace_back(a);
    bytes_ += n;
  }

 private:
  std::vector<Command>* out_;
  std::string name_;
  std::string key_;
  size_t chunk_;
  Command* cur_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace

bool PlainCommands(const Item& item, bool replace, size_t chunk_bytes, std::vector<Command>* out,
                   std::string* error) {
  rdb::RdbValue v;
  std::string why;
  if (rdb::ParseDumpPayload(item.Payload(), {}, &v, &why) != rdb::PayloadStatus::kOk) {
    *error = "key '" + item.key + "': its value does not decode: " + why;
    return false;
  }
  if (v.kind == rdb::RdbKind::kStream || v.kind == rdb::RdbKind::kModule) {
    *error = "key '" + item.key + "' is a " + rdb::RdbKindName(v.kind) +
             ", which only RESTORE can write, and the target refused its payload";
    return false;
  }
  if (replace) out->push_back({"DEL", item.key});
  const std::string& k = item.key;
  switch (v.kind) {
    case rdb::RdbKind::kString: {
      size_t chunk = std::max<size_t>(chunk_bytes, 1);
      out->push_back({"SET", k, v.data.substr(0, chunk)});
      for (size_t at = chunk; at < v.data.size(); at += chunk) {
        out->push_back({"APPEND", k, v.data.substr(at, chunk)});
      }
      break;
    }
    case rdb::RdbKind::kList: {
      Chunker c(out, "RPUSH", k, chunk_bytes);
      for (packed::Reader r(v.data); !r.Done(); r.Next()) c.Add({r.Item()});
      break;
    }
    case rdb::RdbKind::kSet: {
      Chunker c(out, "SADD", k, chunk_bytes);
      if (!v.data.empty() &&
          static_cast<uint8_t>(v.data[0]) == static_cast<uint8_t>(PackedTag::kIntSet)) {
        for (int64_t x : intset::Decode(v.data)) c.Add({std::to_string(x)});
      } else {
        for (packed::Reader r(v.data); !r.Done(); r.Next()) c.Add({r.Item()});
      }
      break;
    }
    case rdb::RdbKind::kZSet: {
      Chunker c(out, "ZADD", k, chunk_bytes);
      std::vector<ZMember> items;
      zpacked::Decode(v.data, &items);
      for (const ZMember& m : items) c.Add({Score(m.score), m.member});
      break;
    }
    case rdb::RdbKind::kHash: {
      Chunker c(out, "HSET", k, chunk_bytes);
      std::string_view field;
      size_t i = 0;
      for (packed::Reader r(v.data); !r.Done(); r.Next(), i++) {
        if (i % 2 == 0) {
          field = r.Item();
        } else {
          c.Add({field, r.Item()});
        }
      }
      break;
    }
    default:
      break;
  }
  if (item.expire_ms >= 0) out->push_back({"PEXPIREAT", k, std::to_string(item.expire_ms)});
  return true;
}

}  // namespace strata::dump
