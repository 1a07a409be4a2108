#include "core/sha1.h"

#include <gtest/gtest.h>

#include <string>

namespace strata {
namespace {

TEST(Sha1Test, KnownVectors) {
  EXPECT_EQ(Sha1Hex(""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  EXPECT_EQ(Sha1Hex("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
  // Redis's own redis.sha1hex example.
  EXPECT_EQ(Sha1Hex("Pizza & Mozzarella"), "c7f2e5fda837ec3bf05603803a69a837812f7215");
  EXPECT_EQ(Sha1Hex(std::string(1000000, 'a')), "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
}

// Where the padding spills into a second block: 55, 56 and 64 bytes.
TEST(Sha1Test, PaddingBoundaries) {
  EXPECT_EQ(Sha1Hex(std::string(55, 'x')), "cef734ba81a024479e09eb5a75b6ddae62e6abf1");
  EXPECT_EQ(Sha1Hex(std::string(56, 'x')), "901305367c259952f4e7af8323f480d59f81335b");
  EXPECT_EQ(Sha1Hex(std::string(64, 'x')), "bb2fa3ee7afb9f54c6dfb5d021f14b1ffe40c163");
}

}  // namespace
}  // namespace strata
