// Config: every server setting, under its Redis name, in one registry.
//
// Sources, in order: built-in defaults, the config file (Redis `key value` lines), then
// command-line flags (`--key value`, parsed with CLI11); later sources override. The
// same names work with CONFIG GET/SET at runtime for the settings marked mutable.
// Each option documents its default, its unit and whether it can change live.
//
// Thread-safety: loading happens on the main thread before workers start. After that,
// numeric settings are atomics readable from any thread; CONFIG SET (any worker) and
// string settings go through a mutex. Hot paths read the numeric atomics only.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/base/output_limits.h"

namespace strata {

class Config {
 public:
  enum class Kind { kInt, kMemory, kBool, kString, kEnum };

  struct Option {
    std::string name;
    Kind kind;
    std::string default_value;
    bool mutable_at_runtime;
    std::string help;
    int64_t min = 0;
    int64_t max = INT64_MAX;
    std::vector<std::string> enum_values;
    // Extra validation; returns an error text or "" to accept.
    std::function<std::string(std::string_view)> validate;
    // Current value: numeric kinds in `number` (bools 0/1, enums their index).
    std::atomic<int64_t> number{0};
    // When set, every applied numeric value is also stored here (settings read by core/).
    std::atomic<int64_t>* mirror = nullptr;
    // Other names for the same setting (Redis's old *-ziplist-* names).
    std::vector<std::string> aliases;
    // String kinds that hold structured values: applies the (validated) value to the
    // state derived from it and sets the text CONFIG GET shows; returns an error or "".
    std::function<std::string(std::string_view value, std::string* text)> on_set;
    std::string text;  // string kinds; guarded by Config::mu_
  };

  Config();

  // Parses argv (program name first). On failure returns false and sets *error; on
  // --help/--version sets *exit_now and prints.
  bool LoadFromArgs(int argc, char** argv, std::string* error, bool* exit_now);
  // Applies a config file's text. Errors name the line, as Redis reports them.
  bool LoadFileText(std::string_view text, std::string* error);
  // Sets one option from a string; returns "" or an error reason.
  std::string Set(std::string_view name, std::string_view value, bool at_runtime);
  std::optional<std::string> Get(std::string_view name) const;
  // Options whose names match a glob, in registry order.
  std::vector<std::pair<std::string, std::string>> GetMatching(std::string_view pattern) const;
  const Option* Find(std::string_view name) const;
  const std::vector<std::unique_ptr<Option>>& options() const { return options_; }
  // A config file listing every option, commented out, at its default, each under a
  // comment with its help text (`strata-server --print-config`; the packaged
  // /etc/strata/strata.conf is built from it).
  std::string DefaultsTemplate() const;
  std::string config_file() const { return config_file_; }

  // Typed accessors for the settings the server reads.
  int64_t Int(std::string_view name) const;
  bool Bool(std::string_view name) const { return Int(name) != 0; }
  std::string String(std::string_view name) const;

  // Grows with every Set(): a reader that cached derived settings re-reads them when it
  // changes (any thread).
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }

  // Cached handles for hot paths.
  const std::atomic<int64_t>& proto_max_bulk_len() const { return *proto_max_bulk_len_; }
  const std::atomic<int64_t>& client_query_buffer_limit() const { return *query_buf_limit_; }
  const std::atomic<int64_t>& maxclients() const { return *maxclients_; }
  const std::atomic<int64_t>& tracking_table_max_keys() const { return *tracking_max_keys_; }
  const std::atomic<int64_t>& hll_sparse_max_bytes() const { return *hll_sparse_max_bytes_; }
  const std::atomic<int64_t>& maxmemory() const { return *maxmemory_; }
  int64_t slowlog_slower_than() const {
    return slowlog_slower_than_->load(std::memory_order_relaxed);
  }
  int64_t slowlog_max_len() const { return slowlog_max_len_->load(std::memory_order_relaxed); }
  int64_t latency_monitor_threshold() const {
    return latency_threshold_->load(std::memory_order_relaxed);
  }
  // maxmemory-policy as its index in kPolicyNames order (see EvictionPolicyIndex).
  int64_t maxmemory_policy_index() const {
    return maxmemory_policy_->load(std::memory_order_relaxed);
  }
  int64_t maxmemory_samples() const { return maxmemory_samples_->load(std::memory_order_relaxed); }
  int64_t eviction_tenacity() const { return eviction_tenacity_->load(std::memory_order_relaxed); }
  int64_t lfu_log_factor() const { return lfu_log_factor_->load(std::memory_order_relaxed); }
  int64_t lfu_decay_time() const { return lfu_decay_time_->load(std::memory_order_relaxed); }
  // The names maxmemory-policy takes, in the order of maxmemory_policy_index().
  static const std::vector<std::string>& MaxmemoryPolicyNames();
  // client-output-buffer-limit for one class of client (server/base/output_limits.h).
  OutputLimit output_limit(ClientClass c) const {
    const auto& a = output_limits_[static_cast<int>(c)];
    return {a[0].load(std::memory_order_relaxed), a[1].load(std::memory_order_relaxed),
            a[2].load(std::memory_order_relaxed)};
  }
  // maxmemory-clients in bytes (a percentage is of maxmemory); 0 = no limit.
  int64_t maxmemory_clients_bytes() const {
    int64_t pct = maxmemory_clients_percent_.load(std::memory_order_relaxed);
    if (pct > 0) return maxmemory_->load(std::memory_order_relaxed) / 100 * pct;
    return maxmemory_clients_.load(std::memory_order_relaxed);
  }

 private:
  Option& Add(std::string name, Kind kind, std::string def, bool mut, std::string help);
  Option* FindMutable(std::string_view name);
  std::string Apply(Option& o, std::string_view value);
  std::string Render(const Option& o) const;

  std::vector<std::unique_ptr<Option>> options_;
  std::map<std::string, Option*, std::less<>> by_name_;
  mutable std::mutex mu_;
  std::string config_file_;
  std::atomic<int64_t>* proto_max_bulk_len_ = nullptr;
  std::atomic<int64_t>* query_buf_limit_ = nullptr;
  std::atomic<int64_t>* maxclients_ = nullptr;
  std::atomic<int64_t>* tracking_max_keys_ = nullptr;
  std::atomic<int64_t>* hll_sparse_max_bytes_ = nullptr;
  std::atomic<int64_t>* maxmemory_ = nullptr;
  std::atomic<int64_t>* slowlog_slower_than_ = nullptr;
  std::atomic<int64_t>* slowlog_max_len_ = nullptr;
  std::atomic<int64_t>* latency_threshold_ = nullptr;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int64_t>* maxmemory_policy_ = nullptr;
  std::atomic<int64_t>* maxmemory_samples_ = nullptr;
  std::atomic<int64_t>* eviction_tenacity_ = nullptr;
  std::atomic<int64_t>* lfu_log_factor_ = nullptr;
  std::atomic<int64_t>* lfu_decay_time_ = nullptr;
  std::atomic<int64_t> output_limits_[kClientClasses][3] = {};
  std::atomic<int64_t> maxmemory_clients_{0};
  std::atomic<int64_t> maxmemory_clients_percent_{0};
};

}  // namespace strata
