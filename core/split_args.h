// SplitArgs: splits a line into arguments the way redis-cli, redis.conf and Redis's
// inline protocol do (sdssplitargs). One splitter for every caller: inline requests
// (server/net), config lines and list-valued settings such as `bind` and `save`.
// Thread-safety: a pure function.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace strata {

// Whitespace separated; "double quotes" take \n \r \t \b \a \\ \" and \xHH escapes,
// 'single quotes' take \' only; a closing quote must be followed by a space or the end.
// Appends the arguments to *out. Returns false on unbalanced quotes (or a closing quote
// followed by something else).
bool SplitArgs(std::string_view line, std::vector<std::string>* out);

}  // namespace strata
