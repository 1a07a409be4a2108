// Arguments the command families share, parsed with Redis's exact rules and errors:
// expire times (EX/PX/EXAT/PXAT, EXPIRE...) and blocking timeouts (BLPOP...).
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "server/net/reply_builder.h"

namespace strata {

enum class ExpireUnit { kSeconds, kMilliseconds };

// Converts an expire argument to absolute unix ms, as Redis's getExpireMillisecondsOrReply:
// non-integer -> "value is not an integer..."; <= 0 or overflow -> "invalid expire time".
// On error writes the error to rb and returns false.
bool ParseExpireArg(std::string_view arg, ExpireUnit unit, bool absolute, int64_t now_ms,
                    std::string_view cmd, ReplyBuilder& rb, int64_t* out_ms);

// A blocking command's timeout, as Redis's getTimeoutFromObjectOrReply: seconds as a
// float, 0 = wait forever. On error writes it to rb and returns false.
bool ParseBlockingTimeout(std::string_view s, ReplyBuilder& rb, int64_t* ms);

}  // namespace strata
