// ClientConnection's side of replication: the master client a replica reads its
// master's stream through, and the connection of a replica this server feeds (its
// output is the stream, under the replica output class's limits). Split from
// client_connection.cc; the same thread rules (the owning worker only).
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "server/base/config.h"
#include "server/base/log.h"
#include "server/engine/client_connection.h"
#include "server/engine/engine.h"
#include "server/engine/worker.h"

namespace strata {
namespace {
// propagation-error-behavior's first value (config_redis_settings.cc): an enum setting
// reads as its value's index.
constexpr int64_t kPropagationErrorIgnore = 0;
}  // namespace

void ClientConnection::NoteErrorToMaster(const CommandSpec* spec, std::string_view reply) {
  // As Redis: the master never sees a replica's replies, so an error in one (the data
  // may have gone apart, or a script failed half-way) is logged where an operator looks.
  // Shown with its '-', as Redis 7.0 shows it.
  if (!reply.empty() && reply[0] == '-') reply.remove_prefix(1);
  reply = reply.substr(0, std::min<size_t>(reply.find("\r\n"), 4096));
  const char* name = spec != nullptr ? spec->name.c_str() : "<unknown>";
  LogWarning(
      "== CRITICAL == This replica is sending an error to its master: '-%.*s' after "
      "processing the command '%s'",
      static_cast<int>(reply.size()), reply.data(), name);
  Worker* w = Worker::Current();
  w->stats().unexpected_error_replies++;
  // propagation-error-behavior panic or panic-on-replicas (the same here: strata has no
  // AOF to replay): a read-only replica whose data has gone apart from its master's
  // stops at once rather than serve it, as Redis's does. A writable replica goes on
  // (its own writes may explain the error).
  const Config& cfg = w->engine().config();
  if (cfg.Int("propagation-error-behavior") != kPropagationErrorIgnore &&
      cfg.Bool("replica-read-only")) {
    LogWarning(
        "propagation-error-behavior %s: this replica stops, having failed its master's "
        "command '%s'",
        cfg.String("propagation-error-behavior").c_str(), name);
    std::fprintf(stderr, "strata-server: a command from the master failed ('%s'); stopping\n",
                 name);
    std::abort();
  }
}

void ClientConnection::MakeMaster() {
  is_master_ = true;
  SetAuthenticated(true);
  SetAclUser(nullptr);  // as Redis's master client: no user, nothing refused
  reply_mode = ReplyMode::kOff;
  SetName("");
}

void ClientConnection::MakeReplica() {
  is_replica_ = true;
  reply_mode = ReplyMode::kOff;
  client_class = ClientClass::kReplica;
}

void ClientConnection::SendToReplica(std::string_view bytes) {
  if (closing()) return;
  AppendPush(bytes);
  // The open block is sealed once big (replica output comes in large pieces), and the
  // replica class's limits apply: a replica that cannot keep up is dropped.
  SealIfLarge();
  ScheduleFlush();
  CheckOutputLimits();
}

void ClientConnection::SendToReplicaOwned(std::string&& bytes) {
  if (closing()) return;
  AppendOwnedBlock(std::move(bytes));
  ScheduleFlush();
  CheckOutputLimits();
}

void ClientConnection::SendToReplicaShared(std::shared_ptr<const std::string> buffer,
                                           std::string_view bytes) {
  if (closing()) return;
  AppendSharedBlock(std::move(buffer), bytes);
  SealIfLarge();
  ScheduleFlush();
  CheckOutputLimits();
}

void ClientConnection::SendToMaster(std::string_view bytes) {
  if (closing()) return;
  // Later in the turn, never inside the master's own command (REPLCONF GETACK): that
  // command's reply is suppressed, and would take these bytes with it.
  Worker* w = worker_;
  uint64_t id = id_;
  std::string b(bytes);
  w->Defer(MakeTask([w, id, b] {
    auto it = w->connections().find(id);
    if (it == w->connections().end()) return;
    auto* c = static_cast<ClientConnection*>(it->second);
    if (c->closing()) return;
    c->AppendPush(b);
    c->ScheduleFlush();
  }));
}

}  // namespace strata
