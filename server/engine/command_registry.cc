#include <cctype>
#include <cstring>

#include "core/hash.h"
#include "core/string_util.h"
#include "server/engine/command.h"

namespace strata {

std::shared_ptr<OwnedArgs> OwnedArgs::Copy(CmdArgs args) {
  auto o = std::make_shared<OwnedArgs>();
  size_t total = 0;
  for (auto a : args) total += a.size();
  o->storage.reserve(total);
  for (auto a : args) o->storage.append(a);
  o->views.reserve(args.size());
  size_t off = 0;
  for (auto a : args) {
    o->views.emplace_back(o->storage.data() + off, a.size());
    off += a.size();
  }
  return o;
}

void CommandSpec::Keys(CmdArgs args, std::vector<std::string_view>* out) const {
  if (keys_fn != nullptr) {
    keys_fn(args, out);
    return;
  }
  if (first_key <= 0) return;
  int argc = static_cast<int>(args.size());
  int last = last_key < 0 ? argc + last_key : last_key;
  if (last >= argc) last = argc - 1;
  for (int i = first_key; i <= last; i += key_step) out->push_back(args[i]);
}

CommandRegistry& CommandRegistry::Get() {
  static CommandRegistry registry;
  return registry;
}

void CommandRegistry::Add(CommandSpec spec) {
  spec.id = static_cast<uint32_t>(specs_.size());
  specs_.push_back(std::make_unique<CommandSpec>(std::move(spec)));
  Rehash();
}

void CommandRegistry::Rehash() {
  buckets_.assign(specs_.size() * 4 + 1, {});
  for (auto& s : specs_) buckets_[TableHash(s->name) % buckets_.size()].push_back(s.get());
}

const CommandSpec* CommandRegistry::Find(std::string_view name) const {
  char buf[32];
  if (name.size() > sizeof(buf) || buckets_.empty()) return nullptr;
  for (size_t i = 0; i < name.size(); i++) {
    char ch = name[i];
    buf[i] = (ch >= 'A' && ch <= 'Z') ? static_cast<char>(ch + ('a' - 'A')) : ch;
  }
  std::string_view lower(buf, name.size());
  for (CommandSpec* s : buckets_[TableHash(lower) % buckets_.size()]) {
    if (s->name == lower) return s;
  }
  return nullptr;
}

std::string WrongArityError(std::string_view name) {
  return "ERR wrong number of arguments for '" + Lowercase(name) + "' command";
}

}  // namespace strata
