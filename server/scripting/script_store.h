// ScriptStore: the process's script bodies by SHA-1 (EVAL, SCRIPT LOAD), shared by the
// workers. Each worker's interpreter (lua_vm.h) compiles a body the first time it runs
// it and keeps the function; it asks the store only for a SHA it has not compiled yet,
// so the running path takes no lock. SCRIPT FLUSH empties the store and bumps the
// generation, which every interpreter compares before it runs a script and drops its
// compiled functions when it has changed. Scripts are not saved in snapshots, as in
// Redis.
// Thread-safety: every method may be called from any thread (one mutex; generation is
// an atomic read without it).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace strata {

class ScriptStore {
 public:
  static ScriptStore& Get();

  // Adds body under sha (its SHA-1, lowercase hex) unless already there.
  void Add(const std::string& sha, std::string_view body);
  std::optional<std::string> Find(std::string_view sha) const;
  bool Contains(std::string_view sha) const;
  void Flush();
  size_t size() const;
  size_t body_bytes() const;
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }

 private:
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::string> bodies_;
  size_t body_bytes_ = 0;
  std::atomic<uint64_t> generation_{0};
};

}  // namespace strata
