#include "tools/strata-dump/item.h"

#include <charconv>

#include "storage/crc64.h"
#include "storage/rdb_format.h"
#include "storage/rdb_value.h"

namespace strata::dump {

std::string Item::Payload() const {
  std::string p;
  p.reserve(value.size() + 11);
  p.push_back(static_cast<char>(type_id));
  p.append(value);
  rdb::AppendLE(&p, static_cast<uint64_t>(rdb::MinVersionForType(type_id)), 2);
  rdb::AppendLE(&p, crc64::Value(p), 8);
  return p;
}

namespace {

void Num(std::string* out, uint64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, static_cast<size_t>(r.ptr - buf));
}

void Bulk(std::string* out, std::string_view s) {
  out->push_back('$');
  Num(out, s.size());
  out->append("\r\n");
  out->append(s);
  out->append("\r\n");
}

}  // namespace

void Item::AppendRestore(bool replace, std::string* out) const {
  size_t argc =
      4 + (expire_ms >= 0 ? 1 : 0) + (replace ? 1 : 0) + (idle_s >= 0 || freq >= 0 ? 2 : 0);
  out->push_back('*');
  Num(out, argc);
  out->append("\r\n$7\r\nRESTORE\r\n");
  Bulk(out, key);
  char ttl[24];
  auto r = std::to_chars(ttl, ttl + sizeof(ttl), expire_ms >= 0 ? expire_ms : 0);
  Bulk(out, std::string_view(ttl, static_cast<size_t>(r.ptr - ttl)));
  // The payload: type id, value, version, CRC-64 of those.
  out->push_back('$');
  Num(out, value.size() + 11);
  out->append("\r\n");
  size_t start = out->size();
  out->push_back(static_cast<char>(type_id));
  out->append(value);
  rdb::AppendLE(out, static_cast<uint64_t>(rdb::MinVersionForType(type_id)), 2);
  uint64_t crc = crc64::Extend(0, out->data() + start, out->size() - start);
  rdb::AppendLE(out, crc, 8);
  out->append("\r\n");
  if (expire_ms >= 0) Bulk(out, "ABSTTL");
  if (replace) Bulk(out, "REPLACE");
  if (idle_s >= 0) {
    Bulk(out, "IDLETIME");
    Bulk(out, std::to_string(idle_s));
  } else if (freq >= 0) {
    Bulk(out, "FREQ");
    Bulk(out, std::to_string(freq));
  }
}

}  // namespace strata::dump
