// StringMap: an unordered_map keyed by std::string that is also looked up by
// std::string_view, without building a string (heterogeneous lookup).
// Thread-safety: as std::unordered_map.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace strata {

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
template <class V>
using StringMap = std::unordered_map<std::string, V, StringHash, std::equal_to<>>;

}  // namespace strata
