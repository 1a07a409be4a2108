// KeySlot: the Redis Cluster hash slot of a key (docs/ARCHITECTURE.md "Cluster").
//
// slot = CRC16(key) mod 16384, where CRC16 is CRC-16/XMODEM (polynomial 0x1021, initial
// value 0, no reflection: CRC16("123456789") = 0x31C3), as Redis Cluster specifies, of
// the key's hash tag (core/hash.h HashTag: "{user1000}.following" and
// "{user1000}.followers" share a slot; "foo{}{bar}" hashes the whole key), the same
// part of the key that picks its shard.
//
// Thread-safety: pure functions.
#pragma once

#include <atomic>
#include <cstdint>
#include <string_view>

#include "core/hash.h"

namespace strata {

constexpr uint32_t kClusterSlots = 16384;

// CRC-16/XMODEM of data (with carry-less multiplication where the CPU has it).
uint16_t Crc16(std::string_view data);
// The same, by table lookups on any CPU (tests compare the two).
uint16_t Crc16Portable(std::string_view data);

namespace key_slot_detail {
using SlotFn = uint32_t (*)(std::string_view);
// This CPU's implementation (carry-less multiplication where the CPU has it), installed
// by the first call: one indirect call per slot on the dispatcher's path, with no check.
extern std::atomic<SlotFn> slot_fn;
}  // namespace key_slot_detail

// The key's slot, 0..16383.
inline uint32_t KeySlot(std::string_view key) {
  return key_slot_detail::slot_fn.load(std::memory_order_relaxed)(key);
}

}  // namespace strata
