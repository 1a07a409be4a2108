#include "tools/strata-mem/populate.h"

#include <algorithm>

namespace strata::mem {

const char* DataTypeName(DataType type) {
  switch (type) {
    case DataType::kString:
      return "string";
    case DataType::kHash:
      return "hash";
    case DataType::kSet:
      return "set";
    case DataType::kZset:
      return "zset";
    case DataType::kList:
      return "list";
  }
  return "?";
}

std::optional<DataType> ParseDataType(std::string_view name) {
  for (DataType t :
       {DataType::kString, DataType::kHash, DataType::kSet, DataType::kZset, DataType::kList}) {
    if (name == DataTypeName(t)) return t;
  }
  return std::nullopt;
}

CommandBuilder::CommandBuilder(const PopulateOptions& options)
    : options_(options), values_(options.seed) {}

const std::vector<std::string_view>& CommandBuilder::Build(uint64_t n) {
  // storage_[0] command, [1] key, then the type's arguments. Strings are reused across
  // calls, so their capacity is allocated once.
  size_t fields = static_cast<size_t>(options_.fields);
  size_t count = 2;
  switch (options_.type) {
    case DataType::kString:
      count = 3;
      break;
    case DataType::kHash:
    case DataType::kZset:
      count = 2 + 2 * fields;
      break;
    case DataType::kSet:
    case DataType::kList:
      count = 2 + fields;
      break;
  }
  if (storage_.size() < count) storage_.resize(count);
  static constexpr const char* kCommand[] = {"SET", "HSET", "SADD", "ZADD", "RPUSH"};
  storage_[0] = kCommand[static_cast<int>(options_.type)];
  storage_[1] = options_.key_prefix;
  storage_[1] += std::to_string(n);
  auto fill_value = [&](std::string* s) {
    s->resize(options_.data_size);
    values_.Fill(s->data(), s->size());
  };
  switch (options_.type) {
    case DataType::kString:
      fill_value(&storage_[2]);
      break;
    case DataType::kHash:
      for (size_t i = 0; i < fields; i++) {
        storage_[2 + 2 * i] = "f" + std::to_string(i);
        fill_value(&storage_[3 + 2 * i]);
      }
      break;
    case DataType::kSet:
      for (size_t i = 0; i < fields; i++) storage_[2 + i] = std::to_string(n + i);
      break;
    case DataType::kZset:
      for (size_t i = 0; i < fields; i++) {
        storage_[2 + 2 * i] = std::to_string(i);
        storage_[3 + 2 * i] = "m" + std::to_string(i);
      }
      break;
    case DataType::kList:
      for (size_t i = 0; i < fields; i++) fill_value(&storage_[2 + i]);
      break;
  }
  args_.assign(storage_.begin(), storage_.begin() + static_cast<ptrdiff_t>(count));
  return args_;
}

bool Populate(RespClient* client, const PopulateOptions& options, Progress* progress,
              std::string* error) {
  CommandBuilder builder(options);
  uint64_t batch = static_cast<uint64_t>(options.pipeline < 1 ? 1 : options.pipeline);
  Reply reply;
  uint64_t n = 1;
  while (n <= options.keys) {
    uint64_t first = n;
    uint64_t last = std::min(options.keys, n + batch - 1);
    // A batch also ends early once it holds kMaxBatchBytes, so large values with a deep
    // pipeline do not build a huge buffer.
    for (; n <= last && client->pending_output() < kMaxBatchBytes; n++) {
      client->Append(builder.Build(n));
    }
    last = n - 1;
    if (!client->Flush(error)) return false;
    for (uint64_t k = first; k <= last; k++) {
      if (!client->Read(&reply, error)) return false;
      if (reply.is_error()) {
        client->CheckReply(reply, error);
        *error += " (writing key '" + MemtierKey(options.key_prefix, k) + "')";
        return false;
      }
    }
    if (progress != nullptr) progress->Update(last);
  }
  return true;
}

}  // namespace strata::mem
