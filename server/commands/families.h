// The command families: each file registers its commands (CommandSpec, command.h) with
// the registry. RegisterAllCommands() adds every family once, on the main thread before
// the workers start; the engine then routes calls by the specs alone.
//
//   connection_family  PING ECHO HELLO AUTH QUIT SELECT TIME COMMAND
//   string_family      strings and counters, MGET/MSET (+ lcs_command: LCS)
//   bitmap_family      SETBIT GETBIT BITCOUNT BITPOS BITOP BITFIELD BITFIELD_RO
//   hll_family         PFADD PFCOUNT PFMERGE PFSELFTEST
//   geo_family         GEOADD GEODIST GEOHASH GEOPOS GEOSEARCH(STORE) GEORADIUS(BYMEMBER)(_RO)
//   keys_family        DEL EXISTS RENAME COPY MOVE KEYS SCAN DBSIZE FLUSH* SWAPDB OBJECT ...
//   expire_family      EXPIRE and friends, TTL, PERSIST
//   hash_family, set_family (+ set_algebra), list_family (+ blocking_family), sort_family,
//   zset_family (+ zset_range, zset_algebra, zset_blocking)
//   server_family      INFO CONFIG CLIENT SHUTDOWN
//   memory_family      MEMORY
//   introspection_family SLOWLOG LATENCY MONITOR
//   debug_family       DEBUG (behind enable-debug-command)
//   persistence_family SAVE BGSAVE LASTSAVE
//   module_family      MODULE (LIST answers that none is loaded)
//   dump_family        DUMP RESTORE MIGRATE
//   transaction_family MULTI EXEC DISCARD WATCH UNWATCH (run by the engine)
//   script_family      EVAL EVALSHA EVAL_RO EVALSHA_RO SCRIPT
//   function_family    FUNCTION FCALL FCALL_RO
//   pubsub_family      (P|S)SUBSCRIBE (P|S)UNSUBSCRIBE PUBLISH SPUBLISH PUBSUB RESET
//   stream_family (+ stream_read, stream_info)  XADD XRANGE XREAD XREADGROUP XGROUP ...
// Thread-safety: registration runs before workers start; the registry is read-only after.
#pragma once

#include <string>

namespace strata {

class CommandRegistry;

// Adds every family's commands to CommandRegistry::Get() (once; later calls do nothing).
void RegisterAllCommands();
// After every family: each command's ACL categories from its documentation, and the
// function that says which arguments of a call are keys and channels (acl.h).
void InstallAclFacts(CommandRegistry& r);
void RegisterAclFamily(CommandRegistry& r);

class Config;
// At start, before clients connect: the ACL users from the config file's `user` lines
// or aclfile, requirepass as the default user's password, acl-pubsub-default. False with
// *error (the server does not start) on a bad rule or file.
bool StartAcl(const Config& cfg, std::string* error);

// One per family, and one per file of the families split over several.
void RegisterConnectionFamily(CommandRegistry& r);
void RegisterClusterFamily(CommandRegistry& r);
void RegisterCommandFamily(CommandRegistry& r);
void RegisterReplicationFamily(CommandRegistry& r);
void RegisterStringFamily(CommandRegistry& r);
void RegisterLcsCommand(CommandRegistry& r);
void RegisterBitmapFamily(CommandRegistry& r);
void RegisterHllFamily(CommandRegistry& r);
void RegisterGeoFamily(CommandRegistry& r);
void RegisterIntrospectionFamily(CommandRegistry& r);
void RegisterDebugFamily(CommandRegistry& r);
void RegisterKeysFamily(CommandRegistry& r);
void RegisterExpireFamily(CommandRegistry& r);
void RegisterServerFamily(CommandRegistry& r);
void RegisterMemoryFamily(CommandRegistry& r);
void RegisterHashFamily(CommandRegistry& r);
void RegisterSetFamily(CommandRegistry& r);
void RegisterSetAlgebraCommands(CommandRegistry& r);
void RegisterListFamily(CommandRegistry& r);
void RegisterBlockingFamily(CommandRegistry& r);
void RegisterSortFamily(CommandRegistry& r);
void RegisterZSetFamily(CommandRegistry& r);
void RegisterZSetRangeCommands(CommandRegistry& r);
void RegisterZSetAlgebraCommands(CommandRegistry& r);
void RegisterZSetBlockingCommands(CommandRegistry& r);
void RegisterPersistenceFamily(CommandRegistry& r);
void RegisterModuleFamily(CommandRegistry& r);
void RegisterDumpFamily(CommandRegistry& r);
void RegisterTransactionFamily(CommandRegistry& r);
void RegisterScriptFamily(CommandRegistry& r);
void RegisterFunctionFamily(CommandRegistry& r);
void RegisterPubSubFamily(CommandRegistry& r);
void RegisterStreamFamily(CommandRegistry& r);
void RegisterStreamReadCommands(CommandRegistry& r);
void RegisterStreamInfoCommands(CommandRegistry& r);
// After every family: what writes propagate to replicas instead of themselves
// (propagation.cc).
void InstallPropagation(CommandRegistry& r);

}  // namespace strata
