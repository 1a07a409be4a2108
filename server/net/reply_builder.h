// ReplyBuilder: writes RESP2 or RESP3 replies into a byte buffer.
//
// One builder per reply destination; the protocol version is the connection's (HELLO).
// Where RESP2 and RESP3 differ (null, maps, sets, doubles, verbatim text) the builder
// picks the right encoding, so command code states what it means, not how it is sent.
// Error texts are given without the leading '-' (e.g. "ERR syntax error"); CR/LF in
// them are replaced with spaces, as Redis does.
// Thread-safety: not shared; used by whichever thread builds the reply.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/entry.h"

namespace strata {

class ReplyBuilder {
 public:
  ReplyBuilder(std::string* out, int resp) : out_(out), resp_(resp) {}

  int resp() const { return resp_; }
  std::string* buffer() { return out_; }

  void Ok() { out_->append("+OK\r\n", 5); }
  void Simple(std::string_view s);
  // Counted in the thread's ErrorStats (INFO errorstats, total_error_replies).
  void Error(std::string_view msg);
  // An error already counted where it arose: a script's reply that passes on the error
  // of a command it called (that command's reply counted it, as in Redis).
  void ErrorUncounted(std::string_view msg);
  void Integer(int64_t v);
  void Bulk(std::string_view s);
  static constexpr size_t kSmallBulk = 96;  // bulk replies up to this size take one append
  // The entry's value as a bulk string: a value of up to kSmallValue bytes is assembled
  // with its header on the stack and appended once; a larger one is decoded straight
  // into the output buffer.
  void BulkValue(const Entry& e);
  static constexpr size_t kSmallValue = 512;
  void Null();       // RESP2 $-1, RESP3 _
  void NullArray();  // RESP2 *-1, RESP3 _
  void Array(size_t n) { Header('*', n); }
  void Map(size_t n);     // RESP2: an array of 2n
  void Set(size_t n);     // RESP2: an array
  void Double(double v);  // RESP2: bulk string
  // A double in Redis's human form (LongDoubleToHuman: %.17Lf, trailing zeros cut), as
  // its addReplyHumanLongDouble sends coordinates: RESP2 bulk, RESP3 double.
  void HumanDouble(long double v);
  void Bool(bool v);                     // RESP2: integer 0/1
  void Verbatim(std::string_view text);  // RESP3 =txt:..., RESP2 bulk

 private:
  void Header(char type, size_t n);
  // A double's text: RESP3 ',' type, RESP2 bulk.
  void DoubleText(std::string_view s);
  std::string* out_;
  int resp_;
};

}  // namespace strata
