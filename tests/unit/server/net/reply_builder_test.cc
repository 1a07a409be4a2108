#include "server/net/reply_builder.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

TEST(ReplyBuilderTest, Resp2) {
  std::string out;
  ReplyBuilder rb(&out, 2);
  rb.Ok();
  rb.Integer(-5);
  rb.Bulk("hi");
  rb.Null();
  rb.NullArray();
  rb.Map(1);
  rb.Double(1.5);
  rb.Error("ERR bad\r\nthing");
  EXPECT_EQ(out, "+OK\r\n:-5\r\n$2\r\nhi\r\n$-1\r\n*-1\r\n*2\r\n$3\r\n1.5\r\n-ERR bad  thing\r\n");
}

TEST(ReplyBuilderTest, Resp3) {
  std::string out;
  ReplyBuilder rb(&out, 3);
  rb.Null();
  rb.Map(2);
  rb.Set(3);
  rb.Double(2.5);
  rb.Bool(true);
  rb.Verbatim("abc");
  EXPECT_EQ(out, "_\r\n%2\r\n~3\r\n,2.5\r\n#t\r\n=7\r\ntxt:abc\r\n");
}

}  // namespace
}  // namespace strata
