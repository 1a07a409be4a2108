// FUNCTION DUMP payloads: one written by redis-server 7.0 is read, strata writes the same
// bytes for the same library, several libraries round-trip, and damage is refused.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "storage/dump_payload.h"

namespace strata::rdb {
namespace {

const char kCode[] = "#!lua name=t\nredis.register_function('f', function() return 1 end)";

// FUNCTION DUMP from redis-server 7.0.15 with only the library above loaded.
const std::string kRedisPayload(
    "\xf5\x40\x42\x23\x21\x6c\x75\x61\x20\x6e\x61\x6d\x65\x3d\x74\x0a\x72\x65\x64\x69\x73\x2e"
    "\x72\x65\x67\x69\x73\x74\x65\x72\x5f\x66\x75\x6e\x63\x74\x69\x6f\x6e\x28\x27\x66\x27\x2c"
    "\x20\x66\x75\x6e\x63\x74\x69\x6f\x6e\x28\x29\x20\x72\x65\x74\x75\x72\x6e\x20\x31\x20\x65"
    "\x6e\x64\x29\x0a\x00\xe6\xe6\x92\xdf\xfa\xa1\xad\xcf",
    79);

TEST(FunctionPayloadTest, ReadsWhatRedisWritesAndWritesTheSame) {
  std::vector<std::string> codes;
  std::string error;
  ASSERT_EQ(ParseFunctionPayload(kRedisPayload, &codes, &error), PayloadStatus::kOk) << error;
  ASSERT_EQ(codes.size(), 1u);
  EXPECT_EQ(codes[0], kCode);
  EXPECT_EQ(MakeFunctionPayload({kCode}), kRedisPayload);
}

TEST(FunctionPayloadTest, SeveralLibrariesAndNoneRoundTrip) {
  std::vector<std::string> in = {kCode, std::string(5000, 'x') + "\n-- a long, compressible one",
                                 "#!lua name=b\n"};
  std::vector<std::string> out;
  std::string error;
  ASSERT_EQ(ParseFunctionPayload(MakeFunctionPayload(in), &out, &error), PayloadStatus::kOk);
  EXPECT_EQ(out, in);
  out.clear();
  ASSERT_EQ(ParseFunctionPayload(MakeFunctionPayload({}), &out, &error), PayloadStatus::kOk);
  EXPECT_TRUE(out.empty());
}

TEST(FunctionPayloadTest, DamageIsRefused) {
  for (size_t i = 0; i < kRedisPayload.size(); i++) {
    std::string bad = kRedisPayload;
    bad[i] ^= 0x01;
    std::vector<std::string> codes;
    std::string error;
    EXPECT_NE(ParseFunctionPayload(bad, &codes, &error), PayloadStatus::kOk) << i;
  }
  for (size_t n = 0; n < kRedisPayload.size(); n++) {
    std::vector<std::string> codes;
    std::string error;
    EXPECT_NE(ParseFunctionPayload(kRedisPayload.substr(0, n), &codes, &error), PayloadStatus::kOk)
        << n;
  }
  // A well-formed payload of something other than a library (a DUMP of a string).
  std::string not_a_function = MakeDumpPayload(ValueType::kString, "v", EncodeOptions{});
  std::vector<std::string> codes;
  std::string error;
  EXPECT_EQ(ParseFunctionPayload(not_a_function, &codes, &error), PayloadStatus::kBadData);
  EXPECT_EQ(error, "given type is not a function");
}

}  // namespace
}  // namespace strata::rdb
