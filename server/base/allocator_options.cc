#include "server/base/allocator_options.h"

#include <mimalloc.h>

#include <cstdlib>

namespace strata {

namespace {

void SetUnlessInEnvironment(mi_option_t option, const char* env_name, long value) {
  if (std::getenv(env_name) != nullptr) return;
  mi_option_set(option, value);
}

}  // namespace

void ConfigureAllocator() {
  SetUnlessInEnvironment(mi_option_page_reset, "MIMALLOC_PAGE_RESET", kAllocatorPageReset);
  SetUnlessInEnvironment(mi_option_decommit_delay, "MIMALLOC_DECOMMIT_DELAY",
                         kAllocatorDecommitDelayMs);
  SetUnlessInEnvironment(mi_option_segment_decommit_delay, "MIMALLOC_SEGMENT_DECOMMIT_DELAY",
                         kAllocatorSegmentDecommitMs);
}

}  // namespace strata
