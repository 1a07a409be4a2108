"""Server introspection and lifecycle: INFO sections, CONFIG GET/SET/RESETSTAT, SHUTDOWN,
and exit on SIGTERM/SIGINT.

Expected values and error texts were checked against redis-server 7.0.
"""
import os
import re
import signal
import threading
import time

import pytest

from conftest import TARGET
import redis

from conftest import RawConnection
from helpers import call, cmd, error_of, is_closed, kill_other_clients, roundtrip, wait_for


def info_text(r, *sections):
    """INFO as the raw text the server sent (redis-py would parse it)."""
    reply = call(r, "INFO", *sections)
    return reply.decode() if isinstance(reply, bytes) else reply


def info_fields(r, section):
    out = {}
    for line in info_text(r, section).split("\r\n"):
        if line and not line.startswith("#"):
            k, _, v = line.partition(":")
            out[k] = v
    return out


# ---------------------------------------------------------------- INFO

def test_info_server(server, r):
    f = info_fields(r, "server")
    assert info_text(r, "server").startswith("# Server\r\n")
    assert re.fullmatch(r"\d+\.\d+\.\d+", f["redis_version"])
    assert f["tcp_port"] == str(server.port)
    assert f["process_id"] == str(server.proc.pid)
    assert int(f["uptime_in_seconds"]) >= 0


def test_info_clients_connected(server_factory):
    s = server_factory()
    c = s.client(decode_responses=True)

    def connected():
        return int(info_fields(c, "clients")["connected_clients"])

    kill_other_clients(c)
    wait_for(lambda: connected() == 1, what="connected_clients == 1")
    extra = [RawConnection(s.port) for _ in range(3)]
    for e in extra:
        assert roundtrip(e, cmd("PING")) == b"+PONG\r\n"
    assert connected() == 4
    for e in extra:
        e.close()
    wait_for(lambda: connected() == 1, what="connected_clients back to 1")
    c.close()


def test_info_memory(r):
    f = info_fields(r, "memory")
    assert int(f["used_memory"]) > 0


def test_info_stats_hits_misses(r):
    r.set("a", "1")
    r.config_resetstat()
    r.get("a")
    r.get("a")
    r.get("missing")
    f = info_fields(r, "stats")
    assert f["keyspace_hits"] == "2"
    assert f["keyspace_misses"] == "1"


def test_info_stats_expired_keys(r):
    r.config_resetstat()
    r.set("e", "1", px=1)
    wait_for(lambda: r.get("e") is None, what="key to expire")
    assert info_fields(r, "stats")["expired_keys"] == "1"


def test_info_stats_total_commands_processed(r):
    a = int(info_fields(r, "stats")["total_commands_processed"])
    for _ in range(10):
        r.ping()
    b = int(info_fields(r, "stats")["total_commands_processed"])
    # the ten PINGs plus the first INFO
    assert b - a == 11


def test_info_keyspace(server, r):
    assert info_text(r, "keyspace") == "# Keyspace\r\n"
    r.set("a", "1")
    r.set("b", "2", ex=1000)
    c5 = server.client(db=5)
    c5.set("x", "1")
    text = info_text(r, "keyspace")
    assert re.fullmatch(r"# Keyspace\r\ndb0:keys=2,expires=1,avg_ttl=\d+\r\n"
                        r"db5:keys=1,expires=0,avg_ttl=0\r\n", text), text
    c5.close()


def test_info_commandstats(r):
    r.config_resetstat()
    for _ in range(3):
        r.get("x")
    with pytest.raises(redis.ResponseError):
        r.execute_command("GET")
    text = info_text(r, "commandstats")
    assert text.startswith("# Commandstats\r\n")
    assert re.search(r"\r\ncmdstat_get:calls=3,usec=\d+,usec_per_call=\d+\.\d\d,"
                     r"rejected_calls=1,failed_calls=0\r\n", text), text
    assert "cmdstat_set:" not in text


def test_info_sections_selection(r):
    default = info_text(r, "default")
    plain = info_text(r)
    for text in (default, plain):
        for sec in ["# Server", "# Clients", "# Memory", "# Stats", "# Keyspace"]:
            assert sec + "\r\n" in text
        assert "# Commandstats" not in text
    everything = info_text(r, "all")
    assert "# Commandstats\r\n" in everything
    two = info_text(r, "server", "clients")
    assert [l for l in two.split("\r\n") if l.startswith("#")] == ["# Server", "# Clients"]
    assert info_text(r, "SERVER").startswith("# Server\r\n")
    assert info_text(r, "nosuchsection") == ""


# ---------------------------------------------------------------- CONFIG

def test_config_get_defaults(server, r):
    assert r.config_get("port") == {"port": str(server.port)}
    assert r.config_get("maxmemory") == {"maxmemory": "0"}
    assert r.config_get("databases") == {"databases": "16"}
    assert r.config_get("save") == {"save": ""}
    assert r.config_get("appendonly") == {"appendonly": "no"}
    assert r.config_get("bind") == {"bind": "127.0.0.1"}
    assert r.config_get("dir") == {"dir": os.path.realpath(server.dir)}
    assert r.config_get("proto-max-bulk-len") == {"proto-max-bulk-len": "536870912"}
    assert r.config_get("client-query-buffer-limit") == {"client-query-buffer-limit": "1073741824"}


@pytest.mark.skipif(TARGET == "redis", reason="Redis rewrites an AOF even with appendonly no")
def test_bgrewriteaof_says_there_is_no_append_only_file(r):
    assert error_of(r.execute_command, "BGREWRITEAOF") == (
        "strata keeps no append-only file (appendonly is always no); its snapshots are "
        "incremental: use BGSAVE")


def test_config_get_maxclients(server_factory):
    s = server_factory(extra_args=["--maxclients", "100"])
    c = s.client(decode_responses=True)
    assert c.config_get("maxclients") == {"maxclients": "100"}
    c.close()


def test_config_get_glob_and_several(server, r):
    got = r.config_get("max*")
    assert got["maxmemory"] == "0"
    assert "maxclients" in got
    assert all(k.startswith("max") for k in got)
    got = r.config_get("*-bulk-len")
    assert got == {"proto-max-bulk-len": "536870912"}
    got = call(r, "CONFIG", "GET", "port", "maxmemory", "nosuch")
    assert dict(zip(got[::2], got[1::2])) == {"port": str(server.port), "maxmemory": "0"}
    assert r.config_get("nosuch-parameter") == {}
    assert error_of(r.execute_command, "CONFIG", "GET") == (
        "wrong number of arguments for 'config|get' command")


def test_config_set_maxmemory_units(r):
    try:
        for value, expected in [("100mb", "104857600"), ("100MB", "104857600"),
                                ("1gb", "1073741824"), ("1g", "1000000000"),
                                ("1kb", "1024"), ("1k", "1000"), ("5", "5")]:
            assert r.config_set("maxmemory", value) is True
            assert r.config_get("maxmemory") == {"maxmemory": expected}
    finally:
        r.config_set("maxmemory", "0")


def test_config_set_errors(r):
    assert error_of(r.config_set, "nosuch", "1") == (
        "Unknown option or number of arguments for CONFIG SET - 'nosuch'")
    assert error_of(r.config_set, "maxmemory", "abc") == (
        "CONFIG SET failed (possibly related to argument 'maxmemory') - "
        "argument must be a memory value")
    assert error_of(r.config_set, "maxclients", "abc") == (
        "CONFIG SET failed (possibly related to argument 'maxclients') - "
        "argument couldn't be parsed into an integer")
    assert error_of(r.config_set, "appendonly", "maybe") == (
        "CONFIG SET failed (possibly related to argument 'appendonly') - "
        "argument must be 'yes' or 'no'")
    assert error_of(r.config_set, "databases", "4") == (
        "CONFIG SET failed (possibly related to argument 'databases') - "
        "can't set immutable config")
    assert error_of(r.execute_command, "CONFIG", "SET", "maxmemory") == (
        "wrong number of arguments for 'config|set' command")
    assert r.config_get("maxmemory") == {"maxmemory": "0"}


def test_config_set_several_is_atomic(r):
    try:
        assert r.execute_command("CONFIG", "SET", "maxmemory", "1mb",
                                 "maxmemory-policy", "allkeys-lru") == "OK"
        assert r.config_get("maxmemory") == {"maxmemory": "1048576"}
        assert r.config_get("maxmemory-policy") == {"maxmemory-policy": "allkeys-lru"}
        assert error_of(r.execute_command, "CONFIG", "SET", "maxmemory", "2mb",
                        "nosuch", "1") == (
            "Unknown option or number of arguments for CONFIG SET - 'nosuch'")
        assert r.config_get("maxmemory") == {"maxmemory": "1048576"}
        assert error_of(r.execute_command, "CONFIG", "SET", "maxmemory", "1", "maxmemory",
                        "2") == ("CONFIG SET failed (possibly related to argument "
                                 "'maxmemory') - duplicate parameter")
    finally:
        r.execute_command("CONFIG", "SET", "maxmemory", "0", "maxmemory-policy", "noeviction")


def test_config_resetstat(r):
    r.get("missing")
    r.set("a", "1")
    r.get("a")
    assert r.execute_command("CONFIG", "RESETSTAT") == "OK"
    f = info_fields(r, "stats")
    assert f["keyspace_hits"] == "0"
    assert f["keyspace_misses"] == "0"
    assert "cmdstat_get:" not in info_text(r, "commandstats")
    assert error_of(r.execute_command, "CONFIG", "RESETSTAT", "x") == (
        "wrong number of arguments for 'config|resetstat' command")


# ---------------------------------------------------------------- SHUTDOWN and signals

def test_shutdown_nosave_exits_zero(server_factory):
    s = server_factory()
    c = RawConnection(s.port)
    c.send(cmd("SHUTDOWN", "NOSAVE"))
    assert is_closed(c, timeout=10)
    c.close()
    assert s.wait_exit(10) == 0


def test_shutdown_syntax_error_keeps_running(server_factory):
    s = server_factory()
    c = RawConnection(s.port)
    assert roundtrip(c, cmd("SHUTDOWN", "foo")) == b"-ERR syntax error\r\n"
    assert roundtrip(c, cmd("PING")) == b"+PONG\r\n"
    c.close()
    assert s.proc.poll() is None


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_exits_zero(server_factory, sig):
    s = server_factory()
    c = s.client()
    c.set("k", "v")
    c.close()
    s.proc.send_signal(sig)
    assert s.wait_exit(10) == 0


def test_sigterm_with_open_clients(server_factory):
    s = server_factory()
    conns = [RawConnection(s.port) for _ in range(5)]
    for c in conns:
        assert roundtrip(c, cmd("PING")) == b"+PONG\r\n"
    s.proc.send_signal(signal.SIGTERM)
    assert s.wait_exit(10) == 0
    for c in conns:
        assert is_closed(c)
        c.close()


def test_config_get_dir_is_absolute(server, r):
    import os
    d = r.config_get("dir")["dir"]
    assert os.path.isabs(d)
    assert os.path.realpath(d) == os.path.realpath(server.dir)


# ---------------------------------------------------------------- CONFIG REWRITE

@pytest.mark.skipif(TARGET == "redis", reason="strata writes memory values in bytes")
def test_config_rewrite(server_factory):
    import os
    conf_text = ("# my settings\n"
                 "maxmemory 10mb\n"
                 "\n"
                 "hash-max-ziplist-entries 64\n"
                 "maxmemory 20mb   \n"
                 "notify-keyspace-events \"\"\n")
    s = server_factory(config_text=conf_text)
    path = os.path.join(s.dir, "test.conf")
    c = s.client(decode_responses=True)
    c.config_set("maxmemory", "30mb")
    c.config_set("slowlog-max-len", "77")
    c.config_set("notify-keyspace-events", "KEA")
    c.config_set("requirepass", "with space \"q\"")
    c = s.client(decode_responses=True, password="with space \"q\"")
    assert c.execute_command("CONFIG", "REWRITE") == "OK"
    lines = open(path).read().splitlines()
    assert lines[0] == "# my settings" and lines[2] == ""
    assert lines[1] == "maxmemory 31457280"
    assert lines[3] == "hash-max-listpack-entries 64"
    assert "maxmemory 20mb   " not in lines  # the setting's later line went
    assert "# Generated by CONFIG REWRITE" in lines
    assert "slowlog-max-len 77" in lines
    # A restart from the rewritten file has the same settings.
    rewritten = open(path).read()
    s.stop()
    s2 = server_factory(config_text=rewritten, threads=1)
    c2 = s2.client(decode_responses=True, password="with space \"q\"")
    for name in ("maxmemory", "slowlog-max-len", "notify-keyspace-events", "requirepass",
                 "hash-max-listpack-entries", "port"):
        got = c2.config_get(name)[name]
        want = {"maxmemory": "31457280", "slowlog-max-len": "77", "requirepass": "with space \"q\"",
                "hash-max-listpack-entries": "64"}.get(name)
        if want is not None:
            assert got == want, name
    assert set(c2.config_get("notify-keyspace-events")["notify-keyspace-events"]) == set("AKE")


def test_config_rewrite_without_a_file(r):
    assert error_of(r.execute_command, "CONFIG", "REWRITE") == (
        "The server is running without a config file")
    assert error_of(r.execute_command, "CONFIG", "REWRITE", "x") == (
        "wrong number of arguments for 'config|rewrite' command")


# Settings a config file names in other ways than CONFIG GET shows them, or that pick
# this test's own process (its port, files and log).
_CONF_OWN = {"port", "bind", "dir", "logfile", "pidfile", "daemonize", "save", "appendonly",
             "unixsocket", "replicaof", "slaveof"}


def _conf_line(name, value):
    return '%s "%s"' % (name, value.replace("\\", "\\\\").replace('"', '\\"'))


def test_a_config_file_of_every_redis_default_loads(server_factory):
    """A redis.conf written for Redis 7 loads: every setting redis-server reports (CONFIG
    GET *) at its default, in one file, and each reads back as that file gave it."""
    import helpers
    ref = helpers.start_redis_server()
    try:
        defaults = ref.client(decode_responses=True).config_get("*")
    finally:
        ref.stop()
    lines = [_conf_line(k, v) for k, v in sorted(defaults.items()) if k not in _CONF_OWN]
    s = server_factory(config_text="\n".join(lines) + "\n")
    got = s.client(decode_responses=True).config_get("*")
    missing = sorted(k for k in defaults if k not in got)
    assert missing == [], missing
    for name in ("stop-writes-on-bgsave-error", "appendfsync", "activedefrag", "io-threads",
                 "oom-score-adj-values", "proc-title-template", "min-replicas-to-write"):
        assert got[name] == defaults[name], name


@pytest.mark.skipif(TARGET == "redis", reason="what strata does not have")
def test_redis_settings_strata_cannot_honour_are_refused(r):
    """A Redis setting whose value would ask for what strata does not have is refused
    with the reason, at start-up as with CONFIG SET; the values that describe what
    strata does are accepted."""
    for name, value, why in [("activedefrag", "yes", "no active defragmentation"),
                             ("tls-port", "6380", "TLS is not supported"),
                             ("oom-score-adj", "yes", "not supported")]:
        with pytest.raises(redis.ResponseError, match=why):
            r.config_set(name, value)
    for name, value in [("activedefrag", "no"), ("appendfsync", "always"), ("io-threads", "4"),
                        ("repl-diskless-load", "swapdb"), ("supervised", "systemd")]:
        assert r.config_set(name, value), name
    with pytest.raises(redis.ResponseError):
        r.config_set("appendfsync", "sometimes")


@pytest.mark.skipif(TARGET == "redis", reason="strata's start-up message")
def test_an_unsupported_value_in_the_config_file_stops_the_start(server_factory):
    s = server_factory(config_text="activedefrag yes\n", expect_fail=True)
    assert s.wait_exit(10) not in (None, 0)
    log = s.read_log()
    assert "FATAL CONFIG FILE ERROR" in log and "activedefrag yes" in log
    assert "no active defragmentation" in log


def test_instantaneous_rates_follow_the_recent_load(server_factory):
    """instantaneous_ops_per_sec and instantaneous_input/output_kbps are the rate over the
    last ~1.6 s (16 samples a tenth of a second apart), as Redis's, not a lifetime
    average: high while a load runs, back to about nothing once it has stopped."""
    import time as _time
    s = server_factory()
    c = s.client()
    value = "x" * 1000
    sent = 0
    start = _time.monotonic()
    while _time.monotonic() - start < 2.0:
        p = c.pipeline(transaction=False)
        for i in range(200):
            p.set("k%d" % i, value)
        p.execute()
        sent += 200
    rate = sent / (_time.monotonic() - start)
    info = c.info("stats")
    assert 0.3 * rate < info["instantaneous_ops_per_sec"] < 3 * rate, (info, rate)
    # Each SET reads ~1 KiB and writes 5 bytes.
    assert info["instantaneous_input_kbps"] > 0.3 * rate * 1000 / 1024
    assert 0 < info["instantaneous_output_kbps"] < info["instantaneous_input_kbps"]
    _time.sleep(2.5)
    info = c.info("stats")
    assert info["instantaneous_ops_per_sec"] < 50, info
    assert info["instantaneous_input_kbps"] < 5, info
    assert info["total_commands_processed"] >= sent


# Fields of Redis 7.0's INFO that strata does not give, by section: Redis internals
# strata has no counterpart of (active defrag, I/O threads, its LRU clock, the build id),
# and counts not kept yet (replication traffic apart from clients', read and write
# events, the active expiry's effort).
INFO_FIELDS_NOT_GIVEN = {
    "server": {"atomicvar_api", "io_threads_active", "monotonic_clock", "redis_build_id"},
    "clients": set(),
    "memory": set(),
    "persistence": set(),
    "stats": {"active_defrag_hits", "active_defrag_key_hits", "active_defrag_key_misses",
              "active_defrag_misses", "current_active_defrag_time",
              "dump_payload_sanitizations", "expired_time_cap_reached_count",
              "io_threaded_reads_processed", "io_threaded_writes_processed",
              "migrate_cached_sockets", "reply_buffer_expands", "reply_buffer_shrinks",
              "slave_expires_tracked_keys", "total_active_defrag_time"},
    "replication": set(),
    "cpu": set(),
    "errorstats": set(),
    "cluster": set(),
}


def test_info_has_the_fields_of_redis_but_a_known_few(pair):
    def fields(c, section):
        text = c.execute_command("INFO", section)
        text = text.decode() if isinstance(text, bytes) else text
        return {line.split(":", 1)[0] for line in text.splitlines()
                if line and not line.startswith("#")}
    ours, ref = pair
    for c in pair:
        c.execute_command("SET", "k", "v")
        try:
            c.execute_command("GET")
        except redis.ResponseError:
            pass
    for section, absent in INFO_FIELDS_NOT_GIVEN.items():
        missing = fields(ref, section) - fields(ours, section)
        if TARGET == "redis":
            assert missing == set(), section
        else:
            assert missing == absent, section


def test_subcommands_have_their_own_statistics(pair):
    """INFO commandstats and latencystats, and LATENCY HISTOGRAM, list a container's
    subcommands apart ("config|get"), as Redis 7 does; a container called without one is
    counted as itself."""
    def stats(c):
        text = c.execute_command("INFO", "commandstats")
        text = text.decode() if isinstance(text, bytes) else text
        out = {}
        for line in text.splitlines():
            if line.startswith("cmdstat_"):
                name, fields = line[len("cmdstat_"):].split(":", 1)
                f = dict(kv.split("=") for kv in fields.split(","))
                out[name] = (int(f["calls"]), int(f["rejected_calls"]), int(f["failed_calls"]))
        return out

    def latency_names(c, *names):
        reply = c.execute_command("LATENCY", "HISTOGRAM", *names)
        if isinstance(reply, dict):
            keys = reply.keys()
        else:
            keys = reply[0::2]
        return sorted(k.decode() if isinstance(k, bytes) else k for k in keys)

    results = []
    for c in pair:
        c.execute_command("SET", "k", "v")
        c.execute_command("CONFIG", "RESETSTAT")
        c.execute_command("CONFIG", "GET", "maxmemory")
        c.execute_command("CONFIG", "GET", "hz")
        c.execute_command("CLIENT", "LIST")
        c.execute_command("OBJECT", "ENCODING", "k")
        # Keys on every shard, in a transaction and from a script: each call is the
        # subcommand's, wherever it runs.
        for i in range(8):
            c.execute_command("SET", f"k{i}", "v")
            c.execute_command("OBJECT", "ENCODING", f"k{i}")
        c.execute_command("MULTI")
        c.execute_command("OBJECT", "ENCODING", "k3")
        c.execute_command("OBJECT", "FREQ", "k3")
        c.execute_command("EXEC")
        c.execute_command("EVAL", "return redis.call('object', 'encoding', KEYS[1])", 1, "k5")
        with pytest.raises(redis.ResponseError):
            c.execute_command("XINFO", "STREAM", "nokey")
        with pytest.raises(redis.ResponseError):
            c.execute_command("CONFIG")
        s = stats(c)
        results.append({n: s.get(n) for n in ("config|resetstat", "config|get", "client|list",
                                                 "object|encoding", "object|freq",
                                                 "xinfo|stream", "config")})
        assert "client" not in s and "object" not in s
        lat = c.execute_command("INFO", "latencystats")
        lat = lat.decode() if isinstance(lat, bytes) else lat
        assert "latency_percentiles_usec_config|get:" in lat
        assert latency_names(c, "config") == ["config|get", "config|resetstat"]
        assert latency_names(c, "client|list", "nosuch", "config|nosuch") == ["client|list"]
    ours, ref = results
    assert ours == ref
    assert ours["config|get"] == (2, 0, 0)
    assert ours["object|encoding"] == (11, 0, 0)
    assert ours["object|freq"] == (1, 0, 1)
    assert ours["xinfo|stream"] == (1, 0, 1)
    assert ours["config"] == (0, 1, 0)


def info_numbers(c, section):
    """INFO section of a client whose replies are raw, its numeric fields as numbers."""
    text = c.execute_command("INFO", section)
    text = text.decode() if isinstance(text, bytes) else text
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#") and ":" in line:
            k, v = line.split(":", 1)
            try:
                out[k] = float(v) if "." in v else int(v)
            except ValueError:
                out[k] = v
    return out


def test_reads_writes_timeouts_and_active_expiry_are_counted(pair):
    """INFO total_reads_processed / total_writes_processed grow with a client's requests,
    clients_in_timeout_table counts the blocked clients that have a timeout, and active
    expiry reports its stale share and its time."""
    for c in pair:
        stats = info_numbers(c, "stats")
        for i in range(20):
            c.execute_command("PING")
        later = info_numbers(c, "stats")
        assert later["total_reads_processed"] - stats["total_reads_processed"] >= 20
        assert later["total_writes_processed"] - stats["total_writes_processed"] >= 20
        assert info_numbers(c, "cpu")["used_cpu_user_main_thread"] >= 0
        # The access clock: wall-clock seconds in 24 bits.
        assert abs(info_numbers(c, "server")["lru_clock"] - (int(time.time()) & 0xFFFFFF)) <= 2
    ours, ref = pair
    for c, target in ((ours, None), (ref, "redis")):
        port = c.connection_pool.connection_kwargs["port"]
        waiters = []
        for timeout in (0, 30):
            w = redis.Redis(host="127.0.0.1", port=port, socket_timeout=10)
            w.ping()
            t = threading.Thread(target=lambda w=w, t=timeout: w.blpop(["nolist"], t),
                                 daemon=True)
            t.start()
            waiters.append((w, t))
        deadline = time.time() + 10
        while info_numbers(c, "clients")["blocked_clients"] < 2 and time.time() < deadline:
            time.sleep(0.02)
        clients = info_numbers(c, "clients")
        assert clients["blocked_clients"] == 2
        assert clients["clients_in_timeout_table"] == 1
        c.rpush("nolist", "a", "b")
        for w, t in waiters:
            t.join(10)
            w.close()
        assert info_numbers(c, "clients")["clients_in_timeout_table"] == 0
    for c in pair:
        pipe = c.pipeline(transaction=False)
        for i in range(2000):
            pipe.set("stale%d" % i, "v", px=20)
        pipe.execute()
        deadline = time.time() + 10
        while c.dbsize() > 0 and time.time() < deadline:
            time.sleep(0.05)
        stats = info_numbers(c, "stats")
        assert stats["expired_keys"] >= 2000
        assert stats["expired_stale_perc"] > 0
        assert stats["expire_cycle_cpu_milliseconds"] >= 0
        c.execute_command("CONFIG", "RESETSTAT")
        stats = info_numbers(c, "stats")
        assert stats["expired_stale_perc"] == 0 and stats["expired_keys"] == 0
