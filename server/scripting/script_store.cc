#include "server/scripting/script_store.h"

namespace strata {

ScriptStore& ScriptStore::Get() {
  static ScriptStore store;
  return store;
}

void ScriptStore::Add(const std::string& sha, std::string_view body) {
  std::lock_guard<std::mutex> l(mu_);
  auto [it, inserted] = bodies_.try_emplace(sha, body);
  if (inserted) body_bytes_ += body.size();
}

std::optional<std::string> ScriptStore::Find(std::string_view sha) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = bodies_.find(std::string(sha));
  if (it == bodies_.end()) return std::nullopt;
  return it->second;
}

bool ScriptStore::Contains(std::string_view sha) const {
  std::lock_guard<std::mutex> l(mu_);
  return bodies_.count(std::string(sha)) != 0;
}

void ScriptStore::Flush() {
  std::lock_guard<std::mutex> l(mu_);
  bodies_.clear();
  body_bytes_ = 0;
  routes_.clear();
  route_epoch_.fetch_add(1, std::memory_order_acq_rel);
  generation_.fetch_add(1, std::memory_order_acq_rel);
}

ScriptRoute ScriptStore::Route(const std::string& sha) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = routes_.find(sha);
  return it == routes_.end() ? ScriptRoute::kUnknown : it->second;
}

void ScriptStore::SetRoute(const std::string& sha, ScriptRoute route) {
  std::lock_guard<std::mutex> l(mu_);
  ScriptRoute& r = routes_[sha];
  if (r == route || r == ScriptRoute::kWide) return;
  r = route;
  route_epoch_.fetch_add(1, std::memory_order_acq_rel);
}

size_t ScriptStore::wide_scripts() const {
  std::lock_guard<std::mutex> l(mu_);
  size_t n = 0;
  for (const auto& [sha, r] : routes_) n += r == ScriptRoute::kWide ? 1 : 0;
  return n;
}

size_t ScriptStore::size() const {
  std::lock_guard<std::mutex> l(mu_);
  return bodies_.size();
}

size_t ScriptStore::body_bytes() const {
  std::lock_guard<std::mutex> l(mu_);
  return body_bytes_;
}

}  // namespace strata
