#include "server/base/output_limits.h"

#include <vector>

#include "core/split_args.h"
#include "core/string_util.h"

namespace strata {

std::string ParseOutputLimits(std::string_view text, OutputLimits* limits) {
  std::vector<std::string> words;
  if (!SplitArgs(text, &words) || words.empty() || words.size() % 4 != 0)
    return "Wrong number of arguments in buffer limit configuration.";
  OutputLimits out = *limits;
  for (size_t i = 0; i < words.size(); i += 4) {
    std::string cls = Lowercase(words[i]);
    int index = cls == "normal"                      ? 0
                : cls == "replica" || cls == "slave" ? 1
                : cls == "pubsub"                    ? 2
                                                     : -1;
    if (index < 0) return "Invalid client class specified in buffer limit configuration.";
    auto hard = ParseMemory(words[i + 1]);
    auto soft = ParseMemory(words[i + 2]);
    int64_t seconds = 0;
    if (!hard || !soft || !ParseInt64(words[i + 3], &seconds) || seconds < 0 ||
        *hard > static_cast<uint64_t>(INT64_MAX) || *soft > static_cast<uint64_t>(INT64_MAX))
      return "Error in hard, soft or soft_seconds setting in buffer limit configuration.";
    out.of[index] = {static_cast<int64_t>(*hard), static_cast<int64_t>(*soft), seconds};
  }
  *limits = out;
  return "";
}

std::string RenderOutputLimits(const OutputLimits& limits) {
  static const char* kNames[kClientClasses] = {"normal", "slave", "pubsub"};
  std::string out;
  for (int i = 0; i < kClientClasses; i++) {
    if (i > 0) out += ' ';
    out += kNames[i];
    out += ' ' + std::to_string(limits.of[i].hard_bytes);
    out += ' ' + std::to_string(limits.of[i].soft_bytes);
    out += ' ' + std::to_string(limits.of[i].soft_seconds);
  }
  return out;
}

}  // namespace strata
