"""A Sentinel failover drill, black-box, on loopback: a master and two replicas of the
target, three real redis-sentinel processes watching them, and a client that follows
Sentinel (redis-py's redis.sentinel) writing throughout. The master is killed with
SIGKILL; the sentinels must promote a replica, the writer must carry on against the new
master, every write a replica acknowledged (WAIT 1) must be on the new master, the other
replica must follow the new master, and the old master, restarted on its port with its
data dir and config file, must be turned into a replica of the new master by Sentinel.

The drill prints the unavailability (the longest gap between successful writes around
the failover), e.g. `failover unavailability: 3.21 s (target strata)`, and appends that
line to the file named by STRATA_FAILOVER_REPORT when the variable is set.

With STRATA_TEST_TARGET=redis the data nodes are redis-server: the same drill."""
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time

import pytest
import redis
from redis.sentinel import Sentinel

from conftest import TARGET, free_port

SENTINEL_BIN = "/usr/bin/redis-sentinel"
NAME = "mymaster"
# Two seconds: with one, a CI run on a busy two-core machine saw all three sentinels
# lose a new master's PING replies for a second right after a failover, and start a
# second failover (a legitimate Sentinel decision, but not the drill's subject).
DOWN_AFTER_MS = 2000
FAILOVER_TIMEOUT_MS = 10000

# Bounded waits (seconds). Sentinel needs ~2 s of hello messages to discover its peers,
# down-after + a vote to fail over (a split vote retries after 2 x failover-timeout), and
# ~8 s of a returning old master claiming to be a master before it reconfigures it.
SYNC_WAIT_S = 30.0
DISCOVERY_WAIT_S = 30.0
FAILOVER_WAIT_S = 60.0
FOLLOW_WAIT_S = 30.0
REJOIN_WAIT_S = 45.0
WRITES_ON_NEW_MASTER_S = 2.0

pytestmark = pytest.mark.skipif(not os.access(SENTINEL_BIN, os.X_OK),
                                reason="redis-sentinel is not installed (scripts/deps)")


def wait_until(pred, timeout, what):
    """Polls pred() until it returns something truthy (returned); AssertionError naming
    `what` and pred's last value after timeout seconds."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        try:
            last = pred()
        except (redis.RedisError, OSError) as e:
            last = e
        if last and not isinstance(last, Exception):
            return last
        if time.monotonic() > deadline:
            raise AssertionError("timed out after %.0f s waiting for %s (last: %r)"
                                 % (timeout, what, last))
        time.sleep(0.1)


def info_replication(port):
    c = redis.Redis(host="127.0.0.1", port=port, socket_timeout=5, decode_responses=True)
    try:
        return c.info("replication")
    finally:
        c.close()


def follows(port, master_port):
    """The node's INFO replication when it is a replica of master_port with its link up,
    else None."""
    i = info_replication(port)
    if (i.get("role") == "slave" and i.get("master_port") == master_port and
            i.get("master_link_status") == "up"):
        return i
    return None


def caught_up(replica_port, master_port):
    """True when the replica follows master_port and has applied its whole stream."""
    ri = follows(replica_port, master_port)
    mi = info_replication(master_port)
    return bool(ri) and ri.get("slave_repl_offset") == mi.get("master_repl_offset")


def wait_synced(replica_port, master_port, what):
    """Waits (SYNC_WAIT_S) for caught_up; the failure shows both sides' INFO."""
    try:
        wait_until(lambda: caught_up(replica_port, master_port), SYNC_WAIT_S, what)
    except AssertionError as e:
        sides = []
        for name, port in (("master", master_port), ("replica", replica_port)):
            try:
                sides.append("%s %d: %r" % (name, port, info_replication(port)))
            except (redis.RedisError, OSError) as err:
                sides.append("%s %d: %r" % (name, port, err))
        raise AssertionError("%s; %s" % (e, "; ".join(sides))) from None


def tail(path, lines=40):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError as e:
        return "(unreadable: %s)" % e


class SentinelProcess:
    """One redis-sentinel with a config file of its own (Sentinel rewrites it) in a temp
    dir; stop() ends it and removes the dir."""

    def __init__(self, master_port):
        self.port = free_port()  # Sentinel refuses port 0
        # Sentinel fsyncs its config at every change, a failover's included, with its
        # timers stopped meanwhile: on a busy disk that alone can outlast down-after and
        # start a second failover. Memory-backed, the fsync costs nothing.
        shm = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
        self.dir = tempfile.mkdtemp(prefix="strata-sentinel-", dir=shm)
        self.conf = os.path.join(self.dir, "sentinel.conf")
        self.log_path = os.path.join(self.dir, "sentinel.log")
        with open(self.conf, "w") as f:
            f.write("port %d\n"
                    "bind 127.0.0.1\n"
                    "daemonize no\n"
                    "dir %s\n"
                    "sentinel monitor %s 127.0.0.1 %d 2\n"
                    "sentinel down-after-milliseconds %s %d\n"
                    "sentinel failover-timeout %s %d\n"
                    "sentinel parallel-syncs %s 1\n"
                    % (self.port, self.dir, NAME, master_port, NAME, DOWN_AFTER_MS,
                       NAME, FAILOVER_TIMEOUT_MS, NAME))
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen([SENTINEL_BIN, self.conf], stdout=self.log,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def wait_ready(self, timeout=10.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError("redis-sentinel exited early (%s):\n%s"
                                     % (self.proc.returncode, tail(self.log_path)))
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(64).startswith(b"+PONG"):
                        return
            except OSError:
                pass
            time.sleep(0.05)
        raise AssertionError("redis-sentinel did not become ready:\n" + tail(self.log_path))

    def command(self, *args):
        c = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=5,
                        decode_responses=True)
        c.response_callbacks.clear()
        try:
            return c.execute_command(*args)
        finally:
            c.close()

    def entries(self, what):
        """SENTINEL REPLICAS / SENTINELS mymaster as a list of {field: value}."""
        return [dict(zip(e[::2], e[1::2])) for e in self.command("SENTINEL", what, NAME)]

    def master_port(self):
        host, port = self.command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", NAME)
        assert host == "127.0.0.1", host
        return int(port)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def sentinels():
    """start(master_port): three sentinels monitoring it; all stopped at the end."""
    started = []

    def start(master_port):
        for _ in range(3):
            started.append(SentinelProcess(master_port))
        for s in started:
            s.wait_ready()
        return list(started)

    yield start
    for s in started:
        s.stop()


class Writer(threading.Thread):
    """Follows Sentinel and writes SET w:<i> <i> in a loop, retrying on errors; after each
    successful SET, WAIT 1 200 on the same connection. Records (time, port) of each
    successful SET and the keys a replica acknowledged."""

    def __init__(self, sentinel_ports):
        super().__init__(daemon=True)
        self.sentinel_ports = sentinel_ports
        self.stop_event = threading.Event()
        self.lock = threading.Lock()
        self.writes = []  # (monotonic time of the reply, port written to)
        self.acked = {}  # key -> value, for writes WAIT counted >= 1 replica for
        self.errors = {}  # error type name -> count
        self.crash = None

    def snapshot(self):
        with self.lock:
            return list(self.writes), dict(self.acked)

    def _error(self, e):
        with self.lock:
            name = type(e).__name__
            self.errors[name] = self.errors.get(name, 0) + 1

    def run(self):
        try:
            self._run()
        except BaseException as e:  # noqa: B902 - reported by the test
            self.crash = e

    def _run(self):
        sentinel = Sentinel([("127.0.0.1", p) for p in self.sentinel_ports],
                            socket_timeout=0.5, socket_connect_timeout=0.5)
        master = sentinel.master_for(NAME, socket_timeout=0.5, socket_connect_timeout=0.5)
        pool = master.connection_pool
        i = 0
        try:
            while not self.stop_event.is_set():
                key, value = "w:%d" % i, str(i)
                try:
                    conn = pool.get_connection("SET")
                except redis.RedisError as e:  # no master known, or it refuses
                    self._error(e)
                    time.sleep(0.02)
                    continue
                try:
                    conn.send_command("SET", key, value)
                    reply = conn.read_response()
                    assert reply == b"OK", reply
                    with self.lock:
                        self.writes.append((time.monotonic(), conn.port))
                    i += 1
                    conn.send_command("WAIT", 1, 200)
                    if conn.read_response() >= 1:
                        with self.lock:
                            self.acked[key] = value
                except redis.RedisError as e:
                    self._error(e)
                    conn.disconnect()
                    time.sleep(0.02)
                finally:
                    pool.release(conn)
        finally:
            master.close()
            for s in sentinel.sentinels:
                s.close()


def restart(server):
    """Starts a killed conftest.Server again: the same command line, so the same port,
    config file and data dir; its log continues in the same file."""
    assert server.proc.poll() is not None, "the server is still running"
    server.log.write("\n---- test_sentinel: restarted on port %d ----\n" % server.port)
    server.log.flush()
    server.proc = subprocess.Popen(server.cmd, stdout=server.log, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL)
    server.wait_ready()


def report_line(text):
    print(text)
    path = os.environ.get("STRATA_FAILOVER_REPORT")
    if path:
        with open(path, "a") as f:
            f.write(text + "\n")


def test_sentinel_failover_drill(server_factory, sentinels, tmp_path):
    data_dir = str(tmp_path / "master-data")
    os.mkdir(data_dir)
    # Every data node gets a config file, so Sentinel's CONFIG REWRITE (sent with each
    # REPLICAOF it issues) has somewhere to write. Redis waits 5 s before a diskless sync
    # by default; 0 starts it at once (strata accepts the option).
    nodes_args = ["--repl-diskless-sync-delay", "0"]
    master = server_factory(config_text="# strata sentinel drill: master\n",
                            data_dir=data_dir, extra_args=nodes_args)
    replicas = [server_factory(config_text="# strata sentinel drill: replica\n",
                               extra_args=nodes_args +
                               ["--replicaof", "127.0.0.1 %d" % master.port])
                for _ in range(2)]
    nodes = {s.port: s for s in [master] + replicas}
    started = []
    writer = None

    def diagnostics():
        out = ["---- diagnostics (target %s) ----" % TARGET]
        for port, s in nodes.items():
            role = "old master" if s is master else "replica"
            out.append("== data node %d (%s) log tail:\n%s" % (port, role,
                                                               tail(s.log_path, 60)))
        for s in started:
            out.append("== sentinel %d log tail:\n%s" % (s.port, tail(s.log_path, 60)))
        if writer is not None:
            writes, acked = writer.snapshot()
            out.append("== writer: %d writes, %d acknowledged, errors %r, last writes %r"
                       % (len(writes), len(acked), writer.errors, writes[-3:]))
        print("\n".join(out))

    try:
        # 1. Both replicas in sync.
        mc = master.client()
        mc.set("drill:before", "1")
        for r in replicas:
            wait_synced(r.port, master.port, "replica %d to sync with the master %d"
                        % (r.port, master.port))
        mc.close()

        # 2. Three sentinels that see both replicas and each other.
        started.extend(sentinels(master.port))
        for s in started:
            wait_until(lambda: (len([e for e in s.entries("REPLICAS")
                                     if e["flags"] == "slave"]) == 2 and
                                len(s.entries("SENTINELS")) == 2),
                       DISCOVERY_WAIT_S,
                       "sentinel %d to list 2 replicas and 2 other sentinels" % s.port)
            assert s.master_port() == master.port
        replica_ports = sorted(int(e["port"]) for e in started[0].entries("REPLICAS"))
        assert replica_ports == sorted(r.port for r in replicas)

        # 3. The writer, following Sentinel; some acknowledged writes before the kill.
        writer = Writer([s.port for s in started])
        writer.start()
        deadline = time.monotonic() + 20.0
        while (len(writer.snapshot()[1]) < 50 and writer.crash is None and
               time.monotonic() < deadline):
            time.sleep(0.05)
        assert writer.crash is None, writer.crash
        writes, acked = writer.snapshot()
        assert len(acked) >= 50, (
            "only %d of %d writes on the master were acknowledged by a replica (WAIT 1 200 "
            "answered >= 1) within 20 s" % (len(acked), len(writes)))
        time.sleep(0.5)

        # 4. kill -9 the master; the sentinels name a new master; the writer follows.
        killed_at = time.monotonic()
        master.proc.send_signal(signal.SIGKILL)
        master.proc.wait(10)

        def new_master():
            ports = {s.master_port() for s in started}
            if len(ports) == 1 and master.port not in ports:
                return ports.pop()
            return None
        new_port = wait_until(new_master, FAILOVER_WAIT_S,
                              "all three sentinels to report a new master")
        failover_seen_s = time.monotonic() - killed_at
        assert new_port in replica_ports, (new_port, replica_ports)
        other_port = [p for p in replica_ports if p != new_port][0]

        def writes_on_new_master():
            writes, _ = writer.snapshot()
            assert writer.crash is None, writer.crash
            on_new = [t for t, p in writes if p == new_port and t > killed_at]
            return bool(on_new) and on_new[-1] - on_new[0] >= WRITES_ON_NEW_MASTER_S
        wait_until(writes_on_new_master, 30.0,
                   "%.0f s of successful writes on the new master %d"
                   % (WRITES_ON_NEW_MASTER_S, new_port))
        writer.stop_event.set()
        writer.join(10)
        assert not writer.is_alive(), "the writer did not stop"
        assert writer.crash is None, writer.crash
        writes, acked = writer.snapshot()
        # Once a write reached the new master, none went anywhere else.
        first_new = min(i for i, (t, p) in enumerate(writes) if p == new_port and
                        t > killed_at)
        stray = [(t - killed_at, p) for t, p in writes[first_new:] if p != new_port]
        assert not stray, "writes after the switch went elsewhere: %r" % stray[:5]

        # 5. Every acknowledged write is on the new master, which is a master; the other
        # replica follows it.
        nc = redis.Redis(host="127.0.0.1", port=new_port, socket_timeout=10,
                         decode_responses=True)
        try:
            keys = sorted(acked)
            lost = []
            for start in range(0, len(keys), 500):
                chunk = keys[start:start + 500]
                for k, v in zip(chunk, nc.mget(chunk)):
                    if v != acked[k]:
                        lost.append((k, acked[k], v))
            assert not lost, ("%d of %d acknowledged writes missing or wrong on the new "
                              "master %d: %r" % (len(lost), len(keys), new_port, lost[:10]))
            assert nc.get("drill:before") == "1"
            assert nc.info("replication")["role"] == "master"
        finally:
            nc.close()
        wait_until(lambda: follows(other_port, new_port), FOLLOW_WAIT_S,
                   "replica %d to follow the new master %d (role:slave, master_port, "
                   "master_link_status:up)" % (other_port, new_port))

        # 6. The old master, restarted on its port with its dir and config, is made a
        # replica of the new master by Sentinel.
        restart(master)
        wait_until(lambda: follows(master.port, new_port), REJOIN_WAIT_S,
                   "the restarted old master %d to become a replica of %d (role:slave, "
                   "master_port, master_link_status:up)" % (master.port, new_port))
        wait_synced(master.port, new_port, "the old master %d to catch up with %d"
                    % (master.port, new_port))
        oc = master.client(decode_responses=True)
        try:
            keys = sorted(acked)
            missing = [k for k, v in zip(keys, oc.mget(keys)) if v != acked[k]]
            assert not missing, ("%d acknowledged writes missing on the rejoined old "
                                 "master: %r" % (len(missing), missing[:10]))
        finally:
            oc.close()
        for s in started:
            assert s.master_port() == new_port

        # 7. Unavailability: the longest gap between successful writes around the kill.
        times = [t for t, _ in writes]
        gaps = [b - a for a, b in zip(times, times[1:]) if b > killed_at]
        assert gaps, "no successful write after the kill"
        unavailable = max(gaps)
        report_line("failover unavailability: %.2f s (target %s)" % (unavailable, TARGET))
        print("  sentinels agreed on the new master %.2f s after the kill; %d writes, %d "
              "acknowledged by a replica; writer errors %r"
              % (failover_seen_s, len(writes), len(acked), writer.errors))
    except BaseException:
        diagnostics()
        raise
    finally:
        if writer is not None and writer.is_alive():
            writer.stop_event.set()
            writer.join(10)
