// CLIENT TRACKING, CLIENT CACHING, CLIENT GETREDIR and CLIENT TRACKINGINFO: a client's
// side of client-side caching (server/engine/tracking.h has the tables and messages).
// Replies and errors are Redis 7.0's. CLIENT TRACKING with REDIRECT runs in the CLIENT
// fiber, which first finds the worker of the target client (it must exist now, as in
// Redis); the rest run on the client's thread.
// Thread-safety: the client's worker thread.
#pragma once

#include <cstdint>

#include "server/engine/command.h"

namespace strata {

class Client;

// CLIENT TRACKING: sets or clears c's tracking. redirect_worker: the worker of the
// REDIRECT target, or -1 when it was not found (or none was given).
void ClientTrackingCommand(Client& c, CmdArgs args, ReplyBuilder& rb, int64_t redirect_worker);
// The REDIRECT id a CLIENT TRACKING call names, or 0 (none, or not a number: the
// command's own parse then answers).
uint64_t TrackingRedirectOf(CmdArgs args);
void ClientCachingCommand(Client& c, CmdArgs args, ReplyBuilder& rb);
void ClientGetRedirCommand(Client& c, ReplyBuilder& rb);
void ClientTrackingInfoCommand(Client& c, ReplyBuilder& rb);

}  // namespace strata
