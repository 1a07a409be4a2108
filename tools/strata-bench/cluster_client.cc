#include "tools/strata-bench/cluster_client.h"

#include <algorithm>
#include <limits>

#include "core/key_slot.h"
#include "tools/strata-bench/client_plan.h"
#include "tools/strata-bench/connection.h"

namespace strata::bench {

ClusterClient::ClusterClient(ClusterContext& ctx, uint32_t client_index)
    : ctx_(ctx),
      o_(*ctx.options),
      set_keys_(o_.set_pattern, o_.keys, client_index, static_cast<uint32_t>(o_.total_clients()),
                o_.distinct_client_seed ? ClientSeed(o_.seed, client_index) : o_.seed,
                o_.key_stddev, o_.key_median),
      get_keys_(o_.get_pattern, o_.keys, client_index, static_cast<uint32_t>(o_.total_clients()),
                // The same streams as Connection's, so a run picks the same keys.
                (o_.distinct_client_seed ? ClientSeed(o_.seed, client_index) : o_.seed) ^
                    0x9e3779b97f4a7c15ULL,
                o_.key_stddev, o_.key_median),
      ratio_(o_.ratio_sets, o_.ratio_gets),
      ttl_rng_(ClientSeed(o_.seed, client_index) + 1),
      size_rng_(ClientSeed(o_.seed, client_index) + 2),
      next_size_(o_.data_size_min) {
  if (o_.test_time > 0) {
    target_ = std::numeric_limits<uint64_t>::max();
  } else if (o_.all_keys) {
    target_ = AllKeysTarget(o_, client_index, set_keys_, get_keys_);
  } else {
    target_ = o_.requests;
  }
  key_.reserve(o_.key_prefix.size() + 20);
}

ClusterClient::~ClusterClient() { CloseLinks(); }

void ClusterClient::Start(uint64_t now_ns) {
  const size_t nodes = ctx_.map.nodes().size();
  for (uint32_t node = 0; node < nodes; ++node) {
    LinkTo(node, now_ns);
    if (finished()) return;
  }
  Pump(now_ns);
}

ClusterLink* ClusterClient::LinkTo(uint32_t node, uint64_t now_ns) {
  if (links_.size() <= node) links_.resize(node + 1);
  if (links_[node] == nullptr) {
    links_[node] = std::make_unique<ClusterLink>(ctx_, *this, node, ctx_.links.size());
    ctx_.links.push_back(links_[node].get());
    links_[node]->Start(now_ns);
  }
  return links_[node].get();
}

void ClusterClient::NextRequest(ClusterRequest* r) {
  *r = ClusterRequest{};
  r->is_set = ratio_.NextIsSet();
  if (r->is_set) {
    r->key = set_keys_.Next();
    r->ttl_s = o_.expiry_max > 0 ? RandomTtl(o_.expiry_min, o_.expiry_max, &ttl_rng_) : 0;
    r->value_size = NextValueSize();
  } else {
    r->key = get_keys_.Next();
  }
  key_.clear();
  FormatKey(o_.key_prefix, r->key, &key_);
  r->slot = static_cast<uint16_t>(KeySlot(key_));
}

uint32_t ClusterClient::NextValueSize() {
  const uint32_t lo = o_.data_size_min, hi = o_.data_size_max;
  if (lo >= hi) return hi;
  if (!o_.data_size_sequential) {
    return lo + static_cast<uint32_t>(size_rng_.Uniform(uint64_t{hi} - lo + 1));
  }
  const uint32_t size = next_size_;
  next_size_ = size >= hi ? lo : size + 1;
  return size;
}

void ClusterClient::Pump(uint64_t now_ns) {
  if (finished()) return;
  // Redirected requests first, in the order they came back.
  bool blocked = false;
  while (!redirected_.empty()) {
    const Queued& q = redirected_.front();
    ClusterLink* link = LinkTo(q.node, now_ns);
    if (finished()) return;
    if (!link->CanSend(q.asking)) {
      blocked = true;
      break;
    }
    link->Send(q.request, q.asking, now_ns);
    redirected_.pop_front();
  }
  // Then new ones, each to its slot's owner.
  while (!blocked && !stop_sending_) {
    if (!has_waiting_) {
      if (sent_ >= target_) break;
      NextRequest(&waiting_);
      has_waiting_ = true;
      ++sent_;
    }
    ClusterLink* link = LinkTo(ctx_.map.NodeForSlot(waiting_.slot), now_ns);
    if (finished()) return;
    if (!link->CanSend(false)) break;
    link->Send(waiting_, false, now_ns);
    has_waiting_ = false;
  }
  if (refresh_node_ != ClusterMap::kNoNode && ctx_.RefreshDue(now_ns)) {
    ClusterLink* link = LinkTo(refresh_node_, now_ns);
    if (finished()) return;
    if (link->SendSlotsRefresh()) {
      ctx_.last_refresh_ns = now_ns;
      refresh_node_ = ClusterMap::kNoNode;
    }
  }
  for (auto& link : links_) {
    if (link != nullptr && link->has_output() && !link->Flush(now_ns)) return;
  }
  const bool done_sending = stop_sending_ || (sent_ >= target_ && !has_waiting_);
  if (done_sending && redirected_.empty() && Idle()) Finish(now_ns);
}

bool ClusterClient::Idle() const {
  for (const auto& link : links_) {
    if (link != nullptr && !link->idle()) return false;
  }
  return true;
}

bool ClusterClient::OnRedirect(const ClusterRequest& request, const Redirect& to,
                               uint32_t from_node) {
  // An empty host means the replying node's own host; copy it, as adding a node may move it.
  const std::string host =
      to.host.empty() ? ctx_.map.nodes()[from_node].host : std::string(to.host);
  const uint32_t node = ctx_.map.FindOrAddNode(host, to.port);
  if (node == ClusterMap::kNoNode) return false;
  Queued q;
  q.request = request;
  ++q.request.redirects;
  q.node = node;
  if (to.kind == RedirectKind::kMoved) {
    ctx_.map.SetOwner(to.slot, node);
    refresh_node_ = node;
  } else {
    q.asking = true;
  }
  redirected_.push_back(q);
  return true;
}

void ClusterClient::StopSending(uint64_t now_ns) {
  if (finished() || stop_sending_) return;
  stop_sending_ = true;
  Pump(now_ns);
}

void ClusterClient::CheckTimeout(uint64_t now_ns, uint64_t timeout_ns) {
  for (auto& link : links_) {
    if (finished()) return;
    if (link != nullptr) link->CheckTimeout(now_ns, timeout_ns);
  }
}

void ClusterClient::CloseLinks() {
  for (auto& link : links_) {
    if (link != nullptr) link->Close();
  }
}

void ClusterClient::Fail(uint32_t node, const std::string& why) {
  if (finished()) return;
  RunStats& s = *ctx_.stats;
  ++s.connection_errors;
  uint64_t lost = redirected_.size();
  for (const auto& link : links_) {
    if (link != nullptr) lost += link->requests_in_flight();
  }
  s.lost_requests += lost;
  if (s.first_connection_error.empty()) {
    s.first_connection_error = ctx_.map.nodes()[node].name + ": " + why;
  }
  redirected_.clear();
  CloseLinks();
  state_ = State::kFailed;
  --ctx_.live;
  ctx_.last_finish_ns = std::max(ctx_.last_finish_ns, NowNs());
}

void ClusterClient::Finish(uint64_t now_ns) {
  if (finished()) return;
  CloseLinks();
  state_ = State::kDone;
  --ctx_.live;
  ctx_.last_finish_ns = std::max(ctx_.last_finish_ns, now_ns);
}

}  // namespace strata::bench
