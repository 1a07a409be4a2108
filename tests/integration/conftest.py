"""Black-box test harness: starts a real server binary on a free loopback port.

The target is strata-server by default. Set STRATA_TEST_TARGET=redis to run the same
tests against Debian's redis-server, which is how the expected behaviour of each test
is checked against the Redis 7 reference.

Environment:
  STRATA_TEST_TARGET   strata (default) | redis
  STRATA_SERVER_BIN    path to strata-server (default: build/server/strata-server)
  STRATA_TEST_THREADS  worker threads for strata (default 2)
  STRATA_TEST_IO_BACKEND  --io-backend for strata (default: the server's own default)
  STRATA_TEST_SERVER_ARGS  more arguments for every strata-server, split on spaces
                       (e.g. "--io-uring-wakeup-batch 8")
  STRATA_SANITIZED     1 when the server is a sanitizer build (skips RSS-based checks)
"""
import os
import shutil
import socket
import subprocess
import tempfile
import time

import pytest
import redis

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TARGET = os.environ.get("STRATA_TEST_TARGET", "strata")
STRATA_BIN = os.environ.get(
    "STRATA_SERVER_BIN", os.path.join(REPO, "build", "server", "strata-server"))
THREADS = int(os.environ.get("STRATA_TEST_THREADS", "2"))
IO_BACKEND = os.environ.get("STRATA_TEST_IO_BACKEND", "")
SERVER_ARGS = os.environ.get("STRATA_TEST_SERVER_ARGS", "").split()
START_TIMEOUT_S = 10.0


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listener_inodes(port):
    """The inodes of the TCP sockets listening on `port` (IPv4 and IPv6)."""
    found = set()
    for path in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(path) as f:
                lines = f.read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            f = line.split()
            if len(f) > 9 and f[3] == "0A" and int(f[1].rsplit(":", 1)[1], 16) == port:
                found.add(f[9])
    return found


def socket_inodes(pid):
    """The inodes of the sockets process `pid` holds; None when /proc does not say (it is
    gone, or not ours to read)."""
    out = set()
    try:
        fds = os.listdir("/proc/%d/fd" % pid)
    except OSError:
        return None
    for fd in fds:
        try:
            link = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except OSError:
            continue
        if link.startswith("socket:["):
            out.add(link[8:-1])
    return out


class PortTaken(RuntimeError):
    """The server could not listen: its port was taken after free_port() chose it."""


class Server:
    """One running server process. Stop it with stop(); tests never leave one behind."""

    def __init__(self, extra_args=None, threads=None, config_text=None, expect_fail=False,
                 data_dir=None, save="", port=None):
        # port: a given one (a restart on the same port); else a free one. A free port
        # can be taken by another test's server between free_port() and the bind: then
        # this one exits at once, and starts again on another port.
        for attempt in range(3):
            try:
                self._start(extra_args, threads, config_text, expect_fail, data_dir, save,
                            port or free_port())
                return
            except PortTaken:
                if port is not None or attempt == 2:
                    raise

    def _start(self, extra_args, threads, config_text, expect_fail, data_dir, save, port):
        self.port = port
        self.dir = tempfile.mkdtemp(prefix="strata-test-")
        # data_dir: where snapshots go (kept across restarts; the caller removes it).
        self.data_dir = data_dir or self.dir
        self.log_path = os.path.join(self.dir, "server.log")
        args = []
        if config_text is not None:
            conf = os.path.join(self.dir, "test.conf")
            with open(conf, "w") as f:
                f.write(config_text)
            args.append(conf)
        args += ["--port", str(self.port), "--bind", "127.0.0.1", "--save", save,
                 "--appendonly", "no", "--dir", self.data_dir]
        if TARGET == "redis":
            cmd = ["redis-server"] + args
        else:
            cmd = [STRATA_BIN] + args + ["--threads", str(threads or THREADS)]
            if IO_BACKEND:
                cmd += ["--io-backend", IO_BACKEND]
            cmd += SERVER_ARGS
        cmd += list(extra_args or [])
        self.cmd = cmd
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL)
        if not expect_fail:
            self.wait_ready()

    @property
    def is_redis(self):
        return TARGET == "redis"

    def wait_ready(self):
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                log = self.read_log()
                if "Address already in use" in log:
                    self.log.close()
                    shutil.rmtree(self.dir, ignore_errors=True)
                    raise PortTaken(self.port)
                raise RuntimeError("server exited early (%s):\n%s" % (self.proc.returncode, log))
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    s.sendall(b"PING\r\n")
                    reply = s.recv(64)
                # Up (NOAUTH: a password is set) - and this process is the one listening,
                # not another test's server that took the port first (when /proc shows
                # whose the listener is).
                if reply.startswith(b"+PONG") or reply.startswith(b"-NOAUTH"):
                    owners = listener_inodes(self.port)
                    mine = socket_inodes(self.proc.pid)
                    if not owners or mine is None or owners & mine:
                        return
            except OSError:
                pass
            time.sleep(0.02)
        raise RuntimeError("server did not become ready in %.0fs:\n%s" % (START_TIMEOUT_S,
                                                                          self.read_log()))

    def read_log(self):
        try:
            if not self.log.closed:
                self.log.flush()
            with open(self.log_path) as f:
                return f.read()
        except OSError:
            return ""

    def client(self, **kw):
        kw.setdefault("socket_timeout", 10)
        return redis.Redis(host="127.0.0.1", port=self.port, **kw)

    def wait_exit(self, timeout=10):
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(self):
        if self.log.closed:
            return  # stopped already (a test's own finally, then the fixture)
        code = self.proc.poll()
        if code is not None and code != 0:
            # Died before the test stopped it (or the test killed it): the log's tail goes
            # to the captured output, which pytest shows when the test failed.
            log = self.read_log()
            print("server on port %d had exited (%s); log tail:\n%s"
                  % (self.port, code, log[-6000:]))
        if self.proc.poll() is None:
            self.proc.terminate()
            if self.wait_exit(10) is None:
                # A server that does not stop on SIGTERM is a bug: its log goes to the
                # captured output before it is killed.
                print("server on port %d did not exit within 10 s of SIGTERM; log tail:\n%s"
                      % (self.port, self.read_log()[-6000:]))
                self.proc.kill()
                self.proc.wait(5)
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def server_factory():
    started = []

    def make(**kw):
        expect_fail = kw.pop("expect_fail", False)
        s = Server(expect_fail=True, **kw)
        started.append(s)  # registered first, so a failed start is still cleaned up
        if not expect_fail:
            s.wait_ready()
        return s

    yield make
    for s in started:
        s.stop()


@pytest.fixture(scope="module")
def shared_server():
    s = Server()
    yield s
    s.stop()


@pytest.fixture
def server(shared_server):
    """A running server (shared by a test module), flushed before each test."""
    c = shared_server.client()
    c.flushall()
    c.close()
    return shared_server


@pytest.fixture
def r(server):
    """redis-py client with str replies, RESP2."""
    c = server.client(decode_responses=True)
    yield c
    c.close()


@pytest.fixture
def rb(server):
    """redis-py client with bytes replies."""
    c = server.client()
    yield c
    c.close()


@pytest.fixture
def rc(server):
    """Client without redis-py reply post-processing: replies come back as sent."""
    c = server.client(decode_responses=True)
    c.response_callbacks.clear()
    yield c
    c.close()


class RawConnection:
    """A plain socket for byte-exact protocol tests."""

    def __init__(self, port, timeout=5, source=None):
        # source: the local address to connect from (e.g. 127.0.0.2, which is loopback
        # but not an address Redis's protected mode counts as local).
        self.sock = socket.create_connection(
            ("127.0.0.1", port), timeout=timeout,
            source_address=(source, 0) if source else None)
        self.buf = b""

    def send(self, data):
        self.sock.sendall(data)

    def read_until_closed(self, limit=1 << 20):
        out = b""
        try:
            while len(out) < limit:
                chunk = self.sock.recv(65536)
                if not chunk:
                    break
                out += chunk
        except socket.timeout:
            pass
        return out

    def _fill(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed by server")
        self.buf += chunk

    def read_line(self):
        while b"\r\n" not in self.buf:
            self._fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def read_reply(self):
        """Reads one RESP2/RESP3 reply and returns its raw bytes."""
        line = self.read_line()
        out = line + b"\r\n"
        t = line[:1]
        if t in (b"$", b"=", b"!"):
            n = int(line[1:])
            if n >= 0:
                while len(self.buf) < n + 2:
                    self._fill()
                out += self.buf[:n + 2]
                self.buf = self.buf[n + 2:]
        elif t in (b"*", b"~", b">"):
            n = int(line[1:])
            for _ in range(max(n, 0)):
                out += self.read_reply()
        elif t == b"%":
            n = int(line[1:])
            for _ in range(2 * n):
                out += self.read_reply()
        return out

    def close(self):
        self.sock.close()


def has_command(server, name):
    """True when the server implements `name` (COMMAND INFO answers for it)."""
    c = RawConnection(server.port)
    try:
        c.send(b"*3\r\n$7\r\nCOMMAND\r\n$4\r\nINFO\r\n$%d\r\n%s\r\n"
               % (len(name), name.encode()))
        reply = c.read_reply()
        # "*1\r\n*-1\r\n" (RESP2 null entry) means the command is unknown.
        return not reply.startswith(b"*1\r\n*-1")
    finally:
        c.close()


def require_commands(server, *names):
    """Skips the calling test when the server lacks one of the commands (for tests that
    need a data type that has not landed yet); runs it everywhere else."""
    missing = [n for n in names if not has_command(server, n)]
    if missing:
        pytest.skip("server lacks " + ", ".join(missing))


@pytest.fixture
def raw(server):
    conns = []

    def make():
        c = RawConnection(server.port)
        conns.append(c)
        return c

    yield make
    for c in conns:
        c.close()


@pytest.fixture(scope="module")
def redis_reference():
    """A redis-server beside the target, for tests that compare the two (module-wide)."""
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    from helpers import start_redis_server
    s = start_redis_server()
    yield s
    s.stop()


@pytest.fixture
def pair(server, redis_reference):
    """(target client, redis-server client), both flushed, replies as sent (bytes, no
    reply post-processing): for helpers.same()."""
    a = server.client()
    b = redis_reference.client()
    for c in (a, b):
        c.response_callbacks.clear()
        c.flushall()
    yield a, b
    a.close()
    b.close()
