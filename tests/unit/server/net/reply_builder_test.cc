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

// GET's reply: header, value and CRLF (assembled on the stack up to kSmallValue, else in
// one growth of the output), for packed and raw values of every length class (the
// header's digit counts, the kSmallValue edge), after other replies and at the start of
// a buffer.
TEST(ReplyBuilderTest, BulkValueOfEveryLength) {
  SlabHeap heap;
  for (size_t n : {0,   1,  5,  9,   10,  11,  12,   13,   14,   15,    16,    511,   512,
                   513, 17, 99, 100, 101, 999, 1000, 1001, 9999, 10000, 10001, 100000}) {
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

// Many replies into one buffer: the output grows (by doubling) part of the time and has
// room the rest, and its size is always exactly the bytes written (a growth must not
// leave the new capacity's slack in the string).
TEST(ReplyBuilderTest, BulkValuesIntoOneGrowingBuffer) {
  SlabHeap heap;
  std::string out;
  std::string want;
  ReplyBuilder rb(&out, 2);
  for (size_t i = 0; i < 300; i++) {
    size_t n = (i * 37) % 1499;  // both sides of kSmallValue
    std::string value(n, static_cast<char>('a' + i % 26));
    size_t usable = 0;
    Entry* e = Entry::Create(heap, "k", value, ValueType::kString, 0, &usable);
    size_t cap = out.capacity();
    rb.BulkValue(*e);
    want += "$" + std::to_string(n) + "\r\n" + value + "\r\n";
    ASSERT_EQ(out.size(), want.size()) << i << " grew " << (out.capacity() != cap);
    Entry::Destroy(heap, e);
  }
  EXPECT_EQ(out, want);
}

}  // namespace
}  // namespace strata
