// COMMAND and its subcommands: INFO, DOCS, COUNT, LIST, GETKEYS, GETKEYSANDFLAGS. They
// run on the client's own thread and read only the constant command table and its
// documentation (command_docs.h).
#include <algorithm>
#include <cstdint>

#include "core/glob.h"
#include "core/string_util.h"
#include "server/commands/command_docs.h"
#include "server/commands/errors.h"
#include "server/commands/families.h"
#include "server/engine/acl.h"
#include "server/engine/client.h"
#include "server/engine/command.h"
#include "server/net/reply_builder.h"

namespace strata {
namespace {

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
  if (s.flags & kCmdNoMulti) out->push_back("no_multi");
  if (s.asking) out->push_back("asking");
}

// One key spec of COMMAND INFO: keys from `index` on, `lastkey` relative to it.
void RangeSpec(const std::vector<std::string_view>& flags, int index, int lastkey, int step,
               ReplyBuilder& rb) {
  rb.Map(3);
  rb.Bulk("flags");
  rb.Set(flags.size());
  for (std::string_view f : flags) rb.Simple(f);
  rb.Bulk("begin_search");
  rb.Map(2);
  rb.Bulk("type");
  rb.Bulk("index");
  rb.Bulk("spec");
  rb.Map(1);
  rb.Bulk("index");
  rb.Integer(index);
  rb.Bulk("find_keys");
  rb.Map(2);
  rb.Bulk("type");
  rb.Bulk("range");
  rb.Bulk("spec");
  rb.Map(3);
  rb.Bulk("lastkey");
  rb.Integer(lastkey);
  rb.Bulk("keystep");
  rb.Integer(step);
  rb.Bulk("limit");
  rb.Integer(0);
}

// COMMAND INFO's key specs, as range specs over first_key..last_key with the documented
// flags. Where the range holds a key per documented spec (SMOVE, BITOP, ZRANGESTORE) each
// spec gets its key and the last the rest; otherwise (keys found by keyword or count)
// one spec covers the range with the first spec's flags.
void KeySpecsInfo(const CommandSpec& s, ReplyBuilder& rb) {
  if (s.first_key <= 0) {
    rb.Array(0);
    return;
  }
  const CommandDoc* doc = FindCommandDoc(s.name);
  std::vector<std::vector<std::string_view>> specs;
  if (doc != nullptr) specs = DocKeySpecs(*doc);
  if (specs.empty()) specs.emplace_back();
  int step = s.key_step > 0 ? s.key_step : 1;
  size_t range_keys =
      s.last_key < 0 ? SIZE_MAX : static_cast<size_t>((s.last_key - s.first_key) / step + 1);
  if (specs.size() > 1 && range_keys < specs.size()) specs.resize(1);
  rb.Array(specs.size());
  for (size_t j = 0; j < specs.size(); j++) {
    int index = s.first_key + static_cast<int>(j) * step;
    bool last = j + 1 == specs.size();
    int lastkey = !last ? 0 : (s.last_key < 0 ? s.last_key : s.last_key - index);
    RangeSpec(specs[j], index, lastkey, last ? s.key_step : 1, rb);
  }
}

// A documented line of COMMAND INFO ("first last step flags... | @categories...").
struct InfoLine {
  int64_t range[3] = {0, 0, 0};
  std::vector<std::string_view> flags;
  std::vector<std::string_view> categories;
};

InfoLine ParseInfo(std::string_view text) {
  InfoLine line;
  std::vector<std::string_view> words = DocWords(text);
  bool in_cats = false;
  for (size_t i = 0; i < words.size(); i++) {
    if (i < 3) {
      (void)ParseInt64(words[i], &line.range[i]);
    } else if (words[i] == "|") {
      in_cats = true;
    } else {
      (in_cats ? line.categories : line.flags).push_back(words[i]);
    }
  }
  return line;
}

// A subcommand's COMMAND INFO entry, from its documentation.
void SubcommandInfo(const std::string& full_name, const CommandDoc& doc, ReplyBuilder& rb) {
  InfoLine line = ParseInfo(doc.info);
  rb.Array(10);
  rb.Bulk(full_name);
  rb.Integer(doc.arity);
  rb.Set(line.flags.size());
  for (std::string_view f : line.flags) rb.Simple(f);
  for (int64_t v : line.range) rb.Integer(v);
  rb.Set(line.categories.size());
  for (std::string_view cat : line.categories) rb.Simple(cat);
  rb.Array(0);  // tips
  std::vector<std::vector<std::string_view>> specs = DocKeySpecs(doc);
  if (line.range[0] > 0 && !specs.empty()) {
    rb.Array(1);
    int lastkey =
        static_cast<int>(line.range[1] < 0 ? line.range[1] : line.range[1] - line.range[0]);
    RangeSpec(specs[0], static_cast<int>(line.range[0]), lastkey, static_cast<int>(line.range[2]),
              rb);
  } else {
    rb.Array(0);
  }
  rb.Array(0);  // subcommands
}

std::vector<std::string> RegisteredCategories(const CommandSpec& s);

void CommandInfo(const CommandSpec& s, ReplyBuilder& rb) {
  rb.Array(10);
  rb.Bulk(s.name);
  rb.Integer(s.arity);
  const CommandDoc* doc = FindCommandDoc(s.name);
  int64_t range[3] = {s.first_key, s.last_key, s.key_step};
  std::vector<std::string_view> flags;
  std::vector<std::string_view> doc_cats;
  bool from_doc = doc != nullptr && doc->info != nullptr;
  if (from_doc) {
    InfoLine line = ParseInfo(doc->info);
    std::copy(std::begin(line.range), std::end(line.range), range);
    flags = std::move(line.flags);
    doc_cats = std::move(line.categories);
  } else {
    std::vector<const char*> names;
    FlagNames(s, &names);
    flags.assign(names.begin(), names.end());
  }
  rb.Set(flags.size());
  for (std::string_view f : flags) rb.Simple(f);
  rb.Integer(range[0]);
  rb.Integer(range[1]);
  rb.Integer(range[2]);
  if (from_doc) {
    rb.Set(doc_cats.size());
    for (std::string_view cat : doc_cats) rb.Simple(cat);
    rb.Array(0);  // tips
    KeySpecsInfo(s, rb);
    std::vector<std::pair<std::string, const CommandDoc*>> subs;
    if (s.subcommands != nullptr) {
      for (const std::string& sub : *s.subcommands) {
        std::string full = s.name + "|" + sub;
        const CommandDoc* d = FindCommandDoc(full);
        if (d != nullptr && d->info != nullptr) subs.emplace_back(full, d);
      }
    }
    rb.Array(subs.size());
    for (auto& [full, d] : subs) SubcommandInfo(full, *d, rb);
    return;
  }
  std::vector<std::string> cats = RegisteredCategories(s);
  rb.Set(cats.size());
  for (auto& cat : cats) rb.Simple(cat);
  rb.Array(0);  // tips
  KeySpecsInfo(s, rb);
  rb.Array(0);  // subcommands
}

// The ACL categories of a command its documentation does not state, from its
// registration's flags ("@keyspace"...).
std::vector<std::string> RegisteredCategories(const CommandSpec& s) {
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
  return cats;
}

// COMMAND GETKEYS: the keys Redis names for a call, each with the index of its key spec
// (a key of a range spec is the i-th of the call's keys: the i-th spec, or the last
// one). Routing (CommandSpec::Keys) may take a superset for commands whose keys follow a
// count (it only picks shards); those are read exactly here, and a shard channel
// (SPUBLISH) is no key.
void GetKeys(const CommandSpec& s, CmdArgs call, size_t spec_count,
             std::vector<std::string_view>* keys, std::vector<size_t>* specs) {
  size_t last_spec = spec_count == 0 ? 0 : spec_count - 1;
  auto numkeys_at = [&](size_t pos, size_t dest) {
    size_t spec = 0;
    if (dest > 0 && dest < call.size()) {
      keys->push_back(call[dest]);
      specs->push_back(0);
      spec = std::min<size_t>(1, last_spec);
    }
    int64_t n = 0;
    if (pos >= call.size() || !ParseInt64(call[pos], &n) || n <= 0) return;
    for (size_t i = pos + 1; i < call.size() && i <= pos + static_cast<size_t>(n); i++) {
      keys->push_back(call[i]);
      specs->push_back(spec);
    }
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
    specs->push_back(0);
    for (size_t i = 2; i + 1 < call.size(); i++) {
      if (EqualsIgnoreCase(call[i], "store")) {
        keys->push_back(call[++i]);
        specs->push_back(last_spec);
      }
    }
  } else if (name == "migrate") {
    if (call.size() > 3 && !call[3].empty()) {
      keys->push_back(call[3]);
      specs->push_back(0);
    }
    for (size_t i = 6; i < call.size(); i++) {
      if (EqualsIgnoreCase(call[i], "keys")) {
        for (size_t k = i + 1; k < call.size(); k++) {
          keys->push_back(call[k]);
          specs->push_back(last_spec);
        }
        break;
      }
    }
  } else if (!(s.flags & kCmdPubSub)) {
    s.Keys(call, keys);
    for (size_t i = specs->size(); i < keys->size(); i++) specs->push_back(std::min(i, last_spec));
  }
}

// The documentation entry of a command or "container|sub", and its registration.
struct DocTarget {
  const CommandSpec* spec = nullptr;  // the command, or the container
  std::string name;                   // as COMMAND DOCS names it
  bool sub = false;
};

bool FindDocTarget(std::string_view arg, DocTarget* t) {
  const CommandRegistry& reg = CommandRegistry::Get();
  size_t bar = arg.find('|');
  if (bar == std::string_view::npos) {
    t->spec = reg.Find(arg);
    if (t->spec == nullptr) return false;
    t->name = t->spec->name;
    return true;
  }
  t->spec = reg.Find(arg.substr(0, bar));
  if (t->spec == nullptr || t->spec->subcommands == nullptr) return false;
  std::string sub = Lowercase(arg.substr(bar + 1));
  for (const std::string& known : *t->spec->subcommands) {
    if (known == sub) {
      t->name = t->spec->name + "|" + sub;
      t->sub = true;
      return true;
    }
  }
  return false;
}

// One command's COMMAND DOCS map: summary, since, group, complexity, deprecation, the
// arguments, and for a container its subcommands' maps.
void DocsReply(const CommandSpec& spec, const std::string& name, bool sub, ReplyBuilder& rb) {
  const CommandDoc* doc = FindCommandDoc(name);
  const char* summary = !sub && spec.summary[0] != '\0' ? spec.summary : "";
  if (summary[0] == '\0' && doc != nullptr && doc->summary != nullptr) summary = doc->summary;
  const char* since = doc != nullptr && doc->since != nullptr ? doc->since : spec.since;
  std::vector<std::string_view> doc_flags;
  if (doc != nullptr && doc->doc_flags != nullptr) doc_flags = DocWords(doc->doc_flags);
  const std::vector<DocArg>* args = doc != nullptr ? &DocArgs(*doc) : nullptr;
  bool has_args = args != nullptr && !args->empty();
  bool has_subs = !sub && spec.subcommands != nullptr;
  bool has_complexity = doc != nullptr && doc->complexity != nullptr;
  bool deprecated = doc != nullptr && doc->deprecated_since != nullptr;
  bool replaced = doc != nullptr && doc->replaced_by != nullptr;
  rb.Map(3 + has_complexity + !doc_flags.empty() + deprecated + replaced + has_args + has_subs);
  rb.Bulk("summary");
  rb.Bulk(summary);
  rb.Bulk("since");
  rb.Bulk(since);
  rb.Bulk("group");
  rb.Bulk(spec.group);
  if (has_complexity) {
    rb.Bulk("complexity");
    rb.Bulk(doc->complexity);
  }
  if (!doc_flags.empty()) {
    rb.Bulk("doc_flags");
    rb.Set(doc_flags.size());
    for (std::string_view f : doc_flags) rb.Simple(f);
  }
  if (deprecated) {
    rb.Bulk("deprecated_since");
    rb.Bulk(doc->deprecated_since);
  }
  if (replaced) {
    rb.Bulk("replaced_by");
    rb.Bulk(doc->replaced_by);
  }
  if (has_args) {
    rb.Bulk("arguments");
    ReplyDocArgs(*args, rb);
  }
  if (has_subs) {
    rb.Bulk("subcommands");
    rb.Map(spec.subcommands->size());
    for (const std::string& s : *spec.subcommands) {
      std::string full = spec.name + "|" + s;
      rb.Bulk(full);
      DocsReply(spec, full, true, rb);
    }
  }
}

// The documented key-spec flags of one key of a call, as GETKEYSANDFLAGS lists them: a
// spec's own flags (incomplete, variable_flags) are left out, and the two commands whose
// flags vary (SET, BITFIELD) are read from the call as Redis does.
std::vector<std::string_view> KeyFlags(const CommandSpec& s, CmdArgs call,
                                       const std::vector<std::vector<std::string_view>>& specs,
                                       size_t spec) {
  if (s.name == "set") {
    for (size_t i = 3; i < call.size(); i++) {
      if (EqualsIgnoreCase(call[i], "get")) return {"RW", "access", "update"};
    }
    return {"OW", "update"};
  }
  if (s.name == "bitfield") {
    for (size_t i = 2; i < call.size(); i++) {
      if (EqualsIgnoreCase(call[i], "set") || EqualsIgnoreCase(call[i], "incrby"))
        return {"RW", "access", "update"};
    }
    return {"RO", "access"};
  }
  std::vector<std::string_view> out;
  if (spec >= specs.size()) return out;
  for (std::string_view f : specs[spec]) {
    if (f != "incomplete" && f != "variable_flags") out.push_back(f);
  }
  return out;
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
    std::vector<DocTarget> list;
    if (args.size() == 2) {
      for (auto& s : reg.all()) list.push_back(DocTarget{s.get(), s->name, false});
    } else {
      for (size_t i = 2; i < args.size(); i++) {
        DocTarget t;
        if (FindDocTarget(args[i], &t)) list.push_back(std::move(t));
      }
    }
    rb.Map(list.size());
    for (const DocTarget& t : list) {
      rb.Bulk(t.name);
      DocsReply(*t.spec, t.name, t.sub, rb);
    }
  } else if (sub == "getkeys" || sub == "getkeysandflags") {
    if (args.size() < 4) {  // Redis 7.0: the command and at least one argument
      rb.Error(WrongArityError("command|" + sub));
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
    std::string doc_name = s->name;
    if (s->subcommands != nullptr) doc_name += "|" + Lowercase(call[1]);
    const CommandDoc* doc = FindCommandDoc(doc_name);
    std::vector<std::vector<std::string_view>> specs;
    if (doc != nullptr) specs = DocKeySpecs(*doc);
    std::vector<std::string_view> keys;
    std::vector<size_t> key_specs;
    GetKeys(*s, call, specs.size(), &keys, &key_specs);
    rb.Array(keys.size());
    for (size_t i = 0; i < keys.size(); i++) {
      if (sub == "getkeys") {
        rb.Bulk(keys[i]);
        continue;
      }
      rb.Array(2);
      rb.Bulk(keys[i]);
      std::vector<std::string_view> flags = KeyFlags(*s, call, specs, key_specs[i]);
      rb.Set(flags.size());
      for (std::string_view f : flags) rb.Simple(f);
    }
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
    const char* lines[] = {
        "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "(no subcommand)",
        "    Return details about all commands.",
        "COUNT",
        "    Return the total number of commands.",
        "LIST [FILTERBY PATTERN <pattern>]",
        "    Return command names.",
        "INFO [<command-name> ...]",
        "    Return details about commands.",
        "    If no command names are given, details of all commands are returned.",
        "DOCS [<command-name> ...]",
        "    Return documentation of commands.",
        "    If no command names are given, documentation of all commands is returned.",
        "GETKEYS <full-command>",
        "    Return the keys from a full Redis command.",
        "GETKEYSANDFLAGS <full-command>",
        "    Return the keys and their access flags from a full Redis command.",
        "HELP",
        "    Prints this help."};
    rb.Array(sizeof(lines) / sizeof(lines[0]));
    for (const char* l : lines) rb.Simple(l);
  } else {
    rb.Error("ERR unknown subcommand '" + std::string(args[1]) + "'. Try COMMAND HELP.");
  }
}

uint32_t CategoryBits(const std::vector<std::string_view>& names) {
  uint32_t bits = 0;
  for (std::string_view n : names) {
    if (!n.empty() && n[0] == '@') bits |= AclCategoryBit(n.substr(1));
  }
  return bits;
}

// What a call touches for the ACL checks (acl.h): its keys as COMMAND GETKEYSANDFLAGS
// names them, each with whether it reads the value (ACCESS) or writes (INSERT, DELETE,
// UPDATE); the channels of PUBLISH, SPUBLISH and the subscribe commands; PSUBSCRIBE's
// patterns.
void AclTargetsOf(const CommandSpec& s, CmdArgs call, AclCallTargets* out) {
  if (s.flags & kCmdPubSub) {
    const std::string& name = s.name;
    if (name == "publish" || name == "spublish") {
      if (call.size() > 1) out->channels.push_back(call[1]);
    } else if (name == "subscribe" || name == "ssubscribe") {
      for (size_t i = 1; i < call.size(); i++) out->channels.push_back(call[i]);
    } else if (name == "psubscribe") {
      for (size_t i = 1; i < call.size(); i++) out->patterns.push_back(call[i]);
    }
    return;
  }
  bool has_keys = s.first_key > 0 || s.keys_fn != nullptr || s.name == "migrate";
  if (!has_keys || !s.CheckArity(call.size())) return;
  std::string doc_name = s.name;
  if (s.subcommands != nullptr && call.size() > 1) doc_name += "|" + Lowercase(call[1]);
  const CommandDoc* doc = FindCommandDoc(doc_name);
  std::vector<std::vector<std::string_view>> specs;
  if (doc != nullptr) specs = DocKeySpecs(*doc);
  std::vector<std::string_view> keys;
  std::vector<size_t> key_specs;
  GetKeys(s, call, specs.size(), &keys, &key_specs);
  for (size_t i = 0; i < keys.size(); i++) {
    AclKeyUse use;
    use.key = keys[i];
    for (std::string_view f : KeyFlags(s, call, specs, key_specs[i])) {
      if (f == "access") use.read = true;
      if (f == "insert" || f == "delete" || f == "update") use.write = true;
    }
    out->keys.push_back(use);
  }
}

}  // namespace

void InstallAclFacts(CommandRegistry& r) {
  for (const auto& spec : r.all()) {
    CommandSpec* s = r.FindMutable(spec->name);
    const CommandDoc* doc = FindCommandDoc(s->name);
    if (doc != nullptr && doc->info != nullptr) {
      s->acl_categories = CategoryBits(ParseInfo(doc->info).categories);
    } else {
      std::vector<std::string> cats = RegisteredCategories(*s);
      s->acl_categories = CategoryBits(std::vector<std::string_view>(cats.begin(), cats.end()));
    }
    s->sub_acl_categories.clear();
    if (s->subcommands == nullptr) continue;
    for (const std::string& sub : *s->subcommands) {
      const CommandDoc* d = FindCommandDoc(s->name + "|" + sub);
      uint32_t bits = s->acl_categories;
      if (d != nullptr && d->info != nullptr) bits = CategoryBits(ParseInfo(d->info).categories);
      s->sub_acl_categories.push_back(bits);
    }
  }
  SetAclTargets(&AclTargetsOf);
}

void RegisterCommandFamily(CommandRegistry& r) {
  CommandSpec s{"command", -1, kCmdLoading | kCmdStale | kCmdConnection, 0, 0, 0};
  s.conn_fn = CmdCommand;
  s.group = "server";
  s.since = "2.8.13";
  s.summary = "Returns detailed information about all commands.";
  r.Add(std::move(s));
  static const std::vector<std::string> kCommandSubcommands = {
      "count", "info", "docs", "list", "getkeys", "getkeysandflags", "help"};
  r.FindMutable("command")->subcommands = &kCommandSubcommands;
}

}  // namespace strata
