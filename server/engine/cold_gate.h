// ColdGate: how the dispatcher keeps a command from running before the cold values it
// needs are back in RAM (the spill tier, docs/ARCHITECTURE.md "The tier").
//
// Before a command runs on a shard with a gate, the dispatcher asks MustWait() with the
// command's keys. False: every value it needs is in RAM now (a value found in the spill
// store's cache was brought back on the spot), and the command runs. True: at least one
// key is cold and being read, or an earlier command waits on one of these keys; the
// dispatcher then reserves the reply slot and hands the command to Hold(), and the gate
// runs it (run) once its values are back, in the order commands were held for any key,
// or fails it (fail) with an error reply when a disk read failed. Pipelined replies
// stay in order through the reply slots, as for commands run on another shard.
//
// Commands flagged kCmdNoValue (EXISTS, TYPE, TTL, DEL, ...) read only a key's
// metadata, which stays in RAM: the dispatcher asks with need_values false, and they
// wait only behind earlier held commands on their keys (a DEL after a GET that waits for
// the disk runs after it).
//
// Thread-safety: the shard's thread only.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace strata {

struct HeldCommand {
  void (*run)(void* arg) = nullptr;
  void (*fail)(void* arg, const std::string& error) = nullptr;
  void* arg = nullptr;
};

class ColdGate {
 public:
  virtual ~ColdGate() = default;
  virtual bool MustWait(uint32_t db, const std::vector<std::string_view>& keys,
                        bool need_values = true) = 0;
  virtual void Hold(uint32_t db, const std::vector<std::string_view>& keys, HeldCommand cmd) = 0;
  // True while the tier is moving values to disk and can still free memory: over
  // maxmemory, a write then waits a little (Worker::WaitForMemory) instead of getting
  // the OOM error at once.
  virtual bool CanFreeMemory() const = 0;
};

}  // namespace strata
