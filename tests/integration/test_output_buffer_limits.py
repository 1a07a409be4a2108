"""client-output-buffer-limit: a client that asks for replies and never reads them is
closed once its queued output passes the limit, logged and counted, while the others
are served as usual; CONFIG GET/SET speak Redis's form; CLIENT LIST shows queued output."""
import socket
import time

import pytest

from helpers import cmd, wait_for

VALUE = 1024 * 1024  # bytes per reply


def slow_reader(port, requests):
    """A client that sends `requests` GETs of the big value and reads nothing."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
    s.settimeout(10)
    s.connect(("127.0.0.1", port))
    s.sendall(cmd("GET", "big") * requests)
    return s


def client_fields(c, sock):
    """The CLIENT LIST fields of the connection `sock`, or None once the server closed it
    (the test never reads from a slow reader: reading would drain what is queued)."""
    addr = "%s:%d" % sock.getsockname()
    for line in c.execute_command("CLIENT", "LIST").splitlines():
        fields = dict(f.split("=", 1) for f in line.split(" ") if "=" in f)
        if fields.get("addr") == addr:
            return fields
    return None


def info_stat(c, name):
    return int(c.info("stats").get(name, 0))


def test_defaults_and_config_form(server, r):
    assert r.config_get("client-output-buffer-limit") == {
        "client-output-buffer-limit":
            "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"}
    assert r.config_set("client-output-buffer-limit", "normal 1mb 512kb 10") is True
    assert r.config_get("client-output-buffer-limit")["client-output-buffer-limit"] == (
        "normal 1048576 524288 10 slave 268435456 67108864 60 pubsub 33554432 8388608 60")
    with pytest.raises(Exception, match="Invalid client class"):
        r.config_set("client-output-buffer-limit", "foo 1 1 1")
    with pytest.raises(Exception, match="Wrong number of arguments"):
        r.config_set("client-output-buffer-limit", "normal 1 1")
    r.config_set("client-output-buffer-limit", "normal 0 0 0")


def test_slow_reader_is_cut_at_the_hard_limit_while_others_are_served(server_factory):
    s = server_factory(extra_args=["--client-output-buffer-limit", "normal 32mb 0 0"])
    c = s.client(decode_responses=True)
    try:
        c.set("big", "x" * VALUE)
        before = info_stat(c, "client_output_buffer_limit_disconnections")
        slow = slow_reader(s.port, 200)  # 200 MB of replies, never read
        try:
            # Others are served at once while the slow reader fills its buffer: most
            # PINGs answer in well under a second. (One may wait longer when the
            # machine is busy with other tests: the bound on the worst is loose.)
            took = []
            for _ in range(50):
                t = time.monotonic()
                assert c.ping() is True
                took.append(time.monotonic() - t)
            took.sort()
            assert took[len(took) // 2] < 0.25, "the median PING took %.3fs" % took[25]
            assert took[-1] < 5.0, "a PING took %.3fs" % took[-1]
            wait_for(lambda: "overcoming of output buffer limits" in s.read_log(),
                     what="the disconnection in the log")
            wait_for(lambda: client_fields(c, slow) is None, what="the slow reader closed")
        finally:
            slow.close()
        if not s.is_redis:  # Redis 7.0 does not count it in INFO (7.2 does)
            assert info_stat(c, "client_output_buffer_limit_disconnections") == before + 1
        assert c.ping() is True
    finally:
        c.close()


def test_soft_limit_closes_a_reader_that_stays_over_it(server_factory):
    s = server_factory(extra_args=["--client-output-buffer-limit", "normal 0 2mb 1"])
    c = s.client(decode_responses=True)
    try:
        c.set("big", "x" * VALUE)
        slow = slow_reader(s.port, 16)  # past 2 MB queued: the soft limit's clock starts
        try:
            wait_for(lambda: int((client_fields(c, slow) or {}).get("omem", 0)) >= 2 * VALUE,
                     what="the slow reader's output past the soft limit")
            time.sleep(0.3)
            assert client_fields(c, slow) is not None  # not yet: 1 second allowed
            time.sleep(2.0)  # Redis counts the soft limit's time in whole seconds
            slow.sendall(cmd("GET", "big"))  # still over the limit past the second
            wait_for(lambda: client_fields(c, slow) is None, what="the slow reader closed")
        finally:
            slow.close()
        wait_for(lambda: "overcoming of output buffer limits" in s.read_log(),
                 what="the disconnection in the log")
    finally:
        c.close()


def test_no_limit_by_default_for_normal_clients(server_factory):
    s = server_factory()
    c = s.client(decode_responses=True)
    try:
        c.set("big", "x" * VALUE)
        slow = slow_reader(s.port, 40)
        try:
            # Its queued output shows in CLIENT LIST: bytes (omem) and blocks (oll).
            fields = wait_for(
                lambda: (lambda f: f if f and int(f["omem"]) >= 4 * VALUE else None)(
                    client_fields(c, slow)),
                what="the slow reader's queued output in CLIENT LIST")
            time.sleep(0.5)
            assert client_fields(c, slow) is not None  # no limit: not closed
            assert int(fields["oll"]) > 0
            assert int(fields["tot-mem"]) >= int(fields["omem"])
        finally:
            slow.close()
    finally:
        c.close()


def test_maxmemory_clients_evicts_the_biggest_client(server_factory):
    s = server_factory(extra_args=["--maxmemory-clients", "8mb"], threads=3)
    c = s.client(decode_responses=True)
    # Small clients spread over every worker: none is closed while the hog, on one of
    # the workers, is the one to go.
    bystanders = [s.client(decode_responses=True) for _ in range(6)]
    for b in bystanders:
        assert b.ping() is True
    try:
        assert c.config_get("maxmemory-clients") == {"maxmemory-clients": "8388608"}
        c.set("big", "x" * VALUE)
        protected = slow_reader(s.port, 0)
        protected.sendall(cmd("CLIENT", "NO-EVICT", "on"))
        assert protected.recv(64) == b"+OK\r\n"
        # Big too, but exempt. Under the limit on its own with room to spare: its output
        # buffer's growth (and the read buffers) must not take the total over before the
        # hog comes, or every small client would have to go.
        protected.sendall(cmd("GET", "big") * 4)
        hog = slow_reader(s.port, 30)
        try:
            # Seen first (a connection is listed once its worker has taken it), then gone.
            evicted = int(c.info("stats")["evicted_clients"]) > 0
            wait_for(lambda: evicted or client_fields(c, hog) is not None or
                     int(c.info("stats")["evicted_clients"]) > 0, what="the hog connected")
            wait_for(lambda: client_fields(c, hog) is None, what="the hog evicted")
            assert int(c.info("stats")["evicted_clients"]) >= 1
            assert client_fields(c, protected) is not None
            assert c.ping() is True
            for b in bystanders:
                assert b.ping() is True
            assert int(c.info("stats")["evicted_clients"]) == 1
        finally:
            hog.close()
            protected.close()
    finally:
        c.close()
        for b in bystanders:
            b.close()
