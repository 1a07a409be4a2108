// Access control lists, as Redis 6 and 7 have them: users, their passwords, and what each
// may run, read, write and publish to.
//
// A user (AclUser) is a name with its rules - on or off; passwords, kept as the SHA-256
// of each (`>pw` adds one, `#<hex>` adds a digest, `<pw`/`!<hex>` remove, `nopass`
// takes any password); the commands it may run (a bit per command and, for a container
// such as CONFIG, per subcommand; set by `+cmd`, `-cmd`, `+cmd|sub`, `+@category`,
// `-@category`, `allcommands`, `nocommands`); the key patterns it may read and write
// (`~pat` both, `%R~pat` read, `%W~pat` write, `allkeys`, `resetkeys`); and the Pub/Sub
// channel patterns (`&pat`, `allchannels`, `resetchannels`). AclUser::Apply takes one
// rule at a time, as ACL SETUSER and the config file's `user` lines give them, and
// AclUser::Describe writes a user back in that form (ACL LIST), as Redis 7 does: the base
// (+@all or -@all), then the command and category rules given since, in order, each
// command's last rule only. Selectors (Redis 7's `(...)`) are refused with an error.
//
// What a command needs. A command is allowed when its bit (its subcommand's, for a
// container) is set. Its keys are those Redis's key specs name, each needing read when
// the spec reads the value (ACCESS) and write when it inserts, deletes or updates, and
// any pattern when it does neither (EXISTS, TYPE); one pattern must grant all that a key
// needs. Channels are PUBLISH's, SPUBLISH's and the subscribe commands' (matched against
// the patterns), and PSUBSCRIBE's patterns (each must be one of the user's, literally).
// The commands layer says which arguments are keys and channels (SetAclTargets): the
// engine knows no command by name.
//
// Sharing. AclRegistry (one per process) holds the users, each an immutable AclUser
// behind a shared_ptr: a change builds a changed copy and swaps it in under the
// registry's mutex. A client holds the shared_ptr of the user it authenticated as, and a
// flag saying whether that user is restricted at all: an unrestricted user (every
// command, key and channel - the default user out of the box) costs a command nothing.
// ACL SETUSER and DELUSER refresh every worker's clients of the user before they reply
// (Worker::RefreshAclUsers), so a change holds from the next command, as in Redis; a
// deleted user's clients are disconnected.
// Thread-safety: AclUser is immutable once published; AclRegistry is safe from any
// thread; the ACL log is under its own mutex.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace strata {

struct CommandSpec;
using CmdArgs = std::span<const std::string_view>;

// Redis 7.0's ACL categories, in its order (ACL CAT); a command's are a bit each
// (CommandSpec::acl_categories).
inline constexpr const char* kAclCategories[] = {
    "keyspace", "read",   "write",       "set",       "sortedset",  "list",        "hash",
    "string",   "bitmap", "hyperloglog", "geo",       "stream",     "pubsub",      "admin",
    "fast",     "slow",   "blocking",    "dangerous", "connection", "transaction", "scripting"};
inline constexpr int kAclCategoryCount = sizeof(kAclCategories) / sizeof(kAclCategories[0]);
// The category's bit, or 0 when there is none of that name.
uint32_t AclCategoryBit(std::string_view name);

// What one call touches, for the key and channel checks (filled by the commands layer).
struct AclKeyUse {
  std::string_view key;
  bool read = false;   // the call reads the key's value
  bool write = false;  // it inserts, deletes or updates
};
struct AclCallTargets {
  std::vector<AclKeyUse> keys;
  std::vector<std::string_view> channels;  // matched against the user's patterns
  std::vector<std::string_view> patterns;  // PSUBSCRIBE's: must be one of them, literally
};
using AclTargetsFn = void (*)(const CommandSpec& spec, CmdArgs args, AclCallTargets* out);
// Installed once by the commands layer, before any client connects.
void SetAclTargets(AclTargetsFn fn);
// acl-pubsub-default: whether a new user (and one `reset`) may use every channel.
void SetAclPubsubDefault(bool all_channels);

class AclUser {
 public:
  struct KeyPattern {
    std::string pattern;
    bool read = true;
    bool write = true;
  };

  // A new user as ACL SETUSER creates it: off, no password, no commands or keys, and no
  // channels or all of them as acl-pubsub-default says (resetchannels, by default).
  explicit AclUser(std::string name);

  const std::string& name() const { return name_; }
  bool enabled() const { return enabled_; }
  bool nopass() const { return nopass_; }
  const std::vector<std::string>& passwords() const { return passwords_; }
  // Every command, key and channel: nothing to check.
  bool unrestricted() const { return unrestricted_; }

  // Applies one rule; false with *error (Redis's text after "Error in ACL SETUSER
  // modifier '...': ") when it is not one.
  bool Apply(std::string_view rule, std::string* error);
  // The rules that rebuild this user from nothing: ACL LIST's line without "user <name>".
  std::string Describe() const;
  std::string DescribeCommands() const;
  std::string DescribeKeys() const;
  std::string DescribeChannels() const;
  std::vector<std::string> Flags() const;  // ACL GETUSER's flags

  bool CheckPassword(std::string_view password) const;

  // Checks, each the first thing refused (an empty string when allowed). The command:
  // its name as the error shows it ("config|set"); the key or channel refused.
  enum class Denied { kNone, kCommand, kKey, kChannel };
  struct Verdict {
    Denied denied = Denied::kNone;
    std::string object;  // the command's full name, or the key or channel refused
  };
  Verdict Check(const CommandSpec& spec, CmdArgs args) const;
  bool CommandAllowed(const CommandSpec& spec, CmdArgs args) const;
  // A channel (matched against the user's patterns), or a subscription pattern (`literal`:
  // allowed only when it is one of them, as PSUBSCRIBE's are checked).
  bool ChannelAllowed(std::string_view channel, bool literal) const;

 private:
  friend class AclRegistry;
  void SetCommand(uint32_t id, int sub, bool allow);  // sub -1: the command, all its subs
  void SetCategory(uint32_t bit, bool allow);
  bool CommandBit(uint32_t id, int sub) const;
  void Finish();  // recomputes unrestricted_
  bool KeyAllowed(const AclKeyUse& use) const;
  void AddCommandRule(const std::string& name, bool allow);

  std::string name_;
  bool enabled_ = false;
  bool nopass_ = false;
  bool sanitize_payload_ = false;
  bool skip_sanitize_payload_ = false;
  std::vector<std::string> passwords_;      // SHA-256 hex
  bool all_commands_ = false;               // the base is +@all (future commands too), not -@all
  std::string command_rules_;               // the rules since the base, as Describe writes them
  std::vector<uint8_t> commands_;           // by CommandSpec::id
  std::vector<std::vector<uint8_t>> subs_;  // by id, then subcommand index
  // "+cmd|arg" of commands without subcommands: the first arguments allowed, by id (only
  // for commands not allowed whole).
  std::unordered_map<uint32_t, std::vector<std::string>> first_args_;
  bool all_keys_ = false;
  std::vector<KeyPattern> keys_;
  bool all_channels_ = false;
  std::vector<std::string> channels_;
  bool unrestricted_ = false;
};

using AclUserPtr = std::shared_ptr<const AclUser>;

class AclRegistry {
 public:
  static AclRegistry& Get();

  // The user of that name now, or null.
  AclUserPtr Find(std::string_view name) const;
  AclUserPtr Default() const { return Find("default"); }
  std::vector<AclUserPtr> All() const;  // by name
  // Applies rules to the user (created when missing) and publishes it; all or nothing:
  // false with *error (Redis's whole message) and no change on a bad rule.
  bool SetUser(std::string_view name, std::span<const std::string_view> rules, std::string* error);
  // Removes users; the default user cannot be (*error). Returns how many existed.
  int DelUsers(std::span<const std::string_view> names, std::string* error);
  // Replaces every user (a config file's `user` lines, ACL LOAD); the default user stays
  // as it was unless the list names it.
  void ReplaceAll(std::vector<std::shared_ptr<AclUser>> users);
  // The user a password unlocks, or null (unknown, off, or the wrong password).
  AclUserPtr Authenticate(std::string_view name, std::string_view password) const;
  // requirepass: the default user's password ("" = nopass), as Redis keeps them tied.
  void SetRequirePass(std::string_view password);
  // Whether a new connection starts authenticated (as the default user): it is on and
  // takes any password. One atomic load (an unauthenticated client asks per command).
  bool DefaultNeedsNoAuth() const;

  // The ACL log (ACL LOG): refusals and failed AUTHs, newest first; an entry that repeats
  // one of the last minute (same reason, context, object and user) counts up instead.
  struct LogEntry {
    int64_t count = 1;
    std::string reason;   // command, key, channel, auth
    std::string context;  // toplevel, multi, lua
    std::string object;
    std::string username;
    int64_t created_ms = 0;
    int64_t updated_ms = 0;
    std::string client_info;
  };
  void Log(LogEntry e, size_t max_len);
  // The entries the dispatcher, scripts and AUTH make: a refusal (reason command, key or
  // channel; context toplevel, multi or lua), and a failed AUTH or HELLO AUTH.
  void LogRefusal(const AclUser::Verdict& v, const char* context, std::string username,
                  std::string client_info, size_t max_len);
  void LogAuthFailure(const char* command, std::string username, std::string client_info,
                      size_t max_len);
  std::vector<LogEntry> LogEntries(size_t count) const;
  void ResetLog();

 private:
  AclRegistry();
  void NoteDefault();  // under mu_: default_open_ from the default user now
  mutable std::mutex mu_;
  std::unordered_map<std::string, AclUserPtr> users_;
  std::atomic<bool> default_open_{true};
  mutable std::mutex log_mu_;
  std::deque<LogEntry> log_;
};

// A new user with Redis's out-of-the-box default rules: on nopass ~* &* +@all.
std::shared_ptr<AclUser> MakeDefaultUser();

// Redis's errors for a refusal (NOPERM ...), for a client and for a script.
std::string AclDeniedError(const AclUser::Verdict& v);
std::string AclScriptDeniedError(const AclUser::Verdict& v);

}  // namespace strata
