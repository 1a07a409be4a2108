#include <cctype>
#include <cstring>

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

namespace {

// FNV-1a over the lowercase bytes, folded: command names are short, so a byte at a time
// in the lowercasing loop is cheaper than a general hash after it.
constexpr uint64_t kFnvOffset = 14695981039346656037ull;
constexpr uint64_t kFnvPrime = 1099511628211ull;
inline uint64_t Fold(uint64_t h) { return h ^ (h >> 29); }

inline uint64_t NameHash(std::string_view lower) {
  uint64_t h = kFnvOffset;
  for (char ch : lower) h = (h ^ static_cast<unsigned char>(ch)) * kFnvPrime;
  return Fold(h);
}

}  // namespace

void CommandRegistry::Add(CommandSpec spec) {
  spec.id = static_cast<uint32_t>(specs_.size());
  specs_.push_back(std::make_unique<CommandSpec>(std::move(spec)));
  Rehash();
}

void CommandRegistry::Seal() {
  for (auto& s : specs_) {
    // Only where every call of the right arity has that argument (MEMORY USAGE's key,
    // at 2 of -2, may be missing), so the dispatcher need not check the count.
    int min_args = s->arity < 0 ? -s->arity : s->arity;
    bool one = s->keys_fn == nullptr && s->first_key > 0 && s->last_key == s->first_key &&
               s->first_key < min_args && s->first_key <= UINT8_MAX;
    s->single_key = one ? static_cast<uint8_t>(s->first_key) : 0;
  }
}

void CommandRegistry::Rehash() {
  size_t n = 16;
  while (n < specs_.size() * 4) n *= 2;
  slots_.assign(n, nullptr);
  for (auto& s : specs_) {
    if (s->name.size() > kMaxNameLen) continue;  // could never be found
    size_t i = NameHash(s->name) & (n - 1);
    while (slots_[i] != nullptr) i = (i + 1) & (n - 1);
    slots_[i] = s.get();
  }
}

const CommandSpec* CommandRegistry::Find(std::string_view name) const {
  char buf[kMaxNameLen];
  if (name.size() > sizeof(buf) || slots_.empty()) return nullptr;
  uint64_t h = kFnvOffset;
  for (size_t i = 0; i < name.size(); i++) {
    char ch = name[i];
    ch = (ch >= 'A' && ch <= 'Z') ? static_cast<char>(ch + ('a' - 'A')) : ch;
    buf[i] = ch;
    h = (h ^ static_cast<unsigned char>(ch)) * kFnvPrime;
  }
  std::string_view lower(buf, name.size());
  size_t mask = slots_.size() - 1;
  for (size_t i = Fold(h) & mask;; i = (i + 1) & mask) {
    const CommandSpec* s = slots_[i];
    if (s == nullptr) return nullptr;
    if (s->name == lower) return s;
  }
}

std::string WrongArityError(std::string_view name) {
  return "ERR wrong number of arguments for '" + Lowercase(name) + "' command";
}

}  // namespace strata
