// FunctionStore: the process's function libraries (FUNCTION LOAD, FUNCTION RESTORE), by
// library name: each one's code, and the functions its load registered (name, flags,
// description). Libraries are process-wide like Redis's; snapshots save their code
// (docs/FORMAT.md "Manifest") and a start-up load puts it back.
//
// The store holds code and facts only. Lua (server/scripting/) does the rest: it checks
// and inspects a library before it goes in (the inspector, set at start-up, so that a
// snapshot loader in persistence/ can restore libraries without knowing Lua), and each
// worker's interpreter compiles every library again whenever the generation it compiled
// differs from the store's.
//
// Thread-safety: every method may be called from any thread (one mutex; generation is an
// atomic read without it).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace strata {

struct FunctionInfo {
  std::string name;
  std::optional<std::string> description;
  uint32_t flags = 0;  // the scripting layer's ScriptFlag bits
};

struct FunctionLibrary {
  std::string name;
  std::string code;
  std::vector<FunctionInfo> functions;
};

class FunctionStore {
 public:
  static FunctionStore& Get();

  using Libraries = std::map<std::string, FunctionLibrary>;
  // Checks code and tells its library (name, functions); false with *error (Redis's
  // text) when it is not a library that loads.
  using Inspector = bool (*)(std::string_view code, FunctionLibrary* out, std::string* error);
  void set_inspector(Inspector f) { inspector_ = f; }
  bool Inspect(std::string_view code, FunctionLibrary* out, std::string* error) const;

  // A copy of the libraries, by name.
  Libraries All() const;
  // Changes the libraries under the lock: fn edits them and returns "" (kept, and the
  // generation moves) or an error (nothing changes). Returns what fn returned.
  std::string Update(const std::function<std::string(Libraries&)>& fn);
  // The library holding function `name`, and the function; false when none does.
  bool FindFunction(std::string_view name, FunctionInfo* info, std::string* library) const;
  // Restores libraries from their code (a snapshot, an RDB file): each is inspected;
  // false with *error naming the first that does not load (nothing changes then).
  bool RestoreCodes(const std::vector<std::string>& codes, bool replace_all, std::string* error);
  std::vector<std::string> Codes() const;

  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
  size_t library_count() const;
  size_t function_count() const;
  size_t code_bytes() const;

  // The first function-name clash between `lib` and the other libraries in `libs` (its
  // own old version excluded), or "" when none.
  static std::string Clash(const Libraries& libs, const FunctionLibrary& lib);

 private:
  mutable std::mutex mu_;
  Libraries libs_;
  std::atomic<uint64_t> generation_{0};
  Inspector inspector_ = nullptr;
};

}  // namespace strata
