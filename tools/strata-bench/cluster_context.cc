#include "tools/strata-bench/cluster_context.h"

#include <netdb.h>

#include <cstring>
#include <string_view>

#include "tools/strata-mem/reply.h"

namespace strata::bench {

bool ClusterContext::Address(uint32_t node, const sockaddr** addr, socklen_t* len,
                             std::string* error) {
  if (resolved_.size() <= node) resolved_.resize(node + 1);
  Resolved& r = resolved_[node];
  if (!r.tried) {
    r.tried = true;
    const ClusterMap::Node& n = map.nodes()[node];
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    addrinfo* res = nullptr;
    const std::string port = std::to_string(n.port);
    const int rc = ::getaddrinfo(n.host.c_str(), port.c_str(), &hints, &res);
    if (rc != 0 || res == nullptr) {
      r.error = "cannot resolve '" + n.host + "': " + ::gai_strerror(rc);
    } else {
      std::memcpy(&r.addr, res->ai_addr, res->ai_addrlen);
      r.len = res->ai_addrlen;
    }
    if (res != nullptr) ::freeaddrinfo(res);
  }
  if (r.len == 0) {
    *error = r.error;
    return false;
  }
  *addr = reinterpret_cast<const sockaddr*>(&r.addr);
  *len = r.len;
  return true;
}

NodeStats& ClusterContext::StatsOf(uint32_t node) {
  std::vector<NodeStats>& nodes = stats->nodes;
  while (nodes.size() <= node) {
    nodes.emplace_back();
    nodes.back().name = map.nodes()[nodes.size() - 1].name;
  }
  return nodes[node];
}

void ClusterContext::ApplySlotsReply(const char* data, size_t size, bool error, uint32_t node) {
  if (!error) {
    mem::ReplyParser parser;
    mem::Reply reply;
    size_t consumed = 0;
    std::vector<SlotRange> ranges;
    std::string why;
    const std::string host = map.nodes()[node].host;  // Apply may grow the node list
    if (parser.Parse(std::string_view(data, size), &consumed, &reply) ==
            mem::ReplyParser::Result::kOk &&
        ParseClusterSlots(reply, host, &ranges, &why) && !ranges.empty() && map.Apply(ranges)) {
      ++stats->slot_map_refreshes;
      return;
    }
  }
  ++stats->slot_map_refresh_failures;
}

}  // namespace strata::bench
