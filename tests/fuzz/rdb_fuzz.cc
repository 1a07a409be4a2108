// libFuzzer entry point for the RDB reader and the DUMP payload parser (storage/).
// Build with clang:
//   CXX=clang++ cmake -S . -B build-fuzz -DSTRATA_FUZZ=ON && cmake --build build-fuzz
//   build-fuzz/tests/rdb_fuzz -max_total_time=60 CORPUS
// An input that starts with "REDIS" or "VALKEY" is read as a whole file (checksum not
// compared, so that mutations reach the records); any other input's first byte chooses:
//   even: the rest is a DUMP payload's body, given a right footer (version and CRC-64),
//         so that the value decoder sees it;
//   odd:  the rest is a file's records after a "REDIS0011" header, read once in full and
//         once keeping every other key (the framing-only skip path).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "storage/crc64.h"
#include "storage/dump_payload.h"
#include "storage/rdb_reader.h"
#include "storage/rdb_value.h"

namespace {

void ReadFile(std::string_view data, bool alternate) {
  strata::rdb::RdbReader::Options o;
  o.verify_checksum = false;
  o.skip_modules = true;
  o.max_string_bytes = 1 << 20;
  int n = 0;
  if (alternate) o.keep = [&n](uint32_t, std::string_view) { return n++ % 2 == 0; };
  strata::rdb::RdbReader r(data, o);
  if (!r.ReadHeader()) return;
  strata::rdb::RdbRecord rec;
  for (int i = 0; i < 100000 && r.Next(&rec); i++) {
    if (rec.kind == strata::rdb::RdbRecord::Kind::kEnd) break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  if (in.substr(0, 5) == "REDIS" || in.substr(0, 6) == "VALKEY") {
    ReadFile(in, false);
    return 0;
  }
  if (in.empty()) return 0;
  uint8_t mode = static_cast<uint8_t>(in[0]);
  std::string body(in.substr(1));
  if (mode % 2 == 0) {
    strata::rdb::AppendLE(&body, 11, 2);
    strata::rdb::AppendLE(&body, strata::crc64::Value(body), 8);
    strata::rdb::RdbValue v;
    std::string err;
    strata::rdb::ParseDumpPayload(body, {}, &v, &err);
  } else {
    std::string file = "REDIS0011" + body;
    ReadFile(file, false);
    ReadFile(file, true);
  }
  return 0;
}
