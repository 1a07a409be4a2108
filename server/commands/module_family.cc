// MODULE LIST, LOAD, LOADEX, UNLOAD, HELP.
//
// strata loads no Redis modules: a module is a shared object built against redis-server's
// own module API, which strata does not provide. What clients meet is what a redis-server
// without modules answers under its default `enable-module-command no` (the only value
// strata's config accepts): LIST is the empty list (client libraries and tools ask it to
// learn whether RediSearch or RedisJSON is there), and LOAD, LOADEX and UNLOAD are refused
// with Redis's "not allowed" error. Each subcommand's arity is its COMMAND DOCS entry's.
// Thread-safety: runs on the client's worker and reads only the constant docs table.
#include <string>
#include <vector>

#include "core/string_util.h"
#include "server/commands/command_docs.h"
#include "server/commands/families.h"
#include "server/engine/client.h"
#include "server/engine/command.h"

namespace strata {
namespace {

const std::vector<std::string> kModuleSubcommands = {"list", "load", "loadex", "unload", "help"};

void ModuleHelp(ReplyBuilder& rb) {
  const char* lines[] = {
      "MODULE <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "LIST",
      "    Return a list of loaded modules.",
      "LOAD <path> [<arg> ...]",
      "    Load a module library from <path>, passing to it any optional arguments.",
      "LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
      "    Load a module library from <path>, while passing it module configurations and "
      "optional arguments.",
      "UNLOAD <name>",
      "    Unload a module.",
      "HELP",
      "    Prints this help."};
  rb.Array(sizeof(lines) / sizeof(lines[0]));
  for (const char* l : lines) rb.Simple(l);
}

void CmdModule(Client& c, CmdArgs args, ReplyBuilder& rb) {
  (void)c;
  std::string sub = Lowercase(args[1]);
  const CommandDoc* doc = FindCommandDoc("module|" + sub);
  if (doc == nullptr) {
    rb.Error("ERR unknown subcommand '" + std::string(args[1]) + "'. Try MODULE HELP.");
    return;
  }
  int arity = doc->arity;
  bool arity_ok = arity > 0 ? args.size() == static_cast<size_t>(arity)
                            : args.size() >= static_cast<size_t>(-arity);
  if (!arity_ok) {
    rb.Error(WrongArityError("module|" + sub));
  } else if (sub == "list") {
    rb.Array(0);  // no module is ever loaded
  } else if (sub == "help") {
    ModuleHelp(rb);
  } else {
    // LOAD, LOADEX, UNLOAD: what redis-server answers with enable-module-command no.
    rb.Error(
        "ERR MODULE command not allowed. If the enable-module-command option is set to "
        "\"local\", you can run it from a local connection, otherwise you need to set this "
        "option in the configuration file, and then restart the server.");
  }
}

}  // namespace

void RegisterModuleFamily(CommandRegistry& r) {
  CommandSpec s{"module", -2, kCmdAdmin | kCmdNoScript | kCmdServer, 0, 0, 0};
  s.conn_fn = CmdModule;
  s.subcommands = &kModuleSubcommands;
  s.group = "server";
  s.since = "4.0.0";
  s.summary = "A container for the commands that load, unload and list modules.";
  r.Add(std::move(s));
}

}  // namespace strata
