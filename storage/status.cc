#include "storage/status.h"

#include <cerrno>
#include <cstring>

namespace strata {

Status Status::FromErrno(std::string_view context, int err) {
  std::string msg(context);
  msg += ": ";
  msg += std::strerror(err);
  return err == ENOSPC ? NoSpace(msg) : IoError(msg);
}

std::string Status::ToString() const {
  switch (code_) {
    case Code::kOk:
      return "OK";
    case Code::kIoError:
      return "IO error: " + message_;
    case Code::kCorruption:
      return "Corruption: " + message_;
    case Code::kNotFound:
      return "Not found: " + message_;
    case Code::kInvalidArgument:
      return "Invalid argument: " + message_;
    case Code::kNoSpace:
      return "No space left: " + message_;
  }
  return message_;
}

}  // namespace strata
