#include "server/engine/slowlog.h"

#include <algorithm>

#include "core/string_util.h"

namespace strata {

std::vector<bool> SecretArguments(const CommandSpec* spec, CmdArgs args) {
  std::vector<bool> secret(args.size(), false);
  if (spec == nullptr) return secret;
  const std::string& n = spec->name;
  if (n == "auth") {
    for (size_t i = 1; i < args.size(); i++) secret[i] = true;
  } else if (n == "hello") {
    for (size_t i = 2; i < args.size(); i++) {
      if (EqualsIgnoreCase(args[i], "auth") && i + 2 < args.size()) {
        secret[i + 1] = secret[i + 2] = true;
        i += 2;
      }
    }
  } else if (n == "migrate") {
    for (size_t i = 6; i < args.size(); i++) {
      if (EqualsIgnoreCase(args[i], "auth") && i + 1 < args.size()) {
        secret[++i] = true;
      } else if (EqualsIgnoreCase(args[i], "auth2") && i + 2 < args.size()) {
        secret[i + 1] = secret[i + 2] = true;
        i += 2;
      } else if (EqualsIgnoreCase(args[i], "keys")) {
        break;
      }
    }
  } else if (n == "acl" && args.size() > 2 && EqualsIgnoreCase(args[1], "setuser")) {
    for (size_t i = 2; i < args.size(); i++) secret[i] = true;  // as Redis: the name too
  } else if (n == "config" && args.size() > 2 && EqualsIgnoreCase(args[1], "set")) {
    for (size_t i = 2; i + 1 < args.size(); i += 2) {
      if (EqualsIgnoreCase(args[i], "requirepass") || EqualsIgnoreCase(args[i], "masterauth"))
        secret[i + 1] = true;
    }
  }
  return secret;
}

std::vector<std::string> SlowLog::EntryArgs(const CommandSpec* spec, CmdArgs args) {
  std::vector<bool> secret = SecretArguments(spec, args);
  size_t keep = std::min(args.size(), kMaxArgs);
  std::vector<std::string> out;
  out.reserve(keep);
  for (size_t j = 0; j < keep; j++) {
    if (keep != args.size() && j == keep - 1) {
      out.push_back("... (" + std::to_string(args.size() - keep + 1) + " more arguments)");
    } else if (secret[j]) {
      out.emplace_back(kRedactedArgument);
    } else if (args[j].size() > kMaxArgBytes) {
      std::string s(args[j].substr(0, kMaxArgBytes));
      s += "... (" + std::to_string(args[j].size() - kMaxArgBytes) + " more bytes)";
      out.push_back(std::move(s));
    } else {
      out.emplace_back(args[j]);
    }
  }
  return out;
}

void SlowLog::Add(const CommandSpec* spec, CmdArgs args, uint64_t duration_us, std::string addr,
                  std::string name, int64_t now_sec, size_t max_len) {
  SlowLogEntry e;
  e.time_sec = now_sec;
  e.duration_us = duration_us;
  e.args = EntryArgs(spec, args);
  e.addr = std::move(addr);
  e.name = std::move(name);
  std::lock_guard<std::mutex> lock(mu_);
  e.id = next_id_++;
  entries_.push_front(std::move(e));
  while (entries_.size() > max_len) entries_.pop_back();
}

std::vector<SlowLogEntry> SlowLog::Newest(int64_t count) const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = count < 0 ? entries_.size() : std::min(entries_.size(), static_cast<size_t>(count));
  return std::vector<SlowLogEntry>(entries_.begin(), entries_.begin() + static_cast<long>(n));
}

size_t SlowLog::Length() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

void SlowLog::Reset() {
  std::lock_guard<std::mutex> lock(mu_);
  entries_.clear();
}

void SlowLog::Trim(size_t max_len) {
  std::lock_guard<std::mutex> lock(mu_);
  while (entries_.size() > max_len) entries_.pop_back();
}

void SlowLog::AddLatency(std::string_view event, uint32_t latency_ms, int64_t now_sec) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = latency_.find(event);
  if (it == latency_.end()) it = latency_.emplace(std::string(event), LatencyEvent{}).first;
  LatencyEvent& ev = it->second;
  ev.max_ms = std::max(ev.max_ms, latency_ms);
  // One sample per second: the worst of that second.
  if (!ev.samples.empty() && ev.samples.back().time_sec == now_sec) {
    ev.samples.back().latency_ms = std::max(ev.samples.back().latency_ms, latency_ms);
    return;
  }
  ev.samples.push_back(LatencySample{now_sec, latency_ms});
  if (ev.samples.size() > kLatencySamples) ev.samples.pop_front();
}

std::map<std::string, LatencyEvent> SlowLog::LatencyEvents() const {
  std::lock_guard<std::mutex> lock(mu_);
  return std::map<std::string, LatencyEvent>(latency_.begin(), latency_.end());
}

size_t SlowLog::ResetLatency(const std::vector<std::string>& names) {
  std::lock_guard<std::mutex> lock(mu_);
  if (names.empty()) {
    size_t n = latency_.size();
    latency_.clear();
    return n;
  }
  size_t n = 0;
  for (const std::string& name : names) {
    auto it = latency_.find(name);
    if (it == latency_.end()) continue;
    latency_.erase(it);
    n++;
  }
  return n;
}

}  // namespace strata
