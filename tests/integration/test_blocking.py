"""Blocking list pops: BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP.

Timeouts, wake-ups when the pushed key lives on another thread than the blocked client,
first-come first-served order, disconnects and timeouts racing with pushes (no element
lost, none delivered twice). Keys with different hash tags ("{1}q", "{2}q") usually land
on different shards of a multi-threaded strata; the same tests run against redis-server.
"""
import socket
import threading
import time

import pytest
import redis

from conftest import TARGET


def blocked_count(c):
    return int(c.info("clients")["blocked_clients"])


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


def test_timeout_returns_nil(server):
    c = server.client(decode_responses=True)
    t0 = time.time()
    assert c.blpop(["nothing"], timeout=0.3) is None
    elapsed = time.time() - t0
    assert 0.25 <= elapsed < 2.0
    assert c.brpop(["nothing"], timeout=0.1) is None
    assert c.blmove("nothing", "dst", 0.1, "LEFT", "RIGHT") is None
    assert c.execute_command("BLMPOP", "0.1", "1", "nothing", "LEFT") is None
    assert not c.exists("dst")


def test_immediate_pop_when_data_is_there(r):
    r.rpush("{1}q", "a", "b")
    assert r.blpop(["{2}q", "{1}q"], timeout=1) == ("{1}q", "a")
    assert r.brpop(["{1}q"], timeout=1) == ("{1}q", "b")
    assert not r.exists("{1}q")
    r.rpush("src", "x", "y")
    assert r.brpoplpush("src", "dst", 1) == "y"
    assert r.blmove("src", "dst", 1, "LEFT", "LEFT") == "x"
    assert r.lrange("dst", 0, -1) == ["x", "y"]
    r.rpush("m", "1", "2", "3")
    assert r.execute_command("BLMPOP", "1", "2", "empty", "m", "RIGHT", "COUNT", "2") == [
        "m", ["3", "2"]]


@pytest.mark.parametrize("pusher_key,blocked_keys", [
    ("{1}q", ["{1}q"]),
    ("{2}q", ["{1}q", "{2}q", "{3}q"]),
])
def test_wakeup_across_threads(server, pusher_key, blocked_keys):
    waiter = server.client(decode_responses=True)
    pusher = server.client(decode_responses=True)
    t, res = in_thread(waiter.blpop, blocked_keys, 5)
    wait_blocked(pusher, 1)
    assert pusher.rpush(pusher_key, "hello") == 1
    t.join(5)
    assert res.get("value") == (pusher_key, "hello")
    assert not pusher.exists(pusher_key)
    assert blocked_count(pusher) == 0


def test_clients_served_in_the_order_they_blocked(server):
    pusher = server.client(decode_responses=True)
    waiters = []
    for i in range(5):
        c = server.client(decode_responses=True)
        t, res = in_thread(c.brpop, ["{7}fifo"], 5)
        waiters.append((t, res))
        wait_blocked(pusher, i + 1)
    pusher.lpush("{7}fifo", "0", "1", "2", "3", "4")  # RPOP order: 0, 1, 2, ...
    for i, (t, res) in enumerate(waiters):
        t.join(5)
        assert res.get("value") == ("{7}fifo", str(i))


def test_blmove_across_shards_is_served(server):
    waiter = server.client(decode_responses=True)
    pusher = server.client(decode_responses=True)
    t, res = in_thread(waiter.blmove, "{1}src", "{2}dst", 5, "RIGHT", "LEFT")
    wait_blocked(pusher, 1)
    pusher.rpush("{1}src", "a", "b")
    t.join(5)
    assert res.get("value") == "b"
    assert pusher.lrange("{1}src", 0, -1) == ["a"]
    assert pusher.lrange("{2}dst", 0, -1) == ["b"]


def test_blmpop_count_wakeup(server):
    waiter = server.client(decode_responses=True)
    pusher = server.client(decode_responses=True)
    t, res = in_thread(waiter.execute_command, "BLMPOP", "5", "2", "{1}a", "{2}b", "LEFT",
                       "COUNT", "3")
    wait_blocked(pusher, 1)
    pusher.rpush("{2}b", "1", "2")
    t.join(5)
    assert res.get("value") == ["{2}b", ["1", "2"]]


def test_errors(r):
    r.set("str", "x")
    with pytest.raises(redis.ResponseError, match="^WRONGTYPE"):
        r.blpop(["str"], timeout=1)
    with pytest.raises(redis.ResponseError, match="^timeout is negative$"):
        r.execute_command("BLPOP", "q", "-1")
    with pytest.raises(redis.ResponseError, match="^timeout is not a float or out of range$"):
        r.execute_command("BLPOP", "q", "abc")
    with pytest.raises(redis.ResponseError, match="^numkeys should be greater than 0$"):
        r.execute_command("BLMPOP", "1", "0", "q", "LEFT")
    with pytest.raises(redis.ResponseError, match="^syntax error$"):
        r.execute_command("BLMOVE", "a", "b", "UP", "LEFT", "1")
    with pytest.raises(redis.ResponseError, match="^wrong number of arguments"):
        r.execute_command("BLPOP", "q")
    r.rpush("src", "v")
    with pytest.raises(redis.ResponseError, match="^WRONGTYPE"):
        r.blmove("src", "str", 1, "LEFT", "LEFT")
    assert r.lrange("src", 0, -1) == ["v"]


def test_disconnect_while_blocked_loses_nothing(server):
    pusher = server.client(decode_responses=True)
    # A raw client blocks, then goes away without reading.
    s = socket.create_connection(("127.0.0.1", server.port), timeout=5)
    s.sendall(b"*3\r\n$5\r\nBLPOP\r\n$4\r\n{1}d\r\n$1\r\n0\r\n")
    wait_blocked(pusher, 1)
    s.close()
    deadline = time.time() + 5
    while time.time() < deadline and blocked_count(pusher) > 0:
        time.sleep(0.01)
    assert blocked_count(pusher) == 0
    assert pusher.rpush("{1}d", "kept") == 1
    assert pusher.lrange("{1}d", 0, -1) == ["kept"]


def test_timeouts_racing_pushes_lose_nothing(server):
    """Many short blocking pops time out while pushers run: every pushed element is
    either still in a list or was delivered to exactly one client."""
    keys = ["{%d}race" % i for i in range(4)]
    pushed = []
    received = []
    lock = threading.Lock()
    stop = threading.Event()

    def pusher(idx):
        c = server.client(decode_responses=True)
        n = 0
        while not stop.is_set():
            v = "p%d-%d" % (idx, n)
            c.rpush(keys[n % len(keys)], v)
            with lock:
                pushed.append(v)
            n += 1
            time.sleep(0.002)

    def popper():
        c = server.client(decode_responses=True)
        while not stop.is_set():
            got = c.blpop(keys, timeout=0.01)
            if got is not None:
                with lock:
                    received.append(got[1])

    threads = [threading.Thread(target=pusher, args=(i,)) for i in range(2)]
    threads += [threading.Thread(target=popper) for _ in range(6)]
    for t in threads:
        t.start()
    time.sleep(2.0)
    stop.set()
    for t in threads:
        t.join(10)
    c = server.client(decode_responses=True)
    left = []
    for k in keys:
        left += c.lrange(k, 0, -1)
    assert len(received) == len(set(received)), "an element was delivered twice"
    assert sorted(received + left) == sorted(pushed), "an element was lost"
    assert len(received) > 0


@pytest.mark.skipif(TARGET == "redis", reason="strata threading")
def test_many_blocked_clients_across_threads(server_factory):
    srv = server_factory(threads=3)
    pusher = srv.client(decode_responses=True)
    waiters = []
    for i in range(30):
        c = srv.client(decode_responses=True)
        waiters.append(in_thread(c.blpop, ["{%d}w" % (i % 5)], 10))
    wait_blocked(pusher, 30)
    for i in range(30):
        pusher.rpush("{%d}w" % (i % 5), "v%d" % i)
    got = []
    for t, res in waiters:
        t.join(10)
        got.append(res.get("value"))
    assert all(g is not None for g in got)
    assert sorted(v for _, v in got) == sorted("v%d" % i for i in range(30))
    assert blocked_count(pusher) == 0


# Clients blocked on a key a transaction or a script gives elements to are served once it
# is done, as Redis serves them after EXEC or EVAL returns: its own later pops take what
# it pushed first, and the waiters see its final state. The keys share a shard, or
# (usually, with several threads) do not; one connection's transactions on "{1}q" and
# "{2}q" run, usually, one on its own worker's shard and one on another's.
KEY_PAIRS = [("{1}q", "{1}d"), ("{1}q", "{2}d")]


def blocked_pop(server, key):
    c = server.client(decode_responses=True)
    t, res = in_thread(c.blpop, [key], 5)
    wait_blocked(server.client(), 1)
    return t, res


def multi_exec(r, *calls):
    p = r.pipeline(transaction=True)
    for call in calls:
        p.execute_command(*call)
    return p.execute()


def test_a_transaction_pops_what_it_pushed_before_a_blocked_client_is_served(server):
    r = server.client(decode_responses=True, single_connection_client=True)
    for q in ("{1}q", "{2}q"):
        t, res = blocked_pop(server, q)
        assert multi_exec(r, ("RPUSH", q, "x", "y"), ("LPOP", q)) == [2, "x"]
        t.join(5)
        assert res == {"value": (q, "y")}
        assert r.exists(q) == 0


def test_a_transaction_that_empties_the_list_leaves_the_client_blocked(server):
    r = server.client(decode_responses=True, single_connection_client=True)
    for q in ("{1}q", "{2}q"):
        t, res = blocked_pop(server, q)
        assert multi_exec(r, ("RPUSH", q, "x"), ("LPOP", q)) == [1, "x"]
        time.sleep(0.1)
        assert blocked_count(r) == 1 and res == {}
        r.rpush(q, "later")
        t.join(5)
        assert res == {"value": (q, "later")}


@pytest.mark.parametrize("q, d", KEY_PAIRS)
def test_a_client_blocked_on_a_transactions_destination_gets_what_it_left(server, q, d):
    r = server.client(decode_responses=True)
    t, res = blocked_pop(server, d)
    assert multi_exec(r, ("RPUSH", q, "x"), ("RPOPLPUSH", q, d), ("LPUSH", d, "z"),
                      ("RPOP", d)) == [1, "x", 2, "x"]
    t.join(5)
    assert res == {"value": (d, "z")}
    assert r.exists(q, d) == 0


@pytest.mark.parametrize("q, d", KEY_PAIRS)
def test_a_script_pops_what_it_pushed_before_blocked_clients_are_served(server, q, d):
    r = server.client(decode_responses=True)
    t, res = blocked_pop(server, q)
    assert r.eval("redis.call('rpush', KEYS[1], 'x', 'y') return redis.call('lpop', KEYS[1])",
                  1, q) == "x"
    t.join(5)
    assert res == {"value": (q, "y")}
    t, res = blocked_pop(server, d)
    script = ("redis.call('rpush', KEYS[1], 'x') redis.call('rpoplpush', KEYS[1], KEYS[2]) "
              "redis.call('lpush', KEYS[2], 'z') return redis.call('rpop', KEYS[2])")
    assert r.eval(script, 2, q, d) == "x"
    t.join(5)
    assert res == {"value": (d, "z")}
    assert r.exists(q, d) == 0


def test_client_unblock_ends_a_wait_as_its_timeout_or_with_an_error(server):
    """CLIENT UNBLOCK, from a connection on any worker: a client waiting in BLPOP,
    BZPOPMIN, XREAD BLOCK or WAIT answers as at its timeout (TIMEOUT, the default), or
    -UNBLOCKED (ERROR); 1 when it was waiting, 0 otherwise."""
    admin = server.client(decode_responses=True)
    waits = [
        (("BLPOP", "{1}nothing", "0"), None),
        (("BZPOPMIN", "{2}nothing", "0"), None),
        (("XREAD", "BLOCK", "0", "STREAMS", "{3}nothing", "$"), []),  # redis-py: nil as []
        (("WAIT", "1", "0"), 0),
    ]
    for args, at_timeout in waits:
        for how in (None, "TIMEOUT", "ERROR"):
            c = server.client(decode_responses=True, single_connection_client=True)
            cid = c.client_id()
            t, res = in_thread(c.execute_command, *args)
            wait_blocked(admin, 1)
            extra = () if how is None else (how,)
            assert admin.execute_command("CLIENT", "UNBLOCK", cid, *extra) == 1, (args, how)
            t.join(5)
            if how == "ERROR":
                assert isinstance(res.get("error"), redis.ResponseError), (args, res)
                assert str(res["error"]) == "UNBLOCKED client unblocked via CLIENT UNBLOCK"
            else:
                assert res == {"value": at_timeout}, (args, how)
            # Not waiting any more: nothing to unblock, and the connection goes on.
            assert admin.execute_command("CLIENT", "UNBLOCK", cid) == 0
            assert c.ping() is True
            c.close()
    assert admin.execute_command("CLIENT", "UNBLOCK", admin.client_id()) == 0
    assert admin.execute_command("CLIENT", "UNBLOCK", 999999999) == 0
    with pytest.raises(redis.ResponseError, match="value is not an integer"):
        admin.execute_command("CLIENT", "UNBLOCK", "abc")
    with pytest.raises(redis.ResponseError, match="reason should be TIMEOUT or ERROR"):
        admin.execute_command("CLIENT", "UNBLOCK", "1", "SOON")
    with pytest.raises(redis.ResponseError, match="wrong number of arguments"):
        admin.execute_command("CLIENT", "UNBLOCK")
