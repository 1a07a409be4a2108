#include "server/commands/families.h"

#include "core/string_util.h"
#include "server/engine/command.h"

namespace strata {

void RegisterAllCommands() {
  CommandRegistry& r = CommandRegistry::Get();
  if (r.size() > 0) return;
  RegisterConnectionFamily(r);
  RegisterClusterFamily(r);
  RegisterCommandFamily(r);
  RegisterReplicationFamily(r);
  RegisterStringFamily(r);
  RegisterLcsCommand(r);
  RegisterBitmapFamily(r);
  RegisterHllFamily(r);
  RegisterGeoFamily(r);
  RegisterIntrospectionFamily(r);
  RegisterDebugFamily(r);
  RegisterKeysFamily(r);
  RegisterExpireFamily(r);
  RegisterServerFamily(r);
  RegisterAclFamily(r);
  RegisterMemoryFamily(r);
  RegisterHashFamily(r);
  RegisterSetFamily(r);
  RegisterListFamily(r);
  RegisterBlockingFamily(r);
  RegisterSortFamily(r);
  RegisterZSetFamily(r);
  RegisterPersistenceFamily(r);
  RegisterModuleFamily(r);
  RegisterDumpFamily(r);
  RegisterTransactionFamily(r);
  RegisterScriptFamily(r);
  RegisterFunctionFamily(r);
  RegisterPubSubFamily(r);
  RegisterStreamFamily(r);
  RegisterStreamReadCommands(r);
  RegisterStreamInfoCommands(r);
  InstallPropagation(r);
  // Commands that read only their keys' metadata: a spilled value stays on disk.
  for (const char* name :
       {"exists",  "type",   "ttl",    "pttl",   "expiretime", "pexpiretime", "del",
        "unlink",  "strlen", "memory", "expire", "pexpire",    "expireat",    "pexpireat",
        "persist", "touch",  "set",    "setnx",  "setex",      "psetex"}) {
    if (CommandSpec* spec = r.FindMutable(name)) spec->flags |= kCmdNoValue;
  }
  // Of the commands a busy script lets through, those that touch no shard: they run at
  // once on the busy script's own worker too (Worker::ServeWhileBusy).
  for (const char* name : {"auth", "hello", "quit", "multi", "script", "function", "shutdown"}) {
    if (CommandSpec* spec = r.FindMutable(name)) spec->busy_now = true;
  }
  // SET ... GET returns the old value.
  if (CommandSpec* set = r.FindMutable("set")) {
    set->needs_value = [](CmdArgs args) {
      for (size_t i = 3; i < args.size(); i++) {
        if (EqualsIgnoreCase(args[i], "get")) return true;
      }
      return false;
    };
  }
  InstallAclFacts(r);
  r.Seal();
}

}  // namespace strata
