// libFuzzer entry point for the cluster bus's message codec (server/cluster/bus_message.h).
// Build with clang:
//   CXX=clang++ cmake -S . -B build-fuzz -DSTRATA_FUZZ=ON && cmake --build build-fuzz
//   build-fuzz/tests/cluster_bus_fuzz -max_total_time=60 CORPUS
// The input is read as a link reads its stream: framed by PeekFrame, each whole message
// decoded. A message that decodes is encoded again, and that must decode to the same
// bytes (what the codec writes, it reads back unchanged).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "server/cluster/bus_message.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace strata::bus;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  while (!in.empty()) {
    uint32_t len = 0;
    if (PeekFrame(in, 1 << 20, &len) != Frame::kReady || len > in.size()) break;
    Message m;
    std::string why;
    if (Decode(in.substr(0, len), &m, &why) && m.h.type < kTypeCount) {
      std::string again = Encode(m);
      Message back;
      if (!Decode(again, &back, &why) || Encode(back) != again) std::abort();
    }
    in.remove_prefix(len);
  }
  return 0;
}
