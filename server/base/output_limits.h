// client-output-buffer-limit: how much reply data a client may have queued before it is
// disconnected, per class of client, as Redis 7 configures it:
//
//   client-output-buffer-limit <class> <hard> <soft> <soft-seconds> [<class> ...]
//
// A client whose queued output reaches `hard` bytes is closed at once; one that stays at
// or above `soft` bytes for more than `soft-seconds` is closed too. 0 turns a limit off.
// Classes: normal (every client today), replica (also spelled slave) and pubsub, for the
// replication and Pub/Sub clients to come. Redis's defaults: normal 0 0 0, replica 256mb
// 64mb 60, pubsub 32mb 8mb 60. Setting names only some classes; the others keep theirs.
// Thread-safety: pure functions over values the caller owns.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace strata {

enum class ClientClass : uint8_t { kNormal = 0, kReplica = 1, kPubSub = 2 };
inline constexpr int kClientClasses = 3;

struct OutputLimit {
  int64_t hard_bytes = 0;
  int64_t soft_bytes = 0;
  int64_t soft_seconds = 0;
};

struct OutputLimits {
  OutputLimit of[kClientClasses];
};

// Redis's defaults (the `client-output-buffer-limit` default text, parsed).
inline constexpr std::string_view kDefaultOutputLimits =
    "normal 0 0 0 replica 256mb 64mb 60 pubsub 32mb 8mb 60";

// Parses `text` (groups of class, hard, soft, seconds; memory units as in Redis) over
// *limits: the classes named are replaced, the others kept. On a malformed text returns
// Redis's error reason and leaves *limits as it was.
std::string ParseOutputLimits(std::string_view text, OutputLimits* limits);

// Redis's CONFIG GET form: "normal 0 0 0 slave 268435456 67108864 60 pubsub ...".
std::string RenderOutputLimits(const OutputLimits& limits);

}  // namespace strata
