"""Blocking sorted-set pops: BZPOPMIN, BZPOPMAX, BZMPOP.

Immediate pops, timeouts, wake-ups by ZADD/ZINCRBY/ZUNIONSTORE/ZRANGESTORE when the key
lives on another thread than the blocked client, first-come first-served order, list and
sorted-set waiters on one key, disconnects, and timeouts racing adds (no member lost,
none delivered twice). Keys with different hash tags ("{1}z", "{2}z") usually land on
different shards of a multi-threaded strata; the same tests run against redis-server.
"""
import socket
import threading
import time

import pytest
import redis

from conftest import TARGET
from helpers import resp


def blocked_count(c):
    info = c.execute_command("INFO", "clients")
    if isinstance(info, dict):
        return int(info["blocked_clients"])
    for line in info.splitlines():
        if line.startswith("blocked_clients:"):
            return int(line.split(":", 1)[1])
    raise AssertionError("no blocked_clients in INFO")


def wait_blocked(c, n, timeout=5.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if blocked_count(c) >= n:
            return
        time.sleep(0.01)
    raise AssertionError("expected %d blocked clients, have %d" % (n, blocked_count(c)))


def in_thread(fn, *args):
    result = {}

    def run():
        try:
            result["value"] = fn(*args)
        except Exception as e:  # noqa: BLE001 - reported by the test
            result["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, result


def raw_client(server):
    c = server.client(decode_responses=True)
    c.response_callbacks.clear()
    return c


def test_timeout_returns_nil(server):
    c = raw_client(server)
    t0 = time.time()
    assert c.execute_command("BZPOPMIN", "nothing", "0.3") is None
    assert 0.25 <= time.time() - t0 < 2.0
    assert c.execute_command("BZPOPMAX", "nothing", "other", "0.1") is None
    assert c.execute_command("BZMPOP", "0.1", "2", "nothing", "other", "MIN") is None
    assert c.execute_command("BZMPOP", "0.1", "1", "nothing", "MAX", "COUNT", "3") is None


def test_immediate_pop_when_data_is_there(server):
    c = raw_client(server)
    c.execute_command("ZADD", "{1}z", "1", "a", "2", "b", "3", "c")
    assert c.execute_command("BZPOPMIN", "{2}z", "{1}z", "1") == ["{1}z", "a", "1"]
    assert c.execute_command("BZPOPMAX", "{1}z", "1") == ["{1}z", "c", "3"]
    assert c.execute_command("BZMPOP", "1", "2", "{2}z", "{1}z", "MIN", "COUNT", "5") == [
        "{1}z", [["b", "2"]]]
    assert c.execute_command("EXISTS", "{1}z") == 0
    c.execute_command("ZADD", "{1}z", "1.5", "a")
    assert c.execute_command("BZPOPMAX", "{1}z", "0") == ["{1}z", "a", "1.5"]


@pytest.mark.parametrize("adder_key,blocked_keys", [
    ("{1}z", ["{1}z"]),
    ("{2}z", ["{1}z", "{2}z", "{3}z"]),
])
def test_wakeup_across_threads(server, adder_key, blocked_keys):
    waiter = raw_client(server)
    adder = raw_client(server)
    t, res = in_thread(waiter.execute_command, "BZPOPMIN", *blocked_keys, "5")
    wait_blocked(adder, 1)
    assert adder.execute_command("ZADD", adder_key, "2", "x", "1", "y") == 2
    t.join(5)
    assert res.get("value") == [adder_key, "y", "1"]
    assert adder.execute_command("ZRANGE", adder_key, "0", "-1") == ["x"]
    assert blocked_count(adder) == 0


def test_bzmpop_count_wakeup(server):
    waiter = raw_client(server)
    adder = raw_client(server)
    t, res = in_thread(waiter.execute_command, "BZMPOP", "5", "2", "{1}a", "{2}b", "MAX",
                       "COUNT", "3")
    wait_blocked(adder, 1)
    adder.execute_command("ZADD", "{2}b", "1", "p", "2", "q")
    t.join(5)
    assert res.get("value") == ["{2}b", [["q", "2"], ["p", "1"]]]
    assert adder.execute_command("EXISTS", "{2}b") == 0


@pytest.mark.parametrize("how", ["zincrby", "zunionstore", "zrangestore", "zadd_incr"])
def test_other_writers_wake_waiters(server, how):
    waiter = raw_client(server)
    writer = raw_client(server)
    writer.execute_command("ZADD", "{2}src", "7", "s")
    t, res = in_thread(waiter.execute_command, "BZPOPMAX", "{1}dst", "5")
    wait_blocked(writer, 1)
    if how == "zincrby":
        writer.execute_command("ZINCRBY", "{1}dst", "7", "s")
    elif how == "zunionstore":
        writer.execute_command("ZUNIONSTORE", "{1}dst", "1", "{2}src")
    elif how == "zrangestore":
        writer.execute_command("ZRANGESTORE", "{1}dst", "{2}src", "0", "-1")
    else:
        writer.execute_command("ZADD", "{1}dst", "INCR", "7", "s")
    t.join(5)
    assert res.get("value") == ["{1}dst", "s", "7"]
    assert writer.execute_command("EXISTS", "{1}dst") == 0


def test_clients_served_in_the_order_they_blocked(server):
    adder = raw_client(server)
    waiters = []
    for i in range(5):
        c = raw_client(server)
        waiters.append(in_thread(c.execute_command, "BZPOPMIN", "{7}fifo", "5"))
        wait_blocked(adder, i + 1)
    adder.execute_command("ZADD", "{7}fifo", "0", "m0", "1", "m1", "2", "m2", "3", "m3", "4",
                          "m4")
    for i, (t, res) in enumerate(waiters):
        t.join(5)
        assert res.get("value") == ["{7}fifo", "m%d" % i, str(i)]


def test_list_and_zset_waiters_on_one_key(server):
    adder = raw_client(server)
    lw = raw_client(server)
    zw = raw_client(server)
    tl, rl = in_thread(lw.execute_command, "BLPOP", "{4}k", "5")
    wait_blocked(adder, 1)
    tz, rz = in_thread(zw.execute_command, "BZPOPMIN", "{4}k", "5")
    wait_blocked(adder, 2)
    # The list waiter came first but waits for a list: the sorted-set waiter is served.
    adder.execute_command("ZADD", "{4}k", "1", "m")
    tz.join(5)
    assert rz.get("value") == ["{4}k", "m", "1"]
    assert blocked_count(adder) == 1
    adder.execute_command("RPUSH", "{4}k", "v")
    tl.join(5)
    assert rl.get("value") == ["{4}k", "v"]


def test_errors(r):
    r.set("str", "x")
    with pytest.raises(redis.ResponseError, match="^WRONGTYPE"):
        r.execute_command("BZPOPMIN", "str", "1")
    with pytest.raises(redis.ResponseError, match="^WRONGTYPE"):
        r.execute_command("BZMPOP", "1", "2", "nokey", "str", "MIN")
    with pytest.raises(redis.ResponseError, match="^timeout is negative$"):
        r.execute_command("BZPOPMIN", "z", "-1")
    with pytest.raises(redis.ResponseError, match="^timeout is not a float or out of range$"):
        r.execute_command("BZPOPMAX", "z", "abc")
    with pytest.raises(redis.ResponseError, match="^timeout is not a float or out of range$"):
        r.execute_command("BZMPOP", "x", "1", "z", "MIN")
    with pytest.raises(redis.ResponseError, match="^numkeys should be greater than 0$"):
        r.execute_command("BZMPOP", "1", "0", "z", "MIN")
    with pytest.raises(redis.ResponseError, match="^syntax error$"):
        r.execute_command("BZMPOP", "1", "1", "z", "UP")
    with pytest.raises(redis.ResponseError, match="^syntax error$"):
        r.execute_command("BZMPOP", "1", "2", "z", "MIN")
    with pytest.raises(redis.ResponseError, match="^count should be greater than 0$"):
        r.execute_command("BZMPOP", "1", "1", "z", "MIN", "COUNT", "0")
    with pytest.raises(redis.ResponseError, match="^wrong number of arguments"):
        r.execute_command("BZPOPMIN", "z")
    with pytest.raises(redis.ResponseError, match="^wrong number of arguments"):
        r.execute_command("BZMPOP", "1", "1", "z")


def test_resp3_replies(server):
    s = socket.create_connection(("127.0.0.1", server.port), timeout=5)
    try:
        s.sendall(resp("HELLO", "3"))
        time.sleep(0.2)
        s.recv(65536)
        s.sendall(resp("ZADD", "z", "1.5", "a", "2", "b") + resp("BZPOPMIN", "z", "1")
                  + resp("BZMPOP", "1", "1", "z", "MAX") + resp("BZPOPMAX", "z", "0.05"))
        want = (b":2\r\n" b"*3\r\n$1\r\nz\r\n$1\r\na\r\n,1.5\r\n"
                b"*2\r\n$1\r\nz\r\n*1\r\n*2\r\n$1\r\nb\r\n,2\r\n" b"_\r\n")
        got = b""
        deadline = time.time() + 5
        while len(got) < len(want) and time.time() < deadline:
            got += s.recv(65536)
        assert got == want
    finally:
        s.close()


def test_disconnect_while_blocked_loses_nothing(server):
    adder = raw_client(server)
    s = socket.create_connection(("127.0.0.1", server.port), timeout=5)
    s.sendall(resp("BZPOPMIN", "{1}d", "0"))
    wait_blocked(adder, 1)
    s.close()
    deadline = time.time() + 5
    while time.time() < deadline and blocked_count(adder) > 0:
        time.sleep(0.01)
    assert blocked_count(adder) == 0
    assert adder.execute_command("ZADD", "{1}d", "1", "kept") == 1
    assert adder.execute_command("ZRANGE", "{1}d", "0", "-1") == ["kept"]


def test_timeouts_racing_adds_lose_nothing(server):
    """Many short blocking pops time out while adders run: every added member is either
    still in a sorted set or was delivered to exactly one client."""
    keys = ["{%d}race" % i for i in range(4)]
    added = []
    received = []
    lock = threading.Lock()
    stop = threading.Event()

    def adder(idx):
        c = server.client(decode_responses=True)
        n = 0
        while not stop.is_set():
            m = "p%d-%d" % (idx, n)
            c.zadd(keys[n % len(keys)], {m: n})
            with lock:
                added.append(m)
            n += 1
            time.sleep(0.002)

    def popper(i):
        c = raw_client(server)
        while not stop.is_set():
            if i % 2:
                got = c.execute_command("BZPOPMIN", *keys, "0.01")
                got = [got[1]] if got else []
            else:
                got = c.execute_command("BZMPOP", "0.01", str(len(keys)), *keys, "MAX",
                                        "COUNT", "2")
                got = [m for m, _ in got[1]] if got else []
            with lock:
                received.extend(got)

    threads = [threading.Thread(target=adder, args=(i,)) for i in range(2)]
    threads += [threading.Thread(target=popper, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    time.sleep(2.0)
    stop.set()
    for t in threads:
        t.join(10)
    c = server.client(decode_responses=True)
    left = []
    for k in keys:
        left += c.zrange(k, 0, -1)
    assert len(received) == len(set(received)), "a member was delivered twice"
    assert sorted(received + left) == sorted(added), "a member was lost"
    assert len(received) > 0


@pytest.mark.skipif(TARGET == "redis", reason="strata threading")
def test_many_blocked_clients_across_threads(server_factory):
    srv = server_factory(threads=3)
    adder = raw_client(srv)
    waiters = []
    for i in range(30):
        c = raw_client(srv)
        waiters.append(in_thread(c.execute_command, "BZPOPMIN", "{%d}w" % (i % 5), "10"))
    wait_blocked(adder, 30)
    for i in range(30):
        adder.execute_command("ZADD", "{%d}w" % (i % 5), str(i), "v%d" % i)
    got = []
    for t, res in waiters:
        t.join(10)
        got.append(res.get("value"))
    assert all(g is not None for g in got)
    assert sorted(g[1] for g in got) == sorted("v%d" % i for i in range(30))
    assert blocked_count(adder) == 0
