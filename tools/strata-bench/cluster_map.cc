#include "tools/strata-bench/cluster_map.h"

#include <charconv>

namespace strata::bench {
namespace {

using mem::Reply;

std::string ClusterNodeName(std::string_view host, int port) {
  const std::string h(host);
  if (h.find(':') != std::string::npos) return "[" + h + "]:" + std::to_string(port);
  return h + ":" + std::to_string(port);
}

bool IsStringReply(const Reply& r) {
  return r.type == Reply::Type::kBulk || r.type == Reply::Type::kStatus;
}

// A whole-text unsigned decimal in [lo, hi].
bool ParseBoundedNumber(std::string_view s, uint32_t lo, uint32_t hi, uint32_t* out) {
  if (s.empty() || s.front() < '0' || s.front() > '9') return false;
  uint32_t v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || v < lo || v > hi) return false;
  *out = v;
  return true;
}

}  // namespace

bool ParseClusterSlots(const Reply& reply, std::string_view default_host,
                       std::vector<SlotRange>* out, std::string* error) {
  out->clear();
  if (reply.type == Reply::Type::kError) {
    *error = "CLUSTER SLOTS failed: " + reply.str;
    return false;
  }
  if (reply.type != Reply::Type::kArray) {
    *error = "CLUSTER SLOTS replied with " + reply.Describe() + ", not an array";
    return false;
  }
  for (size_t i = 0; i < reply.elements.size(); ++i) {
    const Reply& e = reply.elements[i];
    const std::string where = "CLUSTER SLOTS entry " + std::to_string(i);
    if (e.type != Reply::Type::kArray || e.elements.size() < 3) {
      *error = where + " is " + e.Describe() + ", not [first, last, master, ...]";
      return false;
    }
    const Reply& first = e.elements[0];
    const Reply& last = e.elements[1];
    if (first.type != Reply::Type::kInteger || last.type != Reply::Type::kInteger ||
        first.integer < 0 || last.integer < first.integer || last.integer >= kClusterSlots) {
      *error = where + " has slots " + first.Describe() + " to " + last.Describe() +
               ", not a range within 0-16383";
      return false;
    }
    const Reply& master = e.elements[2];
    if (master.type != Reply::Type::kArray || master.elements.size() < 2 ||
        !IsStringReply(master.elements[0]) || master.elements[1].type != Reply::Type::kInteger ||
        master.elements[1].integer < 1 || master.elements[1].integer > 65535) {
      *error = where + " names its master as " + master.Describe() + ", not [host, port, ...]";
      return false;
    }
    SlotRange range;
    range.first = static_cast<uint32_t>(first.integer);
    range.last = static_cast<uint32_t>(last.integer);
    const std::string& host = master.elements[0].str;
    range.host = host.empty() || host == "?" ? std::string(default_host) : host;
    range.port = static_cast<int>(master.elements[1].integer);
    out->push_back(std::move(range));
  }
  return true;
}

Redirect ParseRedirect(std::string_view text) {
  Redirect r;
  RedirectKind kind;
  if (text.starts_with("MOVED ")) {
    kind = RedirectKind::kMoved;
    text.remove_prefix(6);
  } else if (text.starts_with("ASK ")) {
    kind = RedirectKind::kAsk;
    text.remove_prefix(4);
  } else {
    return r;
  }
  const size_t space = text.find(' ');
  if (space == std::string_view::npos) return r;
  uint32_t slot = 0;
  if (!ParseBoundedNumber(text.substr(0, space), 0, kClusterSlots - 1, &slot)) return r;
  const std::string_view endpoint = text.substr(space + 1);
  const size_t colon = endpoint.rfind(':');
  uint32_t port = 0;
  if (colon == std::string_view::npos ||
      !ParseBoundedNumber(endpoint.substr(colon + 1), 1, 65535, &port)) {
    return r;
  }
  std::string_view host = endpoint.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.find(' ') != std::string_view::npos) return r;
  r.kind = kind;
  r.slot = slot;
  r.host = host;
  r.port = static_cast<int>(port);
  return r;
}

ClusterMap::ClusterMap() { owner_.fill(static_cast<uint16_t>(kNoNode)); }

uint32_t ClusterMap::FindOrAddNode(std::string_view host, int port) {
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i].port == port && nodes_[i].host == host) return static_cast<uint32_t>(i);
  }
  if (nodes_.size() >= kMaxNodes) return kNoNode;
  nodes_.push_back(Node{std::string(host), port, ClusterNodeName(host, port)});
  return static_cast<uint32_t>(nodes_.size() - 1);
}

bool ClusterMap::Apply(const std::vector<SlotRange>& ranges) {
  for (const SlotRange& range : ranges) {
    const uint32_t node = FindOrAddNode(range.host, range.port);
    if (node == kNoNode) return false;
    for (uint32_t slot = range.first; slot <= range.last && slot < kClusterSlots; ++slot) {
      SetOwner(slot, node);
    }
  }
  return true;
}

uint32_t ClusterMap::covered_slots() const {
  uint32_t n = 0;
  for (uint16_t owner : owner_) n += owner != kNoNode ? 1 : 0;
  return n;
}

}  // namespace strata::bench
