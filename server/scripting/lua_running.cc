// What runs now across every interpreter, and stopping it: SCRIPT KILL and FUNCTION KILL
// (LuaVm::KillRunning) and FUNCTION STATS (LuaVm::FindRunningFunction). Any thread; the
// interpreters' list is under g_vms_mu, and a run's state is in its atomics (the name and
// command under the interpreter's own mutex). Split from lua_vm.cc.
#include <mutex>
#include <string>

#include "server/scripting/lua_env.h"
#include "server/scripting/lua_vm.h"

namespace strata {

using namespace lua_env;

std::string LuaVm::KillRunning(bool eval) {
  std::lock_guard<std::mutex> l(g_vms_mu);
  bool running = false, killed = false, other_kind = false;
  for (LuaVm* vm : g_vms) {
    if (vm->running_since_us_.load(std::memory_order_acquire) == 0) continue;
    if (vm->running_function_.load(std::memory_order_acquire) == eval) {
      other_kind = true;
      continue;
    }
    running = true;
    if (vm->wrote_.load(std::memory_order_seq_cst)) continue;
    vm->kill_requested_.store(true, std::memory_order_seq_cst);
    if (vm->wrote_.load(std::memory_order_seq_cst)) {  // it wrote meanwhile: leave it be
      vm->kill_requested_.store(false, std::memory_order_seq_cst);
      continue;
    }
    killed = true;
  }
  if (killed) return "OK";
  if (!running && other_kind) {
    return eval ? "BUSY Redis is busy running a script. You can only call FUNCTION KILL or "
                  "SHUTDOWN NOSAVE."
                : "BUSY Redis is busy running a script. You can only call SCRIPT KILL or "
                  "SHUTDOWN NOSAVE.";
  }
  if (running) {
    return "UNKILLABLE Sorry the script already executed write commands against the dataset. "
           "You can either wait the script termination or kill the server in a hard way using "
           "the SHUTDOWN NOSAVE command.";
  }
  return "NOTBUSY No scripts in execution right now.";
}

bool LuaVm::FindRunningFunction(RunningFunction* out) {
  std::lock_guard<std::mutex> l(g_vms_mu);
  for (LuaVm* vm : g_vms) {
    int64_t since = vm->running_since_us_.load(std::memory_order_acquire);
    if (since == 0 || !vm->running_function_.load(std::memory_order_acquire)) continue;
    std::lock_guard<std::mutex> rl(vm->running_mu_);
    out->name = vm->running_name_;
    out->command = vm->running_command_;
    out->since_us = since;
    return true;
  }
  return false;
}

}  // namespace strata
