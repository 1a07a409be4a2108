"""Connection and server commands: PING, ECHO, SELECT, SWAPDB, DBSIZE, FLUSHDB/FLUSHALL,
TIME, COMMAND and CLIENT. (INFO, CONFIG, SHUTDOWN and signals: test_server_info_config.py.)

Expected values and error texts were checked against redis-server 7.0.
"""
import re
import time

import pytest

import helpers
from conftest import require_commands
from helpers import call, cmd, error_of, is_closed, parse_client_line, resp, roundtrip


# ---------------------------------------------------------------- PING / ECHO

def test_ping(r, raw):
    assert call(r, "PING") == "PONG"
    assert call(r, "PING", "hello") == "hello"
    assert call(r, "PING", "") == ""
    assert error_of(r.execute_command, "PING", "a", "b") == (
        "wrong number of arguments for 'ping' command")
    c = raw()
    assert roundtrip(c, cmd("PING")) == b"+PONG\r\n"
    assert roundtrip(c, cmd("PING", "x y")) == b"$3\r\nx y\r\n"


def test_echo(r, rb):
    assert r.echo("hello world") == "hello world"
    assert rb.echo(b"\x00\r\n\xff") == b"\x00\r\n\xff"
    assert error_of(r.execute_command, "ECHO") == "wrong number of arguments for 'echo' command"
    assert error_of(r.execute_command, "ECHO", "a", "b") == (
        "wrong number of arguments for 'echo' command")


# ---------------------------------------------------------------- databases

def test_select_isolates_databases(server, raw):
    c = raw()
    assert roundtrip(c, cmd("SET", "k", "db0")) == b"+OK\r\n"
    assert roundtrip(c, cmd("SELECT", "1")) == b"+OK\r\n"
    assert roundtrip(c, cmd("GET", "k")) == b"$-1\r\n"
    assert roundtrip(c, cmd("SET", "k", "db1")) == b"+OK\r\n"
    assert roundtrip(c, cmd("SELECT", "15")) == b"+OK\r\n"
    assert roundtrip(c, cmd("DBSIZE")) == b":0\r\n"
    assert roundtrip(c, cmd("SELECT", "0")) == b"+OK\r\n"
    assert roundtrip(c, cmd("GET", "k")) == b"$3\r\ndb0\r\n"
    # the selected db is per connection
    other = raw()
    assert roundtrip(other, cmd("GET", "k")) == b"$3\r\ndb0\r\n"


def test_select_errors(r):
    assert error_of(r.execute_command, "SELECT", "16") == "DB index is out of range"
    assert error_of(r.execute_command, "SELECT", "-1") == "DB index is out of range"
    assert error_of(r.execute_command, "SELECT", "abc") == "value is not an integer or out of range"
    assert error_of(r.execute_command, "SELECT") == "wrong number of arguments for 'select' command"


def test_databases_setting(server_factory):
    s = server_factory(extra_args=["--databases", "4"])
    c = s.client(decode_responses=True)
    assert c.config_get("databases") == {"databases": "4"}
    assert c.execute_command("SELECT", "3") is True
    assert error_of(c.execute_command, "SELECT", "4") == "DB index is out of range"
    assert error_of(c.execute_command, "SWAPDB", "0", "4") == "DB index is out of range"
    c.close()


def test_swapdb(server):
    c0 = server.client(decode_responses=True)
    c1 = server.client(db=1, decode_responses=True)
    c0.set("a", "in0")
    c1.set("b", "in1")
    c1.set("c", "in1")
    assert c0.execute_command("SWAPDB", "0", "1") is True
    assert c0.get("a") is None
    assert c0.get("b") == "in1"
    assert c0.dbsize() == 2
    assert c1.get("a") == "in0"
    assert c1.dbsize() == 1
    # swapping a db with itself is allowed
    assert c0.execute_command("SWAPDB", "2", "2") is True
    c0.close()
    c1.close()


def test_swapdb_errors(r):
    assert error_of(r.execute_command, "SWAPDB", "0", "16") == "DB index is out of range"
    assert error_of(r.execute_command, "SWAPDB", "a", "1") == "invalid first DB index"
    assert error_of(r.execute_command, "SWAPDB", "0", "x") == "invalid second DB index"
    assert error_of(r.execute_command, "SWAPDB", "0") == (
        "wrong number of arguments for 'swapdb' command")


def test_dbsize(server, r):
    assert r.dbsize() == 0
    r.mset({"a": "1", "b": "2", "c": "3"})
    r.set("l", "x")
    assert r.dbsize() == 4
    r.delete("a")
    assert r.dbsize() == 3
    c2 = server.client(db=2)
    c2.set("x", "y")
    assert c2.dbsize() == 1
    assert r.dbsize() == 3
    c2.close()
    assert error_of(r.execute_command, "DBSIZE", "x") == (
        "wrong number of arguments for 'dbsize' command")


def test_dbsize_counts_keys_of_every_type(server, r):
    require_commands(server, "RPUSH")
    r.set("s", "v")
    r.rpush("l", "x")
    assert r.dbsize() == 2


def test_flushdb_only_current_db(server, r):
    c1 = server.client(db=1, decode_responses=True)
    r.set("a", "1")
    c1.set("b", "1")
    assert r.flushdb() is True
    assert r.dbsize() == 0
    assert c1.get("b") == "1"
    c1.close()


@pytest.mark.parametrize("mode", [None, "SYNC", "ASYNC"])
def test_flushall_modes(server, r, mode):
    c3 = server.client(db=3)
    for i in range(100):
        r.set("k%d" % i, i)
        c3.set("k%d" % i, i)
    args = ["FLUSHALL"] + ([mode] if mode else [])
    assert r.execute_command(*args) is True
    assert r.dbsize() == 0
    assert c3.dbsize() == 0
    c3.close()


@pytest.mark.parametrize("mode", ["SYNC", "ASYNC"])
def test_flushdb_modes(r, mode):
    r.set("a", "1")
    assert r.execute_command("FLUSHDB", mode) is True
    assert r.dbsize() == 0


def test_flush_syntax_errors(r):
    assert error_of(r.execute_command, "FLUSHDB", "foo") == "syntax error"
    assert error_of(r.execute_command, "FLUSHALL", "foo") == "syntax error"
    assert error_of(r.execute_command, "FLUSHALL", "ASYNC", "SYNC") == "syntax error"


# ---------------------------------------------------------------- TIME

def test_time(raw):
    c = raw()
    before = time.time()
    reply = roundtrip(c, cmd("TIME"))
    after = time.time()
    m = re.fullmatch(rb"\*2\r\n\$\d+\r\n(\d+)\r\n\$\d+\r\n(\d+)\r\n", reply)
    assert m, reply
    secs, usecs = int(m.group(1)), int(m.group(2))
    assert 0 <= usecs <= 999999
    t = secs + usecs / 1e6
    assert before - 1 <= t <= after + 1
    assert roundtrip(c, cmd("TIME", "x")) == b"-ERR wrong number of arguments for 'time' command\r\n"


# ---------------------------------------------------------------- COMMAND

def test_command_count_matches_command(r):
    count = r.execute_command("COMMAND COUNT")
    assert isinstance(count, int) and count > 50
    assert len(r.execute_command("COMMAND")) == count
    assert error_of(r.execute_command, "COMMAND COUNT", "x") == (
        "wrong number of arguments for 'command|count' command")


def test_command_info_get(r):
    info = r.execute_command("COMMAND INFO", "get")
    assert len(info) == 1
    entry = info[0]
    assert len(entry) == 10
    name, arity, flags, first, last, step, categories = entry[:7]
    assert (name, arity, first, last, step) == ("get", 2, 1, 1, 1)
    assert {"readonly", "fast"} <= set(flags)
    assert {"@read", "@string", "@fast"} <= set(categories)


@pytest.mark.parametrize("command,category", [("setbit", "@bitmap"), ("bitcount", "@bitmap"),
                                              ("pfadd", "@hyperloglog"),
                                              ("pfcount", "@hyperloglog"), ("geoadd", "@geo"),
                                              ("geosearch", "@geo")])
def test_command_info_type_categories(r, command, category):
    categories = r.execute_command("COMMAND INFO", command)[0][6]
    assert category in categories
    assert "@string" not in categories


def test_command_info_several_and_unknown(r):
    info = r.execute_command("COMMAND INFO", "set", "nosuchcommand", "mget")
    assert len(info) == 3
    assert info[0][:2] == ["set", -3]
    assert info[1] is None
    assert info[2][:2] == ["mget", -2]
    assert info[2][3:6] == [1, -1, 1]


def test_command_docs_get(r):
    docs = r.execute_command("COMMAND DOCS", "get")
    assert docs[0] == "get"
    fields = docs[1]
    d = dict(zip(fields[::2], fields[1::2]))
    assert d["group"] == "string"
    assert isinstance(d["summary"], str) and d["summary"]
    assert r.execute_command("COMMAND DOCS", "nosuchcommand") == []


def test_command_list(r):
    names = r.execute_command("COMMAND LIST")
    assert len(names) == len(set(names))
    for n in ["get", "set", "ping", "mset", "mget", "del", "client", "config", "info",
              "command", "hello", "select", "flushall"]:
        assert n in names
    assert all(n == n.lower() for n in names)


def test_command_list_includes_subcommands(r):
    names = r.execute_command("COMMAND LIST")
    for n in ["config|get", "config|set", "client|list", "command|count"]:
        assert n in names


def test_command_unknown_subcommand(r):
    assert error_of(r.execute_command, "COMMAND", "foo") == (
        "unknown subcommand 'foo'. Try COMMAND HELP.")


# ---------------------------------------------------------------- CLIENT

def test_client_id(server, r):
    a = r.client_id()
    other = server.client()
    b = other.client_id()
    assert isinstance(a, int) and a > 0
    assert b > a
    assert r.client_id() == a
    other.close()
    assert error_of(r.execute_command, "CLIENT", "ID", "x") == (
        "wrong number of arguments for 'client|id' command")


def test_client_setname_getname(r):
    assert r.execute_command("CLIENT", "GETNAME") is None
    assert r.execute_command("CLIENT", "SETNAME", "conn-1") == "OK"
    assert r.execute_command("CLIENT", "GETNAME") == "conn-1"
    assert error_of(r.execute_command, "CLIENT", "SETNAME", "a b") == (
        "Client names cannot contain spaces, newlines or special characters.")
    assert error_of(r.execute_command, "CLIENT", "SETNAME", "a\nb") == (
        "Client names cannot contain spaces, newlines or special characters.")
    assert r.execute_command("CLIENT", "GETNAME") == "conn-1"
    # an empty name clears it
    assert r.execute_command("CLIENT", "SETNAME", "") == "OK"
    assert r.execute_command("CLIENT", "GETNAME") is None
    assert error_of(r.execute_command, "CLIENT", "GETNAME", "x") == (
        "wrong number of arguments for 'client|getname' command")


def test_client_info(r):
    r.execute_command("CLIENT", "SETNAME", "me")
    text = r.execute_command("CLIENT", "INFO")
    assert text.endswith("\n") and text.count("\n") == 1
    f = parse_client_line(text.rstrip("\n"))
    assert f["id"] == str(r.client_id())
    assert f["name"] == "me"
    assert f["db"] == "0"
    assert f["cmd"] == "client|info"
    assert f["resp"] == "2"
    assert re.fullmatch(r"127\.0\.0\.1:\d+", f["addr"])
    for k in ["laddr", "fd", "age", "idle", "flags", "sub", "psub", "multi", "qbuf", "obl",
              "oll", "omem", "tot-mem", "events", "user"]:
        assert k in f


def test_client_list(server, r):
    r.execute_command("CLIENT", "SETNAME", "lister")
    other = server.client(decode_responses=True)
    other.execute_command("CLIENT", "SETNAME", "listed")
    other.select(2)
    text = r.execute_command("CLIENT", "LIST")
    assert text.endswith("\n")
    entries = [parse_client_line(l) for l in text.rstrip("\n").split("\n")]
    by_name = {e["name"]: e for e in entries}
    assert by_name["lister"]["id"] == str(r.client_id())
    assert by_name["lister"]["cmd"] == "client|list"
    assert by_name["listed"]["id"] == str(other.client_id())
    assert by_name["listed"]["db"] == "2"
    # filtered by id
    only = r.execute_command("CLIENT", "LIST", "ID", str(other.client_id()))
    lines = only.rstrip("\n").split("\n")
    assert len(lines) == 1
    assert parse_client_line(lines[0])["name"] == "listed"
    assert r.execute_command("CLIENT", "LIST", "ID", "999999999") == ""
    # TYPE normal lists ordinary clients
    normal = r.execute_command("CLIENT", "LIST", "TYPE", "normal")
    assert "name=lister " in normal and "name=listed " in normal
    other.close()


def test_client_kill_by_id(server, r, raw):
    victim = raw()
    vid = int(roundtrip(victim, cmd("CLIENT", "ID"))[1:-2])
    assert r.execute_command("CLIENT", "KILL", "ID", str(vid)) == 1
    assert is_closed(victim)
    assert r.execute_command("CLIENT", "KILL", "ID", "999999999") == 0
    assert error_of(r.execute_command, "CLIENT", "KILL", "ID", "abc") == (
        "client-id should be greater than 0")
    assert r.ping() is True


def test_client_kill_by_addr(r, raw):
    victim = raw()
    assert roundtrip(victim, cmd("PING")) == b"+PONG\r\n"
    host, port = victim.sock.getsockname()[:2]
    assert r.execute_command("CLIENT", "KILL", "ADDR", "%s:%d" % (host, port)) == 1
    assert is_closed(victim)
    assert r.execute_command("CLIENT", "KILL", "ADDR", "1.2.3.4:5") == 0


def test_client_kill_old_form(raw):
    admin = raw()
    victim = raw()
    assert roundtrip(victim, cmd("PING")) == b"+PONG\r\n"
    host, port = victim.sock.getsockname()[:2]
    assert roundtrip(admin, cmd("CLIENT", "KILL", "%s:%d" % (host, port))) == b"+OK\r\n"
    assert is_closed(victim)
    assert roundtrip(admin, cmd("CLIENT", "KILL", "1.2.3.4:5")) == b"-ERR No such client\r\n"
    assert roundtrip(admin, cmd("CLIENT", "KILL", "foo", "bar")) == b"-ERR syntax error\r\n"


def test_client_no_evict(r):
    assert r.execute_command("CLIENT", "NO-EVICT", "on") == "OK"
    assert r.execute_command("CLIENT", "NO-EVICT", "off") == "OK"
    assert error_of(r.execute_command, "CLIENT", "NO-EVICT", "maybe") == "syntax error"


def test_client_reply_off_on(raw):
    c = raw()
    c.send(cmd("CLIENT", "REPLY", "OFF") + cmd("SET", "a", "1") + cmd("PING")
           + cmd("CLIENT", "REPLY", "ON") + cmd("GET", "a"))
    assert c.read_reply() == b"+OK\r\n"
    assert c.read_reply() == b"$1\r\n1\r\n"


def test_client_reply_skip(raw):
    c = raw()
    c.send(cmd("CLIENT", "REPLY", "SKIP") + cmd("ECHO", "skipped") + cmd("ECHO", "seen"))
    assert c.read_reply() == b"$4\r\nseen\r\n"
    # SKIP only affects the next command
    assert roundtrip(c, cmd("PING")) == b"+PONG\r\n"


def test_client_reply_errors(raw):
    c = raw()
    assert roundtrip(c, cmd("CLIENT", "REPLY", "maybe")) == b"-ERR syntax error\r\n"
    assert roundtrip(c, cmd("CLIENT", "REPLY", "ON")) == b"+OK\r\n"


def test_client_unknown_subcommand(r):
    assert error_of(r.execute_command, "CLIENT", "foo") == (
        "unknown subcommand 'foo'. Try CLIENT HELP.")


def test_command_getkeys_matches_redis(pair):
    from helpers import same
    for call in [("SET", "k", "v"), ("GET", "k"), ("MSET", "a", "1", "b", "2"),
                 ("MGET", "a", "b", "c"), ("DEL", "a", "b"), ("RENAME", "a", "b"),
                 ("LMOVE", "a", "b", "LEFT", "RIGHT"), ("BITOP", "AND", "d", "s1", "s2"),
                 ("LCS", "a", "b"), ("EVAL", "return 1", "2", "k1", "k2", "arg"),
                 ("ZUNIONSTORE", "d", "2", "a", "b"), ("XADD", "s", "*", "f", "v"),
                 ("PFCOUNT", "h1", "h2"), ("SMOVE", "a", "b", "m"), ("EXPIRE", "k", "10"),
                 ("PING",), ("NOSUCH", "k"), ("GET",), ("GET", "a", "b"),
                 ("EVAL", "return 1", "0"),
                 ("ZUNIONSTORE", "d", "2", "a", "b", "WEIGHTS", "1", "2"),
                 ("ZINTERCARD", "2", "a", "b", "LIMIT", "1"), ("SINTERCARD", "1", "a"),
                 ("LMPOP", "2", "a", "b", "LEFT"), ("BZMPOP", "0", "2", "a", "b", "MIN"),
                 ("ZDIFF", "2", "a", "b"), ("SORT", "k", "STORE", "d"), ("SORT_RO", "k"),
                 ("MIGRATE", "h", "1", "", "0", "10", "KEYS", "a", "b"),
                 ("MIGRATE", "h", "1", "k", "0", "10"), ("SPUBLISH", "ch", "m"),
                 ("XREAD", "STREAMS", "a", "b", "0", "0"), ("BLPOP", "a", "b", "0")]:
        same(pair, "COMMAND", "GETKEYS", *call)
    same(pair, "COMMAND", "GETKEYS")


# SCRIPT (no DEBUG), COMMAND (no mention of Redis) and MEMORY (USAGE is exact) say what
# strata does.
@pytest.mark.parametrize("command", ["CONFIG", "FUNCTION", "SLOWLOG", "LATENCY", "PUBSUB",
                                     "OBJECT", "XINFO"])
def test_help_texts_match_redis(pair, command):
    from helpers import same
    same(pair, command, "HELP")


def test_lolwut_answers_as_redis_7_0(pair, raw):
    """LOLWUT gives Redis 7.0's version line, whatever VERSION asks for but 5 and 6 (which
    Redis draws and strata does not); a VERSION that is no integer is an error."""
    for args in (("LOLWUT",), ("LOLWUT", "VERSION", "7"), ("LOLWUT", "VERSION", "1"),
                 ("LOLWUT", "version", "-1"), ("LOLWUT", "extra", "args"),
                 ("LOLWUT", "VERSION", "x"), ("LOLWUT", "VERSION", "99999999999999999999")):
        helpers.same(pair, *args)
    assert helpers.same(pair, "LOLWUT") == b"Redis ver. 7.0.15\n"
    # RESP3: verbatim text.
    conn = raw()
    roundtrip(conn, resp("HELLO", "3"))
    assert roundtrip(conn, resp("LOLWUT")) == b"=22\r\ntxt:Redis ver. 7.0.15\n\r\n"
