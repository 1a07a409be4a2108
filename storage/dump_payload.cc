#include "storage/dump_payload.h"

#include "storage/crc64.h"
#include "storage/rdb_format.h"
#include "storage/rdb_input.h"

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

namespace {

// The footer: version and checksum. On success *body is what precedes it.
PayloadStatus CheckFooter(std::string_view payload, int* version, std::string_view* body,
                          std::string* error) {
  if (payload.size() < 10) {
    *error = "payload shorter than its footer";
    return PayloadStatus::kBadFooter;
  }
  const auto* f = reinterpret_cast<const unsigned char*>(payload.data() + payload.size() - 10);
  *version = f[0] | f[1] << 8;
  if (*version > kMaxRedisVersion &&
      !(*version >= kValkeyMinVersion && *version <= kValkeyMaxVersion)) {
    *error = "payload RDB version " + std::to_string(*version) + " is newer than this reader";
    return PayloadStatus::kBadFooter;
  }
  uint64_t crc = 0;
  for (int i = 9; i >= 2; i--) crc = crc << 8 | f[i];
  if (crc64::Extend(0, payload.data(), payload.size() - 8) != crc) {
    *error = "payload checksum is wrong";
    return PayloadStatus::kBadFooter;
  }
  *body = payload.substr(0, payload.size() - 10);
  return PayloadStatus::kOk;
}

}  // namespace

std::string MakeFunctionPayload(const std::vector<std::string>& codes) {
  std::string out;
  for (const std::string& code : codes) {
    out.push_back(static_cast<char>(kOpFunction2));
    AppendString(&out, code, true);
  }
  AppendLE(&out, static_cast<uint64_t>(kDefaultWriteVersion), 2);
  AppendLE(&out, crc64::Value(out), 8);
  return out;
}

PayloadStatus ParseFunctionPayload(std::string_view payload, std::vector<std::string>* codes,
                                   std::string* error) {
  int version = 0;
  std::string_view body;
  PayloadStatus st = CheckFooter(payload, &version, &body, error);
  if (st != PayloadStatus::kOk) return st;
  RdbInput in(body);
  while (in.remaining() > 0) {
    uint8_t op = 0;
    if (!in.ReadByte(&op, "a function library record")) break;
    if (op != kOpFunction2) {
      *error = "given type is not a function";
      return PayloadStatus::kBadData;
    }
    std::string code;
    if (!in.ReadString(&code, "a function library's code")) break;
    codes->push_back(std::move(code));
  }
  if (in.failed()) {
    *error = in.error();
    return PayloadStatus::kBadData;
  }
  return PayloadStatus::kOk;
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
