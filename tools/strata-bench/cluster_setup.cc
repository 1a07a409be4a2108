#include "tools/strata-bench/cluster_setup.h"

#include <string_view>

#include "tools/strata-mem/resp_client.h"

namespace strata::bench {
namespace {

// RespClient's timeout message points at strata-mem's flag; this tool's is --reply-timeout.
std::string TidyClientError(std::string message) {
  const std::string_view hint = " (see --timeout-ms)";
  const size_t at = message.find(hint);
  if (at != std::string::npos) message.replace(at, hint.size(), " (see --reply-timeout)");
  return message;
}

mem::ClientOptions ClusterClientOptions(const Options& o) {
  mem::ClientOptions c;
  c.timeout_ms = static_cast<int>(o.reply_timeout_s * 1000);
  c.password = o.password;
  return c;
}

}  // namespace

bool DiscoverCluster(const Options& o, std::vector<SlotRange>* slots, std::string* warning,
                     std::string* error) {
  mem::Endpoint seed;
  seed.host = o.server;
  seed.port = o.port;
  const mem::ClientOptions options = ClusterClientOptions(o);
  mem::RespClient client;
  mem::Reply reply;
  std::string why;
  if (!client.Connect(seed, options, &why) || !client.Call({"CLUSTER", "SLOTS"}, &reply, &why)) {
    *error = "cannot read the cluster's slots from " + TidyClientError(why);
    return false;
  }
  if (!ParseClusterSlots(reply, o.server, slots, &why)) {
    *error = seed.ToString() + ": " + why;
    return false;
  }
  if (slots->empty()) {
    *error = seed.ToString() +
             ": CLUSTER SLOTS lists no slots (is the cluster created, with slots assigned?)";
    return false;
  }
  ClusterMap map;
  if (!map.Apply(*slots)) {
    *error = seed.ToString() + ": CLUSTER SLOTS names more than " +
             std::to_string(ClusterMap::kMaxNodes) + " masters";
    return false;
  }
  if (map.covered_slots() < kClusterSlots) {
    *warning = seed.ToString() + ": CLUSTER SLOTS gives a master to " +
               std::to_string(map.covered_slots()) + " of " + std::to_string(kClusterSlots) +
               " slots; requests for the others go to " + map.nodes()[0].name;
  }
  for (const ClusterMap::Node& node : map.nodes()) {
    mem::Endpoint endpoint;
    endpoint.host = node.host;
    endpoint.port = node.port;
    mem::RespClient probe;
    if (!probe.Connect(endpoint, options, &why) || !probe.Call({"PING"}, &reply, &why)) {
      *error = "cluster node " + TidyClientError(why);
      return false;
    }
    if (reply.is_error()) {
      *error = "cluster node " + node.name + " replied to PING: " + reply.str;
      return false;
    }
  }
  return true;
}

}  // namespace strata::bench
