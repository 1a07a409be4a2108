// Stream commands on one key: XADD XLEN XRANGE XREVRANGE XDEL XTRIM XSETID XGROUP XACK
// XPENDING XCLAIM XAUTOCLAIM. The value and its rules are core's (core/stream_type.h);
// this file parses arguments and writes replies with Redis 7.0's texts and shapes. The
// reads that take several keys and may block (XREAD, XREADGROUP) are in stream_read.cc,
// XINFO in stream_info.cc. Every command here runs on its key's shard.
#include <string>
#include <vector>

#include "core/string_util.h"
#include "server/commands/errors.h"
#include "server/commands/families.h"
#include "server/commands/lookup.h"
#include "server/commands/stream_repl.h"
#include "server/commands/stream_util.h"
#include "server/engine/command.h"
#include "server/engine/notify.h"
#include "server/engine/worker.h"

namespace strata {

// ---- stream_util.h

bool LookupStream(ShardCtx& ctx, std::string_view key, ReplyBuilder& rb, bool read, Entry** e,
                  StreamObject** s) {
  if (!LookupTyped(ctx, key, ValueType::kStream, rb, e, read)) return false;
  *s = *e != nullptr ? static_cast<StreamObject*>((*e)->Object()) : nullptr;
  return true;
}

void ReplyStreamId(ReplyBuilder& rb, StreamId id) { rb.Bulk(id.ToString()); }

void ReplyStreamEntry(ReplyBuilder& rb, const StreamEntry& e) {
  rb.Array(2);
  ReplyStreamId(rb, e.id);
  rb.Array(e.fields.size() * 2);
  for (const auto& [f, v] : e.fields) {
    rb.Bulk(f);
    rb.Bulk(v);
  }
}

bool ParseStrictStreamId(std::string_view text, ReplyBuilder& rb, StreamId* id) {
  if (!ParseStreamId(text, 0, true, id, nullptr)) {
    rb.Error(kInvalidStreamId);
    return false;
  }
  return true;
}

std::string NoGroupError(std::string_view key, std::string_view group) {
  return "NOGROUP No such key '" + std::string(key) + "' or consumer group '" + std::string(group) +
         "'";
}

namespace {

constexpr std::string_view kKeyMustExist =
    "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to "
    "use the MKSTREAM option to create an empty stream automatically.";

std::string NoSuchGroupForKey(std::string_view key, std::string_view group) {
  return "NOGROUP No such consumer group '" + std::string(group) + "' for key name '" +
         std::string(key) + "'";
}

// XADD's and XTRIM's options (Redis's streamParseAddOrTrimArgsOrReply).
struct AddTrimArgs {
  bool nomkstream = false;
  StreamTrimSpec trim;
  bool limit_given = false;
  size_t id_pos = 0;  // XADD: the ID argument
};

bool ParseAddTrim(CmdArgs args, bool xadd, ReplyBuilder& rb, AddTrimArgs* a) {
  size_t i = 2;
  for (; i < args.size(); i++) {
    size_t more = args.size() - i - 1;
    std::string_view o = args[i];
    bool maxlen = EqualsIgnoreCase(o, "maxlen");
    if (xadd && EqualsIgnoreCase(o, "nomkstream")) {
      a->nomkstream = true;
    } else if ((maxlen || EqualsIgnoreCase(o, "minid")) && more >= 1) {
      if ((maxlen && a->trim.strategy == StreamTrimSpec::kMinId) ||
          (!maxlen && a->trim.strategy == StreamTrimSpec::kMaxLen)) {
        rb.Error("ERR syntax error, MAXLEN and MINID options at the same time are not compatible");
        return false;
      }
      a->trim.approx = false;
      if (more >= 2 && (args[i + 1] == "~" || args[i + 1] == "=")) {
        a->trim.approx = args[i + 1] == "~";
        i++;
      }
      std::string_view t = args[++i];
      if (maxlen) {
        int64_t n = 0;
        if (!ParseInt64(t, &n)) {
          rb.Error(errors::kNotInteger);
          return false;
        }
        if (n < 0) {
          rb.Error("ERR The MAXLEN argument must be >= 0.");
          return false;
        }
        a->trim.strategy = StreamTrimSpec::kMaxLen;
        a->trim.max_len = static_cast<uint64_t>(n);
      } else {
        if (!ParseStrictStreamId(t, rb, &a->trim.min_id)) return false;
        a->trim.strategy = StreamTrimSpec::kMinId;
      }
    } else if (EqualsIgnoreCase(o, "limit") && more >= 1) {
      int64_t n = 0;
      if (!ParseInt64(args[++i], &n)) {
        rb.Error(errors::kNotInteger);
        return false;
      }
      if (n < 0) {
        rb.Error("ERR The LIMIT argument must be >= 0.");
        return false;
      }
      a->trim.limit = static_cast<uint64_t>(n);
      a->limit_given = true;
    } else if (xadd) {
      a->id_pos = i;
      break;
    } else {
      rb.Error(errors::kSyntax);
      return false;
    }
  }
  if (a->limit_given && a->trim.strategy == StreamTrimSpec::kNone) {
    rb.Error("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy");
    return false;
  }
  if (!xadd && a->trim.strategy == StreamTrimSpec::kNone) {
    rb.Error("ERR syntax error, XTRIM must be called with a trimming strategy");
    return false;
  }
  if (a->limit_given && !a->trim.approx) {
    rb.Error("ERR syntax error, LIMIT cannot be used without the special ~ option");
    return false;
  }
  if (a->trim.approx && !a->limit_given) {
    int64_t per_node = GlobalStreamLimits().node_max_entries.load(std::memory_order_relaxed);
    a->trim.limit = per_node > 0 ? 100 * static_cast<uint64_t>(per_node) : 10000;
  } else if (!a->trim.approx) {
    a->trim.limit = 0;
  }
  return true;
}

void CmdXAdd(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  AddTrimArgs a;
  if (!ParseAddTrim(args, true, rb, &a)) return;
  if (a.id_pos == 0 || args.size() - a.id_pos - 1 < 2 || (args.size() - a.id_pos - 1) % 2 != 0) {
    rb.Error(WrongArityError("xadd"));
    return;
  }
  StreamAddId add;
  std::string_view id_arg = args[a.id_pos];
  if (id_arg != "*") {
    bool seq_given = true;
    if (!ParseStreamId(id_arg, 0, true, &add.id, &seq_given)) {
      rb.Error(kInvalidStreamId);
      return;
    }
    add.kind = seq_given ? StreamAddId::kExplicit : StreamAddId::kPartial;
    if (seq_given && add.id.IsZero()) {
      rb.Error(StreamStatusMessage(StreamStatus::kIdZero));
      return;
    }
  }
  Entry* e;
  StreamObject* s;
  if (!LookupStream(ctx, args[1], rb, false, &e, &s)) return;
  if (s == nullptr) {
    if (a.nomkstream) {
      rb.Null();
      return;
    }
    e = ctx.ks.SetObject(ctx.db, args[1], ValueType::kStream, std::make_unique<StreamObject>(),
                         Entry::kNoExpire);
    s = static_cast<StreamObject*>(e->Object());
  }
  size_t before = s->Bytes();
  StreamId added;
  StreamStatus st = s->Add(add, args.subspan(a.id_pos + 1), ctx.now_ms, &added);
  if (st != StreamStatus::kOk) {
    ctx.ks.Recharge(e, before);
    rb.Error(StreamStatusMessage(st));
    return;
  }
  ReplyStreamId(rb, added);
  NotifyKeyspaceEvent(kNotifyStream, "xadd", args[1], ctx.db);
  if (a.trim.strategy != StreamTrimSpec::kNone && s->Trim(a.trim) > 0)
    NotifyKeyspaceEvent(kNotifyStream, "xtrim", args[1], ctx.db);
  ctx.ks.Recharge(e, before);
  ctx.worker.SignalKeyReady(ctx.db, args[1]);
}

void CmdXLen(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  Entry* e;
  StreamObject* s;
  if (!LookupStream(ctx, args[1], rb, true, &e, &s)) return;
  rb.Integer(s == nullptr ? 0 : static_cast<int64_t>(s->Length()));
}

bool ParseBound(std::string_view text, bool is_end, ReplyBuilder& rb, StreamId* id) {
  switch (ParseStreamBound(text, is_end, id)) {
    case StreamBoundStatus::kOk:
      return true;
    case StreamBoundStatus::kInvalidId:
      rb.Error(kInvalidStreamId);
      return false;
    case StreamBoundStatus::kInvalidStart:
      rb.Error("ERR invalid start ID for the interval");
      return false;
    case StreamBoundStatus::kInvalidEnd:
      rb.Error("ERR invalid end ID for the interval");
      return false;
  }
  return false;
}

void RangeGeneric(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb, bool rev) {
  StreamId start, end;
  if (!ParseBound(args[rev ? 3 : 2], false, rb, &start) ||
      !ParseBound(args[rev ? 2 : 3], true, rb, &end)) {
    return;
  }
  int64_t count = -1;
  for (size_t i = 4; i < args.size(); i++) {
    if (EqualsIgnoreCase(args[i], "count") && i + 1 < args.size()) {
      if (!ParseInt64(args[++i], &count)) {
        rb.Error(errors::kNotInteger);
        return;
      }
      if (count < 0) count = 0;
    } else {
      rb.Error(errors::kSyntax);
      return;
    }
  }
  Entry* e;
  StreamObject* s;
  if (!LookupStream(ctx, args[1], rb, true, &e, &s)) return;
  if (count == 0) {
    rb.NullArray();
    return;
  }
  if (s == nullptr || end < start) {
    rb.Array(0);
    return;
  }
  // The count is known only after the walk: gather into a buffer, then the header.
  std::string body;
  ReplyBuilder b(&body, rb.resp());
  size_t n = 0;
  for (StreamIterator it = s->Range(start, end, rev); it.Valid(); it.Next()) {
    if (count > 0 && n == static_cast<size_t>(count)) break;
    ReplyStreamEntry(b, it.entry());
    n++;
  }
  rb.Array(n);
  rb.buffer()->append(body);
}

void CmdXRange(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  RangeGeneric(args, ctx, rb, false);
}
void CmdXRevRange(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  RangeGeneric(args, ctx, rb, true);
}

void CmdXDel(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  std::vector<StreamId> ids(args.size() - 2);
  for (size_t i = 2; i < args.size(); i++) {
    if (!ParseStrictStreamId(args[i], rb, &ids[i - 2])) return;
  }
  Entry* e;
  StreamObject* s;
  if (!LookupStream(ctx, args[1], rb, false, &e, &s)) return;
  if (s == nullptr) {
    rb.Integer(0);
    return;
  }
  size_t before = s->Bytes();
  int64_t deleted = 0;
  for (StreamId id : ids) deleted += s->Delete(id) ? 1 : 0;
  ctx.ks.Recharge(e, before);
  if (deleted > 0) {
    NotifyKeyspaceEvent(kNotifyStream, "xdel", args[1], ctx.db);
  } else {
    ctx.ks.NoChange(ctx.db, args[1]);
  }
  rb.Integer(deleted);
}

void CmdXTrim(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  AddTrimArgs a;
  if (!ParseAddTrim(args, false, rb, &a)) return;
  Entry* e;
  StreamObject* s;
  if (!LookupStream(ctx, args[1], rb, false, &e, &s)) return;
  if (s == nullptr) {
    rb.Integer(0);
    return;
  }
  size_t before = s->Bytes();
  uint64_t removed = s->Trim(a.trim);
  ctx.ks.Recharge(e, before);
  if (removed > 0) {
    NotifyKeyspaceEvent(kNotifyStream, "xtrim", args[1], ctx.db);
  } else {
    ctx.ks.NoChange(ctx.db, args[1]);
  }
  rb.Integer(static_cast<int64_t>(removed));
}

void CmdXSetId(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  StreamId id, max_deleted;
  if (!ParseStrictStreamId(args[2], rb, &id)) return;
  int64_t entries_added = -1;
  for (size_t i = 3; i < args.size(); i++) {
    if (EqualsIgnoreCase(args[i], "entriesadded") && i + 1 < args.size()) {
      if (!ParseInt64(args[++i], &entries_added)) {
        rb.Error(errors::kNotInteger);
        return;
      }
      if (entries_added < 0) {
        rb.Error("ERR entries_added must be positive");
        return;
      }
    } else if (EqualsIgnoreCase(args[i], "maxdeletedid") && i + 1 < args.size()) {
      if (!ParseStrictStreamId(args[++i], rb, &max_deleted)) return;
      if (id < max_deleted) {
        rb.Error(StreamStatusMessage(StreamStatus::kSetIdBelowGivenMaxDeleted));
        return;
      }
    } else {
      rb.Error(errors::kSyntax);
      return;
    }
  }
  Entry* e;
  StreamObject* s;
  if (!LookupStream(ctx, args[1], rb, false, &e, &s)) return;
  if (s == nullptr) {
    rb.Error("ERR no such key");
    return;
  }
  size_t before = s->Bytes();
  StreamStatus st = s->SetId(id, entries_added, max_deleted);
  if (st != StreamStatus::kOk) {
    ctx.ks.NoChange(ctx.db, args[1]);
    rb.Error(StreamStatusMessage(st));
    return;
  }
  // A change, though no byte count moves: counted, so that it reaches replicas (and
  // the save rules) like any other write.
  ctx.ks.Recharge(e, before);
  NotifyKeyspaceEvent(kNotifyStream, "xsetid", args[1], ctx.db);
  rb.Ok();
}

// ---- XGROUP

void XGroupHelp(ReplyBuilder& rb) {
  static const char* const kLines[] = {
      "XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "CREATE <key> <groupname> <id|$> [option]",
      "    Create a new consumer group. Options are:",
      "    * MKSTREAM",
      "      Create the empty stream if it does not exist.",
      "    * ENTRIESREAD entries_read",
      "      Set the group's entries_read counter (internal use).",
      "CREATECONSUMER <key> <groupname> <consumer>",
      "    Create a new consumer in the specified group.",
      "DELCONSUMER <key> <groupname> <consumer>",
      "    Remove the specified consumer.",
      "DESTROY <key> <groupname>",
      "    Remove the specified group.",
      "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
      "    Set the current group ID and entries_read counter.",
      "HELP",
      "    Prints this help."};
  rb.Array(sizeof(kLines) / sizeof(kLines[0]));
  for (const char* l : kLines) rb.Simple(l);
}

// A group's position argument: an ID, or "$" for the stream's last ID.
bool ParseGroupPosition(std::string_view text, const StreamObject* s, ReplyBuilder& rb,
                        StreamId* id) {
  if (text == "$") {
    *id = s != nullptr ? s->last_id() : StreamId{};
    return true;
  }
  return ParseStrictStreamId(text, rb, id);
}

bool ParseEntriesRead(CmdArgs args, size_t from, ReplyBuilder& rb, bool allow_mkstream,
                      bool* mkstream, int64_t* entries_read) {
  for (size_t i = from; i < args.size(); i++) {
    if (allow_mkstream && EqualsIgnoreCase(args[i], "mkstream")) {
      *mkstream = true;
    } else if (EqualsIgnoreCase(args[i], "entriesread") && i + 1 < args.size()) {
      if (!ParseInt64(args[++i], entries_read)) {
        rb.Error(errors::kNotInteger);
        return false;
      }
      if (*entries_read < 0 && *entries_read != -1) {
        rb.Error("ERR value for ENTRIESREAD must be positive or -1");
        return false;
      }
    } else {
      rb.Error("ERR unknown subcommand or wrong number of arguments for '" + std::string(args[1]) +
               "'. Try XGROUP HELP.");
      return false;
    }
  }
  return true;
}

void CmdXGroup(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  std::string sub = Lowercase(args[1]);
  auto arity = [&](size_t min, size_t max) {
    if (args.size() < min || args.size() > max) {
      rb.Error(WrongArityError("xgroup|" + sub));
      return false;
    }
    return true;
  };
  if (sub == "help") {
    if (arity(2, 2)) XGroupHelp(rb);
    return;
  }
  bool known = sub == "create" || sub == "setid" || sub == "destroy" || sub == "createconsumer" ||
               sub == "delconsumer";
  if (!known) {
    rb.Error("ERR unknown subcommand '" + std::string(args[1]) + "'. Try XGROUP HELP.");
    return;
  }
  if ((sub == "create" && !arity(5, 8)) || (sub == "setid" && !arity(5, 7)) ||
      (sub == "destroy" && !arity(4, 4)) || (sub == "createconsumer" && !arity(5, 5)) ||
      (sub == "delconsumer" && !arity(5, 5))) {
    return;
  }
  std::string_view key = args[2], group = args[3];
  bool mkstream = false;
  int64_t entries_read = -1;
  if ((sub == "create" || sub == "setid") &&
      !ParseEntriesRead(args, 5, rb, sub == "create", &mkstream, &entries_read)) {
    return;
  }
  Entry* e;
  StreamObject* s;
  if (!LookupStream(ctx, key, rb, false, &e, &s)) return;
  // XGROUP does not touch a WATCH on the key (Redis signals no modification for it),
  // unless CREATE ... MKSTREAM creates the key.
  if (s != nullptr) ctx.ks.NoChange(ctx.db, key);
  if (s == nullptr && !(sub == "create" && mkstream)) {
    rb.Error(kKeyMustExist);
    return;
  }
  if (sub == "create") {
    StreamId id;
    if (!ParseGroupPosition(args[4], s, rb, &id)) return;
    if (s == nullptr) {
      e = ctx.ks.SetObject(ctx.db, key, ValueType::kStream, std::make_unique<StreamObject>(),
                           Entry::kNoExpire);
      s = static_cast<StreamObject*>(e->Object());
    }
    size_t before = s->Bytes();
    if (s->CreateGroup(group, id, entries_read) == nullptr) {
      rb.Error("BUSYGROUP Consumer Group name already exists");
      return;
    }
    ctx.ks.Recharge(e, before);
    NotifyKeyspaceEvent(kNotifyStream, "xgroup-create", key, ctx.db);
    rb.Ok();
    return;
  }
  StreamGroup* g = s->FindGroup(group);
  if (sub == "destroy") {
    size_t before = s->Bytes();
    bool done = s->DestroyGroup(group);
    // No group, no change: nothing to propagate (as Redis's dirty counter).
    if (done) {
      ctx.ks.Recharge(e, before);
      NotifyKeyspaceEvent(kNotifyStream, "xgroup-destroy", key, ctx.db);
    }
    rb.Integer(done ? 1 : 0);
    return;
  }
  if (g == nullptr) {
    rb.Error(NoSuchGroupForKey(key, group));
    return;
  }
  size_t before = s->Bytes();
  // A consumer created or deleted is a change; one already there (or missing) is not,
  // and is not propagated (as Redis's dirty counter). SETID always is.
  bool changed = true;
  if (sub == "setid") {
    StreamId id;
    if (!ParseGroupPosition(args[4], s, rb, &id)) return;
    s->SetGroupId(g, id, entries_read);
    NotifyKeyspaceEvent(kNotifyStream, "xgroup-setid", key, ctx.db);
    rb.Ok();
  } else if (sub == "createconsumer") {
    changed = s->CreateConsumer(g, args[4], ctx.now_ms) != nullptr;
    if (changed) NotifyKeyspaceEvent(kNotifyStream, "xgroup-createconsumer", key, ctx.db);
    rb.Integer(changed ? 1 : 0);
  } else {  // delconsumer
    changed = s->FindConsumer(g, args[4]) != nullptr;
    size_t pending = s->DeleteConsumer(g, args[4]);
    if (changed) NotifyKeyspaceEvent(kNotifyStream, "xgroup-delconsumer", key, ctx.db);
    rb.Integer(static_cast<int64_t>(pending));
  }
  if (changed) ctx.ks.Recharge(e, before);
}

// ---- XACK XPENDING

void CmdXAck(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  std::vector<StreamId> ids(args.size() - 3);
  for (size_t i = 3; i < args.size(); i++) {
    if (!ParseStrictStreamId(args[i], rb, &ids[i - 3])) return;
  }
  Entry* e;
  StreamObject* s;
  if (!LookupStream(ctx, args[1], rb, false, &e, &s)) return;
  StreamGroup* g = s != nullptr ? s->FindGroup(args[2]) : nullptr;
  if (g == nullptr) {
    rb.Integer(0);
    return;
  }
  size_t before = s->Bytes();
  int64_t acked = 0;
  for (StreamId id : ids) acked += s->Ack(g, id) ? 1 : 0;
  ctx.ks.Recharge(e, before);
  rb.Integer(acked);
}

void CmdXPending(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  bool extended = args.size() > 3;
  int64_t min_idle = 0, count = 0;
  StreamId start, end;
  std::string_view consumer;
  if (extended) {
    size_t i = 3;
    if (EqualsIgnoreCase(args[i], "idle")) {
      if (args.size() < 8) {
        rb.Error(errors::kSyntax);
        return;
      }
      if (!ParseInt64(args[i + 1], &min_idle)) {
        rb.Error(errors::kNotInteger);
        return;
      }
      i += 2;
    }
    if (args.size() - i < 3 || args.size() - i > 4) {
      rb.Error(errors::kSyntax);
      return;
    }
    if (!ParseBound(args[i], false, rb, &start) || !ParseBound(args[i + 1], true, rb, &end)) return;
    if (!ParseInt64(args[i + 2], &count)) {
      rb.Error(errors::kNotInteger);
      return;
    }
    if (count < 0) count = 0;
    if (args.size() - i == 4) consumer = args[i + 3];
  }
  Entry* e;
  StreamObject* s;
  if (!LookupStream(ctx, args[1], rb, true, &e, &s)) return;
  StreamGroup* g = s != nullptr ? s->FindGroup(args[2]) : nullptr;
  if (g == nullptr) {
    rb.Error(NoGroupError(args[1], args[2]));
    return;
  }
  if (!extended) {
    StreamPendingSummary sum = s->PendingSummary(*g);
    rb.Array(4);
    rb.Integer(static_cast<int64_t>(sum.count));
    if (sum.count == 0) {
      rb.Null();
      rb.Null();
      rb.NullArray();
      return;
    }
    ReplyStreamId(rb, sum.min);
    ReplyStreamId(rb, sum.max);
    rb.Array(sum.consumers.size());
    for (const auto& [name, n] : sum.consumers) {
      rb.Array(2);
      rb.Bulk(name);
      rb.Bulk(std::to_string(n));
    }
    return;
  }
  const StreamConsumer* c = nullptr;
  if (!consumer.empty()) {
    c = s->FindConsumer(g, consumer);
    if (c == nullptr) {
      rb.Array(0);
      return;
    }
  }
  std::vector<StreamPendingLine> lines;
  if (count > 0 && !(end < start)) {
    s->PendingRange(*g, c, start, end, static_cast<size_t>(count), min_idle, ctx.now_ms, &lines);
  }
  rb.Array(lines.size());
  for (const StreamPendingLine& l : lines) {
    rb.Array(4);
    ReplyStreamId(rb, l.id);
    rb.Bulk(l.consumer);
    rb.Integer(l.idle_ms);
    rb.Integer(static_cast<int64_t>(l.delivery_count));
  }
}

// ---- XCLAIM XAUTOCLAIM

// Entries for claimed IDs (those still in the stream), or the IDs alone with JUSTID.
void ReplyClaimed(ReplyBuilder& rb, const StreamObject& s, const std::vector<StreamId>& ids,
                  bool justid) {
  if (justid) {
    rb.Array(ids.size());
    for (StreamId id : ids) ReplyStreamId(rb, id);
    return;
  }
  std::string body;
  ReplyBuilder b(&body, rb.resp());
  size_t n = 0;
  for (StreamId id : ids) {
    StreamIterator it = s.Range(id, id);
    if (!it.Valid()) continue;
    ReplyStreamEntry(b, it.entry());
    n++;
  }
  rb.Array(n);
  rb.buffer()->append(body);
}

void CmdXClaim(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  int64_t min_idle = 0;
  if (!ParseInt64(args[4], &min_idle)) {
    rb.Error("ERR Invalid min-idle-time argument for XCLAIM");
    return;
  }
  if (min_idle < 0) min_idle = 0;
  std::vector<StreamId> ids;
  size_t i = 5;
  for (; i < args.size(); i++) {
    StreamId id;
    if (!ParseStreamId(args[i], 0, true, &id, nullptr)) break;
    ids.push_back(id);
  }
  StreamClaimOptions o;
  o.min_idle_ms = min_idle;
  for (; i < args.size(); i++) {
    std::string_view a = args[i];
    bool more = i + 1 < args.size();
    if (EqualsIgnoreCase(a, "force")) {
      o.force = true;
    } else if (EqualsIgnoreCase(a, "justid")) {
      o.justid = true;
    } else if (EqualsIgnoreCase(a, "idle") && more) {
      int64_t v = 0;
      if (!ParseInt64(args[++i], &v)) {
        rb.Error("ERR Invalid IDLE option argument for XCLAIM");
        return;
      }
      o.delivery_ms = ctx.now_ms - (v < 0 ? 0 : v);
    } else if (EqualsIgnoreCase(a, "time") && more) {
      int64_t v = 0;
      if (!ParseInt64(args[++i], &v)) {
        rb.Error("ERR Invalid TIME option argument for XCLAIM");
        return;
      }
      o.delivery_ms = v;
    } else if (EqualsIgnoreCase(a, "retrycount") && more) {
      int64_t v = 0;
      if (!ParseInt64(args[++i], &v)) {
        rb.Error("ERR Invalid RETRYCOUNT option argument for XCLAIM");
        return;
      }
      o.retry_count = v;
    } else if (EqualsIgnoreCase(a, "lastid") && more) {
      if (!ParseStrictStreamId(args[++i], rb, &o.last_id)) return;
    } else {
      rb.Error("ERR Unrecognized XCLAIM option '" + std::string(a) + "'");
      return;
    }
  }
  Entry* e;
  StreamObject* s;
  if (!LookupStream(ctx, args[1], rb, false, &e, &s)) return;
  StreamGroup* g = s != nullptr ? s->FindGroup(args[2]) : nullptr;
  if (g == nullptr) {
    rb.Error(NoGroupError(args[1], args[2]));
    return;
  }
  size_t before = s->Bytes();
  std::vector<StreamId> claimed, dropped;
  // The consumer is created only when something is claimed (as Redis 7.0).
  StreamConsumer* c = s->FindConsumer(g, args[3]);
  bool created = false;
  if (c == nullptr) c = s->TouchConsumer(g, args[3], ctx.now_ms, &created);
  s->Claim(g, c, ids, o, ctx.now_ms, &claimed, &dropped);
  if (created && claimed.empty()) s->DeleteConsumer(g, args[3]);
  ctx.ks.Recharge(e, before);
  StreamEffects fx(ctx.worker, ctx.db, args[1], *g, EffectPlace::kNow);
  fx.Claimed(claimed);
  fx.Acked(dropped);
  if (!o.last_id.IsZero()) fx.GroupPosition();
  ReplyClaimed(rb, *s, claimed, o.justid);
}

void CmdXAutoClaim(CmdArgs args, ShardCtx& ctx, ReplyBuilder& rb) {
  int64_t min_idle = 0;
  if (!ParseInt64(args[4], &min_idle)) {
    rb.Error("ERR Invalid min-idle-time argument for XAUTOCLAIM");
    return;
  }
  if (min_idle < 0) min_idle = 0;
  StreamId start;
  if (!ParseBound(args[5], false, rb, &start)) return;
  int64_t count = 100;
  bool justid = false;
  for (size_t i = 6; i < args.size(); i++) {
    if (EqualsIgnoreCase(args[i], "justid")) {
      justid = true;
    } else if (EqualsIgnoreCase(args[i], "count") && i + 1 < args.size()) {
      if (!ParseInt64(args[++i], &count) || count <= 0 || count > (INT64_MAX / 10)) {
        rb.Error("ERR COUNT must be > 0");
        return;
      }
    } else {
      rb.Error(errors::kSyntax);
      return;
    }
  }
  Entry* e;
  StreamObject* s;
  if (!LookupStream(ctx, args[1], rb, false, &e, &s)) return;
  StreamGroup* g = s != nullptr ? s->FindGroup(args[2]) : nullptr;
  if (g == nullptr) {
    rb.Error(NoGroupError(args[1], args[2]));
    return;
  }
  size_t before = s->Bytes();
  StreamConsumer* c = s->FindConsumer(g, args[3]);
  bool created = false;
  if (c == nullptr) c = s->TouchConsumer(g, args[3], ctx.now_ms, &created);
  StreamAutoClaimResult r;
  s->AutoClaim(g, c, start, static_cast<size_t>(count), min_idle, justid, ctx.now_ms, &r);
  if (created && r.claimed.empty()) s->DeleteConsumer(g, args[3]);
  ctx.ks.Recharge(e, before);
  StreamEffects fx(ctx.worker, ctx.db, args[1], *g, EffectPlace::kNow);
  fx.Claimed(r.claimed);
  fx.Acked(r.deleted);
  rb.Array(3);
  ReplyStreamId(rb, r.next);
  ReplyClaimed(rb, *s, r.claimed, justid);
  rb.Array(r.deleted.size());
  for (StreamId id : r.deleted) ReplyStreamId(rb, id);
}

}  // namespace

void RegisterStreamFamily(CommandRegistry& r) {
  auto add = [&](const char* name, int arity, uint32_t flags, int first, int last, ShardFn fn,
                 const char* since, const char* summary) {
    CommandSpec s{name, arity, flags | kCmdStream, first, last, first > 0 ? 1 : 0};
    s.shard_fn = fn;
    s.group = "stream";
    s.since = since;
    s.summary = summary;
    r.Add(std::move(s));
  };
  const uint32_t kW = kCmdWrite | kCmdDenyOom;
  add("xadd", -5, kW | kCmdFast, 1, 1, CmdXAdd, "5.0.0",
      "Appends a new message to a stream. Creates the key if it doesn't exist.");
  add("xlen", 2, kCmdReadOnly | kCmdFast, 1, 1, CmdXLen, "5.0.0",
      "Return the number of messages in a stream.");
  add("xrange", -4, kCmdReadOnly, 1, 1, CmdXRange, "5.0.0",
      "Returns the messages from a stream within a range of IDs.");
  add("xrevrange", -4, kCmdReadOnly, 1, 1, CmdXRevRange, "5.0.0",
      "Returns the messages from a stream within a range of IDs in reverse order.");
  add("xdel", -3, kCmdWrite | kCmdFast, 1, 1, CmdXDel, "5.0.0",
      "Returns the number of messages after removing them from a stream.");
  add("xtrim", -4, kCmdWrite, 1, 1, CmdXTrim, "5.0.0",
      "Deletes messages from the beginning of a stream.");
  add("xsetid", -3, kW | kCmdFast, 1, 1, CmdXSetId, "5.0.0",
      "An internal command for replicating stream values.");
  add("xgroup", -2, kW, 2, 2, CmdXGroup, "5.0.0", "A container for consumer groups commands.");
  static const std::vector<std::string> kXGroupSubcommands = {
      "create", "setid", "destroy", "createconsumer", "delconsumer", "help"};
  r.FindMutable("xgroup")->subcommands = &kXGroupSubcommands;
  add("xack", -4, kCmdWrite | kCmdFast, 1, 1, CmdXAck, "5.0.0",
      "Returns the number of messages that were successfully acknowledged by the consumer group "
      "member of a stream.");
  add("xpending", -3, kCmdReadOnly, 1, 1, CmdXPending, "5.0.0",
      "Returns the information and entries from a stream consumer group's pending entries list.");
  add("xclaim", -6, kCmdWrite | kCmdFast, 1, 1, CmdXClaim, "5.0.0",
      "Changes, or acquires, ownership of a message in a consumer group, as if the message was "
      "delivered a consumer group member.");
  add("xautoclaim", -6, kCmdWrite | kCmdFast, 1, 1, CmdXAutoClaim, "6.2.0",
      "Changes, or acquires, ownership of messages in a consumer group, as if the messages were "
      "delivered to as consumer group member.");
}

}  // namespace strata
