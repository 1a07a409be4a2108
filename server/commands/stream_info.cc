// XINFO STREAM [FULL [COUNT n]], XINFO GROUPS, XINFO CONSUMERS, XINFO HELP: Redis 7.0's
// fields, in its order, as maps (flat arrays in RESP2). Runs on the key's shard.
#include <string>
#include <vector>

#include "core/string_util.h"
#include "server/commands/errors.h"
#include "server/commands/families.h"
#include "server/commands/stream_util.h"
#include "server/engine/command.h"
#include "server/engine/worker.h"

namespace strata {
namespace {

void ReplyLag(ReplyBuilder& rb, const StreamObject& s, const StreamGroup& g) {
  int64_t lag = 0;
  if (s.GroupLag(g, &lag)) {
    rb.Integer(lag);
  } else {
    rb.Null();
  }
}

void ReplyEntriesRead(ReplyBuilder& rb, const StreamGroup& g) {
  if (g.entries_read >= 0) {
    rb.Integer(g.entries_read);
  } else {
    rb.Null();
  }
}

void ReplyFirstOrLast(ReplyBuilder& rb, const StreamObject& s, bool last) {
  StreamIterator it = s.Range(StreamId::Min(), StreamId::Max(), last);
  if (it.Valid()) {
    ReplyStreamEntry(rb, it.entry());
  } else {
    rb.Null();
  }
}

void StreamInfo(const StreamObject& s, bool full, size_t count, ReplyBuilder& rb) {
  rb.Map(full ? 9 : 10);
  rb.Bulk("length");
  rb.Integer(static_cast<int64_t>(s.Length()));
  rb.Bulk("radix-tree-keys");
  rb.Integer(static_cast<int64_t>(s.node_count()));
  rb.Bulk("radix-tree-nodes");
  rb.Integer(static_cast<int64_t>(s.node_count()));
  rb.Bulk("last-generated-id");
  ReplyStreamId(rb, s.last_id());
  rb.Bulk("max-deleted-entry-id");
  ReplyStreamId(rb, s.max_deleted_id());
  rb.Bulk("entries-added");
  rb.Integer(static_cast<int64_t>(s.entries_added()));
  rb.Bulk("recorded-first-entry-id");
  ReplyStreamId(rb, s.first_id());
  if (!full) {
    rb.Bulk("groups");
    rb.Integer(static_cast<int64_t>(s.groups().size()));
    rb.Bulk("first-entry");
    ReplyFirstOrLast(rb, s, false);
    rb.Bulk("last-entry");
    ReplyFirstOrLast(rb, s, true);
    return;
  }
  rb.Bulk("entries");
  {
    std::string body;
    ReplyBuilder b(&body, rb.resp());
    size_t n = 0;
    for (StreamIterator it = s.Range(StreamId::Min(), StreamId::Max()); it.Valid(); it.Next()) {
      if (count > 0 && n == count) break;
      ReplyStreamEntry(b, it.entry());
      n++;
    }
    rb.Array(n);
    rb.buffer()->append(body);
  }
  rb.Bulk("groups");
  rb.Array(s.groups().size());
  for (const auto& [gname, g] : s.groups()) {
    rb.Map(7);
    rb.Bulk("name");
    rb.Bulk(g->name);
    rb.Bulk("last-delivered-id");
    ReplyStreamId(rb, g->last_id);
    rb.Bulk("entries-read");
    ReplyEntriesRead(rb, *g);
    rb.Bulk("lag");
    ReplyLag(rb, s, *g);
    rb.Bulk("pel-count");
    rb.Integer(static_cast<int64_t>(g->pel.size()));
    rb.Bulk("pending");
    size_t pel_n = count > 0 ? std::min(count, g->pel.size()) : g->pel.size();
    rb.Array(pel_n);
    size_t k = 0;
    for (const auto& [id, p] : g->pel) {
      if (k++ == pel_n) break;
      rb.Array(4);
      ReplyStreamId(rb, id);
      rb.Bulk(p.consumer->name);
      rb.Integer(p.delivery_ms);
      rb.Integer(static_cast<int64_t>(p.delivery_count));
    }
    rb.Bulk("consumers");
    rb.Array(g->consumers.size());
    for (const auto& [cname, c] : g->consumers) {
      rb.Map(4);
      rb.Bulk("name");
      rb.Bulk(c->name);
      rb.Bulk("seen-time");
      rb.Integer(c->seen_ms);
      rb.Bulk("pel-count");
      rb.Integer(static_cast<int64_t>(c->pending.size()));
      rb.Bulk("pending");
      size_t cn = count > 0 ? std::min(count, c->pending.size()) : c->pending.size();
      rb.Array(cn);
      size_t j = 0;
      for (StreamId id : c->pending) {
        if (j++ == cn) break;
        const StreamPending& p = g->pel.find(id)->second;
        rb.Array(3);
        ReplyStreamId(rb, id);
        rb.Integer(p.delivery_ms);
        rb.Integer(static_cast<int64_t>(p.delivery_count));
      }
    }
  }
}

void XInfoHelp(ReplyBuilder& rb) {
  static const char* const kLines[] = {
      "XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "CONSUMERS <key> <groupname>",
      "    Show consumers of <groupname>.",
      "GROUPS <key>",
      "    Show the stream consumer groups.",
      "STREAM <key> [FULL [COUNT <count>]",
      "    Show information about the stream.",
      "HELP",
      "    Prints this help."};
  rb.Array(sizeof(kLines) / sizeof(kLines[0]));
  for (const char* l : kLines) rb.Simple(l);
}

void CmdXInfo(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  std::string sub = Lowercase(args[1]);
  auto bad = [&] {
    rb.Error("ERR unknown subcommand or wrong number of arguments for '" + std::string(args[1]) +
             "'. Try XINFO HELP.");
  };
  if (sub == "help") {
    if (args.size() != 2) {
      rb.Error(WrongArityError("xinfo|help"));
      return;
    }
    XInfoHelp(rb);
    return;
  }
  if (sub != "stream" && sub != "groups" && sub != "consumers") {
    rb.Error("ERR unknown subcommand '" + std::string(args[1]) + "'. Try XINFO HELP.");
    return;
  }
  if ((sub == "groups" && args.size() != 3) || (sub == "consumers" && args.size() != 4) ||
      args.size() < 3) {
    rb.Error(WrongArityError("xinfo|" + sub));
    return;
  }
  bool full = false;
  size_t count = 10;
  if (sub == "stream" && args.size() > 3) {
    if (!EqualsIgnoreCase(args[3], "full") || (args.size() != 4 && args.size() != 6) ||
        (args.size() == 6 && !EqualsIgnoreCase(args[4], "count"))) {
      bad();
      return;
    }
    full = true;
    if (args.size() == 6) {
      int64_t n = 0;
      if (!ParseInt64(args[5], &n)) {
        rb.Error(errors::kNotInteger);
        return;
      }
      count = n > 0 ? static_cast<size_t>(n) : 0;
    }
  }
  Entry* e;
  StreamObject* s;
  if (!LookupStream(ctx, args[2], rb, true, &e, &s)) return;
  if (s == nullptr) {
    rb.Error("ERR no such key");
    return;
  }
  if (sub == "stream") {
    StreamInfo(*s, full, count, rb);
    return;
  }
  if (sub == "groups") {
    rb.Array(s->groups().size());
    for (const auto& [gname, g] : s->groups()) {
      rb.Map(6);
      rb.Bulk("name");
      rb.Bulk(g->name);
      rb.Bulk("consumers");
      rb.Integer(static_cast<int64_t>(g->consumers.size()));
      rb.Bulk("pending");
      rb.Integer(static_cast<int64_t>(g->pel.size()));
      rb.Bulk("last-delivered-id");
      ReplyStreamId(rb, g->last_id);
      rb.Bulk("entries-read");
      ReplyEntriesRead(rb, *g);
      rb.Bulk("lag");
      ReplyLag(rb, *s, *g);
    }
    return;
  }
  const StreamGroup* g = s->FindGroup(args[3]);
  if (g == nullptr) {
    rb.Error("NOGROUP No such consumer group '" + std::string(args[3]) + "' for key name '" +
             std::string(args[2]) + "'");
    return;
  }
  rb.Array(g->consumers.size());
  for (const auto& [cname, c] : g->consumers) {
    rb.Map(3);
    rb.Bulk("name");
    rb.Bulk(c->name);
    rb.Bulk("pending");
    rb.Integer(static_cast<int64_t>(c->pending.size()));
    rb.Bulk("idle");
    rb.Integer(std::max<int64_t>(0, ctx.now_ms - c->seen_ms));
  }
}

}  // namespace

void RegisterStreamInfoCommands(CommandRegistry& r) {
  CommandSpec s{"xinfo", -2, kCmdReadOnly | kCmdStream, 2, 2, 1};
  s.shard_fn = CmdXInfo;
  s.group = "stream";
  s.since = "5.0.0";
  s.summary = "A container for stream introspection commands.";
  r.Add(std::move(s));
  static const std::vector<std::string> kXInfoSubcommands = {"stream", "groups", "consumers",
                                                             "help"};
  r.FindMutable("xinfo")->subcommands = &kXInfoSubcommands;
}

}  // namespace strata
