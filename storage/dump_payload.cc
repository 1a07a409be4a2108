#include "storage/dump_payload.h"

#include "storage/crc64.h"
#include "storage/rdb_format.h"

namespace strata::rdb {

std::string MakeDumpPayload(ValueType type, std::string_view data, const EncodeOptions& opts) {
  std::string out;
  out.reserve(data.size() + 16);
  uint8_t type_id = EncodeValue(type, data, opts, &out);
  int version = MinVersionForType(type_id);
  AppendLE(&out, static_cast<uint64_t>(version), 2);
  AppendLE(&out, crc64::Value(out), 8);
  return out;
}

PayloadStatus ParseDumpPayload(std::string_view payload, const DecodeOptions& opts, RdbValue* out,
                               std::string* error) {
  if (payload.size() < 10) {
    *error = "payload shorter than its footer";
    return PayloadStatus::kBadFooter;
  }
  const auto* f = reinterpret_cast<const unsigned char*>(payload.data() + payload.size() - 10);
  int version = f[0] | f[1] << 8;
  if (version > kMaxRedisVersion &&
      !(version >= kValkeyMinVersion && version <= kValkeyMaxVersion)) {
    *error = "payload RDB version " + std::to_string(version) + " is newer than this reader";
    return PayloadStatus::kBadFooter;
  }
  uint64_t crc = 0;
  for (int i = 9; i >= 2; i--) crc = crc << 8 | f[i];
  std::string_view body = payload.substr(0, payload.size() - 10);
  if (crc64::Extend(0, payload.data(), payload.size() - 8) != crc) {
    *error = "payload checksum is wrong";
    return PayloadStatus::kBadFooter;
  }
  RdbInput in(body);
  uint8_t type;
  if (!in.ReadByte(&type, "the value type")) {
    *error = in.error();
    return PayloadStatus::kBadData;
  }
  if (!IsValueType(type) || (version >= kValkeyMinVersion && type > kTypeStreamListpacks3)) {
    *error = "unknown value type " + std::to_string(type);
    return PayloadStatus::kBadData;
  }
  DecodeResult r = DecodeValue(type, &in, opts, out);
  if (r == DecodeResult::kError) {
    *error = in.error();
    return PayloadStatus::kBadData;
  }
  if (r == DecodeResult::kEmpty) {
    *error = "the value is an empty collection";
    return PayloadStatus::kBadData;
  }
  if (in.remaining() != 0) {
    *error = "the value ends " + std::to_string(in.remaining()) + " bytes before the footer";
    return PayloadStatus::kBadData;
  }
  return PayloadStatus::kOk;
}

}  // namespace strata::rdb
