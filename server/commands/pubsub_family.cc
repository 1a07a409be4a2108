// Pub/Sub commands: SUBSCRIBE UNSUBSCRIBE PSUBSCRIBE PUNSUBSCRIBE SSUBSCRIBE SUNSUBSCRIBE
// PUBLISH SPUBLISH PUBSUB, and RESET. The subscriptions and the delivery are the
// engine's (server/engine/pubsub.h); these are thin.
//   - (un)subscribe commands run on the client's thread (they change its subscriptions
//     and its worker's table);
//   - PUBLISH runs where it is called (keyless: on the client's worker, or wherever a
//     script or transaction runs it); SPUBLISH runs on its channel's shard, as a key
//     command, so that one channel's messages keep their order whoever publishes;
//   - PUBSUB reads the process-wide directory (keyless: it runs on the client's worker).
#include "core/glob.h"
#include "core/string_util.h"
#include "server/base/config.h"
#include "server/cluster/cluster_bus.h"
#include "server/cluster/cluster_service.h"
#include "server/commands/families.h"
#include "server/engine/acl.h"
#include "server/engine/client.h"
#include "server/engine/command.h"
#include "server/engine/engine.h"
#include "server/engine/pubsub.h"
#include "server/engine/worker.h"

namespace strata {
namespace {

void CmdSubscribe(Client& c, CmdArgs args, ReplyBuilder& rb) {
  c.worker().pubsub().Subscribe(c, PubSubKind::kChannel, args, rb);
}
void CmdUnsubscribe(Client& c, CmdArgs args, ReplyBuilder& rb) {
  c.worker().pubsub().Unsubscribe(c, PubSubKind::kChannel, args, rb);
}
void CmdPSubscribe(Client& c, CmdArgs args, ReplyBuilder& rb) {
  c.worker().pubsub().Subscribe(c, PubSubKind::kPattern, args, rb);
}
void CmdPUnsubscribe(Client& c, CmdArgs args, ReplyBuilder& rb) {
  c.worker().pubsub().Unsubscribe(c, PubSubKind::kPattern, args, rb);
}
void CmdSSubscribe(Client& c, CmdArgs args, ReplyBuilder& rb) {
  c.worker().pubsub().Subscribe(c, PubSubKind::kShard, args, rb);
}
void CmdSUnsubscribe(Client& c, CmdArgs args, ReplyBuilder& rb) {
  c.worker().pubsub().Unsubscribe(c, PubSubKind::kShard, args, rb);
}

// cluster-enabled yes: the message also goes to the other nodes over the cluster bus
// (their subscribers are not counted in the reply, as in Redis).
void PropagateToCluster(ShardCtx& ctx, bool shard, CmdArgs args) {
  Engine& engine = ctx.worker.engine();
  // A replica's master does not send PUBLISH in cluster mode; should one come in the
  // stream anyway (a Redis master), it is not sent on again.
  if (!engine.process().cluster_yes || ctx.from_master) [[likely]]
    return;
  if (const ClusterBus* bus = engine.Service<ClusterService>().bus())
    bus->Propagate(shard, args[1], args[2]);
}

void CmdPublish(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  rb.Integer(static_cast<int64_t>(Publish(PubSubKind::kChannel, args[1], args[2])));
  PropagateToCluster(ctx, false, args);
}

void CmdSPublish(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  rb.Integer(static_cast<int64_t>(Publish(PubSubKind::kShard, args[1], args[2])));
  PropagateToCluster(ctx, true, args);
}

void PubSubHelp(ReplyBuilder& rb) {
  static const char* const kLines[] = {
      "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "CHANNELS [<pattern>]",
      "    Return the currently active channels matching a <pattern> (default: '*').",
      "NUMPAT",
      "    Return number of subscriptions to patterns.",
      "NUMSUB [<channel> ...]",
      "    Return the number of subscribers for the specified channels, excluding",
      "    pattern subscriptions(default: no channels).",
      "SHARDCHANNELS [<pattern>]",
      "    Return the currently active shard level channels matching a <pattern> (default: "
      "'*').",
      "SHARDNUMSUB [<shardchannel> ...]",
      "    Return the number of subscribers for the specified shard level channel(s)",
      "HELP",
      "    Prints this help."};
  rb.Array(sizeof(kLines) / sizeof(kLines[0]));
  for (const char* l : kLines) rb.Simple(l);
}

// Keyless, so that scripts may call it too; it reads the process-wide directory.
void CmdPubSub(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  PubSubDirectory& dir = ctx.worker.engine().pubsub();
  std::string sub = Lowercase(args[1]);
  auto arity = [&](size_t min, size_t max) {
    if (args.size() < min || args.size() > max) {
      rb.Error(WrongArityError("pubsub|" + sub));
      return false;
    }
    return true;
  };
  if (sub == "channels" || sub == "shardchannels") {
    if (args.size() > 3) {
      // Redis checks this one in the command itself, with its own words.
      rb.Error("ERR unknown subcommand or wrong number of arguments for '" + std::string(args[1]) +
               "'. Try PUBSUB HELP.");
      return;
    }
    PubSubKind kind = sub == "channels" ? PubSubKind::kChannel : PubSubKind::kShard;
    std::vector<std::string> names = dir.Names(kind, args.size() == 3 ? &args[2] : nullptr);
    rb.Array(names.size());
    for (const std::string& n : names) rb.Bulk(n);
  } else if (sub == "numsub" || sub == "shardnumsub") {
    if (!arity(2, SIZE_MAX)) return;
    PubSubKind kind = sub == "numsub" ? PubSubKind::kChannel : PubSubKind::kShard;
    // A flat array of name, count pairs (in RESP3 too, as Redis).
    rb.Array(2 * (args.size() - 2));
    for (size_t i = 2; i < args.size(); i++) {
      rb.Bulk(args[i]);
      rb.Integer(static_cast<int64_t>(dir.Subscribers(kind, args[i])));
    }
  } else if (sub == "numpat") {
    if (!arity(2, 2)) return;
    rb.Integer(static_cast<int64_t>(dir.Count(PubSubKind::kPattern)));
  } else if (sub == "help") {
    if (!arity(2, 2)) return;
    PubSubHelp(rb);
  } else {
    rb.Error("ERR unknown subcommand '" + std::string(args[1]) + "'. Try PUBSUB HELP.");
  }
}

// RESET: the connection as it was when it connected (Redis 6.2).
void CmdReset(Client& c, CmdArgs args, ReplyBuilder& rb) {
  c.ResetState();
  c.db = 0;
  c.resp = 2;
  c.SetName("");
  c.reply_mode = Client::ReplyMode::kOn;
  c.skip_next_reply = false;
  c.no_evict = false;
  c.cluster_readonly = false;
  // As a new connection: authenticated only when no password is required.
  c.SetAuthenticated(AclRegistry::Get().DefaultNeedsNoAuth());
  c.SetAclUser(c.authenticated() ? AclRegistry::Get().Default() : nullptr);
  rb.Simple("RESET");
}

}  // namespace

void RegisterPubSubFamily(CommandRegistry& r) {
  auto add_conn = [&](const char* name, int arity, uint32_t flags, int first_key, int last_key,
                      ConnFn fn, const char* since, const char* summary) {
    CommandSpec s{name, arity, flags | kCmdPubSub, first_key, last_key, first_key > 0 ? 1 : 0};
    s.conn_fn = fn;
    s.group = "pubsub";
    s.since = since;
    s.summary = summary;
    r.Add(std::move(s));
  };
  const uint32_t kSub = kCmdNoScript | kCmdLoading | kCmdStale | kCmdPubSubContext;
  add_conn("subscribe", -2, kSub, 0, 0, CmdSubscribe, "2.0.0",
           "Listens for messages published to channels.");
  add_conn("unsubscribe", -1, kSub, 0, 0, CmdUnsubscribe, "2.0.0",
           "Stops listening to messages posted to channels.");
  add_conn("psubscribe", -2, kSub, 0, 0, CmdPSubscribe, "2.0.0",
           "Listens for messages published to channels that match one or more patterns.");
  add_conn("punsubscribe", -1, kSub, 0, 0, CmdPUnsubscribe, "2.0.0",
           "Stops listening to messages published to channels that match one or more patterns.");
  add_conn("ssubscribe", -2, kSub, 1, -1, CmdSSubscribe, "7.0.0",
           "Listens for messages published to shard channels.");
  add_conn("sunsubscribe", -1, kSub, 1, -1, CmdSUnsubscribe, "7.0.0",
           "Stops listening to messages posted to shard channels.");
  {
    CommandSpec s{"pubsub", -2, kCmdPubSub | kCmdLoading | kCmdStale, 0, 0, 0};
    s.shard_fn = CmdPubSub;
    s.group = "pubsub";
    s.since = "2.8.0";
    s.summary = "A container for Pub/Sub commands.";
    r.Add(std::move(s));
  }
  static const std::vector<std::string> kPubSubSubcommands = {
      "channels", "numpat", "numsub", "shardchannels", "shardnumsub", "help"};
  r.FindMutable("pubsub")->subcommands = &kPubSubSubcommands;

  auto add_shard = [&](const char* name, int first_key, ShardFn fn, const char* since,
                       const char* summary) {
    CommandSpec s{
        name,      3,         kCmdPubSub | kCmdLoading | kCmdStale | kCmdFast | kCmdMayReplicate,
        first_key, first_key, first_key > 0 ? 1 : 0};
    s.shard_fn = fn;
    s.group = "pubsub";
    s.since = since;
    s.summary = summary;
    r.Add(std::move(s));
  };
  add_shard("publish", 0, CmdPublish, "2.0.0", "Posts a message to a channel.");
  add_shard("spublish", 1, CmdSPublish, "7.0.0", "Post a message to a shard channel");

  CommandSpec reset{"reset",
                    1,
                    kCmdNoScript | kCmdLoading | kCmdStale | kCmdFast | kCmdNoAuth | kCmdAllowBusy |
                        kCmdPubSubContext | kCmdNoQueue | kCmdConnection,
                    0,
                    0,
                    0};
  reset.conn_fn = CmdReset;
  reset.group = "connection";
  reset.since = "6.2.0";
  reset.summary = "Resets the connection.";
  r.Add(std::move(reset));
}

}  // namespace strata
