// Persistence commands: SAVE, BGSAVE [SCHEDULE], LASTSAVE, and the snapshot that
// SHUTDOWN takes. Snapshots are never forked; SAVE waits for the same point-in-time
// snapshot BGSAVE starts, while the server keeps serving other clients
// (server/persistence/snapshot.h).
// Thread-safety: fibers run on the client's worker; the snapshot manager coordinates.
#include <coroutine>

#include "core/string_util.h"
#include "server/base/log.h"
#include "server/commands/errors.h"
#include "server/commands/families.h"
#include "server/engine/client.h"
#include "server/engine/command.h"
#include "server/engine/engine.h"
#include "server/engine/worker.h"
#include "server/persistence/snapshot_await.h"

namespace strata {

namespace {

// The reply for a failed snapshot: refusals keep their Redis text; I/O errors are
// reported as Redis reports a failed SAVE, with the reason.
std::string ErrorText(const Status& s) {
  const std::string& m = s.message();
  if (m.rfind("ERR ", 0) == 0 || m.rfind("LOADING ", 0) == 0) return m;
  return "ERR " + m;
}

Fiber SaveFiber(Client* c, std::shared_ptr<OwnedArgs> owned) {
  (void)owned;
  std::string out;
  ReplyBuilder rb(&out, c->resp);
  Status s = co_await SnapshotAwait(SnapshotManager::Reason::kSave, false);
  if (s.ok()) {
    rb.Ok();
  } else {
    rb.Error(ErrorText(s));
  }
  c->FinishFiber(std::move(out));
}

Fiber BgsaveFiber(Client* c, std::shared_ptr<OwnedArgs> owned) {
  CmdArgs args = owned->span();
  std::string out;
  ReplyBuilder rb(&out, c->resp);
  bool schedule = false;
  if (args.size() == 2 && EqualsIgnoreCase(args[1], "schedule")) {
    schedule = true;
  } else if (args.size() != 1) {
    rb.Error(errors::kSyntax);
    c->FinishFiber(std::move(out));
    co_return;
  }
  SnapshotManager& sm = c->worker().engine().Service<SnapshotManager>();
  if (sm.loading()) {
    rb.Error("LOADING Redis is loading the dataset in memory");
  } else if (sm.in_progress() && !schedule) {
    rb.Error("ERR Background save already in progress");
  } else {
    bool scheduled = sm.in_progress();
    // Runs in the background: the reply does not wait for it.
    sm.Request(SnapshotManager::Reason::kBgsave, true, [](const Status&) {});
    rb.Simple(scheduled ? "Background saving scheduled" : "Background saving started");
  }
  c->FinishFiber(std::move(out));
}

// strata keeps no append-only file (appendonly is always no): said plainly, rather than
// an unknown command or a rewrite that never happens.
void CmdBgrewriteaof(Client& c, CmdArgs args, ReplyBuilder& rb) {
  (void)c;
  (void)args;
  rb.Error(
      "ERR strata keeps no append-only file (appendonly is always no); its snapshots are "
      "incremental: use BGSAVE");
}

void CmdLastsave(Client& c, CmdArgs args, ReplyBuilder& rb) {
  (void)args;
  rb.Integer(c.worker().engine().Service<SnapshotManager>().last_save_time());
}

}  // namespace

void RegisterPersistenceFamily(CommandRegistry& r) {
  auto add = [&](const char* name, int arity, uint32_t flags, FiberFn fn, const char* summary) {
    CommandSpec s{name, arity, flags | kCmdServer, 0, 0, 0};
    s.fiber_fn = fn;
    s.group = "server";
    s.summary = summary;
    r.Add(std::move(s));
  };
  add("save", 1, kCmdAdmin | kCmdNoScript | kCmdNoMulti, SaveFiber,
      "Synchronously saves the database(s) to disk.");
  add("bgsave", -1, kCmdAdmin | kCmdNoScript, BgsaveFiber,
      "Asynchronously saves the database(s) to disk.");
  CommandSpec aof{"bgrewriteaof", 1, kCmdAdmin | kCmdNoScript | kCmdServer, 0, 0, 0};
  aof.conn_fn = CmdBgrewriteaof;
  aof.group = "server";
  aof.summary = "Asynchronously rewrite the append-only file";
  r.Add(std::move(aof));
  CommandSpec s{"lastsave", 1, kCmdFast | kCmdLoading | kCmdStale | kCmdServer, 0, 0, 0};
  s.conn_fn = CmdLastsave;
  s.group = "server";
  s.summary = "Returns the Unix timestamp of the last successful save to disk.";
  r.Add(std::move(s));
}

}  // namespace strata
