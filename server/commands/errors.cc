#include "server/commands/errors.h"

#include "core/string_util.h"

namespace strata {

std::string InvalidExpireError(std::string_view cmd) {
  return "ERR invalid expire time in '" + Lowercase(cmd) + "' command";
}

}  // namespace strata
