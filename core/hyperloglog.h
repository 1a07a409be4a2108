// HyperLogLog in Redis's string format, byte for byte, so that a value moves between
// strata and Redis (GET/SET, DUMP/RESTORE, RDB) unchanged and both count it the same.
//
// Format (Redis 7): a 16-byte header - "HYLL", the encoding (0 dense, 1 sparse), three
// zero bytes, and the cached cardinality as 8 little-endian bytes whose top bit set
// means "not valid" - then the registers: 2^14 of them, 6 bits each.
//   - Dense: the registers packed little-endian, register i at bit 6i of the 12288 bytes
//     (12304 in all).
//   - Sparse: runs of registers as opcodes. ZERO 00xxxxxx (1-64 zeros), XZERO
//     01xxxxxx yyyyyyyy (1-16384 zeros), VAL 1vvvvvxx (1-4 registers of value 1-32). A new
//     value is sparse (one XZERO, 18 bytes); it turns dense when a register needs more
//     than 32 or the sparse form would pass hll-sparse-max-bytes.
// An element is hashed with MurmurHash64A (seed 0xadc83b19): the low 14 bits pick the
// register, and the number of trailing zeros of the rest, plus one, is the value.
// Updates to the sparse form split the run that holds the register into up to three
// opcodes and merge equal neighbouring VAL opcodes in a window of five, exactly as Redis
// does, so the same additions give the same bytes. The count is Ertl's improved
// estimator over the registers' histogram (as Redis 5 and later).
//
// Thread-safety: pure functions over the caller's buffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace strata::hll {

constexpr int kPrecision = 14;
constexpr int kRegisters = 1 << kPrecision;  // 16384
constexpr int kQ = 64 - kPrecision;          // hash bits left for the run length
constexpr size_t kHeaderSize = 16;
constexpr size_t kDenseSize = kHeaderSize + (kRegisters * 6 + 7) / 8;  // 12304
constexpr uint8_t kDense = 0;
constexpr uint8_t kSparse = 1;

// An empty HLL (sparse, cached cardinality 0 and valid), as PFADD creates.
std::string Empty();

// Whether v has an HLL's shape: the magic, a known encoding, and a dense one's exact
// size (Redis's check before any command uses a value).
bool LooksValid(std::string_view v);
inline uint8_t EncodingOf(std::string_view v) { return static_cast<uint8_t>(v[4]); }

// The register an element goes to and the value it offers there (1..kQ+1).
void Hash(std::string_view element, int* index, int* value);

// Dense values, changed in place: register index raised to value if lower. Returns
// whether it changed. REQUIRES: regs points at the 12288 register bytes.
bool DenseRaise(char* regs, int index, int value);

// Sparse values (the string may grow, or become dense): the same. Returns 1 when it
// changed, 0 when not, -1 when the value is corrupt.
int SparseRaise(std::string* v, int index, int value, size_t sparse_max_bytes);

// Turns a sparse value dense (the header kept); false when it is corrupt.
bool ToDense(std::string* v);

// max[i] = max(max[i], register i of v); false when v is corrupt.
bool MergeInto(std::string_view v, uint8_t* max);

// PFDEBUG DECODE's text for a sparse value: "z:N" (ZERO), "Z:N" (XZERO) and "v:V,N"
// (VAL) per opcode, space-separated; false when it does not parse.
bool DescribeSparse(std::string_view v, std::string* out);

// The estimate from registers (one byte each), and from a value; false when corrupt.
uint64_t CountRegisters(const uint8_t* regs);
bool Count(std::string_view v, uint64_t* out);

// The cached cardinality in v's header, when valid.
bool CachedCount(std::string_view v, uint64_t* out);
void SetCachedCount(char* header, uint64_t n);
void InvalidateCache(char* header);

}  // namespace strata::hll
