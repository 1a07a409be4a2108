#include <cassert>
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

// Names longer than kShortName: FNV-1a over the lowercase bytes, folded.
constexpr uint64_t kFnvOffset = 14695981039346656037ull;
constexpr uint64_t kFnvPrime = 1099511628211ull;
inline uint64_t Fold(uint64_t h) { return h ^ (h >> 29); }

inline uint64_t NameHash(std::string_view lower) {
  uint64_t h = kFnvOffset;
  for (char ch : lower) h = (h ^ static_cast<unsigned char>(ch)) * kFnvPrime;
  return Fold(h);
}

inline uint64_t Load64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

inline uint64_t Load32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// 'A'..'Z' to 'a'..'z' in each byte of x, other bytes unchanged: a byte's low seven bits
// plus 0x3f reach bit 7 from 'A' on, plus 0x25 from past 'Z' on (no carry leaves a byte),
// and a byte with bit 7 set is no letter.
inline uint64_t LowerAscii(uint64_t x) {
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  uint64_t low7 = x & (0x7f * kOnes);
  uint64_t from_a = low7 + (0x80 - 'A') * kOnes;
  uint64_t past_z = low7 + (0x80 - 'Z' - 1) * kOnes;
  uint64_t upper = from_a & ~past_z & ~x & (0x80 * kOnes);
  return x | (upper >> 2);
}

}  // namespace

// Inline in Find: one call on every command's path.
[[gnu::always_inline]] inline CommandRegistry::ShortName CommandRegistry::ShortNameOf(const char* p,
                                                                                      size_t n) {
  // Overlapping loads of the name's own bytes (as Entry::KeyEquals): with the length,
  // two names give the same words only when they are the same name.
  if (n >= 8) return {LowerAscii(Load64(p)), LowerAscii(Load64(p + n - 8)) ^ n};
  uint64_t a = 0;
  if (n >= 4) {
    a = Load32(p) | (Load32(p + n - 4) << 32);
  } else if (n > 0) {
    a = static_cast<uint64_t>(static_cast<unsigned char>(p[0])) |
        static_cast<uint64_t>(static_cast<unsigned char>(p[n / 2])) << 8 |
        static_cast<uint64_t>(static_cast<unsigned char>(p[n - 1])) << 16;
  }
  return {LowerAscii(a), n};
}

[[gnu::always_inline]] inline size_t CommandRegistry::ShortHash(const ShortName& k) {
  uint64_t h = (k.a ^ (k.b * 0xff51afd7ed558ccdull)) * 0x9e3779b97f4a7c15ull;
  return static_cast<size_t>(h >> 32);
}

void CommandRegistry::Add(CommandSpec spec) {
  assert(stat_names_.empty());  // the statistics slots after the commands are fixed
  spec.id = spec.stat_id = static_cast<uint32_t>(specs_.size());
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
  stat_names_.clear();
  for (auto& s : specs_) stat_names_.push_back(s->name);
  sub_specs_.clear();
  for (auto& s : specs_) {
    s->sub_specs.clear();
    if (s->subcommands == nullptr) continue;
    for (const std::string& sub : *s->subcommands) {
      auto copy = std::make_unique<CommandSpec>(*s);
      copy->sub_specs.clear();
      copy->stat_id = static_cast<uint32_t>(stat_names_.size());
      stat_names_.push_back(s->name + "|" + sub);
      s->sub_specs.push_back(copy.get());
      sub_specs_.push_back(std::move(copy));
    }
  }
}

uint32_t StatIndexOf(const CommandSpec* spec, CmdArgs args) {
  if (spec->sub_specs.empty() || args.size() < 2) return spec->stat_id;
  return SubcommandStatIndex(*spec, args[1]);
}

const CommandSpec* CommandSpec::ForSubcommand(std::string_view sub) const {
  // Before Seal (a test's registry) a container has no copies.
  for (size_t i = 0; i < sub_specs.size(); i++) {
    if (EqualsIgnoreCase(sub, (*subcommands)[i])) return sub_specs[i];
  }
  return this;
}

void CommandRegistry::Rehash() {
  size_t n = 16;
  while (n < specs_.size() * 4) n *= 2;
  short_.assign(n, ShortSlot{});
  long_.assign(n, nullptr);
  for (auto& s : specs_) {
    size_t len = s->name.size();
    if (len > kMaxNameLen) continue;  // could never be found
    if (len <= kShortName) {
      ShortName k = ShortNameOf(s->name.data(), len);
      size_t i = ShortHash(k) & (n - 1);
      while (short_[i].spec != nullptr) i = (i + 1) & (n - 1);
      short_[i] = ShortSlot{k, s.get()};
    } else {
      size_t i = NameHash(s->name) & (n - 1);
      while (long_[i] != nullptr) i = (i + 1) & (n - 1);
      long_[i] = s.get();
    }
  }
}

const CommandSpec* CommandRegistry::Find(std::string_view name) const {
  size_t n = name.size();
  if (n <= kShortName) {
    if (short_.empty()) return nullptr;
    ShortName k = ShortNameOf(name.data(), n);
    size_t mask = short_.size() - 1;
    for (size_t i = ShortHash(k) & mask;; i = (i + 1) & mask) {
      const ShortSlot& s = short_[i];
      if (s.spec == nullptr) return nullptr;
      if (s.key.a == k.a && s.key.b == k.b) return s.spec;
    }
  }
  return FindLong(name);
}

const CommandSpec* CommandRegistry::FindLong(std::string_view name) const {
  size_t n = name.size();
  char buf[kMaxNameLen];
  if (n > sizeof(buf) || long_.empty()) return nullptr;
  uint64_t h = kFnvOffset;
  for (size_t i = 0; i < n; i++) {
    char ch = name[i];
    ch = (ch >= 'A' && ch <= 'Z') ? static_cast<char>(ch + ('a' - 'A')) : ch;
    buf[i] = ch;
    h = (h ^ static_cast<unsigned char>(ch)) * kFnvPrime;
  }
  std::string_view lower(buf, n);
  size_t mask = long_.size() - 1;
  for (size_t i = Fold(h) & mask;; i = (i + 1) & mask) {
    const CommandSpec* s = long_[i];
    if (s == nullptr) return nullptr;
    if (s->name == lower) return s;
  }
}

std::string WrongArityError(std::string_view name) {
  return "ERR wrong number of arguments for '" + Lowercase(name) + "' command";
}

}  // namespace strata
