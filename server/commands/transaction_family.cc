// MULTI, EXEC, DISCARD, WATCH and UNWATCH. The engine runs them itself (kCmdTransaction;
// server/engine/transaction.cc owns the client's queue and EXEC across shards); this
// file only names them for the registry (COMMAND, routing flags, statistics).
#include "server/commands/families.h"
#include "server/engine/command.h"

namespace strata {

void RegisterTransactionFamily(CommandRegistry& r) {
  auto add = [&](const char* name, int arity, uint32_t flags, int first, int last,
                 const char* since, const char* summary) {
    CommandSpec s{name,  arity, flags | kCmdTransaction | kCmdNoScript | kCmdLoading | kCmdStale,
                  first, last,  first > 0 ? 1 : 0};
    s.group = "transactions";
    s.since = since;
    s.summary = summary;
    r.Add(std::move(s));
  };
  add("multi", 1, kCmdFast | kCmdNoQueue | kCmdAllowBusy, 0, 0, "1.2.0", "Starts a transaction.");
  add("exec", 1, kCmdNoQueue, 0, 0, "1.2.0", "Executes all commands in a transaction.");
  add("discard", 1, kCmdFast | kCmdNoQueue | kCmdAllowBusy, 0, 0, "2.0.0",
      "Discards a transaction.");
  add("watch", -2, kCmdFast | kCmdNoQueue | kCmdAllowBusy, 1, -1, "2.2.0",
      "Monitors changes to keys to determine the execution of a transaction.");
  add("unwatch", 1, kCmdFast | kCmdAllowBusy, 0, 0, "2.2.0",
      "Forgets about watched keys of a transaction.");
  // QUIT runs at once inside MULTI too.
  if (CommandSpec* quit = r.FindMutable("quit")) quit->flags |= kCmdNoQueue;
}

}  // namespace strata
