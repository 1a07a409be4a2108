// Step counts of the long randomized unit tests. The sanitizer build (Debug, ASan and
// UBSan) runs each step 10 to 50 times slower, so there these tests take a quarter of
// their steps; the Release build's ctest runs them whole. Both builds run every test.
#pragma once

namespace strata::test_scale {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr int kDivisor = 4;
#else
inline constexpr int kDivisor = 1;
#endif

// n steps, or a quarter of them in the sanitizer build.
constexpr int Steps(int n) { return n / kDivisor; }

}  // namespace strata::test_scale
