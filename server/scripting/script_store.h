// ScriptStore: the process's script bodies by SHA-1 (EVAL, SCRIPT LOAD), shared by the
// workers. Each worker's interpreter (lua_vm.h) compiles a body the first time it runs
// it and keeps the function; it asks the store only for a SHA it has not compiled yet,
// so the running path takes no lock. SCRIPT FLUSH empties the store and bumps the
// generation, which every interpreter compares before it runs a script and drops its
// compiled functions when it has changed. Scripts are not saved in snapshots, as in
// Redis.
//
// Routes: what the process has learned of where each script reaches (sync_hop.h and
// docs/ARCHITECTURE.md "Scripts"). Unknown until its first run that spans shards;
// narrow when that run touched only keys on its KEYS' shards (it may then run as one
// step on one shard); wide once any run reached past them (it then runs holding every
// shard). Wide is final; the epoch changes with every route change and every flush, so
// the workers' caches of routes (LuaVm::RouteOf) know when to look again.
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

enum class ScriptRoute : uint8_t { kUnknown, kNarrow, kWide };

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

  ScriptRoute Route(const std::string& sha) const;
  // Narrow never replaces wide.
  void SetRoute(const std::string& sha, ScriptRoute route);
  uint64_t route_epoch() const { return route_epoch_.load(std::memory_order_acquire); }
  size_t wide_scripts() const;

 private:
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::string> bodies_;
  size_t body_bytes_ = 0;
  std::atomic<uint64_t> generation_{0};
  std::unordered_map<std::string, ScriptRoute> routes_;
  std::atomic<uint64_t> route_epoch_{0};
};

}  // namespace strata
