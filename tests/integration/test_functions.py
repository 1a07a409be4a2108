"""Functions: FUNCTION LOAD/DELETE/FLUSH/LIST/DUMP/RESTORE/STATS/KILL and FCALL/FCALL_RO.

Library metadata and redis.register_function with Redis 7.0's error texts, what a
function's code may see while loading and while running, FCALL's keys and arguments,
FCALL_RO and the no-writes flag, the error suffix naming the function, FUNCTION LIST's
shape in RESP2 and RESP3, DUMP/RESTORE with their policies (and payloads carried
between strata and redis-server both ways), libraries kept by a snapshot across a
restart, FUNCTION KILL, functions over keys on several shards, and redis-py's helpers.

Every expectation was checked against redis-server 7.0 (STRATA_TEST_TARGET=redis).
"""
import threading
import time

import pytest
import redis

from conftest import TARGET, RawConnection
from helpers import resp, roundtrip, start_redis_server

LIB = """#!lua name=mylib
redis.register_function('echo_args', function(keys, args) return {keys, args} end)
redis.register_function{function_name='getk', callback=function(keys, args)
  return redis.call('GET', keys[1]) end, flags={'no-writes'}, description='reads a key'}
redis.register_function('incr_it', function(keys, args) return redis.call('INCR', keys[1]) end)
redis.register_function('fail_it', function(keys, args)
  return redis.call('HGET', keys[1], 'f') end)
"""


def wire(conn, *args):
    return roundtrip(conn, resp(*args))


def err(text):
    return b"-" + text.encode() + b"\r\n"


@pytest.fixture
def conn(raw):
    c = raw()
    assert wire(c, "FUNCTION", "FLUSH") == b"+OK\r\n"
    return c


@pytest.fixture
def lib(r):
    r.function_flush()
    assert r.function_load(LIB) == "mylib"
    yield
    r.function_flush()


# ---------------------------------------------------------------- loading

@pytest.mark.parametrize("code,text", [
    ("return 1", "ERR Missing library metadata"),
    ("#!lua", "ERR Invalid library metadata"),
    ("#!lua\nredis.register_function('f', function() return 1 end)",
     "ERR Library name was not given"),
    ("#!lua name=x foo=bar\nredis.register_function('f', function() return 1 end)",
     "ERR Invalid metadata value given: foo=bar"),
    ("#!foo name=x\nredis.register_function('f', function() return 1 end)",
     "ERR Engine 'foo' not found"),
    ("#!lua name=x-y\nredis.register_function('f', function() return 1 end)",
     "ERR Library names can only contain letters, numbers, or underscores(_) and must be at "
     "least one character long"),
    ("#!lua name=x\nlocal a = 1", "ERR No functions registered"),
    ("#!lua name=x\nsyntax error here",
     "ERR Error compiling function: user_function:2: '=' expected near 'error'"),
    ("#!lua name=x\nredis.call('set','x','y')",
     "ERR Error registering functions: ERR user_function:2: Script attempted to access "
     "nonexistent global variable 'call'"),
    ("#!lua name=x\nx = 5",
     "ERR Error registering functions: ERR user_function:2: Attempt to modify a readonly table"),
    ("#!lua name=x\nlocal y = undefinedvar",
     "ERR Error registering functions: ERR user_function:2: Script attempted to access "
     "nonexistent global variable 'undefinedvar'"),
    ("#!lua name=x\nredis.register_function('f-2', function() return 1 end)",
     "ERR Error registering functions: ERR Library names can only contain letters, numbers, "
     "or underscores(_) and must be at least one character long"),
    ("#!lua name=x\nredis.register_function()",
     "ERR Error registering functions: ERR wrong number of arguments to "
     "redis.register_function"),
    ("#!lua name=x\nredis.register_function('g', function() return 1 end, 3)",
     "ERR Error registering functions: ERR wrong number of arguments to "
     "redis.register_function"),
    ("#!lua name=x\nredis.register_function('a')",
     "ERR Error registering functions: ERR calling redis.register_function with a single "
     "argument is only applicable to Lua table (representing named arguments)."),
    ("#!lua name=x\nredis.register_function('g', 5)",
     "ERR Error registering functions: ERR second argument to redis.register_function must "
     "be a function"),
    ("#!lua name=x\nredis.register_function{function_name='g', callback=function() return 1 "
     "end, flags={'no-writes','bad'}}",
     "ERR Error registering functions: ERR unknown flag given"),
    ("#!lua name=x\nredis.register_function{function_name='g', callback=function() return 1 "
     "end, flags='no-writes'}",
     "ERR Error registering functions: ERR flags argument to redis.register_function must be "
     "a table representing function flags"),
    ("#!lua name=x\nredis.register_function{function_name='g', callback=function() return 1 "
     "end, foo=1}",
     "ERR Error registering functions: ERR unknown argument given to redis.register_function"),
    ("#!lua name=x\nredis.register_function{callback=function() return 1 end}",
     "ERR Error registering functions: ERR redis.register_function must get a function name "
     "argument"),
    ("#!lua name=x\nredis.register_function{function_name='g'}",
     "ERR Error registering functions: ERR redis.register_function must get a callback "
     "argument"),
    ("#!lua name=x\nredis.register_function('f', function() return 1 end)\n"
     "redis.register_function('f', function() return 1 end)",
     "ERR Error registering functions: ERR Function already exists in the library"),
], ids=lambda v: v[:40] if isinstance(v, str) else None)
def test_load_refuses_bad_libraries_with_redis_texts(conn, code, text):
    assert wire(conn, "FUNCTION", "LOAD", code) == err(text)
    assert wire(conn, "FUNCTION", "LIST") == b"*0\r\n"  # nothing was kept


def test_load_replace_and_clashes(conn):
    code = "#!lua name=lib1\nredis.register_function('f1', function() return 1 end)"
    assert wire(conn, "FUNCTION", "LOAD", code) == b"$4\r\nlib1\r\n"
    assert wire(conn, "FUNCTION", "LOAD", code) == err("ERR Library 'lib1' already exists")
    other = "#!lua name=lib2\nredis.register_function('f1', function() return 2 end)"
    assert wire(conn, "FUNCTION", "LOAD", other) == err("ERR Function f1 already exists")
    assert wire(conn, "FUNCTION", "LOAD", "REPLACE", other) == err(
        "ERR Function f1 already exists")
    new = "#!lua name=lib1\nredis.register_function('f2', function() return 2 end)"
    assert wire(conn, "FUNCTION", "LOAD", "replace", new) == b"$4\r\nlib1\r\n"
    assert wire(conn, "FCALL", "f1", "0") == err("ERR Function not found")
    assert wire(conn, "FCALL", "f2", "0") == b":2\r\n"
    assert wire(conn, "FUNCTION", "LOAD", "x", "y", "z") == err("ERR Unknown option given: x")
    assert wire(conn, "FUNCTION", "LOAD") == err(
        "ERR wrong number of arguments for 'function|load' command")
    # The load-time API: redis.log and register_function; a library's locals are its own.
    code = ("#!lua name=lib3\nlocal n = 40\nredis.log(redis.LOG_NOTICE, 'loading lib3')\n"
            "redis.register_function('g3', function() n = n + 1; return n end)")
    assert wire(conn, "FUNCTION", "LOAD", code) == b"$4\r\nlib3\r\n"
    assert wire(conn, "FCALL", "g3", "0") == b":41\r\n"


def test_delete_and_flush(conn):
    code = "#!lua name=lib1\nredis.register_function('f1', function() return 1 end)"
    wire(conn, "FUNCTION", "LOAD", code)
    assert wire(conn, "FUNCTION", "DELETE", "nosuch") == err("ERR Library not found")
    assert wire(conn, "FUNCTION", "DELETE", "lib1") == b"+OK\r\n"
    assert wire(conn, "FCALL", "f1", "0") == err("ERR Function not found")
    assert wire(conn, "FUNCTION", "DELETE") == err(
        "ERR wrong number of arguments for 'function|delete' command")
    wire(conn, "FUNCTION", "LOAD", code)
    assert wire(conn, "FUNCTION", "FLUSH", "bad") == err(
        "ERR FUNCTION FLUSH only supports SYNC|ASYNC option")
    assert wire(conn, "FUNCTION", "FLUSH", "ASYNC") == b"+OK\r\n"
    assert wire(conn, "FUNCTION", "LIST") == b"*0\r\n"
    assert wire(conn, "FUNCTION", "NOSUCH").startswith(b"-ERR unknown subcommand 'NOSUCH'")


# ---------------------------------------------------------------- FCALL

def test_fcall_passes_keys_and_args_and_replies(r, lib):
    assert r.fcall("echo_args", 2, "k1", "k2", "a1") == [["k1", "k2"], ["a1"]]
    assert r.fcall("echo_args", 0) == [[], []]
    assert r.fcall("incr_it", 1, "c") == 1
    assert r.fcall("incr_it", 1, "c") == 2
    assert r.fcall("getk", 1, "c") == "2"
    assert r.fcall_ro("getk", 1, "c") == "2"
    assert r.fcall("getk", 1, "missing") is None


def test_fcall_errors(conn, r, lib):
    assert wire(conn, "FCALL", "nosuch", "0") == err("ERR Function not found")
    assert wire(conn, "FCALL", "getk", "-1") == err("ERR Number of keys can't be negative")
    assert wire(conn, "FCALL", "getk", "5", "a") == err(
        "ERR Number of keys can't be greater than number of args")
    assert wire(conn, "FCALL", "getk", "x") == err("ERR Bad number of keys provided")
    assert wire(conn, "FCALL_RO", "incr_it", "1", "c") == err(
        "ERR Can not execute a script with write flag using *_ro command.")
    r.set("s", "v")
    assert wire(conn, "FCALL", "fail_it", "1", "s") == err(
        "WRONGTYPE Operation against a key holding the wrong kind of value script: fail_it, "
        "on @user_function:7.")
    # A no-writes function may not write.
    code = ("#!lua name=ro\nredis.register_function{function_name='w', flags={'no-writes'}, "
            "callback=function(keys) return redis.call('SET', keys[1], 1) end}")
    wire(conn, "FUNCTION", "LOAD", code)
    assert wire(conn, "FCALL", "w", "1", "k") == err(
        "ERR Write commands are not allowed from read-only scripts. script: w, on "
        "@user_function:2.")
    # Functions get their keys as arguments: there is no KEYS global.
    code = ("#!lua name=lib4\nredis.register_function('k', function(keys, args) "
            "return {type(KEYS), #keys} end)")
    wire(conn, "FUNCTION", "LOAD", code)
    assert wire(conn, "FCALL", "k", "1", "a") == err(
        "ERR user_function:2: Script attempted to access nonexistent global variable 'KEYS' "
        "script: k, on @user_function:2.")


def test_fcall_inside_multi_and_commandstats(r, lib):
    p = r.pipeline(transaction=True)
    p.fcall("incr_it", 1, "m")
    p.fcall("getk", 1, "m")
    assert p.execute() == [1, "1"]
    stats = r.info("commandstats")
    assert stats["cmdstat_fcall"]["calls"] >= 2
    assert stats["cmdstat_incr"]["calls"] >= 1


# ---------------------------------------------------------------- LIST, STATS

def test_function_list_shape(r, lib):
    rc = r  # redis-py parses nothing for FUNCTION LIST in RESP2: nested lists
    libs = rc.execute_command("FUNCTION", "LIST")
    assert len(libs) == 1
    entry = dict(zip(libs[0][::2], libs[0][1::2]))
    assert entry["library_name"] == "mylib"
    assert entry["engine"] == "LUA"
    assert "library_code" not in entry
    funcs = {}
    for f in entry["functions"]:
        d = dict(zip(f[::2], f[1::2]))
        funcs[d["name"]] = d
    assert set(funcs) == {"echo_args", "getk", "incr_it", "fail_it"}
    assert funcs["getk"]["description"] == "reads a key"
    assert funcs["getk"]["flags"] == ["no-writes"]
    assert funcs["echo_args"]["description"] is None
    assert funcs["echo_args"]["flags"] == []
    with_code = rc.execute_command("FUNCTION", "LIST", "WITHCODE", "LIBRARYNAME", "my*")
    entry = dict(zip(with_code[0][::2], with_code[0][1::2]))
    assert entry["library_code"] == LIB
    assert rc.execute_command("FUNCTION", "LIST", "LIBRARYNAME", "other*") == []
    with pytest.raises(redis.ResponseError, match="library name argument was not given"):
        rc.execute_command("FUNCTION", "LIST", "LIBRARYNAME")
    with pytest.raises(redis.ResponseError, match="Unknown argument bad"):
        rc.execute_command("FUNCTION", "LIST", "bad")


def test_info_counts_functions(r, lib):
    mem = r.info("memory")
    assert mem["number_of_functions"] == 4
    assert mem["used_memory_functions"] > 0
    assert mem["used_memory_scripts"] >= mem["used_memory_functions"]
    r.function_flush()
    mem = r.info("memory")
    assert mem["number_of_functions"] == 0
    assert mem["used_memory_functions"] <= 200  # Redis keeps a little for its dicts


def test_function_list_and_stats_in_resp3(server, lib):
    c = RawConnection(server.port)
    try:
        c.send(resp("HELLO", "3"))
        c.read_reply()
        reply = wire(c, "FUNCTION", "LIST", "LIBRARYNAME", "mylib")
        assert reply.startswith(b"*1\r\n%3\r\n$12\r\nlibrary_name\r\n$5\r\nmylib\r\n")
        assert b"$5\r\nflags\r\n~1\r\n+no-writes\r\n" in reply
        assert b"$11\r\ndescription\r\n_\r\n" in reply
        assert wire(c, "FUNCTION", "STATS") == (
            b"%2\r\n$14\r\nrunning_script\r\n_\r\n$7\r\nengines\r\n%1\r\n$3\r\nLUA\r\n%2\r\n"
            b"$15\r\nlibraries_count\r\n:1\r\n$15\r\nfunctions_count\r\n:4\r\n")
    finally:
        c.close()


# ---------------------------------------------------------------- DUMP, RESTORE

def test_dump_and_restore_with_policies(r, lib):
    payload = r.function_dump()
    other = ("#!lua name=other\n"
             "redis.register_function('o', function() return 'o' end)")
    r.function_flush()
    assert r.function_restore(payload)
    assert r.fcall("incr_it", 1, "x") == 1
    with pytest.raises(redis.ResponseError, match="^Library mylib already exists$"):
        r.function_restore(payload)  # APPEND by default
    with pytest.raises(redis.ResponseError, match="^Library mylib already exists$"):
        r.function_restore(payload, "APPEND")
    assert r.function_restore(payload, "REPLACE")
    r.function_load(other)
    assert r.function_restore(payload, "FLUSH")
    assert [l[1] for l in r.execute_command("FUNCTION", "LIST")] == ["mylib"]
    with pytest.raises(redis.ResponseError, match="Wrong restore policy given"):
        r.function_restore(payload, "bad")
    with pytest.raises(redis.ResponseError, match="DUMP payload version or checksum are wrong"):
        r.function_restore(b"nonsense")
    broken = bytearray(payload)
    broken[5] ^= 0xFF
    with pytest.raises(redis.ResponseError, match="DUMP payload version or checksum are wrong"):
        r.function_restore(bytes(broken))
    with pytest.raises(redis.ResponseError, match="wrong number of arguments for 'RESTORE'"):
        r.execute_command("FUNCTION", "RESTORE", payload, "APPEND", "x")
    # An empty payload restores nothing.
    r.function_flush()
    empty = r.function_dump()
    assert r.function_restore(empty)
    assert r.execute_command("FUNCTION", "LIST") == []


def test_dump_payloads_travel_between_strata_and_redis(r, lib):
    ref = start_redis_server()
    try:
        ref.wait_ready()
        rc = ref.client(decode_responses=True)
        payload = r.function_dump()
        assert rc.function_restore(payload)
        assert rc.fcall("echo_args", 1, "a", "b") == [["a"], ["b"]]
        code = "#!lua name=back\nredis.register_function('back', function() return 'b' end)"
        rc.function_load(code)
        r.function_flush()
        assert r.function_restore(rc.function_dump())
        assert r.fcall("back", 0) == "b"
        assert r.fcall("getk", 1, "nothing") is None
        rc.close()
    finally:
        ref.stop()


# ---------------------------------------------------------------- persistence

def test_libraries_survive_a_restart(server_factory, tmp_path):
    data = str(tmp_path)
    srv = server_factory(data_dir=data)
    c = srv.client(decode_responses=True)
    c.function_load(LIB)
    c.set("k", "v")
    assert c.save()
    c.close()
    srv.stop()
    srv = server_factory(data_dir=data)
    c = srv.client(decode_responses=True)
    try:
        assert c.get("k") == "v"
        assert c.fcall("getk", 1, "k") == "v"
        assert [l[1] for l in c.execute_command("FUNCTION", "LIST")] == ["mylib"]
    finally:
        c.close()


# ---------------------------------------------------------------- KILL, across shards

def test_function_kill(server_factory):
    # Other clients are served (with -BUSY) only past busy-reply-threshold.
    srv = server_factory(extra_args=["--busy-reply-threshold", "100"])
    c = srv.client(decode_responses=True)
    c.function_load("#!lua name=loop\n"
                    "redis.register_function('spin', function() while true do end end)\n"
                    "redis.register_function{function_name='spin_ro', flags={'no-writes'}, "
                    "callback=function() while true do end end}")
    assert c.execute_command("FUNCTION", "STATS")[1] is None
    with pytest.raises(redis.ResponseError, match="NOTBUSY"):
        c.function_kill()
    out = {}
    looping = RawConnection(srv.port, timeout=20)

    def run():
        try:
            looping.send(resp("FCALL", "spin", "0"))
            out["reply"] = looping.read_reply()
        except (OSError, ConnectionError) as e:
            out["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    # Connections are dealt to the workers in turn: one lands on a worker the function
    # does not keep busy. FUNCTION STATS there shows it running.
    others = [RawConnection(srv.port, timeout=2) for _ in range(2)]
    try:
        deadline = time.monotonic() + 15
        free = None
        while free is None and time.monotonic() < deadline:
            for o in list(others):
                try:
                    stats = roundtrip(o, resp("FUNCTION", "STATS"))
                except OSError:
                    others.remove(o)  # on the busy worker: its reply comes later
                    continue
                if b"$4\r\nspin\r\n" in stats:
                    free = o
                    break
            time.sleep(0.02)
        assert free is not None, "FUNCTION STATS never showed the function running"
        assert b"$7\r\ncommand\r\n*3\r\n$5\r\nFCALL\r\n$4\r\nspin\r\n$1\r\n0\r\n" in stats
        # Past the threshold: -BUSY naming FUNCTION KILL, for new connections too.
        busy = (b"-BUSY Redis is busy running a script. You can only call FUNCTION KILL or "
                b"SHUTDOWN NOSAVE.\r\n")
        deadline = time.monotonic() + 10
        while roundtrip(free, resp("PING")) != busy:
            assert time.monotonic() < deadline, "never busy"
            time.sleep(0.02)
        late = RawConnection(srv.port, timeout=10)
        try:
            assert roundtrip(late, resp("PING")) == busy
            assert roundtrip(late, resp("FUNCTION", "LIST")) == busy
            assert b"spin" in roundtrip(late, resp("FUNCTION", "STATS"))
        finally:
            late.close()
        # SCRIPT KILL does not stop a function.
        assert roundtrip(free, resp("SCRIPT", "KILL")) == (
            b"-BUSY Redis is busy running a script. You can only call FUNCTION KILL or "
            b"SHUTDOWN NOSAVE.\r\n")
        assert roundtrip(free, resp("FUNCTION", "KILL")) == b"+OK\r\n"
        t.join(10)
        assert out.get("reply") == (b"-ERR Script killed by user with SCRIPT KILL... "
                                    b"script: spin, on @user_function:2.\r\n")
        assert roundtrip(looping, resp("PING")) == b"+PONG\r\n"
    finally:
        for o in others:
            o.close()
        looping.close()


def test_function_kill_with_one_worker(server_factory):
    """The busy function's worker answers its clients between the function's steps: with
    one worker FUNCTION STATS shows the function and FUNCTION KILL stops it (before,
    every client waited for the function, and only SIGTERM ended it)."""
    extra = ["--busy-reply-threshold", "100"]
    srv = server_factory(threads=1, extra_args=extra) if TARGET == "strata" else \
        server_factory(extra_args=extra)
    c = srv.client(decode_responses=True)
    c.function_load("#!lua name=loop\n"
                    "redis.register_function('spin', function() while true do end end)")
    looping = RawConnection(srv.port, timeout=20)
    other = RawConnection(srv.port, timeout=10)
    busy = (b"-BUSY Redis is busy running a script. You can only call FUNCTION KILL or "
            b"SHUTDOWN NOSAVE.\r\n")
    try:
        looping.send(resp("FCALL", "spin", "0"))
        deadline = time.monotonic() + 10
        while roundtrip(other, resp("PING")) != busy:
            assert time.monotonic() < deadline, "never busy"
            time.sleep(0.02)
        stats = roundtrip(other, resp("FUNCTION", "STATS"))
        assert b"$4\r\nspin\r\n" in stats
        assert roundtrip(other, resp("SCRIPT", "KILL")) == busy
        assert roundtrip(other, resp("FUNCTION", "KILL")) == b"+OK\r\n"
        assert looping.read_reply() == (b"-ERR Script killed by user with SCRIPT KILL... "
                                        b"script: spin, on @user_function:2.\r\n")
        assert roundtrip(looping, resp("PING")) == b"+PONG\r\n"
        assert roundtrip(other, resp("FUNCTION", "STATS")).startswith(b"*4\r\n")
    finally:
        other.close()
        looping.close()
        c.close()


def test_functions_over_keys_on_several_shards(server_factory):
    srv = server_factory(threads=3)
    c = srv.client(decode_responses=True)
    try:
        c.function_load("#!lua name=bank\n"
                        "redis.register_function('move', function(keys, args)\n"
                        "  local n = tonumber(args[1])\n"
                        "  redis.call('DECRBY', keys[1], n)\n"
                        "  redis.call('INCRBY', keys[2], n)\n"
                        "  redis.call('INCR', 'moves')\n"
                        "  return redis.call('MGET', keys[1], keys[2])\n"
                        "end)")
        keys = ["acct:%d" % i for i in range(8)]
        c.mset({k: 100 for k in keys})
        for i in range(40):
            a, b = keys[i % 8], keys[(i * 3 + 1) % 8]
            if a == b:
                continue
            c.fcall("move", 2, a, b, 5)
        assert sum(int(v) for v in c.mget(keys)) == 800
        assert int(c.get("moves")) > 0
    finally:
        c.close()
