// MEMORY USAGE / STATS / DOCTOR / MALLOC-STATS / PURGE / HELP.
//
// USAGE runs on the key's shard like any keyed command. The others need every worker:
// they run as a fiber that hops to all workers once (see memory_report.h for what each
// figure counts). HELP and argument errors are answered on the client's thread.
#include <mimalloc.h>

#include <string>
#include <vector>

#include "core/string_util.h"
#include "server/base/config.h"
#include "server/commands/errors.h"
#include "server/commands/families.h"
#include "server/commands/memory_report.h"
#include "server/engine/client.h"
#include "server/engine/command.h"
#include "server/engine/engine.h"
#include "server/engine/hops.h"
#include "server/engine/worker.h"

namespace strata {
namespace {

const std::vector<std::string> kMemorySubcommands = {"usage",        "stats", "doctor",
                                                     "malloc-stats", "purge", "help"};

// Arity of each subcommand as Redis 7 declares it (negative: at least).
int SubcommandArity(const std::string& sub) {
  if (sub == "usage") return -3;
  if (sub == "stats" || sub == "doctor" || sub == "malloc-stats" || sub == "purge") return 2;
  if (sub == "help") return 2;
  return 0;
}

bool ArityOk(int arity, size_t argc) {
  return arity > 0 ? argc == static_cast<size_t>(arity) : argc >= static_cast<size_t>(-arity);
}

void MemoryHelp(ReplyBuilder& rb) {
  const char* lines[] = {
      "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "DOCTOR",
      "    Return memory problems reports.",
      "MALLOC-STATS",
      "    Return internal statistics report from the memory allocator.",
      "PURGE",
      "    Attempt to purge dirty pages for reclamation by the allocator.",
      "STATS",
      "    Return information about the memory usage of the server.",
      "USAGE <key> [SAMPLES <count>]",
      "    Return memory in bytes used by <key> and its value: the entry's allocation and",
      "    its share of the hash table. strata's figures are exact, so SAMPLES is accepted",
      "    for compatibility and does not change the result.",
      "HELP",
      "    Prints this help."};
  rb.Array(sizeof(lines) / sizeof(lines[0]));
  for (const char* l : lines) rb.Simple(l);
}

// Validates arguments; false when the call was answered here (help or an error).
bool MemoryNeedsFiber(CmdArgs args) {
  std::string sub = Lowercase(args[1]);
  int arity = SubcommandArity(sub);
  return arity != 0 && sub != "help" && ArityOk(arity, args.size());
}

void MemoryConn(Client& c, CmdArgs args, ReplyBuilder& rb) {
  std::string sub = Lowercase(args[1]);
  int arity = SubcommandArity(sub);
  if (arity == 0) {
    rb.Error("ERR unknown subcommand '" + std::string(args[1]) + "'. Try MEMORY HELP.");
  } else if (!ArityOk(arity, args.size())) {
    rb.Error(WrongArityError("memory|" + sub));
  } else {
    MemoryHelp(rb);
  }
}

// MEMORY USAGE key [SAMPLES count] [TIERED], on the key's shard. The reply is the key's
// bytes in RAM, as Redis's; with strata's TIERED, a map of its bytes in RAM and on disk
// (a spilled value's serialized length; 0 for a value in RAM).
void MemoryUsageShard(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  std::string sub = Lowercase(args[1]);
  if (sub != "usage") {
    // A key position exists only for USAGE; other subcommands reach here only with
    // extra arguments.
    rb.Error(WrongArityError("memory|" + sub));
    return;
  }
  bool tiered = false;
  for (size_t i = 3; i < args.size(); i++) {
    if (EqualsIgnoreCase(args[i], "tiered")) {
      tiered = true;
      continue;
    }
    if (EqualsIgnoreCase(args[i], "samples") && i + 1 < args.size()) {
      int64_t n = 0;
      if (!ParseInt64(args[i + 1], &n)) {
        rb.Error(errors::kNotInteger);
        return;
      }
      if (n < 0) {
        rb.Error(errors::kSyntax);
        return;
      }
      i++;
    } else {
      rb.Error(errors::kSyntax);
      return;
    }
  }
  size_t bytes = ctx.ks.MemoryUsage(ctx.db, args[2], ctx.now_ms);
  if (bytes == 0) {
    rb.Null();
  } else if (tiered) {
    const Entry* e = ctx.ks.FindMeta(ctx.db, args[2], ctx.now_ms);
    rb.Map(2);
    rb.Bulk("ram");
    rb.Integer(static_cast<int64_t>(bytes));
    rb.Bulk("disk");
    rb.Integer(e != nullptr && e->IsCold() ? static_cast<int64_t>(e->ColdDiskLen()) : 0);
  } else {
    rb.Integer(static_cast<int64_t>(bytes));
  }
}

Fiber MemoryFiber(Client* c, std::shared_ptr<OwnedArgs> owned) {
  CmdArgs args = owned->span();
  std::string out;
  ReplyBuilder rb(&out, c->resp);
  Engine& srv = c->worker().engine();
  std::string sub = Lowercase(args[1]);
  if (sub == "stats" || sub == "doctor") {
    std::vector<ShardMemory> shards(srv.shard_count());
    uint32_t dbs = static_cast<uint32_t>(srv.config().Int("databases"));
    co_await RunOn(srv.AllShards(),
                   [&](Worker& w) { shards[w.index()] = CollectShardMemory(w, dbs); });
    MemorySummary m = Summarize(srv, std::move(shards));
    if (sub == "stats") {
      ReplyMemoryStats(m, rb);
    } else {
      rb.Verbatim(MemoryDoctor(m));
    }
  } else if (sub == "malloc-stats") {
    std::vector<std::string> slabs(srv.shard_count());
    co_await RunOn(srv.AllShards(),
                   [&](Worker& w) { slabs[w.index()] = w.keyspace().heap().Stats(); });
    std::string text = "___ Begin strata slab statistics ___\n";
    for (size_t i = 0; i < slabs.size(); i++) {
      text += "shard " + std::to_string(i) + " " + slabs[i];
    }
    text += "___ End strata slab statistics ___\n___ Begin mimalloc statistics ___\n";
    mi_stats_print_out(
        [](const char* msg, void* arg) { static_cast<std::string*>(arg)->append(msg); }, &text);
    text += "___ End mimalloc statistics ___\n";
    rb.Verbatim(text);
  } else if (sub == "purge") {
    co_await RunOn(srv.AllShards(), [](Worker&) { mi_collect(true); });
    rb.Ok();
  } else if (sub == "usage") {
    rb.Error(WrongArityError("memory|usage"));
  } else {
    rb.Error("ERR unknown subcommand '" + std::string(args[1]) + "'. Try MEMORY HELP.");
  }
  c->FinishFiber(std::move(out));
}

}  // namespace

void RegisterMemoryFamily(CommandRegistry& r) {
  CommandSpec s{"memory", -2, kCmdReadOnly | kCmdLoading | kCmdStale, 2, 2, 1};
  s.conn_fn = MemoryConn;
  s.needs_fiber = MemoryNeedsFiber;
  s.shard_fn = MemoryUsageShard;
  s.fiber_fn = MemoryFiber;
  s.subcommands = &kMemorySubcommands;
  s.group = "server";
  s.summary = "A container for memory diagnostics commands.";
  s.since = "4.0.0";
  r.Add(std::move(s));
}

}  // namespace strata
