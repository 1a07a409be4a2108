"""Pipelined MGETs and MSETs over several shards, run together.

strata runs calls of MGET (or of MSET) that a client pipelined one after another as one
fiber (a "run", `pipeline-squash`): every call's keys are locked at once, usually in one
round trip, and each call keeps its own reply. What a client sees must not change:
replies in request order, every write before a read seen by it and none after, errors in
their place, every call counted and monitored. These tests pass against redis-server too,
except the ones about the setting and its count."""
import socket
import threading

from conftest import TARGET
from helpers import read_exactly, resp as cmd

import pytest

KEYS = ["pr:%d" % i for i in range(12)]


def bulk(v):
    if v is None:
        return b"$-1\r\n"
    v = v.encode() if isinstance(v, str) else v
    return b"$%d\r\n%s\r\n" % (len(v), v)


def array(values):
    return b"*%d\r\n" % len(values) + b"".join(bulk(v) for v in values)


def exchange(server, request, want):
    s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    try:
        s.sendall(request)
        got = read_exactly(s, len(want))
        assert got == want
    finally:
        s.close()


def test_reads_in_a_run_see_the_writes_before_them_and_none_after(server):
    request = [cmd("MSET", *[x for k in KEYS for x in (k, "a")])]
    want = [b"+OK\r\n"]
    state = {k: "a" for k in KEYS}

    def mget(keys):
        request.append(cmd("MGET", *keys))
        want.append(array([state.get(k) for k in keys]))

    for _ in range(3):
        mget(KEYS)
    request.append(cmd("SET", KEYS[0], "b"))
    want.append(b"+OK\r\n")
    state[KEYS[0]] = "b"
    mget(KEYS)
    mget(KEYS[::-1])
    request.append(cmd("DEL", KEYS[1], KEYS[5]))
    want.append(b":2\r\n")
    del state[KEYS[1]], state[KEYS[5]]
    for i in range(5):
        mget(KEYS[i:] + KEYS[:i])
    request.append(cmd("MSET", *[x for k in KEYS for x in (k, "c")]))
    want.append(b"+OK\r\n")
    state = {k: "c" for k in KEYS}
    for _ in range(4):
        mget(KEYS)
    request.append(cmd("INCR", "pr:counter"))
    want.append(b":1\r\n")
    state["pr:counter"] = "1"
    mget(["pr:counter"] + KEYS)
    exchange(server, b"".join(request), b"".join(want))


def test_errors_and_other_types_keep_their_place_in_a_run(server, r):
    r.rpush("pr:list", "x")
    r.mset({k: "v" for k in KEYS})
    vals = ["v"] * len(KEYS)
    request = (cmd("MGET", *KEYS) + cmd("MGET") + cmd("MGET", *KEYS, "pr:list") +
               cmd("MGET", "pr:none", *KEYS) + cmd("mget", *KEYS))
    want = (array(vals) + b"-ERR wrong number of arguments for 'mget' command\r\n" +
            array(vals + [None]) + array([None] + vals) + array(vals))
    exchange(server, request, want)


def test_a_long_pipeline_of_mgets_keeps_its_order(server, r):
    r.mset({k: "v%d" % i for i, k in enumerate(KEYS)})
    request = b""
    want = b""
    for i in range(300):
        keys = [KEYS[(i + j) % len(KEYS)] for j in range(1 + i % len(KEYS))]
        request += cmd("MGET", *keys)
        want += array(["v%d" % KEYS.index(k) for k in keys])
    exchange(server, request, want)


def test_the_same_key_twice_in_a_run(server, r):
    r.set(KEYS[0], "one")
    request = cmd("MGET", KEYS[0], KEYS[0], KEYS[3]) + cmd("MGET", KEYS[3], KEYS[0])
    want = array(["one", "one", None]) + array([None, "one"])
    exchange(server, request, want)


def test_every_call_of_a_run_is_counted_and_monitored(server, r):
    r.mset({k: "v" for k in KEYS})
    r.config_resetstat()
    mon = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    try:
        mon.sendall(cmd("MONITOR"))
        assert read_exactly(mon, 5) == b"+OK\r\n"
        exchange(server, cmd("MGET", *KEYS) * 16, array(["v"] * len(KEYS)) * 16)
        seen = b""
        while seen.count(b'"MGET"') + seen.count(b'"mget"') < 16:
            chunk = mon.recv(65536)
            assert chunk
            seen += chunk
    finally:
        mon.close()
    stats = r.info("commandstats")["cmdstat_mget"]
    assert stats["calls"] == 16
    assert stats["failed_calls"] == 0


def test_a_run_is_atomic_against_a_writer(server, r):
    # A writer keeps the keys equal to one another (MSET of one value to all); every
    # reply of a reader's pipelined MGETs must show them equal.
    r.mset({k: "0" for k in KEYS})
    stop = threading.Event()

    def writer():
        w = server.client()
        i = 0
        while not stop.is_set():
            i += 1
            w.mset({k: str(i) for k in KEYS})
        w.close()

    t = threading.Thread(target=writer)
    t.start()
    try:
        for _ in range(50):
            p = r.pipeline(transaction=False)
            for _ in range(20):
                p.mget(KEYS)
            for values in p.execute():
                assert len(set(values)) == 1, values
    finally:
        stop.set()
        t.join(10)


def test_msets_in_a_run_write_in_order(server, r):
    request = b""
    want = b""
    for i in range(20):
        request += cmd("MSET", *[x for k in KEYS for x in (k, "%d" % i)])
        want += b"+OK\r\n"
    # The same key twice in one call and across calls: the last one given wins.
    request += cmd("MSET", KEYS[0], "x", KEYS[1], "y", KEYS[0], "z")
    request += cmd("MSET", KEYS[1], "w", KEYS[2], "v")
    want += b"+OK\r\n+OK\r\n"
    request += cmd("MGET", *KEYS)
    want += array(["z", "w", "v"] + ["19"] * (len(KEYS) - 3))
    exchange(server, request, want)


def test_an_mset_that_does_not_pair_up_fails_alone_in_a_run(server, r):
    request = (cmd("MSET", *[x for k in KEYS for x in (k, "a")]) +
               cmd("MSET", KEYS[0], "b", KEYS[1]) +
               cmd("MSET", KEYS[2], "c", KEYS[3], "d") +
               cmd("MGET", *KEYS[:4]))
    want = (b"+OK\r\n" + b"-ERR wrong number of arguments for 'mset' command\r\n" +
            b"+OK\r\n" + array(["a", "a", "c", "d"]))
    exchange(server, request, want)


def test_pipelined_msetnx_calls_each_decide_alone(server, r):
    request = (cmd("MSETNX", KEYS[0], "1", KEYS[1], "1") +
               cmd("MSETNX", KEYS[1], "2", KEYS[2], "2") +
               cmd("MSETNX", KEYS[2], "3", KEYS[3], "3") + cmd("MGET", *KEYS[:4]))
    want = b":1\r\n:0\r\n:1\r\n" + array(["1", "1", "3", "3"])
    exchange(server, request, want)


def test_a_run_of_msets_is_atomic_against_a_reader(server, r):
    r.mset({k: "0" for k in KEYS})
    stop = threading.Event()
    bad = []

    def reader():
        c = server.client(decode_responses=True)
        while not stop.is_set():
            values = c.mget(KEYS)
            if len(set(values)) != 1:
                bad.append(values)
        c.close()

    t = threading.Thread(target=reader)
    t.start()
    try:
        for n in range(50):
            p = r.pipeline(transaction=False)
            for i in range(20):
                p.mset({k: "%d.%d" % (n, i) for k in KEYS})
            assert p.execute() == [True] * 20
    finally:
        stop.set()
        t.join(10)
    assert bad == []
    assert len(set(r.mget(KEYS))) == 1


def test_runs_that_contend_for_the_same_keys_stay_atomic(server, r):
    # Two clients pipeline MSETs of all the keys and a third pipelines MGETs of them: the
    # runs' locks are seldom all free at once, so most runs go call by call. Every MGET
    # sees one MSET's values, and every call is answered in order.
    r.mset({k: "start" for k in KEYS})
    errors = []

    def writer(name):
        try:
            c = server.client(decode_responses=True)
            for n in range(40):
                p = c.pipeline(transaction=False)
                for i in range(16):
                    p.mset({k: "%s.%d.%d" % (name, n, i) for k in KEYS})
                    if i % 5 == 4:
                        p.mget(KEYS)
                for reply in p.execute():
                    if isinstance(reply, list) and len(set(reply)) != 1:
                        errors.append(reply)
                    elif not isinstance(reply, list) and reply is not True:
                        errors.append(reply)
            c.close()
        except Exception as e:  # reported below
            errors.append(e)

    def reader():
        try:
            c = server.client(decode_responses=True)
            for _ in range(40):
                p = c.pipeline(transaction=False)
                for _ in range(16):
                    p.mget(KEYS)
                for values in p.execute():
                    if len(set(values)) != 1:
                        errors.append(values)
            c.close()
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(n,)) for n in ("a", "b")]
    threads.append(threading.Thread(target=reader))
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    final = r.mget(KEYS)
    assert len(set(final)) == 1 and final[0].endswith(".39.15")


def test_a_run_that_ends_at_once_leaves_the_connection_working(server, r):
    # An MSET whose arguments do not pair up fails without a hop. Opened as a run with a
    # GET behind it, it ended while the input was being read; the connection must then
    # go on reading (DBSIZE waits for nothing in flight, so it hung if a count was off).
    pairs = [x for k in KEYS for x in (k, "v")]
    s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    try:
        for _ in range(3):
            s.sendall(cmd("MSET", *pairs, "pr:odd") + cmd("GET", KEYS[0]) +
                      cmd("MSET", *pairs, "pr:odd") + cmd("MSET", *pairs, "pr:odd") +
                      cmd("HGET", "pr:h", "f"))
            err = b"-ERR wrong number of arguments for 'mset' command\r\n"
            want = err + b"$-1\r\n" + err + err + b"$-1\r\n"
            assert read_exactly(s, len(want)) == want
            s.sendall(cmd("DBSIZE"))
            assert read_exactly(s, 4) == b":0\r\n"
    finally:
        s.close()


@pytest.mark.skipif(TARGET == "redis", reason="strata's pipeline-squash")
def test_pipelined_mgets_across_shards_run_together(server_factory):
    s = server_factory(threads=2)
    c = s.client(decode_responses=True)
    try:
        c.mset({k: "v" for k in KEYS})
        before = int(c.info("stats")["pipeline_squashed_calls"])
        exchange(s, cmd("MGET", *KEYS) * 16, array(["v"] * len(KEYS)) * 16)
        # The 16 calls arrive in one read, or a few: most run in runs.
        assert int(c.info("stats")["pipeline_squashed_calls"]) - before >= 8
        assert c.config_get("pipeline-squash") == {"pipeline-squash": "32"}
        c.config_set("pipeline-squash", "1")
        before = int(c.info("stats")["pipeline_squashed_calls"])
        exchange(s, cmd("MGET", *KEYS) * 16, array(["v"] * len(KEYS)) * 16)
        assert int(c.info("stats")["pipeline_squashed_calls"]) == before
        c.config_set("pipeline-squash", "4")
        before = int(c.info("stats")["pipeline_squashed_calls"])
        exchange(s, cmd("MGET", *KEYS) * 16, array(["v"] * len(KEYS)) * 16)
        assert 0 < int(c.info("stats")["pipeline_squashed_calls"]) - before <= 16
        c.config_set("pipeline-squash", "32")
        before = int(c.info("stats")["pipeline_squashed_calls"])
        exchange(s, cmd("MSET", *[x for k in KEYS for x in (k, "w")]) * 16, b"+OK\r\n" * 16)
        assert int(c.info("stats")["pipeline_squashed_calls"]) - before >= 8
        assert c.mget(KEYS) == ["w"] * len(KEYS)
        # A subscribed client's calls run one at a time (its pushes go out beside each
        # call's reply).
        sub = socket.create_connection(("127.0.0.1", s.port), timeout=10)
        try:
            sub.sendall(cmd("HELLO", "3") + cmd("SUBSCRIBE", "pr:ch") + cmd("ECHO", "pr:mark"))
            seen = b""
            while b"pr:mark" not in seen:
                chunk = sub.recv(65536)
                assert chunk
                seen += chunk
            before = int(c.info("stats")["pipeline_squashed_calls"])
            want = array(["w"] * len(KEYS)) * 16
            sub.sendall(cmd("MGET", *KEYS) * 16)
            assert read_exactly(sub, len(want)) == want
            assert int(c.info("stats")["pipeline_squashed_calls"]) == before
        finally:
            sub.close()
        with pytest.raises(Exception):
            c.config_set("pipeline-squash", "0")
    finally:
        c.close()
