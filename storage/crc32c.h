// CRC32C (Castagnoli), the checksum of every snapshot block.
//
// Uses the SSE4.2 crc32 instruction when the CPU has it (checked once at run time, so
// the binary still runs on any x86-64), else a table-driven software loop that gives
// the same values. Extend() continues a checksum over more bytes.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace strata::crc32c {

uint32_t Extend(uint32_t crc, const void* data, size_t n);
inline uint32_t Value(std::string_view s) { return Extend(0, s.data(), s.size()); }

namespace detail {
uint32_t ExtendPortable(uint32_t crc, const void* data, size_t n);
bool HardwareAvailable();
}  // namespace detail

}  // namespace strata::crc32c
