// Status: the result of an I/O operation (disk or network), in the storage layer.
//
// [[nodiscard]] so that an ignored error is a compile warning; code that deliberately
// drops one writes `status.IgnoreError()`. The snapshot writer and loader (to come)
// return it from every call that touches a file.
// Thread-safety: a value type.
#pragma once

#include <string>
#include <string_view>
#include <utility>

namespace strata {

class [[nodiscard]] Status {
 public:
  enum class Code { kOk, kIoError, kCorruption, kNotFound, kInvalidArgument, kNoSpace };

  Status() = default;
  static Status Ok() { return Status(); }
  static Status IoError(std::string_view msg) { return Status(Code::kIoError, msg); }
  static Status Corruption(std::string_view msg) { return Status(Code::kCorruption, msg); }
  static Status NotFound(std::string_view msg) { return Status(Code::kNotFound, msg); }
  static Status InvalidArgument(std::string_view msg) {
    return Status(Code::kInvalidArgument, msg);
  }
  static Status NoSpace(std::string_view msg) { return Status(Code::kNoSpace, msg); }
  // errno-based I/O failure: "<context>: <strerror(err)>"; ENOSPC maps to kNoSpace.
  static Status FromErrno(std::string_view context, int err);

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string ToString() const;
  void IgnoreError() const {}

 private:
  Status(Code code, std::string_view msg) : code_(code), message_(msg) {}
  Code code_ = Code::kOk;
  std::string message_;
};

}  // namespace strata
