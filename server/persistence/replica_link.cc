#include "server/persistence/replica_link.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <future>

#include "core/split_args.h"
#include "core/string_util.h"
#include "server/base/config.h"
#include "server/base/log.h"
#include "server/engine/worker.h"
#include "server/persistence/snapshot.h"
#include "storage/file_io.h"
#include "storage/mono_clock.h"

namespace strata {

namespace {

int64_t MonoMs() { return MonoNs() / 1000000; }

enum Phase { kConnect, kConnecting, kHandshake, kSync, kConnected };
constexpr size_t kMaxLine = 64 * 1024;  // a handshake reply line
constexpr size_t kChunk = 64 * 1024;    // RDB transfer buffer

}  // namespace

struct ReplicaLink::Run {
  std::string host;
  int port = 0;
  std::atomic<bool> stop{false};
  std::atomic<int> fd{-1};  // the socket the thread holds (shut down to wake it)
  std::atomic<int> phase{kConnect};
  std::mutex mu;
  std::condition_variable cv;
  bool master_closed = false;
  bool loading = false;  // the received image is loading (under mu, as stop is set)
  // A FAILOVER's link until the target answered its PSYNC, or a session failed before
  // sending it (under mu).
  ReplicaLink::FailoverDone failover_done;
  bool failover() {
    std::lock_guard<std::mutex> l(mu);
    return failover_done != nullptr;
  }
  // The link thread's: this session sent PSYNC ... FAILOVER. A session that ends without
  // its answer reports nothing: the target may have taken over, so the next session asks
  // again rather than abort (which could leave two masters).
  bool failover_psync_sent = false;
};

ReplicaLink::ReplicaLink(Engine* engine, SnapshotManager* snapshots)
    : engine_(engine), snapshots_(snapshots) {
  engine_->replication().on_master_closed = [this] {
    std::shared_ptr<Run> run;
    {
      std::lock_guard<std::mutex> l(mu_);
      run = current_;
    }
    if (run == nullptr) return;
    std::lock_guard<std::mutex> l(run->mu);
    run->master_closed = true;
    run->cv.notify_all();
  };
}

ReplicaLink::~ReplicaLink() {
  Shutdown();
  engine_->replication().on_master_closed = nullptr;
}

void ReplicaLink::Start(const std::string& host, int port) {
  auto run = std::make_shared<Run>();
  run->host = host;
  run->port = port;
  StartRun(std::move(run));
}

void ReplicaLink::StartFailover(const std::string& host, int port, FailoverDone done) {
  auto run = std::make_shared<Run>();
  run->host = host;
  run->port = port;
  run->failover_done = std::move(done);
  StartRun(std::move(run));
}

void ReplicaLink::StartRun(std::shared_ptr<Run> run) {
  std::lock_guard<std::mutex> starting(start_mu_);
  if (shut_down_) return;
  Stop();
  engine_->replication().BecomeReplica(run->host, run->port,
                                       engine_->config().Bool("replica-read-only"));
  LogNotice("Connecting to MASTER %s:%d", run->host.c_str(), run->port);
  std::lock_guard<std::mutex> l(mu_);
  current_ = run;
  threads_.emplace_back([this, run] { Loop(run); });
}

void ReplicaLink::ReportFailover(Run& run, bool accepted, const std::string& why) {
  FailoverDone done;
  {
    std::lock_guard<std::mutex> l(run.mu);
    done = std::move(run.failover_done);
    run.failover_done = nullptr;
  }
  if (done != nullptr) done(accepted, why);
}

void ReplicaLink::Stop() { StopRun(false); }

bool ReplicaLink::StopUnlessLoading() { return StopRun(true); }

bool ReplicaLink::StopRun(bool unless_loading) {
  std::shared_ptr<Run> run;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (current_ == nullptr) return true;
    std::lock_guard<std::mutex> rl(current_->mu);
    if (unless_loading && current_->loading) return false;
    current_->stop.store(true);
    current_->cv.notify_all();
    run = std::move(current_);
    current_ = nullptr;
  }
  int fd = run->fd.load();
  if (fd >= 0) shutdown(fd, SHUT_RDWR);
  // The master client, if the link was up, belongs to worker 0.
  engine_->worker(0).PostExternal(MakeTask([] { Worker::Current()->CloseMasterConnection(); }));
  return true;
}

void ReplicaLink::Shutdown() {
  {
    std::lock_guard<std::mutex> starting(start_mu_);
    shut_down_ = true;
  }
  Stop();
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> l(mu_);
    threads.swap(threads_);
  }
  for (std::thread& t : threads) {
    if (t.joinable()) t.join();
  }
}

std::string ReplicaLink::RoleState() const {
  std::lock_guard<std::mutex> l(mu_);
  if (current_ == nullptr) return "connect";
  static const char* kWords[] = {"connect", "connecting", "handshake", "sync", "connected"};
  return kWords[current_->phase.load()];
}

void ReplicaLink::Loop(std::shared_ptr<Run> run) {
  while (!run->stop.load()) {
    Session(run);
    if (run->stop.load()) break;
    engine_->replication().SetLink(ReplicationState::Link::kDown, WallClockMs());
    run->phase.store(kConnect);
    // Reconnect a second later, as Redis's replicas do.
    std::unique_lock<std::mutex> l(run->mu);
    run->cv.wait_for(l, std::chrono::seconds(1), [&] { return run->stop.load(); });
  }
}

namespace {

// Waits until fd is readable (or writable) or the deadline passes; false on timeout,
// stop or error.
bool WaitFd(int fd, short events, int64_t deadline_ms, const std::atomic<bool>& stop) {
  while (!stop.load()) {
    int64_t left = deadline_ms - MonoMs();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    int r = poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 200)));
    if (r > 0) return true;
    if (r < 0 && errno != EINTR) return false;
  }
  return false;
}

int Connect(const std::string& host, int port, int64_t deadline_ms, const std::atomic<bool>& stop,
            std::string* error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res);
  if (rc != 0) {
    *error = std::string("can't resolve ") + host + ": " + gai_strerror(rc);
    return -1;
  }
  int fd = -1;
  for (addrinfo* a = res; a != nullptr && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    if (connect(fd, a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS) {
      *error = strerror(errno);
      close(fd);
      fd = -1;
      continue;
    }
    if (!WaitFd(fd, POLLOUT, deadline_ms, stop)) {
      *error = "connect timed out";
      close(fd);
      fd = -1;
      continue;
    }
    int err = 0;
    socklen_t len = sizeof(err);
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) {
      *error = strerror(err);
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(res);
  return fd;
}

// The link's socket I/O, bounded by repl-timeout of silence and by the stop flag.
class LinkIo {
 public:
  LinkIo(int fd, int64_t timeout_ms, const std::atomic<bool>& stop)
      : fd_(fd), timeout_ms_(timeout_ms), stop_(stop) {}

  Status Send(std::string_view data) {
    while (!data.empty()) {
      ssize_t n = send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n > 0) {
        data.remove_prefix(static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && errno != EAGAIN && errno != EINTR)
        return Status::InvalidArgument(strerror(errno));
      if (!WaitFd(fd_, POLLOUT, MonoMs() + timeout_ms_, stop_)) return Timeout();
    }
    return Status::Ok();
  }

  // Reads up to n bytes (at least one).
  Status Read(char* buf, size_t n, size_t* got) {
    while (true) {
      ssize_t r = recv(fd_, buf, n, 0);
      if (r > 0) {
        *got = static_cast<size_t>(r);
        return Status::Ok();
      }
      if (r == 0) return Status::InvalidArgument("the master closed the connection");
      if (errno != EAGAIN && errno != EINTR) return Status::InvalidArgument(strerror(errno));
      if (!WaitFd(fd_, POLLIN, MonoMs() + timeout_ms_, stop_)) return Timeout();
    }
  }

  // One line without its CRLF (byte by byte: nothing after it is consumed).
  Status ReadLine(std::string* line) {
    line->clear();
    while (true) {
      char c;
      size_t got = 0;
      Status s = Read(&c, 1, &got);
      if (!s.ok()) return s;
      if (c == '\n') {
        if (!line->empty() && line->back() == '\r') line->pop_back();
        return Status::Ok();
      }
      if (line->size() >= kMaxLine) return Status::InvalidArgument("a reply line too long");
      *line += c;
    }
  }

  // Sends a command and reads its one-line reply.
  Status Command(std::initializer_list<std::string_view> args, std::string* reply) {
    std::string req = "*" + std::to_string(args.size()) + "\r\n";
    for (std::string_view a : args) {
      req += "$" + std::to_string(a.size()) + "\r\n";
      req.append(a);
      req += "\r\n";
    }
    Status s = Send(req);
    if (!s.ok()) return s;
    return ReadLine(reply);
  }

 private:
  Status Timeout() const {
    return stop_.load() ? Status::InvalidArgument("stopped")
                        : Status::InvalidArgument("timeout talking to the master");
  }
  int fd_;
  int64_t timeout_ms_;
  const std::atomic<bool>& stop_;
};

}  // namespace

void ReplicaLink::Session(const std::shared_ptr<Run>& run_ptr) {
  Run& run = *run_ptr;
  // A FAILOVER's session that fails before it sent its PSYNC reports why (the handshake
  // reports an answer itself).
  struct FailoverReport {
    Run& run;
    std::string why = "the link to the target ended";
    ~FailoverReport() {
      if (!run.failover_psync_sent) ReportFailover(run, false, why);
    }
  } report{run};
  run.failover_psync_sent = false;
  int64_t timeout_ms = engine_->config().Int("repl-timeout") * 1000;
  run.phase.store(kConnecting);
  engine_->replication().SetLink(ReplicationState::Link::kConnecting, WallClockMs());
  std::string error;
  int fd = Connect(run.host, run.port, MonoMs() + timeout_ms, run.stop, &error);
  if (fd < 0) {
    if (!run.stop.load()) {
      LogWarning("Error condition on socket for SYNC: %s:%d: %s", run.host.c_str(), run.port,
                 error.c_str());
    }
    report.why = "can't connect to the target: " + error;
    return;
  }
  run.fd.store(fd);
  auto drop = [&] {
    run.fd.store(-1);
    close(fd);
  };
  if (run.stop.load()) return drop();
  LogNotice("MASTER <-> REPLICA sync started");
  run.phase.store(kHandshake);
  bool full = false;
  std::string replid;
  int64_t offset = 0;
  Status s = Handshake(run, fd, &full, &replid, &offset);
  if (!s.ok()) {
    if (!run.stop.load()) LogWarning("MASTER <-> REPLICA handshake: %s", s.message().c_str());
    report.why = s.message();
    return drop();
  }
  ReplicationState& state = engine_->replication();
  std::string early;  // the stream read while the image loaded
  if (full) {
    run.phase.store(kSync);
    state.SetLink(ReplicationState::Link::kTransfer, WallClockMs());
    std::string path = JoinPath(
        engine_->config().String("dir"),
        "temp-" + std::to_string(getpid()) + "-" + std::to_string(temp_seq_.fetch_add(1)) + ".rdb");
    s = ReceiveRdb(run, fd, path);
    bool load = false;
    if (s.ok()) {  // the stop flag is read, and the load marked, in one step (the header)
      std::lock_guard<std::mutex> l(run.mu);
      load = !run.stop.load();
      run.loading = load;
    }
    if (load) {
      state.SetLink(ReplicationState::Link::kLoading, WallClockMs());
      LogNotice("MASTER <-> REPLICA sync: Loading DB in memory");
      s = LoadRdbReading(run, fd, path, offset, &early);
      std::lock_guard<std::mutex> l(run.mu);
      run.loading = false;
    }
    unlink(path.c_str());
    if (!s.ok() || run.stop.load()) {
      if (!run.stop.load()) LogWarning("MASTER <-> REPLICA sync: %s", s.message().c_str());
      return drop();
    }
    state.SetMasterStream(replid, offset);
  } else {
    LogNotice("MASTER <-> REPLICA sync: Master accepted a Partial Resynchronization.");
    if (!replid.empty()) state.SetMasterStream(replid, state.offset());
  }
  has_history_.store(true);
  // The socket becomes worker 0's master client; the thread waits for it to close.
  {
    std::lock_guard<std::mutex> l(run.mu);
    run.master_closed = false;
  }
  int flags = fcntl(fd, F_GETFL);
  fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  run.fd.store(-1);
  if (run.stop.load()) {
    close(fd);
    return;
  }
  run.phase.store(kConnected);
  // A REPLICAOF that stops this link may run before the hand-over reaches worker 0: its
  // stop flag is set before it posts the close, so the hand-over sees it either way.
  auto held = std::make_shared<std::string>(std::move(early));
  engine_->worker(0).PostExternal(MakeTask([run_ptr, fd, held] {
    if (run_ptr->stop.load()) {
      close(fd);
      return;
    }
    Worker::Current()->AdoptMasterConnection(fd, std::move(*held));
  }));
  LogNotice("MASTER <-> REPLICA sync: link up, streaming");
  std::unique_lock<std::mutex> l(run.mu);
  run.cv.wait(l, [&] { return run.master_closed || run.stop.load(); });
  if (run.master_closed) LogNotice("Connection with master lost.");
}

Status ReplicaLink::Handshake(Run& run, int fd, bool* full, std::string* replid, int64_t* offset) {
  Config& c = engine_->config();
  LinkIo io(fd, c.Int("repl-timeout") * 1000, run.stop);
  std::string reply;
  Status s = io.Command({"PING"}, &reply);
  if (!s.ok()) return s;
  // As Redis: an authentication error here is fine (AUTH follows), anything else not.
  if (!reply.empty() && reply[0] == '-' && !reply.starts_with("-NOAUTH") &&
      !reply.starts_with("-NOPERM") && !reply.starts_with("-ERR operation not permitted")) {
    return Status::InvalidArgument("error reply to PING from master: '" + reply + "'");
  }
  std::string pass = c.String("masterauth");
  if (!pass.empty()) {
    std::string user = c.String("masteruser");
    s = user.empty() ? io.Command({"AUTH", pass}, &reply)
                     : io.Command({"AUTH", user, pass}, &reply);
    if (!s.ok()) return s;
    if (reply.empty() || reply[0] == '-') {
      return Status::InvalidArgument("unable to AUTH to MASTER: " + reply);
    }
  }
  // replica-announce-port: the port the master (and so Sentinel) lists this replica by.
  int64_t announced_port = c.Int("replica-announce-port");
  std::string port = std::to_string(announced_port != 0 ? announced_port : c.Int("port"));
  s = io.Command({"REPLCONF", "listening-port", port}, &reply);
  if (!s.ok()) return s;
  if (!reply.empty() && reply[0] == '-') {
    LogNotice("(Non critical) Master does not understand REPLCONF listening-port: %s",
              reply.c_str());
  }
  // replica-announce-ip: the address the master (and so Sentinel) lists this replica by.
  std::string announce = c.String("replica-announce-ip");
  if (!announce.empty()) {
    s = io.Command({"REPLCONF", "ip-address", announce}, &reply);
    if (!s.ok()) return s;
    if (!reply.empty() && reply[0] == '-') {
      LogNotice("(Non critical) Master does not understand REPLCONF ip-address: %s", reply.c_str());
    }
  }
  s = io.Command({"REPLCONF", "capa", "eof", "capa", "psync2"}, &reply);
  if (!s.ok()) return s;
  // PSYNC2: once this process holds a history (a master's stream it followed, its own
  // stream as a master, or either after REPLICAOF NO ONE), it asks to continue it; a master that
  // does not know that history, or no longer holds the offset, answers with a full resync.
  std::string psync_id = "?";
  std::string psync_offset = "-1";
  ReplicationState& state = engine_->replication();
  // A master that served replicas has a history of its own (a failed-over master
  // rejoining its promoted replica continues it when that replica holds it). A
  // FAILOVER's target must see ours: it becomes the master only for the history it
  // follows.
  bool failover = run.failover();
  if (has_history_.load() || state.offset() > 0 || failover) {
    psync_id = state.replid();
    psync_offset = std::to_string(state.offset() + 1);
    LogNotice("Trying a partial resynchronization (request %s:%s).", psync_id.c_str(),
              psync_offset.c_str());
  }
  if (failover) {
    run.failover_psync_sent = true;
    s = io.Command({"PSYNC", psync_id, psync_offset, "FAILOVER"}, &reply);
  } else {
    s = io.Command({"PSYNC", psync_id, psync_offset}, &reply);
  }
  if (!s.ok()) return s;
  // A master preparing its RDB may send newlines first.
  while (reply.empty()) {
    s = io.ReadLine(&reply);
    if (!s.ok()) return s;
  }
  if (failover) {
    // As Redis: a full resync is as good an answer as +CONTINUE; anything else refuses.
    bool accepted = reply.starts_with("+FULLRESYNC") || reply.starts_with("+CONTINUE");
    ReportFailover(run, accepted, accepted ? "" : "the target answered PSYNC with " + reply);
  }
  if (reply.starts_with("+FULLRESYNC")) {
    std::vector<std::string> words;
    SplitArgs(reply, &words);
    if (words.size() != 3 || words[1].size() != 40 || !ParseInt64(words[2], offset) ||
        *offset < 0) {
      return Status::InvalidArgument("master replied with wrong +FULLRESYNC syntax: " + reply);
    }
    *full = true;
    *replid = words[1];
    LogNotice("Full resync from master: %s:%s", words[1].c_str(), words[2].c_str());
    return Status::Ok();
  }
  if (reply.starts_with("+CONTINUE")) {
    std::vector<std::string> words;
    SplitArgs(reply, &words);
    *full = false;
    if (words.size() == 2 && words[1].size() == 40) *replid = words[1];
    return Status::Ok();
  }
  return Status::InvalidArgument("unexpected reply to PSYNC from master: " + reply);
}

Status ReplicaLink::ReceiveRdb(Run& run, int fd, const std::string& path) {
  LinkIo io(fd, engine_->config().Int("repl-timeout") * 1000, run.stop);
  std::string line;
  do {  // newlines are the master's keep-alives while it prepares the RDB
    Status s = io.ReadLine(&line);
    if (!s.ok()) return s;
  } while (line.empty());
  if (line[0] == '-') return Status::InvalidArgument("MASTER aborted replication: " + line);
  if (line[0] != '$') {
    return Status::InvalidArgument("bad protocol from MASTER, the first byte is not '$': " + line);
  }
  bool eof_form = line.starts_with("$EOF:");
  std::string mark;
  int64_t length = 0;
  if (eof_form) {
    mark = line.substr(5);
    if (mark.size() != 40) return Status::InvalidArgument("bad EOF mark from MASTER: " + line);
    LogNotice("MASTER <-> REPLICA sync: receiving streamed RDB from master with EOF to disk");
  } else if (!ParseInt64(std::string_view(line).substr(1), &length) || length < 0) {
    return Status::InvalidArgument("bad RDB length from MASTER: " + line);
  } else {
    LogNotice("MASTER <-> REPLICA sync: receiving %lld bytes from master to disk",
              static_cast<long long>(length));
  }
  int out = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0) {
    return Status::InvalidArgument("opening the temp file " + path + ": " + strerror(errno));
  }
  ReplicationState& state = engine_->replication();
  int64_t received = 0;
  state.NoteTransfer(eof_form ? -1 : length, 0, WallClockMs());
  std::vector<char> buf(kChunk);
  // The EOF form: the last 40 bytes are held back until more arrives, since they may be
  // the mark, which is not part of the RDB.
  std::string held;
  int64_t left = length;
  Status s;
  while (s.ok()) {
    if (!eof_form && left == 0) break;
    size_t want = eof_form ? buf.size() : static_cast<size_t>(std::min<int64_t>(left, buf.size()));
    size_t got = 0;
    s = io.Read(buf.data(), want, &got);
    if (!s.ok()) break;
    received += static_cast<int64_t>(got);
    state.AddSyncInputBytes(got);
    state.NoteTransfer(eof_form ? -1 : length, received, WallClockMs());
    if (!eof_form) {
      left -= static_cast<int64_t>(got);
      s = WriteAll(out, std::string_view(buf.data(), got), path);
      continue;
    }
    held.append(buf.data(), got);
    bool done = held.size() >= 40 && held.compare(held.size() - 40, 40, mark) == 0;
    size_t write = held.size() > 40 ? held.size() - 40 : 0;
    if (write > 0) {
      s = WriteAll(out, std::string_view(held.data(), write), path);
      held.erase(0, write);
    }
    if (done) break;
  }
  // No fsync: the file is read back at once, from the page cache, and unlinked after
  // the load; a replica that dies meanwhile syncs again. Syncing it would write the
  // whole image to the disk before the load could start.
  close(out);
  return s;
}

Status ReplicaLink::LoadRdbReading(Run& run, int fd, const std::string& path, int64_t offset,
                                   std::string* early) {
  Config& c = engine_->config();
  LinkIo io(fd, c.Int("repl-timeout") * 1000, run.stop);
  std::string off = std::to_string(offset);
  const std::string ack =
      "*3\r\n$8\r\nREPLCONF\r\n$3\r\nACK\r\n$" + std::to_string(off.size()) + "\r\n" + off + "\r\n";
  // The image holds everything up to its offset: the master may start the stream.
  Status link = io.Send(ack);
  auto promise = std::make_shared<std::promise<Status>>();
  std::future<Status> f = promise->get_future();
  SnapshotManager* sm = snapshots_;
  engine_->worker(0).PostExternal(MakeTask([sm, path, promise] {
    SnapshotManager::ReloadOptions o;
    o.rdb = path;
    sm->Reload(o, [promise](const Status& s) { promise->set_value(s); });
  }));
  // What the master would have kept for us is what we may keep for ourselves.
  int64_t limit = c.output_limit(ClientClass::kReplica).hard_bytes;
  int64_t next_ack_ms = MonoMs() + 1000;
  std::string buf(kChunk, '\0');
  while (link.ok() && f.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
    pollfd p{fd, POLLIN, 0};
    int ready = poll(&p, 1, 50);
    if (ready > 0) {
      ssize_t r = recv(fd, buf.data(), buf.size(), 0);
      if (r > 0) {
        early->append(buf.data(), static_cast<size_t>(r));
        if (limit > 0 && early->size() > static_cast<size_t>(limit)) {
          link = Status::InvalidArgument(
              "the stream read while loading passed client-output-buffer-limit replica's "
              "hard limit (" +
              std::to_string(limit) + " bytes)");
        }
      } else if (r == 0) {
        link = Status::InvalidArgument("the master closed the connection while we loaded");
      } else if (errno != EAGAIN && errno != EINTR) {
        link = Status::InvalidArgument(strerror(errno));
      }
    }
    // Our offset stays the image's until the stream is applied; the ACKs keep the
    // master's repl-timeout from dropping a replica that loads for long.
    if (link.ok() && MonoMs() >= next_ack_ms) {
      link = io.Send(ack);
      next_ack_ms += 1000;
    }
  }
  Status loaded = f.get();  // the load cannot be called back: it always ends
  if (!loaded.ok()) return loaded;
  return link;
}

}  // namespace strata
