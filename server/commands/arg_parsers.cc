#include "server/commands/arg_parsers.h"

#include <cmath>

#include "core/string_util.h"
#include "server/commands/errors.h"

namespace strata {

bool ParseExpireArg(std::string_view arg, ExpireUnit unit, bool absolute, int64_t now_ms,
                    std::string_view cmd, ReplyBuilder& rb, int64_t* out_ms) {
  int64_t v = 0;
  if (!ParseInt64(arg, &v)) {
    rb.Error(errors::kNotInteger);
    return false;
  }
  if (v <= 0 || (unit == ExpireUnit::kSeconds && v > INT64_MAX / 1000)) {
    rb.Error(InvalidExpireError(cmd));
    return false;
  }
  if (unit == ExpireUnit::kSeconds) v *= 1000;
  if (!absolute) {
    if (v > INT64_MAX - now_ms) {
      rb.Error(InvalidExpireError(cmd));
      return false;
    }
    v += now_ms;
  }
  *out_ms = v;
  return true;
}

bool ParseBlockingTimeout(std::string_view s, ReplyBuilder& rb, int64_t* ms) {
  long double t = 0;
  if (!ParseLongDouble(s, &t) || std::isnan(t) || std::isinf(t)) {
    rb.Error("ERR timeout is not a float or out of range");
    return false;
  }
  if (t < 0) {
    rb.Error("ERR timeout is negative");
    return false;
  }
  long double v = t * 1000.0L;
  if (v > static_cast<long double>(INT64_MAX / 2)) {
    rb.Error("ERR timeout is out of range");
    return false;
  }
  *ms = static_cast<int64_t>(std::ceil(v));
  return true;
}

}  // namespace strata
