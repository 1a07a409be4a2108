// Client commands: PING ECHO HELLO AUTH QUIT SELECT TIME. They run on the
// client's own thread and touch no shard data.
#include <sys/time.h>

#include "core/string_util.h"
#include "server/base/config.h"
#include "server/base/version.h"
#include "server/commands/errors.h"
#include "server/commands/families.h"
#include "server/engine/acl.h"
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
  if (id != 0 && c.worker().engine().process().cluster_mode()) {
    rb.Error("ERR SELECT is not allowed in cluster mode");
    return;
  }
  if (id < 0 || id >= c.worker().engine().config().Int("databases")) {
    rb.Error(errors::kDbIndexOutOfRange);
    return;
  }
  c.db = static_cast<uint32_t>(id);
  rb.Ok();
}

// AUTH's and HELLO AUTH's check: on success the client is that user's from now on; a
// failure is logged (ACL LOG, reason auth), as Redis logs it.
bool Authenticate(Client& c, std::string_view user, std::string_view pass, const char* command) {
  AclRegistry& acl = AclRegistry::Get();
  AclUserPtr u = acl.Authenticate(user, pass);
  if (u == nullptr) {
    acl.LogAuthFailure(command, std::string(user), c.InfoLine(c.worker().now_ms()),
                       static_cast<size_t>(c.worker().engine().config().Int("acllog-max-len")));
    return false;
  }
  c.SetAuthenticated(true);
  c.SetAclUser(std::move(u));
  return true;
}

void CmdAuth(Client& c, CmdArgs args, ReplyBuilder& rb) {
  if (args.size() > 3) {
    rb.Error(errors::kSyntax);
    return;
  }
  std::string_view user = args.size() == 3 ? args[1] : "default";
  std::string_view pass = args.back();
  if (args.size() == 2) {
    AclUserPtr d = AclRegistry::Get().Default();
    if (d != nullptr && d->nopass()) {
      rb.Error(
          "ERR AUTH <password> called without any password configured for the default user. "
          "Are you sure your configuration is correct?");
      return;
    }
  }
  if (!Authenticate(c, user, pass, "AUTH")) {
    rb.Error(kWrongPass);
    return;
  }
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
  if (has_auth && !Authenticate(c, user, pass, "HELLO")) {
    rb.Error(kWrongPass);
    return;
  }
  if (!c.authenticated()) {
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
  out.Bulk(c.worker().engine().process().cluster_mode() ? "cluster" : "standalone");
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

// LOLWUT [VERSION v]: Redis 7.0 answers with its version line (its drawings belong to
// VERSION 5 and 6, which strata does not draw: they get the line too). The version must
// be an integer when given; other arguments are ignored, as in Redis.
void CmdLolwut(Client& c, CmdArgs args, ReplyBuilder& rb) {
  if (args.size() >= 3 && EqualsIgnoreCase(args[1], "version")) {
    int64_t v = 0;
    if (!ParseInt64(args[2], &v)) {
      rb.Error("ERR value is not an integer or out of range");
      return;
    }
  }
  rb.Verbatim("Redis ver. " STRATA_REDIS_COMPAT_VERSION "\n");
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
  r.FindMutable("time")->group = "server";
  add("lolwut", -1, kCmdFast | kCmdReadOnly, CmdLolwut);
  r.FindMutable("lolwut")->group = "server";
}

}  // namespace strata
