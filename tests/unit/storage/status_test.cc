#include "storage/status.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace strata {
namespace {

TEST(StatusTest, OkByDefault) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.ToString(), "OK");
}

TEST(StatusTest, ErrnoMapsNoSpace) {
  Status s = Status::FromErrno("write data/shard-0.tmp", ENOSPC);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Status::Code::kNoSpace);
  EXPECT_NE(s.message().find("data/shard-0.tmp"), std::string::npos);
  EXPECT_EQ(Status::FromErrno("open", ENOENT).code(), Status::Code::kIoError);
}

}  // namespace
}  // namespace strata
