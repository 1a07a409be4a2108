// Client commands: PING ECHO HELLO AUTH QUIT SELECT TIME COMMAND. They run on the
// client's own thread and touch no shard data.
#include <sys/time.h>

#include "core/glob.h"
#include "core/string_util.h"
#include "server/base/config.h"
#include "server/base/version.h"
#include "server/commands/errors.h"
#include "server/commands/families.h"
#include "server/engine/client.h"
#include "server/engine/command.h"
#include "server/engine/engine.h"
#include "server/engine/worker.h"

namespace strata {
namespace {

constexpr std::string_view kWrongPass =
    "WRONGPASS invalid username-password pair or user is disabled.";

void CmdPing(Client& c, CmdArgs args, ReplyBuilder& rb) {
  if (args.size() > 2) {
    rb.Error(WrongArityError("ping"));
  } else if (c.resp == 2 && c.subscribed()) {
    // Redis's form for a subscribed RESP2 connection: a message-like array.
    rb.Array(2);
    rb.Bulk("pong");
    rb.Bulk(args.size() == 2 ? args[1] : std::string_view(""));
  } else if (args.size() == 2) {
    rb.Bulk(args[1]);
  } else {
    rb.Simple("PONG");
  }
}

void CmdEcho(Client& c, CmdArgs args, ReplyBuilder& rb) { rb.Bulk(args[1]); }

void CmdQuit(Client& c, CmdArgs args, ReplyBuilder& rb) {
  rb.Ok();
  c.CloseAfterReply();
}

void CmdSelect(Client& c, CmdArgs args, ReplyBuilder& rb) {
  int64_t id = 0;
  if (!ParseInt64(args[1], &id) || id < INT32_MIN || id > INT32_MAX) {
    rb.Error(errors::kNotInteger);
    return;
  }
  if (id < 0 || id >= c.worker().engine().config().Int("databases")) {
    rb.Error(errors::kDbIndexOutOfRange);
    return;
  }
  c.db = static_cast<uint32_t>(id);
  rb.Ok();
}

bool CheckPassword(Client& c, std::string_view user, std::string_view pass) {
  std::string required = c.worker().engine().config().String("requirepass");
  return user == "default" && (required.empty() || ConstantTimeEquals(pass, required));
}

void CmdAuth(Client& c, CmdArgs args, ReplyBuilder& rb) {
  if (args.size() > 3) {
    rb.Error(errors::kSyntax);
    return;
  }
  std::string_view user = args.size() == 3 ? args[1] : "default";
  std::string_view pass = args.back();
  if (args.size() == 2 && c.worker().engine().config().String("requirepass").empty()) {
    rb.Error(
        "ERR AUTH <password> called without any password configured for the default user. "
        "Are you sure your configuration is correct?");
    return;
  }
  if (!CheckPassword(c, user, pass)) {
    rb.Error(kWrongPass);
    return;
  }
  c.authenticated = true;
  rb.Ok();
}

bool ValidClientName(std::string_view name) {
  for (char ch : name) {
    if (ch < '!' || ch > '~') return false;
  }
  return true;
}

void CmdHello(Client& c, CmdArgs args, ReplyBuilder& rb) {
  int64_t ver = c.resp;
  if (args.size() >= 2) {
    if (!ParseInt64(args[1], &ver)) {
      rb.Error("ERR Protocol version is not an integer or out of range");
      return;
    }
    if (ver < 2 || ver > 3) {
      rb.Error("NOPROTO unsupported protocol version");
      return;
    }
  }
  std::string_view setname;
  bool has_setname = false;
  bool has_auth = false;
  std::string_view user, pass;
  for (size_t i = 2; i < args.size(); i++) {
    size_t left = args.size() - i - 1;
    if (EqualsIgnoreCase(args[i], "auth") && left >= 2) {
      has_auth = true;
      user = args[i + 1];
      pass = args[i + 2];
      i += 2;
    } else if (EqualsIgnoreCase(args[i], "setname") && left >= 1) {
      has_setname = true;
      setname = args[++i];
    } else {
      rb.Error("ERR Syntax error in HELLO option '" + std::string(args[i]) + "'");
      return;
    }
  }
  if (has_auth) {
    if (!CheckPassword(c, user, pass)) {
      rb.Error(kWrongPass);
      return;
    }
    c.authenticated = true;
  }
  if (!c.authenticated) {
    rb.Error(
        "NOAUTH HELLO must be called with the client already authenticated, otherwise the "
        "HELLO AUTH <user> <pass> option can be used to authenticate the client and "
        "select the RESP protocol version at the same time");
    return;
  }
  if (has_setname) {
    if (!ValidClientName(setname)) {
      rb.Error("ERR Client names cannot contain spaces, newlines or special characters.");
      return;
    }
    c.SetName(std::string(setname));
  }
  c.resp = static_cast<int>(ver);
  ReplyBuilder out(rb.buffer(), c.resp);
  out.Map(7);
  out.Bulk("server");
  out.Bulk("redis");
  out.Bulk("version");
  out.Bulk(STRATA_REDIS_COMPAT_VERSION);
  out.Bulk("proto");
  out.Integer(c.resp);
  out.Bulk("id");
  out.Integer(static_cast<int64_t>(c.id()));
  out.Bulk("mode");
  out.Bulk("standalone");
  out.Bulk("role");
  out.Bulk("master");
  out.Bulk("modules");
  out.Array(0);
}

void CmdTime(Client& c, CmdArgs args, ReplyBuilder& rb) {
  timeval tv;
  gettimeofday(&tv, nullptr);
  rb.Array(2);
  rb.Bulk(std::to_string(tv.tv_sec));
  rb.Bulk(std::to_string(tv.tv_usec));
}

void FlagNames(const CommandSpec& s, std::vector<const char*>* out) {
  if (s.flags & kCmdWrite) out->push_back("write");
  if (s.flags & kCmdReadOnly) out->push_back("readonly");
  if (s.flags & kCmdDenyOom) out->push_back("denyoom");
  if (s.flags & kCmdAdmin) out->push_back("admin");
  if (s.flags & kCmdNoScript) out->push_back("noscript");
  if (s.flags & kCmdLoading) out->push_back("loading");
  if (s.flags & kCmdStale) out->push_back("stale");
  if (s.flags & kCmdNoAuth) out->push_back("no_auth");
  if (s.flags & kCmdFast) out->push_back("fast");
  if (s.flags & kCmdPubSub) out->push_back("pubsub");
  if (s.flags & kCmdMayReplicate) out->push_back("may_replicate");
}

void CommandInfo(const CommandSpec& s, ReplyBuilder& rb) {
  rb.Array(10);
  rb.Bulk(s.name);
  rb.Integer(s.arity);
  std::vector<const char*> flags;
  FlagNames(s, &flags);
  rb.Set(flags.size());
  for (const char* f : flags) rb.Simple(f);
  rb.Integer(s.first_key);
  rb.Integer(s.last_key);
  rb.Integer(s.key_step);
  std::vector<std::string> cats;
  if (s.flags & kCmdKeyspace) cats.push_back("@keyspace");
  if (s.flags & kCmdString) cats.push_back("@string");
  if (s.flags & kCmdHash) cats.push_back("@hash");
  if (s.flags & kCmdSet) cats.push_back("@set");
  if (s.flags & kCmdList) cats.push_back("@list");
  if (s.flags & kCmdSortedSet) cats.push_back("@sortedset");
  if (s.flags & kCmdBlocking) cats.push_back("@blocking");
  if (s.flags & kCmdPubSub) cats.push_back("@pubsub");
  if (s.flags & kCmdStream) cats.push_back("@stream");
  if (s.flags & kCmdGeo) cats.push_back("@geo");
  if (s.flags & kCmdBitmap) cats.push_back("@bitmap");
  if (s.flags & kCmdHyperLogLog) cats.push_back("@hyperloglog");
  if (s.flags & kCmdWrite) cats.push_back("@write");
  if (s.flags & kCmdReadOnly) cats.push_back("@read");
  if (s.flags & kCmdFast) {
    cats.push_back("@fast");
  } else {
    cats.push_back("@slow");
  }
  if (s.flags & kCmdConnection) cats.push_back("@connection");
  if (s.flags & kCmdAdmin) {
    cats.push_back("@admin");
    cats.push_back("@dangerous");
  }
  rb.Set(cats.size());
  for (auto& cat : cats) rb.Simple(cat);
  rb.Array(0);  // tips
  if (s.first_key > 0) {
    // One key spec: keys from first to last with step, as Redis's "range" spec.
    rb.Array(1);
    rb.Map(3);
    rb.Bulk("flags");
    rb.Set(0);
    rb.Bulk("begin_search");
    rb.Map(2);
    rb.Bulk("type");
    rb.Bulk("index");
    rb.Bulk("spec");
    rb.Map(1);
    rb.Bulk("index");
    rb.Integer(s.first_key);
    rb.Bulk("find_keys");
    rb.Map(2);
    rb.Bulk("type");
    rb.Bulk("range");
    rb.Bulk("spec");
    rb.Map(3);
    rb.Bulk("lastkey");
    rb.Integer(s.last_key < 0 ? s.last_key : s.last_key - s.first_key);
    rb.Bulk("keystep");
    rb.Integer(s.key_step);
    rb.Bulk("limit");
    rb.Integer(0);
  } else {
    rb.Array(0);
  }
  rb.Array(0);  // subcommands
}

// COMMAND GETKEYS: the keys Redis names for a call. Routing (CommandSpec::Keys) may take
// a superset for commands whose keys follow a count (it only picks shards); those are
// read exactly here, and a shard channel (SPUBLISH) is no key.
void GetKeys(const CommandSpec& s, CmdArgs call, std::vector<std::string_view>* keys) {
  auto numkeys_at = [&](size_t pos, size_t dest) {
    if (dest > 0 && dest < call.size()) keys->push_back(call[dest]);
    int64_t n = 0;
    if (pos >= call.size() || !ParseInt64(call[pos], &n) || n <= 0) return;
    for (size_t i = pos + 1; i < call.size() && i <= pos + static_cast<size_t>(n); i++)
      keys->push_back(call[i]);
  };
  const std::string& name = s.name;
  if (name == "zunionstore" || name == "zinterstore" || name == "zdiffstore") {
    numkeys_at(2, 1);
  } else if (name == "zunion" || name == "zinter" || name == "zdiff" || name == "zintercard" ||
             name == "sintercard" || name == "lmpop" || name == "zmpop") {
    numkeys_at(1, 0);
  } else if (name == "blmpop" || name == "bzmpop") {
    numkeys_at(2, 0);
  } else if (name == "sort" || name == "sort_ro") {
    keys->push_back(call[1]);
    for (size_t i = 2; i + 1 < call.size(); i++) {
      if (EqualsIgnoreCase(call[i], "store")) keys->push_back(call[++i]);
    }
  } else if (name == "migrate") {
    if (call.size() > 3 && !call[3].empty()) keys->push_back(call[3]);
    for (size_t i = 6; i < call.size(); i++) {
      if (EqualsIgnoreCase(call[i], "keys")) {
        keys->insert(keys->end(), call.begin() + i + 1, call.end());
        break;
      }
    }
  } else if (!(s.flags & kCmdPubSub)) {
    s.Keys(call, keys);
  }
}

void CmdCommand(Client& c, CmdArgs args, ReplyBuilder& rb) {
  const CommandRegistry& reg = CommandRegistry::Get();
  if (args.size() == 1) {
    rb.Array(reg.size());
    for (auto& s : reg.all()) CommandInfo(*s, rb);
    return;
  }
  std::string sub = Lowercase(args[1]);
  if ((sub == "count" && args.size() != 2) || (sub == "help" && args.size() != 2)) {
    rb.Error(WrongArityError("command|" + sub));
  } else if (sub == "count") {
    rb.Integer(static_cast<int64_t>(reg.size()));
  } else if (sub == "info") {
    if (args.size() == 2) {
      rb.Array(reg.size());
      for (auto& s : reg.all()) CommandInfo(*s, rb);
      return;
    }
    rb.Array(args.size() - 2);
    for (size_t i = 2; i < args.size(); i++) {
      const CommandSpec* s = reg.Find(args[i]);
      s ? CommandInfo(*s, rb) : rb.NullArray();
    }
  } else if (sub == "docs") {
    std::vector<const CommandSpec*> list;
    if (args.size() == 2) {
      for (auto& s : reg.all()) list.push_back(s.get());
    } else {
      for (size_t i = 2; i < args.size(); i++) {
        if (const CommandSpec* s = reg.Find(args[i])) list.push_back(s);
      }
    }
    rb.Map(list.size());
    for (const CommandSpec* s : list) {
      rb.Bulk(s->name);
      rb.Map(3);
      rb.Bulk("summary");
      rb.Bulk(s->summary);
      rb.Bulk("since");
      rb.Bulk(s->since);
      rb.Bulk("group");
      rb.Bulk(s->group);
    }
  } else if (sub == "getkeys") {
    if (args.size() < 4) {  // Redis 7.0: the command and at least one argument
      rb.Error(WrongArityError("command|getkeys"));
      return;
    }
    const CommandSpec* s = reg.Find(args[2]);
    if (s == nullptr) {
      rb.Error("ERR Invalid command specified");
      return;
    }
    CmdArgs call = args.subspan(2);
    bool has_keys = s->first_key > 0 || s->keys_fn != nullptr || s->name == "migrate";
    if (!has_keys || (s->flags & kCmdPubSub)) {
      rb.Error("ERR The command has no key arguments");
      return;
    }
    if (!s->CheckArity(call.size())) {
      rb.Error("ERR Invalid number of arguments specified for command");
      return;
    }
    std::vector<std::string_view> keys;
    GetKeys(*s, call, &keys);
    rb.Array(keys.size());
    for (std::string_view k : keys) rb.Bulk(k);
  } else if (sub == "list") {
    std::string_view pattern;
    bool filter = false;
    if (args.size() == 5 && EqualsIgnoreCase(args[2], "filterby") &&
        EqualsIgnoreCase(args[3], "pattern")) {
      pattern = args[4];
      filter = true;
    } else if (args.size() != 2) {
      rb.Error(errors::kSyntax);
      return;
    }
    std::vector<std::string> names;
    for (auto& s : reg.all()) {
      if (!filter || GlobMatch(pattern, s->name, true)) names.push_back(s->name);
      if (s->subcommands == nullptr) continue;
      for (const std::string& sub_name : *s->subcommands) {
        std::string full = s->name + "|" + sub_name;
        if (!filter || GlobMatch(pattern, full, true)) names.push_back(full);
      }
    }
    rb.Array(names.size());
    for (auto n : names) rb.Bulk(n);
  } else if (sub == "help") {
    const char* lines[] = {"COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                           "(no subcommand)",
                           "    Return details about all commands.",
                           "COUNT",
                           "    Return the total number of commands.",
                           "INFO [<command-name> ...]",
                           "    Return details about commands.",
                           "DOCS [<command-name> ...]",
                           "    Return documentation of commands.",
                           "GETKEYS <full-command>",
                           "    Return the keys from a full Redis command.",
                           "LIST [FILTERBY PATTERN <pattern>]",
                           "    Return command names.",
                           "HELP",
                           "    Prints this help."};
    rb.Array(sizeof(lines) / sizeof(lines[0]));
    for (const char* l : lines) rb.Simple(l);
  } else {
    rb.Error("ERR unknown subcommand '" + std::string(args[1]) + "'. Try COMMAND HELP.");
  }
}

}  // namespace

void RegisterConnectionFamily(CommandRegistry& r) {
  auto add = [&](const char* name, int arity, uint32_t flags, ConnFn fn) {
    CommandSpec s{name, arity, flags | kCmdConnection, 0, 0, 0};
    s.conn_fn = fn;
    s.group = "connection";
    r.Add(std::move(s));
  };
  add("ping", -1, kCmdFast | kCmdPubSubContext, CmdPing);
  add("echo", 2, kCmdFast, CmdEcho);
  add("quit", -1, kCmdNoAuth | kCmdFast | kCmdLoading | kCmdAllowBusy | kCmdPubSubContext, CmdQuit);
  add("select", 2, kCmdFast | kCmdLoading, CmdSelect);
  add("auth", -2, kCmdNoAuth | kCmdFast | kCmdNoScript | kCmdLoading | kCmdStale | kCmdAllowBusy,
      CmdAuth);
  add("hello", -1, kCmdNoAuth | kCmdFast | kCmdNoScript | kCmdLoading | kCmdStale | kCmdAllowBusy,
      CmdHello);
  add("time", 1, kCmdFast | kCmdLoading, CmdTime);
  add("command", -1, kCmdLoading | kCmdStale, CmdCommand);
  static const std::vector<std::string> kCommandSubcommands = {"count", "info",    "docs",
                                                               "list",  "getkeys", "help"};
  r.FindMutable("command")->subcommands = &kCommandSubcommands;
}

}  // namespace strata
