// FUNCTION LOAD/DELETE/FLUSH/LIST/DUMP/RESTORE/STATS/KILL/HELP. FCALL and FCALL_RO are
// in script_family.cc: they run like EVAL (on one shard, or across shards), by name.
//
// The libraries live in the engine's FunctionStore (server/engine/function_store.h): a
// library is inspected by this worker's interpreter before it goes in (Redis's errors
// for its metadata, its code and redis.register_function), and every worker's
// interpreter compiles the store's libraries again when they change. Snapshots save them
// (docs/FORMAT.md "Manifest").
// Thread-safety: the connection's own worker; the store is shared behind its mutex.
#include <algorithm>
#include <string>
#include <vector>

#include "core/glob.h"
#include "core/string_util.h"
#include "server/commands/families.h"
#include "server/engine/client.h"
#include "server/engine/command.h"
#include "server/engine/engine.h"
#include "server/engine/function_store.h"
#include "server/engine/worker.h"
#include "server/scripting/lua_vm.h"
#include "storage/dump_payload.h"

namespace strata {
namespace {

using Libraries = FunctionStore::Libraries;

// Puts lib into libs, by Redis's rules: an existing library of that name only with
// replace, and no function named as one of another library's.
std::string Install(Libraries& libs, FunctionLibrary lib, bool replace, bool quoted = true) {
  if (!replace && libs.count(lib.name) != 0) {
    // FUNCTION LOAD quotes the name, FUNCTION RESTORE does not (as Redis 7.0).
    return quoted ? "ERR Library '" + lib.name + "' already exists"
                  : "ERR Library " + lib.name + " already exists";
  }
  std::string clash = FunctionStore::Clash(libs, lib);
  if (!clash.empty()) return "ERR Function " + clash + " already exists";
  std::string name = lib.name;
  libs[name] = std::move(lib);
  return "";
}

void Load(CmdArgs args, ReplyBuilder& rb) {
  bool replace = false;
  for (size_t i = 2; i + 1 < args.size(); i++) {
    if (!EqualsIgnoreCase(args[i], "replace")) {
      rb.Error("ERR Unknown option given: " + std::string(args[i]));
      return;
    }
    replace = true;
  }
  FunctionLibrary lib;
  std::string error;
  if (!LuaVm::InspectLibrary(args.back(), &lib, &error)) {
    rb.Error(error);
    return;
  }
  std::string name = lib.name;
  error = FunctionStore::Get().Update(
      [&](Libraries& libs) { return Install(libs, std::move(lib), replace); });
  error.empty() ? rb.Bulk(name) : rb.Error(error);
}

void List(CmdArgs args, ReplyBuilder& rb) {
  bool with_code = false;
  std::string_view pattern;
  bool have_pattern = false;
  for (size_t i = 2; i < args.size(); i++) {
    if (EqualsIgnoreCase(args[i], "withcode")) {
      with_code = true;
    } else if (EqualsIgnoreCase(args[i], "libraryname")) {
      if (i + 1 >= args.size()) {
        rb.Error("ERR library name argument was not given");
        return;
      }
      pattern = args[++i];
      have_pattern = true;
    } else {
      rb.Error("ERR Unknown argument " + std::string(args[i]));
      return;
    }
  }
  Libraries libs = FunctionStore::Get().All();
  std::vector<const FunctionLibrary*> shown;
  for (const auto& [name, lib] : libs) {
    if (!have_pattern || GlobMatch(pattern, name)) shown.push_back(&lib);
  }
  rb.Array(shown.size());
  for (const FunctionLibrary* lib : shown) {
    rb.Map(with_code ? 4 : 3);
    rb.Bulk("library_name");
    rb.Bulk(lib->name);
    rb.Bulk("engine");
    rb.Bulk("LUA");
    rb.Bulk("functions");
    rb.Array(lib->functions.size());
    for (const FunctionInfo& f : lib->functions) {
      rb.Map(3);
      rb.Bulk("name");
      rb.Bulk(f.name);
      rb.Bulk("description");
      f.description ? rb.Bulk(*f.description) : rb.Null();
      rb.Bulk("flags");
      std::vector<std::string> flags = LuaVm::FlagNames(f.flags);
      rb.Set(flags.size());
      for (const std::string& fl : flags) rb.Simple(fl);
    }
    if (with_code) {
      rb.Bulk("library_code");
      rb.Bulk(lib->code);
    }
  }
}

void Stats(Client& c, ReplyBuilder& rb) {
  FunctionStore& store = FunctionStore::Get();
  rb.Map(2);
  rb.Bulk("running_script");
  LuaVm::RunningFunction running;
  if (LuaVm::FindRunningFunction(&running)) {
    rb.Map(3);
    rb.Bulk("name");
    rb.Bulk(running.name);
    rb.Bulk("command");
    rb.Array(running.command.size());
    for (const std::string& a : running.command) rb.Bulk(a);
    rb.Bulk("duration_ms");
    rb.Integer((WallClockUs() - running.since_us) / 1000);
  } else {
    rb.Null();
  }
  rb.Bulk("engines");
  rb.Map(1);
  rb.Bulk("LUA");
  rb.Map(2);
  rb.Bulk("libraries_count");
  rb.Integer(static_cast<int64_t>(store.library_count()));
  rb.Bulk("functions_count");
  rb.Integer(static_cast<int64_t>(store.function_count()));
  (void)c;
}

void Restore(CmdArgs args, ReplyBuilder& rb) {
  if (args.size() > 4) {
    rb.Error("ERR unknown subcommand or wrong number of arguments for '" + std::string(args[1]) +
             "'. Try FUNCTION HELP.");
    return;
  }
  enum class Policy { kAppend, kReplace, kFlush } policy = Policy::kAppend;
  if (args.size() == 4) {
    if (EqualsIgnoreCase(args[3], "append")) {
      policy = Policy::kAppend;
    } else if (EqualsIgnoreCase(args[3], "replace")) {
      policy = Policy::kReplace;
    } else if (EqualsIgnoreCase(args[3], "flush")) {
      policy = Policy::kFlush;
    } else {
      rb.Error("ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.");
      return;
    }
  }
  std::vector<std::string> codes;
  std::string why;
  rdb::PayloadStatus st = rdb::ParseFunctionPayload(args[2], &codes, &why);
  if (st == rdb::PayloadStatus::kBadFooter) {
    rb.Error("ERR DUMP payload version or checksum are wrong");
    return;
  }
  if (st != rdb::PayloadStatus::kOk) {
    rb.Error("ERR " + why);
    return;
  }
  std::vector<FunctionLibrary> libs;
  for (const std::string& code : codes) {
    FunctionLibrary lib;
    std::string error;
    if (!LuaVm::InspectLibrary(code, &lib, &error)) {
      rb.Error(error);
      return;
    }
    libs.push_back(std::move(lib));
  }
  std::string error = FunctionStore::Get().Update([&](Libraries& all) -> std::string {
    if (policy == Policy::kFlush) all.clear();
    Libraries incoming;
    for (FunctionLibrary& lib : libs) {
      if (incoming.count(lib.name) != 0) return "ERR Library '" + lib.name + "' already exists";
      incoming[lib.name] = lib;
    }
    for (auto& [name, lib] : incoming) {
      std::string e = Install(all, lib, policy == Policy::kReplace, false);
      if (!e.empty()) return e;
    }
    return "";
  });
  error.empty() ? rb.Ok() : rb.Error(error);
}

void CmdFunctionCall(Client& c, CmdArgs args, ReplyBuilder& rb);

// FUNCTION LOAD, DELETE, FLUSH and RESTORE that succeed reach a master's replicas as
// themselves (engine/repl_feed.h).
void CmdFunction(Client& c, CmdArgs args, ReplyBuilder& rb) {
  size_t start = rb.buffer()->size();
  CmdFunctionCall(c, args, rb);
  Worker& w = c.worker();
  if (!w.repl_on()) return;
  std::string sub = Lowercase(args[1]);
  if (sub != "load" && sub != "delete" && sub != "flush" && sub != "restore") return;
  if (rb.buffer()->size() > start && (*rb.buffer())[start] == '-') return;
  ReplOut out;
  out.Add(args);
  w.repl_feed().Record(ReplLog::kNoDb, out.bytes());
}

void CmdFunctionCall(Client& c, CmdArgs args, ReplyBuilder& rb) {
  std::string sub = Lowercase(args[1]);
  FunctionStore& store = FunctionStore::Get();
  auto wrong_arity = [&] {
    rb.Error("ERR wrong number of arguments for 'function|" + sub + "' command");
  };
  if (sub == "load") {
    if (args.size() < 3) return wrong_arity();
    Load(args, rb);
  } else if (sub == "delete") {
    if (args.size() != 3) return wrong_arity();
    std::string name(args[2]);
    std::string error = store.Update([&](Libraries& libs) -> std::string {
      return libs.erase(name) == 0 ? "ERR Library not found" : "";
    });
    error.empty() ? rb.Ok() : rb.Error(error);
  } else if (sub == "flush") {
    if (args.size() > 3) return wrong_arity();
    if (args.size() == 3 && !EqualsIgnoreCase(args[2], "async") &&
        !EqualsIgnoreCase(args[2], "sync")) {
      rb.Error("ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
      return;
    }
    store.Update([](Libraries& libs) -> std::string {
      libs.clear();
      return "";
    });
    rb.Ok();
  } else if (sub == "list") {
    List(args, rb);
  } else if (sub == "stats") {
    if (args.size() != 2) return wrong_arity();
    Stats(c, rb);
  } else if (sub == "dump") {
    if (args.size() != 2) return wrong_arity();
    rb.Bulk(rdb::MakeFunctionPayload(store.Codes()));
  } else if (sub == "restore") {
    if (args.size() < 3) return wrong_arity();
    Restore(args, rb);
  } else if (sub == "kill") {
    if (args.size() != 2) return wrong_arity();
    std::string r = LuaVm::KillRunning(false);
    r == "OK" ? rb.Ok() : rb.Error(r);
  } else if (sub == "help") {
    if (args.size() != 2) return wrong_arity();
    const char* lines[] = {
        "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "LOAD [REPLACE] <FUNCTION CODE>",
        "    Create a new library with the given library name and code.",
        "DELETE <LIBRARY NAME>",
        "    Delete the given library.",
        "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
        "    Return general information on all the libraries:",
        "    * Library name",
        "    * The engine used to run the Library",
        "    * Library description",
        "    * Functions list",
        "    * Library code (if WITHCODE is given)",
        "    It also possible to get only function that matches a pattern using LIBRARYNAME "
        "argument.",
        "STATS",
        "    Return information about the current function running:",
        "    * Function name",
        "    * Command used to run the function",
        "    * Duration in MS that the function is running",
        "    If no function is running, return nil",
        "    In addition, returns a list of available engines.",
        "KILL",
        "    Kill the current running function.",
        "FLUSH [ASYNC|SYNC]",
        "    Delete all the libraries.",
        "    When called without the optional mode argument, the behavior is determined by the",
        "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
        "    * ASYNC: Asynchronously flush the libraries.",
        "    * SYNC: Synchronously flush the libraries.",
        "DUMP",
        "    Return a serialized payload representing the current libraries, can be restored "
        "using FUNCTION RESTORE command",
        "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
        "    Restore the libraries represented by the given payload, it is possible to give a "
        "restore policy to",
        "    control how to handle existing libraries (default APPEND):",
        "    * FLUSH: delete all existing libraries.",
        "    * APPEND: appends the restored libraries to the existing libraries. On collision, "
        "abort.",
        "    * REPLACE: appends the restored libraries to the existing libraries, On collision, "
        "replace the old",
        "      libraries with the new libraries (notice that even on this option there is a "
        "chance of failure",
        "      in case of functions name collision with another library).",
        "HELP",
        "    Prints this help."};
    rb.Array(sizeof(lines) / sizeof(lines[0]));
    for (const char* l : lines) rb.Simple(l);
  } else {
    rb.Error("ERR unknown subcommand '" + std::string(args[1].substr(0, 128)) +
             "'. Try FUNCTION HELP.");
  }
}

}  // namespace

void RegisterFunctionFamily(CommandRegistry& r) {
  // Libraries are checked by Lua wherever they come from (a snapshot's loader included).
  FunctionStore::Get().set_inspector(&LuaVm::InspectLibrary);
  CommandSpec s{"function", -2, kCmdNoScript, 0, 0, 0};
  s.conn_fn = CmdFunction;
  s.group = "scripting";
  s.since = "7.0.0";
  s.summary = "A container for function commands.";
  // While a function is busy FUNCTION STATS shows it; while an EVAL is, it gets -BUSY.
  s.allow_busy = [](CmdArgs a) {
    if (a.size() != 2) return false;
    if (EqualsIgnoreCase(a[1], "kill")) return true;
    return EqualsIgnoreCase(a[1], "stats") && Worker::Current()->engine().busy_functions() > 0;
  };
  static const std::vector<std::string> kSubcommands = {"delete", "dump", "flush",   "help", "kill",
                                                        "list",   "load", "restore", "stats"};
  s.subcommands = &kSubcommands;
  r.Add(std::move(s));
}

}  // namespace strata
