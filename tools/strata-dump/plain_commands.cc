#include "tools/strata-dump/plain_commands.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <utility>

#include "core/packed_list.h"
#include "core/set_type.h"
#include "core/zset_type.h"
#include "storage/dump_payload.h"

namespace strata::dump {

namespace {

using StreamIdKey = std::pair<uint64_t, uint64_t>;

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

// A stream as Redis's AOF rewrite writes one: an XADD per entry (an empty stream is
// made by adding one entry with MAXLEN 0), XSETID for the last ID, the entries added and
// the largest deleted ID, then per group XGROUP CREATE with its last ID and entries read,
// an XCLAIM ... JUSTID FORCE per pending entry, with its delivery time and count, under
// the consumer that owns it, and XGROUP CREATECONSUMER for a consumer with nothing
// pending. As with Redis's rewrite, a pending entry whose message was deleted cannot be
// claimed again, and a consumer's seen time is the time of the copy.
void StreamCommands(const rdb::RdbStream& st, const std::string& k, std::vector<Command>* out) {
  if (st.entries.empty()) {
    out->push_back({"XADD", k, "MAXLEN", "0", "0-1", "x", "y"});
  }
  for (const auto& e : st.entries) {
    Command c{"XADD", k, e.id.ToString()};
    c.reserve(3 + 2 * e.fields.size());
    for (const auto& [f, val] : e.fields) {
      c.push_back(f);
      c.push_back(val);
    }
    out->push_back(std::move(c));
  }
  out->push_back({"XSETID", k, st.last_id.ToString(), "ENTRIESADDED",
                  std::to_string(st.entries_added), "MAXDELETEDID", st.max_deleted_id.ToString()});
  for (const auto& g : st.groups) {
    out->push_back({"XGROUP", "CREATE", k, g.name, g.last_id.ToString(), "ENTRIESREAD",
                    std::to_string(g.entries_read)});
    std::map<StreamIdKey, const rdb::RdbStream::Pending*> pel;
    for (const auto& p : g.pel) pel[{p.id.ms, p.id.seq}] = &p;
    for (const auto& con : g.consumers) {
      if (con.pending.empty()) {
        out->push_back({"XGROUP", "CREATECONSUMER", k, g.name, con.name});
        continue;
      }
      for (const rdb::StreamId& id : con.pending) {
        auto it = pel.find({id.ms, id.seq});
        int64_t delivered = it == pel.end() ? 0 : it->second->delivery_ms;
        uint64_t count = it == pel.end() ? 1 : it->second->delivery_count;
        out->push_back({"XCLAIM", k, g.name, con.name, "0", id.ToString(), "TIME",
                        std::to_string(delivered), "RETRYCOUNT", std::to_string(count), "JUSTID",
                        "FORCE"});
      }
    }
  }
}

}  // namespace

bool PlainCommands(const Item& item, bool replace, size_t chunk_bytes, std::vector<Command>* out,
                   std::string* error) {
  rdb::RdbValue v;
  std::string why;
  if (rdb::ParseDumpPayload(item.Payload(), {}, &v, &why) != rdb::PayloadStatus::kOk) {
    *error = "key '" + item.key + "': its value does not decode: " + why;
    return false;
  }
  if (v.kind == rdb::RdbKind::kModule) {
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
    case rdb::RdbKind::kStream:
      StreamCommands(*v.stream, k, out);
      break;
    default:
      break;
  }
  if (item.expire_ms >= 0) out->push_back({"PEXPIREAT", k, std::to_string(item.expire_ms)});
  return true;
}

}  // namespace strata::dump
