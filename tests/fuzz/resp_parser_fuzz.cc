// libFuzzer entry point for the RESP parser. Build with clang:
//   CXX=clang++ cmake -S . -B build-fuzz -DSTRATA_FUZZ=ON && cmake --build build-fuzz
//   build-fuzz/tests/resp_parser_fuzz -max_total_time=60
#include "tests/fuzz/resp_parser_fuzz_body.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  strata::FuzzRespParser(data, size);
  return 0;
}
