#include "core/object.h"

#include "core/hash_type.h"
#include "core/list_type.h"
#include "core/set_type.h"
#include "core/stream_type.h"
#include "core/zset_type.h"

namespace strata {

EncodingLimits& GlobalEncodingLimits() {
  static EncodingLimits limits;
  return limits;
}

std::unique_ptr<CollectionObject> MaterializeCollection(ValueType type, std::string_view serialized,
                                                        SlabHeap& heap) {
  switch (type) {
    case ValueType::kHash:
      return MaterializeHash(serialized, heap);
    case ValueType::kSet:
      return MaterializeSet(serialized, heap);
    case ValueType::kList:
      return MaterializeList(serialized, heap);
    case ValueType::kZSet:
      return MaterializeZSet(serialized, heap);
    case ValueType::kStream: {
      // Always an object; null only for a form that does not parse (callers validate
      // what they did not make themselves: Keyspace::SetRaw then stores nothing).
      std::string error;
      return StreamObject::Parse(serialized, &error);
    }
    case ValueType::kString:
      break;
  }
  return nullptr;
}

const char* PackedEncodingName(ValueType type, std::string_view value) {
  if (!value.empty() && static_cast<uint8_t>(value[0]) == static_cast<uint8_t>(PackedTag::kIntSet))
    return "intset";
  return "listpack";
}

}  // namespace strata
