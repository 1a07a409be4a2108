// The allocator's settings for the server process, set once at the top of main().
//
// libmimalloc replaces malloc and operator new for the whole process, RocksDB's
// allocations included. By default it keeps freed pages resident a while, to reuse them
// cheaply. When spilling turns 1 KB values into 40-byte cold entries by the million,
// and RocksDB's blocks come and go, those pages add up to tens of MB of RSS that
// used_memory does not count (measured in bench/results/README.md "The tier"). So freed
// pages are given back to the OS at once (kPageReset, kDecommitDelayMs).
//
// A MIMALLOC_<NAME> environment variable still wins: an option set there is left alone.
//
// Thread-safety: main thread, before any other thread starts.
#pragma once

namespace strata {

constexpr long kAllocatorPageReset = 1;          // mimalloc page_reset
constexpr long kAllocatorDecommitDelayMs = 0;    // mimalloc decommit_delay
constexpr long kAllocatorSegmentDecommitMs = 0;  // mimalloc segment_decommit_delay

void ConfigureAllocator();

}  // namespace strata
