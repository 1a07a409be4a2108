// The CLUSTER subcommands of a node under `cluster-enabled yes`
// (cluster_node_commands.cc; cluster_family.cc sends them here). They read and change
// the ClusterService's state (server/cluster/cluster_service.h).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "server/engine/client.h"
#include "server/engine/command.h"
#include "server/net/reply_builder.h"

namespace strata {

// "ERR wrong number of arguments for 'cluster|<sub>' command": a known subcommand with
// the wrong number of arguments (each has its own arity in Redis 7's command table).
std::string ClusterWrongArity(std::string_view lower_sub);

// Subcommands that change the layout: they run in ClusterNodeChangeFiber, which
// installs the new routing on every worker before it replies.
bool IsClusterLayoutChange(std::string_view lower_sub);

// The other subcommands, on the client's thread.
void ClusterNodeConn(Client& c, CmdArgs args, ReplyBuilder& rb);

Fiber ClusterNodeChangeFiber(Client* c, std::shared_ptr<OwnedArgs> owned);

}  // namespace strata
