// ACL and its subcommands: SETUSER, GETUSER, DELUSER, USERS, LIST, WHOAMI, CAT, DRYRUN,
// GENPASS, LOG, SAVE, LOAD, HELP (the users and their checks are the engine's, acl.h).
// A change to the users (SETUSER, DELUSER, LOAD) reaches every worker's clients before
// the reply (Worker::RefreshAclUsers): from the next command each is checked against its
// user's new rules, and the clients of a deleted user are disconnected, as in Redis.
// ACL SAVE and LOAD read and write `aclfile` (one `user <name> <rules>` line per user).
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/split_args.h"
#include "core/string_util.h"
#include "server/base/config.h"
#include "server/base/log.h"
#include "server/commands/command_docs.h"
#include "server/commands/errors.h"
#include "server/commands/families.h"
#include "server/engine/acl.h"
#include "server/engine/client.h"
#include "server/engine/command.h"
#include "server/engine/engine.h"
#include "server/engine/hops.h"
#include "server/engine/task.h"
#include "server/engine/worker.h"
#include "server/net/reply_builder.h"

namespace strata {
namespace {

constexpr const char* kNoAclFile =
    "ERR This Redis instance is not configured to use an ACL file. You may want to specify "
    "users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a "
    "Redis configuration file set) in order to store users in the Redis configuration.";

bool SubArityOk(std::string_view sub, size_t argc) {
  const CommandDoc* d = FindCommandDoc("acl|" + std::string(sub));
  if (d == nullptr || d->arity == 0) return true;
  return d->arity > 0 ? argc == static_cast<size_t>(d->arity)
                      : argc >= static_cast<size_t>(-d->arity);
}

void ReplyUser(const AclUser& u, ReplyBuilder& rb) {
  rb.Map(6);
  rb.Bulk("flags");
  std::vector<std::string> flags = u.Flags();
  rb.Array(flags.size());
  for (const std::string& f : flags) rb.Bulk(f);
  rb.Bulk("passwords");
  rb.Array(u.passwords().size());
  for (const std::string& p : u.passwords()) rb.Bulk(p);
  rb.Bulk("commands");
  rb.Bulk(u.DescribeCommands());
  rb.Bulk("keys");
  rb.Bulk(u.DescribeKeys());
  rb.Bulk("channels");
  rb.Bulk(u.DescribeChannels());
  rb.Bulk("selectors");
  rb.Array(0);
}

void ReplyLog(size_t count, ReplyBuilder& rb) {
  std::vector<AclRegistry::LogEntry> entries = AclRegistry::Get().LogEntries(count);
  int64_t now = WallClockMs();
  rb.Array(entries.size());
  for (const AclRegistry::LogEntry& e : entries) {
    rb.Map(7);
    rb.Bulk("count");
    rb.Integer(e.count);
    rb.Bulk("reason");
    rb.Bulk(e.reason);
    rb.Bulk("context");
    rb.Bulk(e.context);
    rb.Bulk("object");
    rb.Bulk(e.object);
    rb.Bulk("username");
    rb.Bulk(e.username);
    rb.Bulk("age-seconds");
    rb.Double(static_cast<double>(now - e.created_ms) / 1000.0);
    rb.Bulk("client-info");
    rb.Bulk(e.client_info);
  }
}

// ACL CAT <category>: the commands in it, and the subcommands in it of the others.
void ReplyCategory(uint32_t bit, ReplyBuilder& rb) {
  std::vector<std::string> names;
  for (const auto& spec : CommandRegistry::Get().all()) {
    if (spec->acl_categories & bit) names.push_back(spec->name);
    if (spec->subcommands == nullptr) continue;
    for (size_t i = 0; i < spec->subcommands->size(); i++) {
      if (i < spec->sub_acl_categories.size() && (spec->sub_acl_categories[i] & bit))
        names.push_back(spec->name + "|" + (*spec->subcommands)[i]);
    }
  }
  rb.Array(names.size());
  for (const std::string& n : names) rb.Bulk(n);
}

std::string DryRunText(const AclUser::Verdict& v) {
  switch (v.denied) {
    case AclUser::Denied::kCommand:
      return "This user has no permissions to run the '" + v.object + "' command";
    case AclUser::Denied::kKey:
      return "This user has no permissions to access the '" + v.object + "' key";
    case AclUser::Denied::kChannel:
      return "This user has no permissions to access the '" + v.object + "' channel";
    case AclUser::Denied::kNone:
      break;
  }
  return "";
}

// Reads an ACL file: one `user <name> <rules...>` line per user. Every line is checked
// before anything changes; an error names its line, as Redis's does.
bool ParseAclFile(const std::string& path, std::vector<std::shared_ptr<AclUser>>* users,
                  std::string* error) {
  std::ifstream in(path);
  if (!in) {
    *error = "Error loading ACLs, opening file '" + path + "': " + std::strerror(errno);
    return false;
  }
  std::string line;
  int n = 0;
  std::vector<std::string> seen;
  while (std::getline(in, line)) {
    n++;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::vector<std::string> words;
    if (!SplitArgs(line, &words)) {
      *error = path + ":" + std::to_string(n) + ": unbalanced quotes in acl line";
      return false;
    }
    if (words.empty() || words[0][0] == '#') continue;
    if (words[0] != "user" || words.size() < 2) {
      *error = path + ":" + std::to_string(n) + ": line should start with user keyword";
      return false;
    }
    for (const std::string& s : seen) {
      if (s == words[1]) {
        *error = path + ":" + std::to_string(n) + ": Duplicate user '" + words[1] + "' found";
        return false;
      }
    }
    seen.push_back(words[1]);
    auto u = std::make_shared<AclUser>(words[1]);
    for (size_t i = 2; i < words.size(); i++) {
      std::string why;
      if (!u->Apply(words[i], &why)) {
        *error = path + ":" + std::to_string(n) + ": " + why + ". ";
        return false;
      }
    }
    users->push_back(std::move(u));
  }
  return true;
}

bool SaveAclFile(const std::string& path, std::string* error) {
  std::string text;
  for (const AclUserPtr& u : AclRegistry::Get().All())
    text += "user " + u->name() + " " + u->Describe() + "\n";
  std::string tmp = path + ".tmp-" + std::to_string(getpid());
  FILE* f = std::fopen(tmp.c_str(), "w");
  if (f == nullptr) {
    *error = "Opening temp ACL file for ACL SAVE: " + std::string(std::strerror(errno));
    return false;
  }
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size() && std::fflush(f) == 0 &&
            fsync(fileno(f)) == 0;
  ok = std::fclose(f) == 0 && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    *error = "Writing ACL file for ACL SAVE: " + std::string(std::strerror(errno));
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

Fiber AclFiber(Client* c, std::shared_ptr<OwnedArgs> owned) {
  CmdArgs args = owned->span();
  std::string out;
  ReplyBuilder rb(&out, c->resp);
  Engine& srv = c->worker().engine();
  AclRegistry& acl = AclRegistry::Get();
  std::string sub = Lowercase(args[1]);
  bool known = sub == "cat" || sub == "deluser" || sub == "dryrun" || sub == "genpass" ||
               sub == "getuser" || sub == "help" || sub == "list" || sub == "load" ||
               sub == "log" || sub == "save" || sub == "setuser" || sub == "users" ||
               sub == "whoami";
  bool refresh = false;
  if (!known) {
    rb.Error("ERR unknown subcommand '" + std::string(args[1].substr(0, 128)) + "'. Try ACL HELP.");
  } else if (!SubArityOk(sub, args.size())) {
    rb.Error(WrongArityError("acl|" + sub));
  } else if (sub == "setuser") {
    std::string error;
    if (acl.SetUser(args[2], args.subspan(3), &error)) {
      refresh = true;
      rb.Ok();
    } else {
      rb.Error(error);
    }
  } else if (sub == "deluser") {
    std::string error;
    int removed = acl.DelUsers(args.subspan(2), &error);
    if (removed < 0) {
      rb.Error(error);
    } else {
      refresh = removed > 0;
      rb.Integer(removed);
    }
  } else if (sub == "getuser") {
    AclUserPtr u = acl.Find(args[2]);
    if (u == nullptr) {
      rb.Null();
    } else {
      ReplyUser(*u, rb);
    }
  } else if (sub == "users") {
    std::vector<AclUserPtr> all = acl.All();
    rb.Array(all.size());
    for (const AclUserPtr& u : all) rb.Bulk(u->name());
  } else if (sub == "list") {
    std::vector<AclUserPtr> all = acl.All();
    rb.Array(all.size());
    for (const AclUserPtr& u : all) rb.Bulk("user " + u->name() + " " + u->Describe());
  } else if (sub == "whoami") {
    rb.Bulk(c->acl_user_name());
  } else if (sub == "cat") {
    if (args.size() == 2) {
      rb.Array(kAclCategoryCount);
      for (const char* cat : kAclCategories) rb.Bulk(cat);
    } else if (uint32_t bit = AclCategoryBit(args[2]); bit != 0) {
      ReplyCategory(bit, rb);
    } else {
      rb.Error("ERR Unknown category '" + std::string(args[2].substr(0, 128)) + "'");
    }
  } else if (sub == "dryrun") {
    AclUserPtr u = acl.Find(args[2]);
    const CommandSpec* spec = CommandRegistry::Get().Find(args[3]);
    CmdArgs call = args.subspan(3);
    if (u == nullptr) {
      rb.Error("ERR User '" + std::string(args[2]) + "' not found");
    } else if (spec == nullptr) {
      rb.Error("ERR Command '" + std::string(args[3].substr(0, 128)) + "' not found");
    } else if (!spec->CheckArity(call.size())) {
      rb.Error(WrongArityError(spec->name));
    } else if (AclUser::Verdict v = u->Check(*spec, call); v.denied != AclUser::Denied::kNone) {
      rb.Bulk(DryRunText(v));
    } else {
      rb.Ok();
    }
  } else if (sub == "genpass") {
    int64_t bits = 256;
    if (args.size() == 3 && !ParseInt64(args[2], &bits)) {
      rb.Error(errors::kNotInteger);
    } else if (bits <= 0 || bits > 4096) {
      rb.Error(
          "ERR ACL GENPASS argument must be the number of bits for the output password, a "
          "positive number up to 4096");
    } else {
      size_t chars = static_cast<size_t>((bits + 3) / 4);
      std::string raw((chars + 1) / 2, '\0');
      size_t got = 0;
      while (got < raw.size()) {
        ssize_t n = getrandom(raw.data() + got, raw.size() - got, 0);
        if (n > 0) got += static_cast<size_t>(n);
      }
      static const char kHex[] = "0123456789abcdef";
      std::string pass;
      for (unsigned char b : raw) {
        pass += kHex[b >> 4];
        pass += kHex[b & 15];
      }
      pass.resize(chars);
      rb.Bulk(pass);
    }
  } else if (sub == "log") {
    int64_t count = 10;
    if (args.size() == 3 && EqualsIgnoreCase(args[2], "reset")) {
      acl.ResetLog();
      rb.Ok();
    } else if (args.size() > 3) {
      rb.Error("ERR unknown subcommand or wrong number of arguments for 'log'. Try ACL HELP.");
    } else if (args.size() == 3 && !ParseInt64(args[2], &count)) {
      rb.Error(errors::kNotInteger);
    } else {
      ReplyLog(count < 0 ? 0 : static_cast<size_t>(count), rb);
    }
  } else if (sub == "save" || sub == "load") {
    std::string path = srv.config().String("aclfile");
    std::string error;
    if (path.empty()) {
      rb.Error(kNoAclFile);
    } else if (sub == "save") {
      if (SaveAclFile(path, &error)) {
        rb.Ok();
      } else {
        rb.Error(
            "ERR There was an error trying to save the ACLs. Please check the server "
            "logs for more information");
        LogWarning("%s", error.c_str());
      }
    } else {
      std::vector<std::shared_ptr<AclUser>> users;
      if (ParseAclFile(path, &users, &error)) {
        acl.ReplaceAll(std::move(users));
        refresh = true;
        rb.Ok();
      } else {
        rb.Error("ERR " + error);
      }
    }
  } else if (sub == "help") {
    const char* lines[] = {
        "ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CAT [<category>]",
        "    List all commands that belong to <category>, or all command categories",
        "    when no category is specified.",
        "DELUSER <username> [<username> ...]",
        "    Delete a list of users.",
        "DRYRUN <username> <command> [<arg> ...]",
        "    Returns whether the user can execute the given command without executing the "
        "command.",
        "GETUSER <username>",
        "    Get the user's details.",
        "GENPASS [<bits>]",
        "    Generate a secure 256-bit user password. The optional `bits` argument can",
        "    be used to specify a different size.",
        "LIST",
        "    Show users details in config file format.",
        "LOAD",
        "    Reload users from the ACL file.",
        "LOG [<count> | RESET]",
        "    Show the ACL log entries.",
        "SAVE",
        "    Save the current config to the ACL file.",
        "SETUSER <username> <attribute> [<attribute> ...]",
        "    Create or modify a user with the specified attributes.",
        "USERS",
        "    List all the registered usernames.",
        "WHOAMI",
        "    Return the current connection username.",
        "HELP",
        "    Prints this help."};
    rb.Array(sizeof(lines) / sizeof(lines[0]));
    for (const char* l : lines) rb.Simple(l);
  }
  if (refresh) {
    co_await RunOn(srv.AllShards(), [c](Worker& w) { w.RefreshAclUsers(c); });
  }
  c->FinishFiber(std::move(out));
}

}  // namespace

bool StartAcl(const Config& cfg, std::string* error) {
  AclRegistry& acl = AclRegistry::Get();
  SetAclPubsubDefault(cfg.String("acl-pubsub-default") == "allchannels");
  acl.SetRequirePass(cfg.String("requirepass"));
  std::vector<std::vector<std::string>> lines = cfg.user_lines();
  std::vector<int> numbers = cfg.user_line_numbers();
  std::string path = cfg.String("aclfile");
  if (!lines.empty() && !path.empty()) {
    *error =
        "Configuring Redis with users defined in redis.conf and at the same setting an ACL "
        "file path is invalid. This setup is very likely to lead to configuration errors and "
        "security holes, please define either an ACL file or declare users directly in your "
        "redis.conf, but not both.";
    return false;
  }
  std::vector<std::shared_ptr<AclUser>> users;
  if (!path.empty()) {
    if (!ParseAclFile(path, &users, error)) return false;
  } else {
    for (size_t i = 0; i < lines.size(); i++) {
      const std::vector<std::string>& words = lines[i];
      for (const auto& u : users) {
        if (u->name() == words[0]) {
          *error = "Duplicate user '" + words[0] + "' found on line " + std::to_string(numbers[i]) +
                   " of the configuration file";
          return false;
        }
      }
      auto u = std::make_shared<AclUser>(words[0]);
      for (size_t j = 1; j < words.size(); j++) {
        std::string why;
        if (!u->Apply(words[j], &why)) {
          *error = "Error in user declaration '" + words[0] + "' at line " +
                   std::to_string(numbers[i]) + " of the configuration file, rule '" + words[j] +
                   "': " + why;
          return false;
        }
      }
      users.push_back(std::move(u));
    }
  }
  if (!users.empty()) acl.ReplaceAll(std::move(users));
  return true;
}

void RegisterAclFamily(CommandRegistry& r) {
  CommandSpec s{"acl", -2, kCmdNoScript | kCmdLoading | kCmdStale, 0, 0, 0};
  s.fiber_fn = AclFiber;
  s.group = "server";
  s.since = "6.0.0";
  s.summary = "A container for Access List Control commands.";
  static const std::vector<std::string> kSubcommands = {
      "cat",  "deluser", "dryrun", "genpass", "getuser", "help",  "list",
      "load", "log",     "save",   "setuser", "users",   "whoami"};
  s.subcommands = &kSubcommands;
  r.Add(std::move(s));
}

}  // namespace strata
