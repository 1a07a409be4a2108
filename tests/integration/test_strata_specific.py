"""strata-only behaviour: I/O backend selection, worker threads, startup time, systemd
notification, and CLIENT SETINFO (a Redis 7.2 command that the 7.0 reference server does not have).

All of these are skipped when the target is redis-server.
"""
import os
import socket
import threading
import time

import pytest
import redis

from conftest import TARGET, RawConnection, Server
from helpers import cmd, error_of

pytestmark = pytest.mark.skipif(TARGET == "redis", reason="strata-specific behaviour")


# ---------------------------------------------------------------- I/O backend

def test_io_backend_epoll_forced(server_factory):
    s = server_factory(extra_args=["--io-backend", "epoll"])
    c = s.client(decode_responses=True)
    assert c.info("server")["io_backend"] == "epoll"
    assert c.set("k", "v") is True
    assert c.get("k") == "v"
    c.close()


def test_io_backend_auto(server_factory):
    s = server_factory(extra_args=["--io-backend", "auto"])
    c = s.client(decode_responses=True)
    assert c.info("server")["io_backend"] in ("epoll", "io_uring")
    c.close()


def test_io_backend_reported_by_default(server):
    c = server.client(decode_responses=True)
    assert c.info("server")["io_backend"] in ("epoll", "io_uring")
    c.close()


def test_io_backend_bogus_refuses_to_start(server_factory):
    s = server_factory(expect_fail=True, extra_args=["--io-backend", "bogus"])
    rc = s.wait_exit(10)
    assert rc is not None and rc != 0
    log = s.read_log()
    assert "io-backend" in log or "bogus" in log, log


@pytest.mark.parametrize("backend", ["io_uring", "epoll"])
def test_io_uring_wakeup_batch_is_told_in_the_log(server_factory, backend):
    """io-uring-wakeup-batch serves requests with either backend; the start-up log says
    it is in use with io_uring, and that it does nothing with epoll."""
    s = server_factory(threads=1, extra_args=["--io-backend", backend,
                                              "--io-uring-wakeup-batch", "8"])
    c = s.client(decode_responses=True)
    if c.info("server")["io_backend"] != backend:
        pytest.skip("io_uring unavailable here")
    clients = [s.client(decode_responses=True) for _ in range(20)]
    for round_ in range(20):
        for i, cl in enumerate(clients):
            assert cl.set("k%d" % i, round_) is True
            assert cl.get("k%d" % i) == str(round_)
    assert c.config_get("io-uring-wakeup-batch") == {"io-uring-wakeup-batch": "8"}
    log = s.read_log()
    if backend == "io_uring":
        assert "wake-up batches of up to 8 within 100 us" in log, log
        assert "has no effect" not in log
    else:
        assert "io-uring-wakeup-batch 8 has no effect with the epoll backend" in log, log
    for cl in clients + [c]:
        cl.close()


@pytest.mark.parametrize("backend", ["io_uring", "epoll"])
def test_io_uring_wakeup_batch_can_be_set_at_run_time(server_factory, backend):
    """CONFIG SET io-uring-wakeup-batch and -usec reach every worker's loop (on its timer)
    and the log says so; requests are served throughout; out-of-range values are
    refused."""
    s = server_factory(threads=2, extra_args=["--io-backend", backend])
    c = s.client(decode_responses=True)
    if c.info("server")["io_backend"] != backend:
        pytest.skip("io_uring unavailable here")
    clients = [s.client(decode_responses=True) for _ in range(10)]

    def traffic(round_):
        for i, cl in enumerate(clients):
            assert cl.set("k%d" % i, round_) is True
            assert cl.get("k%d" % i) == str(round_)

    def logged(text):
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if text in s.read_log():
                return True
            time.sleep(0.05)
        return False

    traffic(0)
    assert c.config_set("io-uring-wakeup-batch-usec", 400) is True
    assert c.config_set("io-uring-wakeup-batch", 8) is True
    assert c.config_get("io-uring-wakeup-batch*") == {
        "io-uring-wakeup-batch": "8", "io-uring-wakeup-batch-usec": "400"}
    if backend == "io_uring":
        assert logged("wake-up batches of up to 8 within 400 us"), s.read_log()
    else:
        assert logged("io-uring-wakeup-batch 8 has no effect with the epoll backend"), \
            s.read_log()
    for round_ in range(1, 20):
        traffic(round_)
    assert c.config_set("io-uring-wakeup-batch", 1) is True
    if backend == "io_uring":
        assert logged("wake-up batching off"), s.read_log()
    traffic(20)
    for bad in ("0", "257", "x"):
        with pytest.raises(redis.exceptions.ResponseError):
            c.config_set("io-uring-wakeup-batch", bad)
    with pytest.raises(redis.exceptions.ResponseError):
        c.config_set("io-uring-wakeup-batch-usec", 0)
    assert c.config_get("io-uring-wakeup-batch") == {"io-uring-wakeup-batch": "1"}
    for cl in clients + [c]:
        cl.close()


@pytest.mark.parametrize("backend", ["io_uring", "epoll"])
def test_io_uring_busy_poll_serves_every_kind_of_wake(server_factory, backend):
    """io-uring-busy-poll-usec: requests, pipelines, commands for the other worker's
    shard and a blocked client woken by another are all served while workers poll; an
    idle server still sleeps; CONFIG SET changes it at run time and the log says so;
    the epoll backend says it does nothing."""
    s = server_factory(threads=2, extra_args=["--io-backend", backend,
                                              "--io-uring-busy-poll-usec", "200"])
    c = s.client(decode_responses=True)
    if c.info("server")["io_backend"] != backend:
        pytest.skip("io_uring unavailable here")
    log = s.read_log()
    if backend == "io_uring":
        assert "busy polling for 200 us" in log, log
    else:
        assert "io-uring-busy-poll-usec 200 has no effect with the epoll backend" in log, log
    clients = [s.client(decode_responses=True) for _ in range(10)]
    for round_ in range(20):
        for i, cl in enumerate(clients):
            assert cl.set("k%d" % i, round_) is True
            assert cl.get("k%d" % i) == str(round_)
    pipe = c.pipeline(transaction=False)
    for i in range(500):
        pipe.incr("n%d" % (i % 50))
    assert pipe.execute()[-50:] == [10] * 50
    assert c.mget(["k%d" % i for i in range(10)]) == ["19"] * 10
    # A client blocked on one worker, woken by a push from a client of the other.
    got = []
    t = threading.Thread(target=lambda: got.append(clients[0].blpop(["q"], 10)), daemon=True)
    t.start()
    deadline = time.monotonic() + 10
    while c.info("clients")["blocked_clients"] < 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    for cl in clients[1:]:
        cl.rpush("q", "x")
        break
    t.join(10)
    assert got == [("q", "x")]
    # Idle, the workers sleep: far less than a core's time over a second.
    cpu0 = float(c.info("cpu")["used_cpu_user"]) + float(c.info("cpu")["used_cpu_sys"])
    time.sleep(1.0)
    cpu1 = float(c.info("cpu")["used_cpu_user"]) + float(c.info("cpu")["used_cpu_sys"])
    assert cpu1 - cpu0 < 0.5
    assert c.config_set("io-uring-busy-poll-usec", 0) is True
    expected = ("io-uring-busy-poll-usec set to 0: busy polling off" if backend == "io_uring"
                else "io-uring-busy-poll-usec 200 has no effect")
    deadline = time.monotonic() + 10
    while expected not in s.read_log() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert expected in s.read_log()
    assert clients[3].get("k3") == "19"
    for bad in ("-1", "100001", "x"):
        with pytest.raises(redis.exceptions.ResponseError):
            c.config_set("io-uring-busy-poll-usec", bad)
    assert c.config_get("io-uring-busy-poll-usec") == {"io-uring-busy-poll-usec": "0"}
    for cl in clients + [c]:
        cl.close()


# ---------------------------------------------------------------- worker threads

@pytest.mark.parametrize("threads", [1, 4])
def test_commands_work_with_threads(server_factory, threads):
    s = server_factory(threads=threads)
    c = s.client(decode_responses=True)
    n = 2000
    p = c.pipeline(transaction=False)
    for i in range(n):
        p.set("key:%d" % i, "val:%d" % i)
    assert all(p.execute())
    assert c.dbsize() == n
    p = c.pipeline(transaction=False)
    for i in range(n):
        p.get("key:%d" % i)
    assert p.execute() == ["val:%d" % i for i in range(n)]
    keys = ["key:%d" % i for i in range(0, n, 97)]
    assert c.mget(keys) == ["val:%d" % i for i in range(0, n, 97)]
    assert c.mset({k: "new" for k in keys}) is True
    assert c.mget(keys) == ["new"] * len(keys)
    assert c.delete(*keys) == len(keys)
    assert c.dbsize() == n - len(keys)
    assert len(c.keys("key:1*")) == len([i for i in range(n) if str(i).startswith("1")
                                         and i % 97 != 0])
    c.select(1)
    assert c.dbsize() == 0
    assert c.flushall() is True
    c.select(0)
    assert c.dbsize() == 0
    c.close()


def test_concurrent_incr_with_4_threads(server_factory):
    s = server_factory(threads=4)
    per_client, clients = 500, 6
    errors = []

    def work():
        c = s.client()
        try:
            for i in range(per_client):
                c.incr("counter")
                c.incr("counter:%d" % (i % 16))
        except Exception as e:  # pragma: no cover
            errors.append(repr(e))
        finally:
            c.close()

    threads = [threading.Thread(target=work) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors
    c = s.client(decode_responses=True)
    assert c.get("counter") == str(per_client * clients)
    total = sum(int(c.get("counter:%d" % i)) for i in range(16))
    assert total == per_client * clients
    c.close()


def test_pipeline_order_with_4_threads(server_factory):
    s = server_factory(threads=4)
    conn = RawConnection(s.port)
    try:
        req = b"".join(cmd("SET", "k_%d" % i, "v_%d" % i) + cmd("GET", "k_%d" % i)
                       for i in range(1000))
        conn.send(req)
        for i in range(1000):
            assert conn.read_reply() == b"+OK\r\n"
            v = b"v_%d" % i
            assert conn.read_reply() == b"$%d\r\n%s\r\n" % (len(v), v)
    finally:
        conn.close()


# ---------------------------------------------------------------- startup

def test_accepts_connections_quickly(server_factory):
    t0 = time.monotonic()
    s = server_factory()
    elapsed = time.monotonic() - t0
    assert elapsed < 2.0, "took %.2fs to accept connections" % elapsed
    c = s.client()
    assert c.ping() is True
    c.close()


# ---------------------------------------------------------------- CLIENT SETINFO (Redis 7.2)

def test_client_setinfo(r):
    assert r.execute_command("CLIENT", "SETINFO", "lib-name", "mylib") == "OK"
    assert r.execute_command("CLIENT", "SETINFO", "lib-ver", "1.0") == "OK"
    fields = dict(f.split("=", 1) for f in r.execute_command("CLIENT", "INFO").split())
    assert fields["lib-name"] == "mylib"
    assert fields["lib-ver"] == "1.0"
    assert "lib-name=mylib lib-ver=1.0" in r.execute_command("CLIENT", "LIST")


def test_client_setinfo_errors(r):
    assert error_of(r.execute_command, "CLIENT", "SETINFO", "badger", "x") == (
        "Unrecognized option 'badger'")
    assert error_of(r.execute_command, "CLIENT", "SETINFO", "lib-name", "a b") == (
        "lib-name cannot contain spaces, newlines or special characters.")
    assert error_of(r.execute_command, "CLIENT", "SETINFO", "lib-ver", "1\n2") == (
        "lib-ver cannot contain spaces, newlines or special characters.")
    assert error_of(r.execute_command, "CLIENT", "SETINFO", "lib-name") == (
        "wrong number of arguments for 'client|setinfo' command")


def test_systemd_notify_ready_and_stopping(tmp_path, monkeypatch):
    """Type=notify: READY=1 once the server accepts connections, STOPPING=1 on SIGTERM."""
    path = str(tmp_path / "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.settimeout(10)
    monkeypatch.setenv("NOTIFY_SOCKET", path)  # inherited by the server process
    s = Server()
    try:
        ready = sock.recv(256).decode()
        assert "READY=1" in ready.split("\n")
        assert s.client().ping()
        s.proc.terminate()
        assert sock.recv(256).decode() == "STOPPING=1"
        assert s.wait_exit(20) == 0
    finally:
        s.stop()
        sock.close()
        os.unlink(path)


def test_pidfile_written_and_removed(server_factory, tmp_path):
    pidfile = tmp_path / "strata.pid"
    s = server_factory(extra_args=["--pidfile", str(pidfile)])
    assert int(pidfile.read_text()) == s.proc.pid
    s.proc.terminate()
    assert s.wait_exit(20) == 0
    assert not pidfile.exists()


def test_unwritable_pidfile_is_a_warning(server_factory, tmp_path):
    pidfile = tmp_path / "no-such-dir" / "strata.pid"
    s = server_factory(extra_args=["--pidfile", str(pidfile)])
    assert s.client().ping()
    assert "Failed to write PID file" in s.read_log()
