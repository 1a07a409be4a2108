#include "core/key_slot.h"

#include <array>

namespace strata {

namespace {

// The byte-wise table of CRC-16/XMODEM, computed at compile time.
constexpr std::array<uint16_t, 256> MakeTable() {
  std::array<uint16_t, 256> t{};
  for (uint32_t b = 0; b < 256; b++) {
    uint32_t crc = b << 8;
    for (int i = 0; i < 8; i++) crc = (crc & 0x8000) ? (crc << 1) ^ 0x1021 : crc << 1;
    t[b] = static_cast<uint16_t>(crc);
  }
  return t;
}

constexpr std::array<uint16_t, 256> kTable = MakeTable();

}  // namespace

uint16_t Crc16(std::string_view data) {
  uint16_t crc = 0;
  for (unsigned char c : data) {
    crc = static_cast<uint16_t>(crc << 8) ^ kTable[((crc >> 8) ^ c) & 0xff];
  }
  return crc;
}

}  // namespace strata
