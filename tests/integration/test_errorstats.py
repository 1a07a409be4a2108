"""INFO's error statistics (the errorstats section, total_error_replies,
unexpected_error_replies) and propagation-error-behavior, as Redis 7 has them.

Every test here also runs against redis-server (STRATA_TEST_TARGET=redis), but for the
bound on distinct error codes, which Redis 7.0 does not have."""
import pytest
import redis

import conftest
import helpers
from helpers import replica_synced as synced, start_redis_server


def info_text(c, *sections):
    """INFO's reply as the server sent it (redis-py would parse it)."""
    conn = c.connection_pool.get_connection("INFO")
    try:
        conn.send_command("INFO", *sections)
        text = conn.read_response()
    finally:
        c.connection_pool.release(conn)
    return text.decode() if isinstance(text, bytes) else text


def errorstats(c):
    """{code: count} from INFO errorstats, read from its text."""
    text = info_text(c, "errorstats")
    out = {}
    for line in text.splitlines():
        if line.startswith("errorstat_"):
            code, value = line[len("errorstat_"):].split(":", 1)
            assert value.startswith("count=")
            out[code] = int(value[len("count="):])
    return out


def total_errors(c):
    return c.info("stats")["total_error_replies"]


def fails(fn, *args):
    with pytest.raises(redis.ResponseError) as e:
        fn(*args)
    return str(e.value)


def test_error_replies_are_counted_by_code(r):
    r.config_resetstat()
    assert errorstats(r) == {}
    assert total_errors(r) == 0
    r.set("s", "text")
    fails(r.execute_command, "NOSUCHCOMMAND", "x")           # ERR unknown command
    fails(r.execute_command, "GET", "a", "b")                # ERR wrong number of arguments
    fails(r.lpush, "s", "x")                                 # WRONGTYPE
    fails(r.incr, "s")                                       # ERR not an integer
    fails(r.eval, "return redis.error_reply('MYCODE went wrong')", 0)
    fails(r.eval, "return redis.error_reply('MYCODE again')", 0)
    # A code is the first word only when a space ends it within the reply's first 32
    # bytes, its '-' included.
    fails(r.eval, "return redis.error_reply('%s tail')" % ("L" * 40), 0)
    fails(r.eval, "return redis.error_reply('%s tail')" % ("M" * 31), 0)
    fails(r.eval, "return redis.error_reply('%s tail')" % ("N" * 30), 0)
    assert errorstats(r) == {"ERR": 5, "WRONGTYPE": 1, "MYCODE": 2, "N" * 30: 1}
    assert total_errors(r) == 9
    stats = r.info("commandstats")
    assert stats["cmdstat_lpush"]["failed_calls"] == 1
    assert stats["cmdstat_get"]["rejected_calls"] == 1


def test_config_resetstat_clears_them(r):
    fails(r.execute_command, "GET")
    assert errorstats(r).get("ERR", 0) >= 1
    r.config_resetstat()
    assert errorstats(r) == {}
    assert total_errors(r) == 0
    fails(r.execute_command, "GET")
    assert errorstats(r) == {"ERR": 1}


def test_errorstats_is_a_default_info_section(r):
    r.config_resetstat()
    fails(r.execute_command, "GET")
    for text in (info_text(r), info_text(r, "default"), info_text(r, "all"),
                 info_text(r, "errorstats")):
        assert "# Errorstats\r\nerrorstat_ERR:count=1\r\n" in text
    only = info_text(r, "errorstats")
    assert only.startswith("# Errorstats\r\n")
    assert "# Stats" not in only
    stats = info_text(r, "stats")
    assert "unexpected_error_replies:0\r\n" in stats
    assert "total_error_replies:1\r\n" in stats


def test_errors_on_every_shard_are_counted(r):
    """Keys spread over every worker: each error is counted once, wherever it ran."""
    r.config_resetstat()
    p = r.pipeline(transaction=False)
    for i in range(300):
        p.set("str:%d" % i, "v")
    p.execute()
    p = r.pipeline(transaction=False)
    for i in range(300):
        p.lpush("str:%d" % i, "x")
    results = p.execute(raise_on_error=False)
    assert all(isinstance(x, redis.ResponseError) for x in results)
    assert errorstats(r) == {"WRONGTYPE": 300}
    assert total_errors(r) == 300
    assert r.info("commandstats")["cmdstat_lpush"]["failed_calls"] == 300


def test_a_scripts_error_from_a_command_counts_once(r):
    r.config_resetstat()
    r.set("s", "v")
    e = fails(r.eval, "return redis.call('lpush', KEYS[1], 'x')", 1, "s")
    assert e.startswith("WRONGTYPE")
    assert errorstats(r) == {"WRONGTYPE": 1}
    assert total_errors(r) == 1
    r.config_resetstat()
    # redis.pcall's error, returned: counted by the command, not again by the script.
    e = fails(r.eval, "return redis.pcall('lpush', KEYS[1], 'x')", 1, "s")
    assert e.startswith("WRONGTYPE")
    assert errorstats(r) == {"WRONGTYPE": 1}
    stats = r.info("commandstats")
    assert stats["cmdstat_lpush"]["failed_calls"] == 1
    assert stats["cmdstat_eval"]["failed_calls"] == 1
    r.config_resetstat()
    # The error table redis.pcall returns carries the mark Redis gives it.
    fields = r.eval("local t = redis.pcall('lpush', KEYS[1], 'x'); local out = {}; "
                    "for k in pairs(t) do out[#out + 1] = k end; table.sort(out); "
                    "return out", 1, "s")
    assert fields == ["err", "ignore_error_stats_update"]
    # A script's own error, and one it makes of a caught error, count as theirs.
    fails(r.eval, "redis.pcall('lpush', KEYS[1], 'x'); error('boom')", 1, "s")
    fails(r.eval, "redis.pcall('lpush', KEYS[1], 'x'); return {err='OTHER mine'}", 1, "s")
    assert errorstats(r) == {"WRONGTYPE": 3, "ERR": 1, "OTHER": 1}
    assert total_errors(r) == 5


def test_errors_in_a_transaction(r):
    r.config_resetstat()
    r.set("s", "v")
    p = r.pipeline(transaction=True)
    p.lpush("s", "x")
    p.incr("s")
    p.set("t", "1")
    results = p.execute(raise_on_error=False)
    assert isinstance(results[0], redis.ResponseError)
    assert isinstance(results[1], redis.ResponseError)
    assert results[2] is True
    assert errorstats(r) == {"WRONGTYPE": 1, "ERR": 1}
    r.config_resetstat()
    raw = r.connection_pool.get_connection("_")
    try:
        raw.send_command("MULTI")
        assert raw.read_response() in (b"OK", "OK")
        raw.send_command("NOSUCHCOMMAND")
        with pytest.raises(redis.ResponseError):
            raw.read_response()
        raw.send_command("EXEC")
        with pytest.raises(redis.ResponseError) as e:
            raw.read_response()
        assert str(e.value).startswith("Transaction discarded")
    finally:
        r.connection_pool.release(raw)
    assert errorstats(r) == {"ERR": 1, "EXECABORT": 1}


def test_distinct_error_codes_are_bounded(r):
    if conftest.TARGET == "redis":
        pytest.skip("Redis 7.0 keeps every code (7.2 bounds them as strata does)")
    r.config_resetstat()
    for i in range(128):
        fails(r.eval, "return redis.error_reply('CODE%d x')" % i, 0)
    stats = errorstats(r)
    assert len(stats) == 128 and stats["CODE0"] == 1
    fails(r.eval, "return redis.error_reply('CODE128 x')", 0)
    fails(r.eval, "return redis.error_reply('CODE0 x')", 0)
    fails(r.execute_command, "GET")
    assert errorstats(r) == {"ERRORSTATS_DISABLED": 3}
    assert total_errors(r) == 131
    r.config_resetstat()
    fails(r.execute_command, "GET")
    assert errorstats(r) == {"ERR": 1}


def test_propagation_error_behavior_setting(r):
    assert r.config_get("propagation-error-behavior") == {"propagation-error-behavior": "ignore"}
    for value in ("panic", "panic-on-replicas", "ignore"):
        assert r.config_set("propagation-error-behavior", value)
        assert r.config_get("propagation-error-behavior")["propagation-error-behavior"] == value
    assert r.config_set("propagation-error-behavior", "PANIC")
    assert r.config_get("propagation-error-behavior")["propagation-error-behavior"] == "panic"
    with pytest.raises(redis.ResponseError):
        r.config_set("propagation-error-behavior", "sometimes")
    assert r.config_get("propagation-error-behavior")["propagation-error-behavior"] == "panic"
    r.config_set("propagation-error-behavior", "ignore")


@pytest.fixture
def master():
    m = start_redis_server(extra_args=["--repl-diskless-sync-delay", "0"])
    yield m
    m.stop()


def diverged_replica(server_factory, master, *extra):
    """A replica whose "counter" is a list where its master's is a string: the master's
    INCR of it fails there. The replica is read-only again once it has diverged."""
    r = server_factory(extra_args=["--replicaof", "127.0.0.1 %d" % master.port,
                                   "--replica-read-only", "no"] + list(extra))
    helpers.wait_for(lambda: synced(master, r), 30, "the sync")
    rc = r.client()
    # The start-up's readiness checks may have met -LOADING while the image loaded (a
    # slow build): those errors are not the stream's.
    rc.config_resetstat()
    rc.rpush("counter", "local")
    return r, rc


def test_an_error_on_the_stream_is_counted_and_ignored_by_default(master, server_factory):
    r, rc = diverged_replica(server_factory, master)
    rc.config_set("replica-read-only", "yes")
    mc = master.client()
    mc.incr("counter")
    mc.set("after", "1")
    helpers.wait_for(lambda: rc.get("after") == b"1", 30, "the stream after the error")
    assert rc.info("stats")["unexpected_error_replies"] == 1
    assert errorstats(rc) == {"WRONGTYPE": 1}
    assert r.proc.poll() is None


def test_panic_stops_a_read_only_replica(master, server_factory):
    r, rc = diverged_replica(server_factory, master, "--propagation-error-behavior", "panic")
    # Writable, it goes on: its own writes may explain the error.
    mc = master.client()
    mc.incr("counter")
    mc.set("after", "1")
    helpers.wait_for(lambda: rc.get("after") == b"1", 30, "the stream after the error")
    assert rc.info("stats")["unexpected_error_replies"] == 1
    assert r.proc.poll() is None
    rc.config_set("replica-read-only", "yes")
    mc.incr("counter")
    assert r.wait_exit(30) not in (None, 0)
    assert "panic" in r.read_log()
    mc.set("master", "still fine")
    assert mc.get("master") == b"still fine"


def test_panic_on_replicas_stops_a_read_only_replica(master, server_factory):
    r, rc = diverged_replica(server_factory, master, "--propagation-error-behavior",
                             "panic-on-replicas")
    rc.config_set("replica-read-only", "yes")
    master.client().incr("counter")
    assert r.wait_exit(30) not in (None, 0)
