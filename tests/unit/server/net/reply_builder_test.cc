#include "server/net/reply_builder.h"

#include <gtest/gtest.h>

#include <string>

#include "core/entry.h"
#include "core/slab.h"

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

// GET's reply: header, value and CRLF written in one growth of the output, for packed
// and raw values of every length class (the header's digit counts, the short-header
// copy's edge at 16 bytes), after other replies and at the start of a buffer.
TEST(ReplyBuilderTest, BulkValueOfEveryLength) {
  SlabHeap heap;
  for (size_t n : {0,  1,  5,   9,   10,  11,   12,   13,   14,    15,    16,
                   17, 99, 100, 101, 999, 1000, 1001, 9999, 10000, 10001, 100000}) {
    for (bool binary : {false, true}) {
      std::string value(n, 'x');
      for (size_t i = 0; i < n; i++) value[i] = static_cast<char>('a' + i % 26);
      if (binary && n > 0) value[n / 2] = static_cast<char>(0xff);  // not packed
      size_t usable = 0;
      Entry* e = Entry::Create(heap, "k", value, ValueType::kString, 0, &usable);
      for (bool after : {false, true}) {
        std::string out = after ? ":1\r\n" : "";
        ReplyBuilder rb(&out, 2);
        rb.BulkValue(*e);
        std::string want = (after ? ":1\r\n$" : "$") + std::to_string(n) + "\r\n" + value + "\r\n";
        EXPECT_EQ(out, want) << n << " binary " << binary << " after " << after;
      }
      Entry::Destroy(heap, e);
    }
  }
}

}  // namespace
}  // namespace strata
