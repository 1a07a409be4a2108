#include "server/engine/acl.h"

#include <time.h>

#include <algorithm>
#include <atomic>

#include "core/glob.h"
#include "core/sha256.h"
#include "core/string_util.h"
#include "server/engine/command.h"

namespace strata {
namespace {

std::atomic<AclTargetsFn> g_targets{nullptr};
std::atomic<bool> g_new_users_all_channels{false};

const std::vector<std::unique_ptr<CommandSpec>>& Specs() { return CommandRegistry::Get().all(); }

int SubIndex(const CommandSpec& spec, std::string_view sub) {
  if (spec.subcommands == nullptr) return -1;
  for (size_t i = 0; i < spec.subcommands->size(); i++) {
    if (EqualsIgnoreCase((*spec.subcommands)[i], sub)) return static_cast<int>(i);
  }
  return -1;
}

constexpr const char* kNoSuchPassword =
    "The password you are trying to remove from the user does not exist";

int64_t NowMs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

bool IsHexDigest(std::string_view s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

uint32_t SubCategories(const CommandSpec& spec, size_t i) {
  return i < spec.sub_acl_categories.size() ? spec.sub_acl_categories[i] : 0;
}

}  // namespace

uint32_t AclCategoryBit(std::string_view name) {
  for (int i = 0; i < kAclCategoryCount; i++) {
    if (EqualsIgnoreCase(name, kAclCategories[i])) return 1u << i;
  }
  return 0;
}

void SetAclTargets(AclTargetsFn fn) { g_targets.store(fn, std::memory_order_release); }

void SetAclPubsubDefault(bool all_channels) {
  g_new_users_all_channels.store(all_channels, std::memory_order_relaxed);
}

// ---------------------------------------------------------------- AclUser

AclUser::AclUser(std::string name) : name_(std::move(name)) {
  size_t n = Specs().size();
  commands_.assign(n, 0);
  subs_.resize(n);
  for (const auto& spec : Specs()) {
    if (spec->subcommands != nullptr) subs_[spec->id].assign(spec->subcommands->size(), 0);
  }
  if (g_new_users_all_channels.load(std::memory_order_relaxed)) {
    all_channels_ = true;
    channels_.assign(1, "*");
  }
  Finish();
}

void AclUser::SetCommand(uint32_t id, int sub, bool allow) {
  if (id >= commands_.size()) return;
  if (sub < 0) {
    commands_[id] = allow;
    for (uint8_t& b : subs_[id]) b = allow;
    // A rule on the whole command replaces the first arguments it allowed, as in Redis.
    if (!first_args_.empty()) [[unlikely]]
      first_args_.erase(id);
  } else if (static_cast<size_t>(sub) < subs_[id].size()) {
    subs_[id][sub] = allow;
  }
}

void AclUser::SetCategory(uint32_t bit, bool allow) {
  for (const auto& spec : Specs()) {
    if (spec->acl_categories & bit) {
      SetCommand(spec->id, -1, allow);
      continue;
    }
    for (size_t i = 0; i < subs_[spec->id].size(); i++) {
      if (SubCategories(*spec, i) & bit) SetCommand(spec->id, static_cast<int>(i), allow);
    }
  }
}

bool AclUser::CommandBit(uint32_t id, int sub) const {
  if (id >= commands_.size()) return all_commands_;
  if (sub < 0) return commands_[id];
  return static_cast<size_t>(sub) < subs_[id].size() && subs_[id][sub];
}

void AclUser::Finish() {
  bool all = all_commands_;
  for (size_t id = 0; all && id < commands_.size(); id++) {
    if (!commands_[id]) all = false;
    for (uint8_t b : subs_[id]) {
      if (!b) all = false;
    }
  }
  unrestricted_ = all && all_keys_ && all_channels_;
}

bool AclUser::Apply(std::string_view rule, std::string* error) {
  auto fail = [&](std::string why) {
    *error = std::move(why);
    return false;
  };
  std::string lower = Lowercase(rule);
  if (lower == "on") {
    enabled_ = true;
  } else if (lower == "off") {
    enabled_ = false;
  } else if (lower == "nopass") {
    nopass_ = true;
    passwords_.clear();
  } else if (lower == "resetpass") {
    nopass_ = false;
    passwords_.clear();
  } else if (lower == "sanitize-payload") {
    sanitize_payload_ = true;
    skip_sanitize_payload_ = false;
  } else if (lower == "skip-sanitize-payload") {
    skip_sanitize_payload_ = true;
    sanitize_payload_ = false;
  } else if (lower == "allkeys") {
    all_keys_ = true;
    keys_.assign(1, KeyPattern{"*", true, true});
  } else if (lower == "resetkeys") {
    all_keys_ = false;
    keys_.clear();
  } else if (lower == "allchannels") {
    all_channels_ = true;
    channels_.assign(1, "*");
  } else if (lower == "resetchannels") {
    all_channels_ = false;
    channels_.clear();
  } else if (lower == "allcommands") {
    return Apply("+@all", error);
  } else if (lower == "nocommands") {
    return Apply("-@all", error);
  } else if (lower == "reset") {
    AclUser fresh(name_);
    *this = std::move(fresh);
    sanitize_payload_ = true;
  } else if (!rule.empty() &&
             (rule[0] == '>' || rule[0] == '<' || rule[0] == '#' || rule[0] == '!')) {
    // A password (> add, < remove) or its digest (# add, ! remove).
    bool hashed = rule[0] == '#' || rule[0] == '!';
    std::string digest = hashed ? std::string(rule.substr(1)) : Sha256Hex(rule.substr(1));
    if (hashed && !IsHexDigest(digest)) {
      return fail(
          "The password hash must be exactly 64 characters and contain only lowercase "
          "hexadecimal characters");
    }
    auto it = std::find(passwords_.begin(), passwords_.end(), digest);
    if (rule[0] == '>' || rule[0] == '#') {
      if (it == passwords_.end()) passwords_.push_back(digest);
      nopass_ = false;
    } else {
      if (it == passwords_.end()) return fail(kNoSuchPassword);
      passwords_.erase(it);
    }
  } else if (!rule.empty() && (rule[0] == '~' || rule[0] == '%')) {
    KeyPattern p;
    std::string_view pattern;
    if (rule[0] == '~') {
      pattern = rule.substr(1);
    } else {
      size_t tilde = rule.find('~');
      if (tilde == std::string_view::npos || tilde == 1) return fail("Syntax error");
      p.read = p.write = false;
      for (char c : rule.substr(1, tilde - 1)) {
        if (c == 'R' || c == 'r') {
          p.read = true;
        } else if (c == 'W' || c == 'w') {
          p.write = true;
        } else {
          return fail("Syntax error");
        }
      }
      pattern = rule.substr(tilde + 1);
    }
    if (rule == "~*") {
      all_keys_ = true;
      keys_.assign(1, KeyPattern{"*", true, true});
    } else if (all_keys_) {
      // Redis: a pattern after allkeys is an error (it can add nothing).
      return fail(
          "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid "
          "and does not have any effect. Try 'resetkeys' to start with an empty list "
          "of patterns");
    } else {
      p.pattern = std::string(pattern);
      bool merged = false;
      for (KeyPattern& k : keys_) {
        if (k.pattern == p.pattern) {  // the same pattern again widens it
          k.read |= p.read;
          k.write |= p.write;
          merged = true;
        }
      }
      if (!merged) keys_.push_back(std::move(p));
    }
  } else if (rule == "&*") {
    all_channels_ = true;
    channels_.assign(1, "*");
  } else if (!rule.empty() && rule[0] == '&') {
    if (all_channels_) {
      return fail(
          "Adding a pattern after the * pattern (or the 'allchannels' flag) is not "
          "valid and does not have any effect. Try 'resetchannels' to start with an "
          "empty list of channels");
    }
    std::string pattern(rule.substr(1));
    if (std::find(channels_.begin(), channels_.end(), pattern) == channels_.end())
      channels_.push_back(std::move(pattern));
  } else if (!rule.empty() && (rule[0] == '+' || rule[0] == '-')) {
    bool allow = rule[0] == '+';
    std::string_view what = rule.substr(1);
    if (!what.empty() && what[0] == '@') {
      std::string_view cat = what.substr(1);
      if (EqualsIgnoreCase(cat, "all")) {
        // The base the other rules apply to: +@all lets future commands in too.
        all_commands_ = allow;
        command_rules_.clear();
        for (size_t id = 0; id < commands_.size(); id++)
          SetCommand(static_cast<uint32_t>(id), -1, allow);
      } else {
        uint32_t bit = AclCategoryBit(cat);
        if (bit == 0) return fail("Unknown command or category name in ACL");
        SetCategory(bit, allow);
        AddCommandRule("@" + Lowercase(cat), allow);
      }
    } else {
      size_t bar = what.find('|');
      std::string_view cmd = what.substr(0, bar);
      const CommandSpec* spec = CommandRegistry::Get().Find(cmd);
      if (spec == nullptr) return fail("Unknown command or category name in ACL");
      if (bar == std::string_view::npos) {
        SetCommand(spec->id, -1, allow);
        AddCommandRule(spec->name, allow);
      } else {
        std::string_view sub = what.substr(bar + 1);
        if (spec->subcommands == nullptr) {
          // "cmd|arg" of a command without subcommands: calls whose first argument is
          // arg (in any case) are allowed, as Redis 7 still reads it (deprecated there).
          // Only allowed, never denied; nothing to add when the whole command is.
          if (!allow || sub.empty()) return fail("Unknown command or category name in ACL");
          if (!commands_[spec->id]) {
            std::vector<std::string>& args = first_args_[spec->id];
            bool known = false;
            for (const std::string& a : args) known |= EqualsIgnoreCase(a, sub);
            if (!known) {
              args.emplace_back(sub);
              AddCommandRule(spec->name + "|" + std::string(sub), true);
            }
          }
          Finish();
          return true;
        }
        if (sub.find('|') != std::string_view::npos)
          return fail("Allowing first-arg of a subcommand is not supported");
        int i = SubIndex(*spec, sub);
        if (i < 0) return fail("Unknown command or category name in ACL");
        SetCommand(spec->id, i, allow);
        AddCommandRule(spec->name + "|" + (*spec->subcommands)[i], allow);
      }
    }
  } else if (!rule.empty() && rule[0] == '(') {
    return fail("strata does not support ACL selectors yet");
  } else {
    return fail("Syntax error");
  }
  Finish();
  return true;
}

std::vector<std::string> AclUser::Flags() const {
  std::vector<std::string> f;
  f.push_back(enabled_ ? "on" : "off");
  if (nopass_) f.push_back("nopass");
  if (sanitize_payload_) f.push_back("sanitize-payload");
  if (skip_sanitize_payload_) f.push_back("skip-sanitize-payload");
  return f;
}

std::string AclUser::DescribeKeys() const {
  std::string out;
  for (const KeyPattern& p : keys_) {
    if (!out.empty()) out += ' ';
    if (p.read && p.write) {
      out += "~";
    } else if (p.read) {
      out += "%R~";
    } else {
      out += "%W~";
    }
    out += p.pattern;
  }
  return out;
}

std::string AclUser::DescribeChannels() const {
  std::string out;
  for (const std::string& c : channels_) {
    if (!out.empty()) out += ' ';
    out += "&" + c;
  }
  return out;
}

std::string AclUser::DescribeCommands() const {
  // As Redis 7: the base (+@all or -@all), then the rules given since, in order, each
  // command's or category's last one only.
  std::string out = all_commands_ ? "+@all" : "-@all";
  if (!command_rules_.empty()) out += " " + command_rules_;
  return out;
}

void AclUser::AddCommandRule(const std::string& name, bool allow) {
  // Drops the earlier rules it overrides: the same name, and for a command its
  // subcommands' ("config" overrides "config|get").
  std::string kept;
  size_t pos = 0;
  while (pos < command_rules_.size()) {
    size_t end = command_rules_.find(' ', pos);
    if (end == std::string::npos) end = command_rules_.size();
    std::string_view rule(command_rules_.data() + pos + 1, end - pos - 1);
    bool overridden =
        rule == name || (rule.size() > name.size() && rule.substr(0, name.size()) == name &&
                         rule[name.size()] == '|');
    if (!overridden) {
      if (!kept.empty()) kept += ' ';
      kept.append(command_rules_, pos, end - pos);
    }
    pos = end + 1;
  }
  if (!kept.empty()) kept += ' ';
  kept += (allow ? "+" : "-") + name;
  command_rules_ = std::move(kept);
}

std::string AclUser::Describe() const {
  std::string out = enabled_ ? "on" : "off";
  if (nopass_) out += " nopass";
  if (sanitize_payload_) out += " sanitize-payload";
  if (skip_sanitize_payload_) out += " skip-sanitize-payload";
  for (const std::string& p : passwords_) out += " #" + p;
  std::string keys = DescribeKeys();
  if (!keys.empty()) out += " " + keys;
  if (!all_channels_) out += " resetchannels";
  std::string channels = DescribeChannels();
  if (!channels.empty()) out += " " + channels;
  out += " " + DescribeCommands();
  return out;
}

bool AclUser::CheckPassword(std::string_view password) const {
  if (nopass_) return true;
  std::string digest = Sha256Hex(password);
  bool found = false;
  for (const std::string& p : passwords_) found |= ConstantTimeEquals(digest, p);
  return found;
}

bool AclUser::CommandAllowed(const CommandSpec& spec, CmdArgs args) const {
  if (spec.subcommands != nullptr && args.size() >= 2) {
    int i = SubIndex(spec, args[1]);
    if (i >= 0) return CommandBit(spec.id, i);
  }
  if (CommandBit(spec.id, -1)) return true;
  if (first_args_.empty() || args.size() < 2) return false;
  auto it = first_args_.find(spec.id);
  if (it == first_args_.end()) return false;
  for (const std::string& a : it->second) {
    if (EqualsIgnoreCase(a, args[1])) return true;
  }
  return false;
}

bool AclUser::KeyAllowed(const AclKeyUse& use) const {
  if (all_keys_) return true;
  for (const KeyPattern& p : keys_) {
    if ((use.read && !p.read) || (use.write && !p.write)) continue;
    if (GlobMatch(p.pattern, use.key)) return true;
  }
  return false;
}

bool AclUser::ChannelAllowed(std::string_view channel, bool literal) const {
  if (all_channels_) return true;
  for (const std::string& p : channels_) {
    if (literal ? p == channel : GlobMatch(p, channel)) return true;
  }
  return false;
}

AclUser::Verdict AclUser::Check(const CommandSpec& spec, CmdArgs args) const {
  Verdict v;
  if (unrestricted_) return v;
  if (!CommandAllowed(spec, args)) {
    v.denied = Denied::kCommand;
    v.object = spec.name;
    if (spec.subcommands != nullptr && args.size() >= 2 && SubIndex(spec, args[1]) >= 0)
      v.object += "|" + Lowercase(args[1]);
    return v;
  }
  if (all_keys_ && all_channels_) return v;
  AclTargetsFn fn = g_targets.load(std::memory_order_acquire);
  if (fn == nullptr) return v;
  AclCallTargets t;
  fn(spec, args, &t);
  for (const AclKeyUse& k : t.keys) {
    if (!KeyAllowed(k)) {
      v.denied = Denied::kKey;
      v.object = std::string(k.key);
      return v;
    }
  }
  for (std::string_view c : t.channels) {
    if (!ChannelAllowed(c, false)) {
      v.denied = Denied::kChannel;
      v.object = std::string(c);
      return v;
    }
  }
  for (std::string_view p : t.patterns) {
    if (!ChannelAllowed(p, true)) {
      v.denied = Denied::kChannel;
      v.object = std::string(p);
      return v;
    }
  }
  return v;
}

std::string AclDeniedError(const AclUser::Verdict& v) {
  switch (v.denied) {
    case AclUser::Denied::kCommand:
      return "NOPERM this user has no permissions to run the '" + v.object + "' command";
    case AclUser::Denied::kKey:
      return "NOPERM this user has no permissions to access one of the keys used as arguments";
    case AclUser::Denied::kChannel:
      return "NOPERM this user has no permissions to access one of the channels used as "
             "arguments";
    case AclUser::Denied::kNone:
      break;
  }
  return "";
}

std::string AclScriptDeniedError(const AclUser::Verdict& v) {
  switch (v.denied) {
    case AclUser::Denied::kCommand:
      return "ERR The user executing the script can't run this command or subcommand";
    case AclUser::Denied::kKey:
      return "ERR The user executing the script can't access at least one of the keys "
             "mentioned in the command arguments";
    case AclUser::Denied::kChannel:
      return "ERR The user executing the script can't publish to the channel mentioned in "
             "the command";
    case AclUser::Denied::kNone:
      break;
  }
  return "";
}

std::shared_ptr<AclUser> MakeDefaultUser() {
  auto u = std::make_shared<AclUser>("default");
  std::string error;
  for (const char* r : {"on", "nopass", "~*", "&*", "+@all"}) u->Apply(r, &error);
  return u;
}

// ---------------------------------------------------------------- AclRegistry

AclRegistry& AclRegistry::Get() {
  static AclRegistry* registry = new AclRegistry();  // lives to the process's end
  return *registry;
}

AclRegistry::AclRegistry() {
  users_["default"] = MakeDefaultUser();
  NoteDefault();
}

void AclRegistry::NoteDefault() {
  auto it = users_.find("default");
  bool open = it != users_.end() && it->second->enabled() && it->second->nopass();
  default_open_.store(open, std::memory_order_release);
}

AclUserPtr AclRegistry::Find(std::string_view name) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = users_.find(std::string(name));
  return it == users_.end() ? nullptr : it->second;
}

std::vector<AclUserPtr> AclRegistry::All() const {
  std::vector<AclUserPtr> out;
  {
    std::lock_guard<std::mutex> l(mu_);
    for (const auto& [name, u] : users_) out.push_back(u);
  }
  std::sort(out.begin(), out.end(),
            [](const AclUserPtr& a, const AclUserPtr& b) { return a->name() < b->name(); });
  return out;
}

bool AclRegistry::SetUser(std::string_view name, std::span<const std::string_view> rules,
                          std::string* error) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = users_.find(std::string(name));
  auto u = it == users_.end() ? std::make_shared<AclUser>(std::string(name))
                              : std::make_shared<AclUser>(*it->second);
  for (std::string_view r : rules) {
    std::string why;
    if (!u->Apply(r, &why)) {
      *error = "ERR Error in ACL SETUSER modifier '" + std::string(r) + "': " + why;
      return false;
    }
  }
  users_[std::string(name)] = std::move(u);
  NoteDefault();
  return true;
}

int AclRegistry::DelUsers(std::span<const std::string_view> names, std::string* error) {
  std::lock_guard<std::mutex> l(mu_);
  for (std::string_view n : names) {
    if (n == "default") {
      *error = "ERR The 'default' user cannot be removed";
      return -1;
    }
  }
  int removed = 0;
  for (std::string_view n : names) removed += static_cast<int>(users_.erase(std::string(n)));
  return removed;
}

void AclRegistry::ReplaceAll(std::vector<std::shared_ptr<AclUser>> users) {
  std::unordered_map<std::string, AclUserPtr> next;
  for (auto& u : users) next[u->name()] = std::move(u);
  std::lock_guard<std::mutex> l(mu_);
  // As Redis: a list that does not name the default user keeps the one there was.
  if (next.count("default") == 0) next["default"] = users_["default"];
  users_.swap(next);
  NoteDefault();
}

AclUserPtr AclRegistry::Authenticate(std::string_view name, std::string_view password) const {
  AclUserPtr u = Find(name);
  if (u == nullptr || !u->enabled() || !u->CheckPassword(password)) return nullptr;
  return u;
}

void AclRegistry::SetRequirePass(std::string_view password) {
  std::string error;
  if (password.empty()) {
    std::string_view rules[] = {"nopass"};
    SetUser("default", rules, &error);
  } else {
    std::string add = ">" + std::string(password);
    std::string_view rules[] = {"resetpass", add};
    SetUser("default", rules, &error);
  }
}

bool AclRegistry::DefaultNeedsNoAuth() const {
  return default_open_.load(std::memory_order_acquire);
}

void AclRegistry::Log(LogEntry e, size_t max_len) {
  std::lock_guard<std::mutex> l(log_mu_);
  // As Redis: among the ten newest entries, one of the last minute with the same reason,
  // context, object and user counts this one and becomes the newest.
  for (size_t i = 0; i < log_.size() && i < 10; i++) {
    LogEntry& old = log_[i];
    if (old.reason == e.reason && old.context == e.context && old.object == e.object &&
        old.username == e.username && e.created_ms - old.updated_ms <= 60000) {
      LogEntry moved = std::move(old);
      moved.count++;
      moved.updated_ms = e.created_ms;
      moved.client_info = std::move(e.client_info);
      log_.erase(log_.begin() + static_cast<std::ptrdiff_t>(i));
      log_.push_front(std::move(moved));
      return;
    }
  }
  e.updated_ms = e.created_ms;
  log_.push_front(std::move(e));
  while (log_.size() > max_len) log_.pop_back();
}

void AclRegistry::LogRefusal(const AclUser::Verdict& v, const char* context, std::string username,
                             std::string client_info, size_t max_len) {
  LogEntry e;
  e.reason = v.denied == AclUser::Denied::kCommand ? "command"
             : v.denied == AclUser::Denied::kKey   ? "key"
                                                   : "channel";
  e.context = context;
  e.object = v.object;
  e.username = std::move(username);
  e.client_info = std::move(client_info);
  e.created_ms = NowMs();
  Log(std::move(e), max_len);
}

void AclRegistry::LogAuthFailure(const char* command, std::string username, std::string client_info,
                                 size_t max_len) {
  LogEntry e;
  e.reason = "auth";
  e.context = "toplevel";
  e.object = command;
  e.username = std::move(username);
  e.client_info = std::move(client_info);
  e.created_ms = NowMs();
  Log(std::move(e), max_len);
}

std::vector<AclRegistry::LogEntry> AclRegistry::LogEntries(size_t count) const {
  std::lock_guard<std::mutex> l(log_mu_);
  std::vector<LogEntry> out;
  for (size_t i = 0; i < log_.size() && i < count; i++) out.push_back(log_[i]);
  return out;
}

void AclRegistry::ResetLog() {
  std::lock_guard<std::mutex> l(log_mu_);
  log_.clear();
}

}  // namespace strata
