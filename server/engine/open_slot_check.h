// The shard's half of routing a command whose slot is open for migration
// (cluster_routing.h "Open slots"): whether its keys are here decides whether it runs
// here or is redirected (-ASK, -TRYAGAIN), and the shard that holds the keys decides it
// just before it would run the command, so no migration step comes between the two.
//
// Thread: the worker that owns the keys (the command's shard), from the dispatcher's
// paths that run a shard command: inline, a remote batch, after a lock wait or a cold
// read.
#pragma once

#include <cstdint>
#include <string>

#include "server/engine/command.h"

namespace strata {

class Worker;

// True when the command must not run here: *error is the redirection (counted as a
// rejected call). bits: OpenSlotBits. The keys are looked up without touching them, as
// Redis's check does; an expired key is missing.
bool OpenSlotRefuses(const CommandSpec* spec, CmdArgs args, Worker& w, uint32_t db, uint8_t bits,
                     std::string* error);

}  // namespace strata
