#include "storage/rdb_value.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <unordered_set>

#include "core/object.h"
#include "core/packed_list.h"
#include "core/set_type.h"
#include "core/stream_type.h"
#include "core/zset_type.h"
#include "storage/lzf.h"
#include "storage/rdb_containers.h"
#include "storage/rdb_format.h"
#include "storage/rdb_input_checks.h"
#include "storage/rdb_stream.h"

namespace strata::rdb {

const char* RdbKindName(RdbKind k) {
  switch (k) {
    case RdbKind::kString:
      return "string";
    case RdbKind::kList:
      return "list";
    case RdbKind::kSet:
      return "set";
    case RdbKind::kZSet:
      return "zset";
    case RdbKind::kHash:
      return "hash";
    case RdbKind::kStream:
      return "stream";
    case RdbKind::kModule:
      return "module";
  }
  return "?";
}

ValueType RdbValue::value_type() const {
  switch (kind) {
    case RdbKind::kList:
      return ValueType::kList;
    case RdbKind::kSet:
      return ValueType::kSet;
    case RdbKind::kZSet:
      return ValueType::kZSet;
    case RdbKind::kHash:
      return ValueType::kHash;
    case RdbKind::kStream:
      return ValueType::kStream;
    default:
      return ValueType::kString;
  }
}

namespace {

using Strings = std::vector<std::string>;

struct ViewHash {
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using ViewSet = std::unordered_set<std::string_view, ViewHash>;

void ItemsToStrings(const std::vector<PackedItem>& items, Strings* out) {
  out->reserve(out->size() + items.size());
  char buf[24];
  for (const PackedItem& it : items) out->emplace_back(it.Text(buf));
}

bool ReadStrings(RdbInput* in, uint64_t n, Strings* out, const char* what) {
  out->reserve(out->size() + n);
  for (uint64_t i = 0; i < n; i++) {
    out->emplace_back();
    if (!in->ReadString(&out->back(), what)) return false;
  }
  return true;
}

DecodeResult AssembleList(const Strings& elems, RdbValue* out) {
  if (elems.empty()) return DecodeResult::kEmpty;
  packed::Builder b;
  for (const std::string& e : elems) b.Add(e);
  out->kind = RdbKind::kList;
  out->elements = elems.size();
  out->data = b.Finish();
  return DecodeResult::kOk;
}

DecodeResult AssembleSet(RdbInput* in, uint64_t at, const Strings& members, RdbValue* out) {
  if (members.empty()) return DecodeResult::kEmpty;
  ViewSet seen;
  seen.reserve(members.size());
  bool all_int = true;
  std::vector<int64_t> ints;
  for (const std::string& m : members) {
    if (!seen.insert(m).second) {
      in->Fail(at, "set has a duplicate member");
      return DecodeResult::kError;
    }
    int64_t v;
    if (all_int && intset::ToInt(m, &v)) {
      ints.push_back(v);
    } else {
      all_int = false;
    }
  }
  out->kind = RdbKind::kSet;
  out->elements = members.size();
  const EncodingLimits& lim = GlobalEncodingLimits();
  if (all_int && static_cast<int64_t>(ints.size()) <= lim.set_max_intset_entries.load()) {
    std::sort(ints.begin(), ints.end());
    out->data = intset::Encode(ints);
  } else {
    packed::Builder b;
    for (const std::string& m : members) b.Add(m);
    out->data = b.Finish();
  }
  return DecodeResult::kOk;
}

// pairs: field, value, field, value...
DecodeResult AssembleHash(RdbInput* in, uint64_t at, const Strings& pairs, RdbValue* out) {
  if (pairs.size() % 2 != 0) {
    in->Fail(at, "hash has a field without a value");
    return DecodeResult::kError;
  }
  if (pairs.empty()) return DecodeResult::kEmpty;
  ViewSet seen;
  seen.reserve(pairs.size() / 2);
  packed::Builder b;
  for (size_t i = 0; i < pairs.size(); i += 2) {
    if (!seen.insert(pairs[i]).second) {
      in->Fail(at, "hash has a duplicate field");
      return DecodeResult::kError;
    }
    b.Add(pairs[i]);
    b.Add(pairs[i + 1]);
  }
  out->kind = RdbKind::kHash;
  out->elements = pairs.size() / 2;
  out->data = b.Finish();
  return DecodeResult::kOk;
}

DecodeResult AssembleZSet(RdbInput* in, uint64_t at, const Strings& members,
                          const std::vector<double>& scores, RdbValue* out) {
  if (members.empty()) return DecodeResult::kEmpty;
  ViewSet seen;
  seen.reserve(members.size());
  std::vector<ZMember> items;
  items.reserve(members.size());
  for (size_t i = 0; i < members.size(); i++) {
    if (std::isnan(scores[i])) {
      in->Fail(at, "sorted set has a NaN score");
      return DecodeResult::kError;
    }
    if (!seen.insert(members[i]).second) {
      in->Fail(at, "sorted set has a duplicate member");
      return DecodeResult::kError;
    }
    items.push_back(ZMember{members[i], scores[i] == 0 ? 0.0 : scores[i]});
  }
  std::sort(items.begin(), items.end(), ZLess);
  out->kind = RdbKind::kZSet;
  out->elements = items.size();
  out->data = zpacked::Encode(items);
  return DecodeResult::kOk;
}

// A listpack or ziplist score as Redis reads it (strtod, so subnormals are kept), whole
// string, not NaN.
bool ParseScore(std::string_view s, double* d) {
  char buf[128];
  if (s.empty() || s.size() >= sizeof(buf) || std::isspace(static_cast<unsigned char>(s[0]))) {
    return false;
  }
  std::memcpy(buf, s.data(), s.size());
  buf[s.size()] = '\0';
  char* end = nullptr;
  *d = std::strtod(buf, &end);
  return end == buf + s.size() && !std::isnan(*d);
}

// Pairs of member, score text (ziplists and listpacks).
DecodeResult ZSetFromItems(RdbInput* in, uint64_t at, const std::vector<PackedItem>& items,
                           RdbValue* out) {
  if (items.size() % 2 != 0) {
    in->Fail(at, "sorted set has a member without a score");
    return DecodeResult::kError;
  }
  Strings members;
  std::vector<double> scores;
  members.reserve(items.size() / 2);
  scores.reserve(items.size() / 2);
  char buf[24];
  for (size_t i = 0; i < items.size(); i += 2) {
    members.emplace_back(items[i].Text(buf));
    double d;
    if (items[i + 1].is_int) {
      d = static_cast<double>(items[i + 1].num);
    } else if (!ParseScore(items[i + 1].str, &d)) {
      in->Fail(at, "sorted set has a score that is not a number");
      return DecodeResult::kError;
    }
    scores.push_back(d);
  }
  return AssembleZSet(in, at, members, scores, out);
}

}  // namespace
namespace {

// Hashes with field expiry (Redis 7.4). Fields are kept with their absolute expiry.
DecodeResult DecodeHashWithTtls(uint8_t type, RdbInput* in, RdbValue* out) {
  Strings pairs;
  std::vector<int64_t> ttls;
  uint64_t at = in->offset();
  int64_t min_expire = 0;
  if (type == kTypeHashMetadata || type == kTypeHashListpackEx) {
    if (!ReadMs(in, &min_expire, "a hash's minimum field expiry")) return DecodeResult::kError;
  }
  if (type == kTypeHashMetadata || type == kTypeHashMetadataPreGa) {
    uint64_t n;
    at = in->offset();
    if (!in->ReadLength(&n, "a hash's field count") || !CheckCount(in, n, at, "hash")) {
      return DecodeResult::kError;
    }
    pairs.reserve(2 * n);
    for (uint64_t i = 0; i < n; i++) {
      // The release candidates wrote absolute times, 7.4 times relative to the
      // minimum (plus one, so that 0 still means none).
      uint64_t t;
      if (!in->ReadLength(&t, "a hash field's expiry")) return DecodeResult::kError;
      int64_t expire_at = static_cast<int64_t>(t);
      if (type == kTypeHashMetadata && t != 0) {
        expire_at = static_cast<int64_t>(t + static_cast<uint64_t>(min_expire) - 1);
      }
      pairs.emplace_back();
      pairs.emplace_back();
      if (!in->ReadString(&pairs[pairs.size() - 2], "a hash field") ||
          !in->ReadString(&pairs.back(), "a hash value")) {
        return DecodeResult::kError;
      }
      ttls.push_back(expire_at);
    }
  } else {
    std::string blob;
    std::vector<PackedItem> items;
    at = in->offset();
    if (!ReadBlob(in, &blob, DecodeListpack, &items, "a hash listpack"))
      return DecodeResult::kError;
    if (items.size() % 3 != 0) {
      in->Fail(at, "hash listpack with expiry is not in triples");
      return DecodeResult::kError;
    }
    char buf[24];
    for (size_t i = 0; i < items.size(); i += 3) {
      pairs.emplace_back(items[i].Text(buf));
      pairs.emplace_back(items[i + 1].Text(buf));
      if (!items[i + 2].is_int || items[i + 2].num < 0) {
        in->Fail(at, "hash listpack field expiry is not a time");
        return DecodeResult::kError;
      }
      ttls.push_back(items[i + 2].num);
    }
  }
  DecodeResult r = AssembleHash(in, at, pairs, out);
  if (r != DecodeResult::kOk) return r;
  out->field_expire_ms.clear();
  for (int64_t t : ttls) {
    if (t != 0) {
      out->field_expire_ms = std::move(ttls);
      break;
    }
  }
  return DecodeResult::kOk;
}

}  // namespace

bool SkipValue(uint8_t type, RdbInput* in) {
  const uint64_t at = in->offset();
  uint64_t n = 0;
  std::string_view raw;
  auto strings = [&](uint64_t count, const char* what) {
    for (uint64_t i = 0; i < count; i++) {
      if (!in->SkipString(what)) return false;
    }
    return true;
  };
  auto lens = [&](int count, const char* what) {
    uint64_t v;
    for (int i = 0; i < count; i++) {
      if (!in->ReadLength(&v, what)) return false;
    }
    return true;
  };
  auto count = [&](const char* what) {
    uint64_t c_at = in->offset();
    return in->ReadLength(&n, what) && CheckCount(in, n, c_at, what);
  };
  switch (type) {
    case kTypeString:
    case kTypeHashZipmap:
    case kTypeListZiplist:
    case kTypeSetIntset:
    case kTypeZSetZiplist:
    case kTypeHashZiplist:
    case kTypeHashListpack:
    case kTypeZSetListpack:
    case kTypeSetListpack:
      return in->SkipString("a value");
    case kTypeList:
    case kTypeSet:
    case kTypeListQuicklist:
      return count("a collection's length") && strings(n, "an element");
    case kTypeHash:
      return count("a hash's length") && strings(2 * n, "a hash field or value");
    case kTypeZSet:
    case kTypeZSet2:
      if (!count("a sorted set's length")) return false;
      for (uint64_t i = 0; i < n; i++) {
        if (!in->SkipString("a sorted set member")) return false;
        double d;
        bool ok = type == kTypeZSet2 ? in->ReadBytes(8, &raw, "a score")
                                     : in->ReadTextDouble(&d, "a score");
        if (!ok) return false;
      }
      return true;
    case kTypeListQuicklist2:
      if (!count("a quicklist's node count")) return false;
      for (uint64_t i = 0; i < n; i++) {
        if (!lens(1, "a quicklist node's container") || !in->SkipString("a quicklist node")) {
          return false;
        }
      }
      return true;
    case kTypeModule2:
      return lens(1, "a module type id") && SkipModulePayload(in);
    case kTypeStreamListpacks:
    case kTypeStreamListpacks2:
    case kTypeStreamListpacks3: {
      if (!count("a stream's node count") || !strings(2 * n, "a stream node")) return false;
      if (!lens(type >= kTypeStreamListpacks2 ? 8 : 3, "a stream's metadata")) return false;
      uint64_t groups;
      if (!count("a stream's group count")) return false;
      groups = n;
      for (uint64_t g = 0; g < groups; g++) {
        if (!in->SkipString("a consumer group's name") ||
            !lens(type >= kTypeStreamListpacks2 ? 3 : 2, "a consumer group's IDs") ||
            !count("a group's pending count")) {
          return false;
        }
        for (uint64_t k = 0, pel = n; k < pel; k++) {
          if (!in->ReadBytes(24, &raw, "a pending entry") || !lens(1, "a delivery count")) {
            return false;
          }
        }
        if (!count("a group's consumer count")) return false;
        for (uint64_t c = 0, consumers = n; c < consumers; c++) {
          if (!in->SkipString("a consumer's name") ||
              !in->ReadBytes(type >= kTypeStreamListpacks3 ? 16 : 8, &raw, "a consumer's times") ||
              !count("a consumer's pending count") ||
              !in->ReadBytes(static_cast<size_t>(16 * n), &raw, "a consumer's pending IDs")) {
            return false;
          }
        }
      }
      return true;
    }
    case kTypeHashMetadataPreGa:
    case kTypeHashMetadata:
      if (type == kTypeHashMetadata && !in->ReadBytes(8, &raw, "a hash's minimum expiry")) {
        return false;
      }
      if (!count("a hash's field count")) return false;
      for (uint64_t i = 0; i < n; i++) {
        if (!lens(1, "a hash field's expiry") || !strings(2, "a hash field or value")) return false;
      }
      return true;
    case kTypeHashListpackExPreGa:
    case kTypeHashListpackEx:
      if (type == kTypeHashListpackEx && !in->ReadBytes(8, &raw, "a hash's minimum expiry")) {
        return false;
      }
      return in->SkipString("a hash listpack");
    case kTypeModulePreGa:
      return in->Fail(at, "a value in the pre-release module format, which cannot be read");
    default:
      return in->Fail(at > 0 ? at - 1 : 0, "unknown value type " + std::to_string(type));
  }
}

size_t DropExpiredFields(RdbValue* v, int64_t now_ms) {
  if (v->field_expire_ms.empty()) return 0;
  packed::Builder b;
  size_t live = 0, i = 0;
  std::string_view field;
  for (packed::Reader r(v->data); !r.Done(); r.Next(), i++) {
    int64_t t = v->field_expire_ms[i / 2];
    bool expired = t != 0 && t <= now_ms;
    if (i % 2 == 0) {
      field = r.Item();
      continue;
    }
    if (expired) continue;
    if (t != 0) live++;
    b.Add(field);
    b.Add(r.Item());
  }
  v->elements = b.count() / 2;
  v->data = b.Finish();
  v->field_expire_ms.clear();
  return live;
}

bool SkipModulePayload(RdbInput* in) {
  std::string scratch;
  for (int guard = 0;; guard++) {
    uint64_t at = in->offset();
    uint64_t op;
    if (!in->ReadLength(&op, "a module value's opcode")) return false;
    std::string_view raw;
    uint64_t v;
    switch (op) {
      case kModuleOpEof:
        return true;
      case kModuleOpSint:
      case kModuleOpUint:
        if (!in->ReadLength(&v, "a module integer")) return false;
        break;
      case kModuleOpFloat:
        if (!in->ReadBytes(4, &raw, "a module float")) return false;
        break;
      case kModuleOpDouble:
        if (!in->ReadBytes(8, &raw, "a module double")) return false;
        break;
      case kModuleOpString:
        if (!in->ReadString(&scratch, "a module string")) return false;
        break;
      default:
        return in->Fail(at, "unknown module value opcode " + std::to_string(op));
    }
  }
}

DecodeResult DecodeValue(uint8_t type, RdbInput* in, const DecodeOptions& opts, RdbValue* out) {
  out->type_id = type;
  out->kind = RdbKind::kString;
  out->elements = 1;
  out->field_expire_ms.clear();
  out->stream.reset();
  out->module_name.clear();
  const uint64_t at = in->offset();
  const char* name = TypeIdName(type);
  switch (type) {
    case kTypeString:
      out->data.clear();
      in->ReadString(&out->data, "a string value");
      return Finish(in);
    case kTypeList:
    case kTypeSet:
    case kTypeHash:
    case kTypeZSet:
    case kTypeZSet2: {
      uint64_t n;
      if (!in->ReadLength(&n, "a collection's length") || !CheckCount(in, n, at, name)) {
        return DecodeResult::kError;
      }
      Strings items;
      if (type == kTypeList || type == kTypeSet) {
        if (!ReadStrings(in, n, &items, "an element")) return DecodeResult::kError;
        return type == kTypeList ? AssembleList(items, out) : AssembleSet(in, at, items, out);
      }
      if (type == kTypeHash) {
        if (!ReadStrings(in, 2 * n, &items, "a hash field or value")) return DecodeResult::kError;
        return AssembleHash(in, at, items, out);
      }
      std::vector<double> scores;
      items.reserve(n);
      scores.reserve(n);
      for (uint64_t i = 0; i < n; i++) {
        items.emplace_back();
        double d;
        if (!in->ReadString(&items.back(), "a sorted set member")) return DecodeResult::kError;
        bool ok = type == kTypeZSet2 ? in->ReadBinaryDouble(&d, "a score")
                                     : in->ReadTextDouble(&d, "a score");
        if (!ok) return DecodeResult::kError;
        scores.push_back(d);
      }
      return AssembleZSet(in, at, items, scores, out);
    }
    case kTypeModulePreGa:
      in->Fail(at, "a module value in the pre-release module format, which cannot be read");
      return DecodeResult::kError;
    case kTypeModule2: {
      uint64_t id;
      if (!in->ReadLength(&id, "a module type id")) return DecodeResult::kError;
      out->module_name = ModuleTypeName(id);
      if (!opts.skip_modules) {
        in->Fail(at, "a value of module type '" + out->module_name +
                         "', which strata cannot load (skip module values to go on)");
        return DecodeResult::kError;
      }
      if (!SkipModulePayload(in)) return DecodeResult::kError;
      out->kind = RdbKind::kModule;
      out->data.clear();
      return DecodeResult::kOk;
    }
    case kTypeHashZipmap:
    case kTypeListZiplist:
    case kTypeZSetZiplist:
    case kTypeHashZiplist:
    case kTypeHashListpack:
    case kTypeZSetListpack:
    case kTypeSetListpack: {
      std::string blob;
      std::vector<PackedItem> items;
      bool ok = type == kTypeHashZipmap ? ReadBlob(in, &blob, DecodeZipmap, &items, name)
                : (type == kTypeListZiplist || type == kTypeZSetZiplist || type == kTypeHashZiplist)
                    ? ReadBlob(in, &blob, DecodeZiplist, &items, name)
                    : ReadBlob(in, &blob, DecodeListpack, &items, name);
      if (!ok) return DecodeResult::kError;
      if (type == kTypeZSetZiplist || type == kTypeZSetListpack) {
        return ZSetFromItems(in, at, items, out);
      }
      Strings strs;
      ItemsToStrings(items, &strs);
      if (type == kTypeListZiplist) return AssembleList(strs, out);
      if (type == kTypeSetListpack) return AssembleSet(in, at, strs, out);
      return AssembleHash(in, at, strs, out);
    }
    case kTypeSetIntset: {
      std::string blob;
      std::vector<int64_t> ints;
      if (!ReadBlob(in, &blob, DecodeIntset, &ints, name)) return DecodeResult::kError;
      Strings strs;
      strs.reserve(ints.size());
      for (int64_t v : ints) strs.push_back(std::to_string(v));
      return AssembleSet(in, at, strs, out);
    }
    case kTypeListQuicklist:
    case kTypeListQuicklist2: {
      uint64_t nodes;
      if (!in->ReadLength(&nodes, "a quicklist's node count") || !CheckCount(in, nodes, at, name)) {
        return DecodeResult::kError;
      }
      Strings elems;
      std::string blob;
      std::vector<PackedItem> items;
      for (uint64_t i = 0; i < nodes; i++) {
        uint64_t container = kQuicklistPacked;
        uint64_t node_at = in->offset();
        if (type == kTypeListQuicklist2) {
          if (!in->ReadLength(&container, "a quicklist node's container")) {
            return DecodeResult::kError;
          }
          if (container != kQuicklistPacked && container != kQuicklistPlain) {
            in->Fail(node_at, "quicklist node container is neither plain nor packed");
            return DecodeResult::kError;
          }
        }
        if (container == kQuicklistPlain) {
          elems.emplace_back();
          if (!in->ReadString(&elems.back(), "a quicklist plain node")) return DecodeResult::kError;
          continue;
        }
        items.clear();
        bool ok = type == kTypeListQuicklist
                      ? ReadBlob(in, &blob, DecodeZiplist, &items, "a quicklist ziplist node")
                      : ReadBlob(in, &blob, DecodeListpack, &items, "a quicklist listpack node");
        if (!ok) return DecodeResult::kError;
        if (blob.empty()) {
          in->Fail(node_at, "quicklist node is empty");
          return DecodeResult::kError;
        }
        ItemsToStrings(items, &elems);
      }
      return AssembleList(elems, out);
    }
    case kTypeStreamListpacks:
    case kTypeStreamListpacks2:
    case kTypeStreamListpacks3:
      return DecodeStream(type, in, out);
    case kTypeHashMetadataPreGa:
    case kTypeHashListpackExPreGa:
    case kTypeHashMetadata:
    case kTypeHashListpackEx:
      return DecodeHashWithTtls(type, in, out);
    default:
      in->Fail(at > 0 ? at - 1 : 0, "unknown value type " + std::to_string(type));
      return DecodeResult::kError;
  }
}

// ---- writing ----

void AppendLE(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; i++) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void AppendLength(std::string* out, uint64_t len) {
  if (len < 64) {
    out->push_back(static_cast<char>(len));
  } else if (len < 16384) {
    out->push_back(static_cast<char>(0x40 | (len >> 8)));
    out->push_back(static_cast<char>(len & 0xff));
  } else if (len <= 0xffffffffULL) {
    out->push_back(static_cast<char>(0x80));
    for (int i = 3; i >= 0; i--) out->push_back(static_cast<char>((len >> (8 * i)) & 0xff));
  } else {
    out->push_back(static_cast<char>(0x81));
    for (int i = 7; i >= 0; i--) out->push_back(static_cast<char>((len >> (8 * i)) & 0xff));
  }
}

void AppendString(std::string* out, std::string_view s, bool compression) {
  if (s.size() <= 11) {
    int64_t v;
    if (CanonicalInt(s, &v)) {
      if (v >= -128 && v <= 127) {
        out->push_back(static_cast<char>(0xc0));
        AppendLE(out, static_cast<uint64_t>(v), 1);
        return;
      }
      if (v >= -32768 && v <= 32767) {
        out->push_back(static_cast<char>(0xc1));
        AppendLE(out, static_cast<uint64_t>(v), 2);
        return;
      }
      if (v >= INT32_MIN && v <= INT32_MAX) {
        out->push_back(static_cast<char>(0xc2));
        AppendLE(out, static_cast<uint64_t>(v), 4);
        return;
      }
    }
  }
  if (compression && s.size() > 20) {
    thread_local std::string c;  // reused: most attempts fail, and each would allocate
    if (lzf::Compress(s, s.size() - 4, &c)) {
      out->push_back(static_cast<char>(0xc3));
      AppendLength(out, c.size());
      AppendLength(out, s.size());
      out->append(c);
      return;
    }
  }
  AppendLength(out, s.size());
  out->append(s);
}

void AppendBinaryDouble(std::string* out, double d) {
  uint64_t u;
  std::memcpy(&u, &d, 8);
  AppendLE(out, u, 8);
}

EncodeOptions EncodeOptions::FromLimits(int version, bool compression) {
  const EncodingLimits& l = GlobalEncodingLimits();
  EncodeOptions o;
  o.version = version;
  o.compression = compression;
  o.hash_max_listpack_entries = l.hash_max_listpack_entries.load();
  o.hash_max_listpack_value = l.hash_max_listpack_value.load();
  o.set_max_intset_entries = l.set_max_intset_entries.load();
  o.set_max_listpack_entries = l.set_max_listpack_entries.load();
  o.set_max_listpack_value = l.set_max_listpack_value.load();
  o.zset_max_listpack_entries = l.zset_max_listpack_entries.load();
  o.zset_max_listpack_value = l.zset_max_listpack_value.load();
  o.list_max_listpack_size = l.list_max_listpack_size.load();
  return o;
}

namespace {

void AddScore(ListpackBuilder* lp, double s) {
  if (std::isfinite(s) && s == std::floor(s) && std::fabs(s) < 9007199254740992.0) {
    lp->AddInt(static_cast<int64_t>(s));
    return;
  }
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), s);
  lp->Add(std::string_view(buf, static_cast<size_t>(r.ptr - buf)));
}

uint8_t EncodeList(std::string_view data, const EncodeOptions& o, std::string* out) {
  out->push_back(static_cast<char>(kTypeListQuicklist2));
  static constexpr size_t kSizeClasses[] = {4096, 8192, 16384, 32768, 65536};
  int64_t fill = o.list_max_listpack_size;
  size_t max_bytes = 0, max_count = 0;
  if (fill > 0) {
    max_count = static_cast<size_t>(fill);
  } else {
    int64_t idx = std::clamp<int64_t>(-fill, 1, 5) - 1;
    max_bytes = kSizeClasses[idx];
  }
  std::vector<std::string> nodes;
  ListpackBuilder lp;
  for (packed::Reader r(data); !r.Done(); r.Next()) {
    std::string_view e = r.Item();
    bool full = lp.count() > 0 &&
                (max_count ? lp.count() >= max_count : lp.bytes() + e.size() + 11 > max_bytes);
    if (full) nodes.push_back(lp.Finish());
    lp.Add(e);
  }
  if (lp.count() > 0) nodes.push_back(lp.Finish());
  AppendLength(out, nodes.size());
  for (const std::string& n : nodes) {
    AppendLength(out, kQuicklistPacked);
    AppendString(out, n, o.compression);
  }
  return kTypeListQuicklist2;
}

uint8_t EncodeSet(std::string_view data, const EncodeOptions& o, std::string* out) {
  if (!data.empty() && static_cast<uint8_t>(data[0]) == static_cast<uint8_t>(PackedTag::kIntSet)) {
    std::vector<int64_t> ints = intset::Decode(data);
    if (static_cast<int64_t>(ints.size()) <= o.set_max_intset_entries) {
      out->push_back(static_cast<char>(kTypeSetIntset));
      AppendString(out, EncodeIntset(ints), o.compression);
      return kTypeSetIntset;
    }
    out->push_back(static_cast<char>(kTypeSet));
    AppendLength(out, ints.size());
    for (int64_t v : ints) AppendString(out, std::to_string(v), o.compression);
    return kTypeSet;
  }
  size_t count = packed::Count(data);
  bool small = o.version >= 11 && static_cast<int64_t>(count) <= o.set_max_listpack_entries;
  if (small) {
    for (packed::Reader r(data); !r.Done(); r.Next()) {
      if (static_cast<int64_t>(r.Item().size()) > o.set_max_listpack_value) {
        small = false;
        break;
      }
    }
  }
  if (small) {
    ListpackBuilder lp;
    for (packed::Reader r(data); !r.Done(); r.Next()) lp.Add(r.Item());
    out->push_back(static_cast<char>(kTypeSetListpack));
    AppendString(out, lp.Finish(), o.compression);
    return kTypeSetListpack;
  }
  out->push_back(static_cast<char>(kTypeSet));
  AppendLength(out, count);
  for (packed::Reader r(data); !r.Done(); r.Next()) AppendString(out, r.Item(), o.compression);
  return kTypeSet;
}

uint8_t EncodeZSet(std::string_view data, const EncodeOptions& o, std::string* out) {
  std::vector<ZMember> items;
  zpacked::Decode(data, &items);
  bool small = static_cast<int64_t>(items.size()) <= o.zset_max_listpack_entries;
  for (size_t i = 0; small && i < items.size(); i++) {
    if (static_cast<int64_t>(items[i].member.size()) > o.zset_max_listpack_value) small = false;
  }
  if (small) {
    ListpackBuilder lp;
    for (const ZMember& m : items) {
      lp.Add(m.member);
      AddScore(&lp, m.score);
    }
    out->push_back(static_cast<char>(kTypeZSetListpack));
    AppendString(out, lp.Finish(), o.compression);
    return kTypeZSetListpack;
  }
  // Greatest first, as Redis writes a skiplist (its loader then inserts at the head).
  out->push_back(static_cast<char>(kTypeZSet2));
  AppendLength(out, items.size());
  for (size_t i = items.size(); i-- > 0;) {
    AppendString(out, items[i].member, o.compression);
    AppendBinaryDouble(out, items[i].score);
  }
  return kTypeZSet2;
}

uint8_t EncodeHash(std::string_view data, const EncodeOptions& o, std::string* out) {
  size_t items = packed::Count(data);
  bool small = static_cast<int64_t>(items / 2) <= o.hash_max_listpack_entries;
  if (small) {
    for (packed::Reader r(data); !r.Done(); r.Next()) {
      if (static_cast<int64_t>(r.Item().size()) > o.hash_max_listpack_value) {
        small = false;
        break;
      }
    }
  }
  if (small) {
    ListpackBuilder lp;
    for (packed::Reader r(data); !r.Done(); r.Next()) lp.Add(r.Item());
    out->push_back(static_cast<char>(kTypeHashListpack));
    AppendString(out, lp.Finish(), o.compression);
    return kTypeHashListpack;
  }
  out->push_back(static_cast<char>(kTypeHash));
  AppendLength(out, items / 2);
  for (packed::Reader r(data); !r.Done(); r.Next()) AppendString(out, r.Item(), o.compression);
  return kTypeHash;
}

}  // namespace

uint8_t EncodeValue(ValueType type, std::string_view data, const EncodeOptions& opts,
                    std::string* out) {
  switch (type) {
    case ValueType::kString:
      out->push_back(static_cast<char>(kTypeString));
      AppendString(out, data, opts.compression);
      return kTypeString;
    case ValueType::kList:
      return EncodeList(data, opts, out);
    case ValueType::kSet:
      return EncodeSet(data, opts, out);
    case ValueType::kZSet:
      return EncodeZSet(data, opts, out);
    case ValueType::kHash:
      return EncodeHash(data, opts, out);
    case ValueType::kStream:
      return EncodeStream(data, opts, out);
  }
  return kTypeString;
}

}  // namespace strata::rdb
