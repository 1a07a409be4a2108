#include "storage/crc64.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>

namespace strata {
namespace {

TEST(Crc64Test, RedisCheckValue) {
  // Redis's own self-test value (crc64.c).
  EXPECT_EQ(crc64::Value("123456789"), 0xe9c6d914c4b8d9caull);
  EXPECT_EQ(crc64::Value(""), 0u);
}

TEST(Crc64Test, FastPathMatchesBytewiseAndExtends) {
  std::mt19937_64 rng(5);
  std::string data(1000, '\0');
  for (char& c : data) c = static_cast<char>(rng());
  for (size_t n : {0, 1, 7, 8, 9, 63, 64, 65, 999, 1000}) {
    for (size_t skew : {0, 1, 3}) {
      if (skew > n) continue;
      const char* p = data.data() + skew;
      size_t len = n - skew;
      uint64_t want = crc64::detail::ExtendBytewise(0, p, len);
      EXPECT_EQ(crc64::Extend(0, p, len), want) << n << " " << skew;
      // In two pieces, split anywhere.
      size_t cut = len / 3;
      EXPECT_EQ(crc64::Extend(crc64::Extend(0, p, cut), p + cut, len - cut), want);
    }
  }
}

// Real RDB files (version 5 on) end with the CRC64 of everything before it, stored
// little-endian; 0 means the writer had checksums off (rdbchecksum no).
std::filesystem::path FixtureDir() {
  if (const char* d = std::getenv("STRATA_RDB_FIXTURES")) return d;
  return std::filesystem::path(STRATA_SOURCE_DIR) / ".." / "shared" / "rdb-fixtures";
}

TEST(Crc64Test, ChecksumsOfRealRdbFiles) {
  std::filesystem::path dir = FixtureDir();
  if (!std::filesystem::is_directory(dir)) {
    GTEST_SKIP() << "no RDB fixtures at " << dir << " (set STRATA_RDB_FIXTURES)";
  }
  // The files whose last 8 bytes are not the CRC64 of the rest, and why.
  const std::map<std::string, std::string> exceptions = {
      {"librdb/invalid_chksum_v8.rdb", "bad"},        // damaged on purpose
      {"librdb/script.rdb", "zero"},                  // written with checksums off
      {"librdb/future_v19.rdb", "skip"},              // a version no reader knows
      {"rdbtools/redis_40_with_module.rdb", "skip"},  // checksums off, then bytes after EOF
  };
  int checked = 0, matched = 0;
  for (const char* set : {"librdb", "rdbtools"}) {
    for (const auto& f : std::filesystem::directory_iterator(dir / set)) {
      if (f.path().extension() != ".rdb") continue;
      std::ifstream in(f.path(), std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      std::string d = ss.str();
      ASSERT_GE(d.size(), 9u) << f.path();
      int version = std::atoi(d.substr(5, 4).c_str());
      if (version < 5) continue;  // no checksum before RDB 5
      std::string name = std::string(set) + "/" + f.path().filename().string();
      auto ex = exceptions.find(name);
      std::string expect = ex == exceptions.end() ? "match" : ex->second;
      if (expect == "skip") continue;
      uint64_t footer = 0;
      for (int i = 0; i < 8; i++) {
        footer |= uint64_t{static_cast<unsigned char>(d[d.size() - 8 + i])} << (8 * i);
      }
      uint64_t crc = crc64::Extend(0, d.data(), d.size() - 8);
      checked++;
      if (expect == "match") {
        EXPECT_EQ(crc, footer) << name;
        matched += crc == footer;
      } else if (expect == "zero") {
        EXPECT_EQ(footer, 0u) << name;
      } else {
        EXPECT_NE(footer, 0u) << name;
        EXPECT_NE(crc, footer) << name;
      }
    }
  }
  EXPECT_GE(checked, 40);
  EXPECT_GE(matched, 38);
}

}  // namespace
}  // namespace strata
