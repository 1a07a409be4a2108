// Populate: writes the bench data set into a server, pipelined, checking every reply.
//
// Key n (1..keys) is MemtierKey(key_prefix, n) and holds, by --type:
//   string  SET key <data_size random bytes>
//   hash    HSET key f0 v0 .. f<fields-1> v<fields-1>, each value data_size bytes
//   set     SADD key with `fields` integer members n .. n+fields-1 (small integers, so
//           servers with a compact integer-set encoding can use it)
//   zset    ZADD key 0 m0 1 m1 .. (member m<i>, score i)
//   list    RPUSH key with `fields` elements of data_size bytes
// CommandBuilder makes the arguments (pure, for tests); Populate sends them in batches of
// `pipeline` commands (fewer when a batch reaches kMaxBatchBytes) and stops at the first
// error reply.
// Thread-safety: value types and a function over one client.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tools/strata-mem/progress.h"
#include "tools/strata-mem/resp_client.h"
#include "tools/strata-mem/value_gen.h"

namespace strata::mem {

enum class DataType { kString, kHash, kSet, kZset, kList };

const char* DataTypeName(DataType type);
std::optional<DataType> ParseDataType(std::string_view name);

struct PopulateOptions {
  DataType type = DataType::kString;
  uint64_t keys = 1000000;
  std::string key_prefix = "memtier-";
  size_t data_size = 100;
  int fields = 10;  // hash fields, set/zset members, list elements
  int pipeline = 100;
  uint64_t seed = 1;
};

class CommandBuilder {
 public:
  explicit CommandBuilder(const PopulateOptions& options);
  // The command that writes key number n; the views stay valid until the next Build.
  const std::vector<std::string_view>& Build(uint64_t n);

 private:
  PopulateOptions options_;
  ValueGen values_;
  std::vector<std::string> storage_;
  std::vector<std::string_view> args_;
};

// Bytes of commands buffered before a batch is sent, whatever --pipeline says.
inline constexpr size_t kMaxBatchBytes = 8 << 20;

// Writes keys 1..options.keys. On failure *error names the key and the server's reply.
bool Populate(RespClient* client, const PopulateOptions& options, Progress* progress,
              std::string* error);

}  // namespace strata::mem
