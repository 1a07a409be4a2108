"""Keyspace commands: DEL UNLINK EXISTS TYPE TOUCH RENAME RENAMENX COPY MOVE KEYS SCAN
RANDOMKEY, and SELECT/SWAPDB/DBSIZE/FLUSHDB across databases.

Every expected value here was checked against redis-server 7.0.
redis-py strips the "ERR " prefix from error replies, so patterns below start after it;
test_error_reply_lines pins a few full lines on the wire.
"""
import pytest
import redis

from conftest import require_commands
from helpers import NOT_INT, SYNTAX, make_list, resp

NO_SUCH_KEY = "^no such key$"
DB_RANGE = "^DB index is out of range$"
SAME_OBJECT = "^source and destination objects are the same$"


@pytest.fixture
def db(server):
    """db(n): a client bound to database n (redis-py sends SELECT n on connect)."""
    clients = []

    def make(n):
        c = server.client(db=n, decode_responses=True)
        c.response_callbacks.clear()
        clients.append(c)
        return c

    yield make
    for c in clients:
        c.close()


def scan_all(client, *opts, count=None):
    """Runs a full SCAN iteration; returns (set of keys, list of batches, number of calls)."""
    cursor = "0"
    seen, batches, calls = set(), [], 0
    extra = list(opts) + (["COUNT", count] if count is not None else [])
    while True:
        cursor, keys = client.execute_command("SCAN", cursor, *extra)
        calls += 1
        assert isinstance(cursor, str)
        batches.append(keys)
        seen.update(keys)
        if cursor == "0":
            return seen, batches, calls
        assert calls < 100000


# ------------------------------------------------------------- DEL UNLINK

@pytest.mark.parametrize("cmd", ["DEL", "UNLINK"])
def test_del_unlink(rc, cmd):
    rc.execute_command("MSET", "a", "1", "b", "2", "c", "3")
    assert rc.execute_command(cmd, "a") == 1
    assert rc.execute_command(cmd, "a") == 0
    assert rc.execute_command(cmd, "b", "c", "nokey") == 2
    assert rc.execute_command("DBSIZE") == 0


@pytest.mark.parametrize("cmd", ["DEL", "UNLINK"])
def test_del_duplicate_keys_counted_once(rc, cmd):
    rc.execute_command("SET", "a", "1")
    assert rc.execute_command(cmd, "a", "a", "a") == 1


def test_del_other_type(server, rc):
    require_commands(server, "RPUSH")
    make_list(rc, "L")
    assert rc.execute_command("DEL", "L") == 1
    assert rc.execute_command("EXISTS", "L") == 0


@pytest.mark.parametrize("cmd", ["DEL", "UNLINK", "EXISTS", "TOUCH", "TYPE"])
def test_arity(rc, cmd):
    with pytest.raises(redis.ResponseError,
                       match=r"^wrong number of arguments for '%s' command$" % cmd.lower()):
        rc.execute_command(cmd)


# ------------------------------------------------------ EXISTS TYPE TOUCH

def test_exists_counts_duplicates(rc):
    rc.execute_command("MSET", "a", "1", "b", "2")
    assert rc.execute_command("EXISTS", "a") == 1
    assert rc.execute_command("EXISTS", "nokey") == 0
    assert rc.execute_command("EXISTS", "a", "a", "b", "nokey") == 3
    assert rc.execute_command("EXISTS", "a", "a", "a", "a") == 4


def test_type(rc):
    rc.execute_command("SET", "s", "v")
    rc.execute_command("SET", "n", "123")
    assert rc.execute_command("TYPE", "s") == "string"
    assert rc.execute_command("TYPE", "n") == "string"
    assert rc.execute_command("TYPE", "nokey") == "none"


def test_type_reply_is_simple_string(raw):
    c = raw()
    c.send(resp("SET", "s", "v") + resp("TYPE", "s") + resp("TYPE", "nokey"))
    assert c.read_reply() == b"+OK\r\n"
    assert c.read_reply() == b"+string\r\n"
    assert c.read_reply() == b"+none\r\n"


def test_type_list(server, rc):
    require_commands(server, "RPUSH")
    make_list(rc, "L")
    assert rc.execute_command("TYPE", "L") == "list"


def test_touch_counts_existing_including_duplicates(rc):
    rc.execute_command("MSET", "a", "1", "b", "2")
    assert rc.execute_command("TOUCH", "a", "b", "b", "nokey") == 3
    assert rc.execute_command("TOUCH", "nokey") == 0
    assert rc.execute_command("GET", "a") == "1"


# -------------------------------------------------------- RENAME RENAMENX

def test_rename(rc):
    rc.execute_command("SET", "a", "1")
    assert rc.execute_command("RENAME", "a", "b") == "OK"
    assert rc.execute_command("EXISTS", "a") == 0
    assert rc.execute_command("GET", "b") == "1"


def test_rename_overwrites_destination_and_its_ttl(rc):
    rc.execute_command("SET", "a", "1")
    rc.execute_command("SET", "b", "2", "EX", "100")
    assert rc.execute_command("RENAME", "a", "b") == "OK"
    assert rc.execute_command("GET", "b") == "1"
    assert rc.execute_command("TTL", "b") == -1


def test_rename_carries_ttl(rc):
    rc.execute_command("SET", "a", "1", "EX", "100")
    rc.execute_command("RENAME", "a", "b")
    assert 99 <= rc.execute_command("TTL", "b") <= 100


def test_rename_missing_key(rc):
    with pytest.raises(redis.ResponseError, match=NO_SUCH_KEY):
        rc.execute_command("RENAME", "nokey", "b")
    with pytest.raises(redis.ResponseError, match=NO_SUCH_KEY):
        rc.execute_command("RENAME", "nokey", "nokey")
    with pytest.raises(redis.ResponseError, match=NO_SUCH_KEY):
        rc.execute_command("RENAMENX", "nokey", "b")
    assert rc.execute_command("DBSIZE") == 0


def test_rename_to_itself(rc):
    rc.execute_command("SET", "a", "1", "EX", "100")
    assert rc.execute_command("RENAME", "a", "a") == "OK"
    assert rc.execute_command("GET", "a") == "1"
    assert 99 <= rc.execute_command("TTL", "a") <= 100
    assert rc.execute_command("RENAMENX", "a", "a") == 0
    assert rc.execute_command("GET", "a") == "1"


def test_renamenx(rc):
    rc.execute_command("MSET", "a", "1", "b", "2")
    assert rc.execute_command("RENAMENX", "a", "b") == 0
    assert rc.execute_command("MGET", "a", "b") == ["1", "2"]
    assert rc.execute_command("RENAMENX", "a", "c") == 1
    assert rc.execute_command("MGET", "a", "c") == [None, "1"]


def test_rename_over_other_type(server, rc):
    require_commands(server, "RPUSH")
    make_list(rc, "L")
    rc.execute_command("SET", "s", "v")
    assert rc.execute_command("RENAME", "s", "L") == "OK"
    assert rc.execute_command("TYPE", "L") == "string"
    assert rc.execute_command("GET", "L") == "v"


# ------------------------------------------------------------------- COPY

def test_copy(rc):
    rc.execute_command("SET", "a", "1")
    assert rc.execute_command("COPY", "a", "b") == 1
    assert rc.execute_command("MGET", "a", "b") == ["1", "1"]
    # The copy is independent of the source.
    rc.execute_command("APPEND", "a", "x")
    assert rc.execute_command("MGET", "a", "b") == ["1x", "1"]


def test_copy_keeps_ttl(rc):
    rc.execute_command("SET", "a", "1", "EX", "100")
    assert rc.execute_command("COPY", "a", "b") == 1
    assert 99 <= rc.execute_command("TTL", "b") <= 100


def test_copy_existing_destination_and_replace(rc):
    rc.execute_command("MSET", "a", "1", "b", "2")
    rc.execute_command("EXPIRE", "b", "100")
    assert rc.execute_command("COPY", "a", "b") == 0
    assert rc.execute_command("GET", "b") == "2"
    assert rc.execute_command("COPY", "a", "b", "REPLACE") == 1
    assert rc.execute_command("GET", "b") == "1"
    assert rc.execute_command("TTL", "b") == -1


def test_copy_missing_source(rc):
    assert rc.execute_command("COPY", "nokey", "b") == 0
    assert rc.execute_command("COPY", "nokey", "b", "REPLACE") == 0
    assert rc.execute_command("EXISTS", "b") == 0


def test_copy_same_key_error(rc):
    rc.execute_command("SET", "a", "1")
    with pytest.raises(redis.ResponseError, match=SAME_OBJECT):
        rc.execute_command("COPY", "a", "a")
    with pytest.raises(redis.ResponseError, match=SAME_OBJECT):
        rc.execute_command("COPY", "a", "a", "DB", "0")
    with pytest.raises(redis.ResponseError, match=SAME_OBJECT):
        rc.execute_command("COPY", "a", "a", "REPLACE")


def test_copy_to_other_db(rc, db):
    rc.execute_command("SET", "a", "1", "EX", "100")
    assert rc.execute_command("COPY", "a", "a", "DB", "1") == 1
    d1 = db(1)
    assert d1.execute_command("GET", "a") == "1"
    assert 99 <= d1.execute_command("TTL", "a") <= 100
    assert rc.execute_command("GET", "a") == "1"
    d1.execute_command("SET", "b", "old")
    rc.execute_command("SET", "b", "new")
    assert rc.execute_command("COPY", "b", "b", "DB", "1") == 0
    assert d1.execute_command("GET", "b") == "old"
    assert rc.execute_command("COPY", "b", "b", "DB", "1", "REPLACE") == 1
    assert d1.execute_command("GET", "b") == "new"
    assert rc.execute_command("COPY", "a", "c", "DB", "0") == 1
    assert rc.execute_command("GET", "c") == "1"


def test_copy_errors(rc):
    rc.execute_command("SET", "a", "1")
    with pytest.raises(redis.ResponseError, match=DB_RANGE):
        rc.execute_command("COPY", "a", "b", "DB", "16")
    with pytest.raises(redis.ResponseError, match=DB_RANGE):
        rc.execute_command("COPY", "a", "b", "DB", "-1")
    with pytest.raises(redis.ResponseError, match=NOT_INT):
        rc.execute_command("COPY", "a", "b", "DB", "x")
    with pytest.raises(redis.ResponseError, match=SYNTAX):
        rc.execute_command("COPY", "a", "b", "FOO")
    with pytest.raises(redis.ResponseError, match=SYNTAX):
        rc.execute_command("COPY", "a", "b", "DB")
    assert rc.execute_command("EXISTS", "b") == 0


# ------------------------------------------------------------------- MOVE

def test_move(rc, db):
    rc.execute_command("SET", "a", "1", "EX", "100")
    assert rc.execute_command("MOVE", "a", "1") == 1
    assert rc.execute_command("EXISTS", "a") == 0
    d1 = db(1)
    assert d1.execute_command("GET", "a") == "1"
    assert 99 <= d1.execute_command("TTL", "a") <= 100


def test_move_target_exists(rc, db):
    d1 = db(1)
    d1.execute_command("SET", "a", "there")
    rc.execute_command("SET", "a", "here")
    assert rc.execute_command("MOVE", "a", "1") == 0
    assert rc.execute_command("GET", "a") == "here"
    assert d1.execute_command("GET", "a") == "there"


def test_move_missing_key(rc, db):
    assert rc.execute_command("MOVE", "nokey", "1") == 0
    assert db(1).execute_command("DBSIZE") == 0


def test_move_errors(rc):
    rc.execute_command("SET", "a", "1")
    with pytest.raises(redis.ResponseError, match=SAME_OBJECT):
        rc.execute_command("MOVE", "a", "0")
    with pytest.raises(redis.ResponseError, match=DB_RANGE):
        rc.execute_command("MOVE", "a", "16")
    with pytest.raises(redis.ResponseError, match=NOT_INT):
        rc.execute_command("MOVE", "a", "x")
    assert rc.execute_command("GET", "a") == "1"


# ------------------------------------------------------------------- KEYS

GLOB_KEYS = ["a", "b", "c", "ab", "a*", "a?", "hello", "hallo", "hxllo", "heeello",
             "h[e]llo", "x\\y"]


@pytest.mark.parametrize("pattern,expected", [
    ("*", GLOB_KEYS),
    ("?", ["a", "b", "c"]),
    ("a?", ["a*", "a?", "ab"]),
    ("a\\*", ["a*"]),
    ("a\\?", ["a?"]),
    ("h?llo", ["hallo", "hello", "hxllo"]),
    ("h*llo", ["h[e]llo", "hallo", "heeello", "hello", "hxllo"]),
    ("*llo", ["h[e]llo", "hallo", "heeello", "hello", "hxllo"]),
    ("h[ae]llo", ["hallo", "hello"]),
    ("h[^e]llo", ["hallo", "hxllo"]),
    ("h[a-e]llo", ["hallo", "hello"]),
    ("[a-c]", ["a", "b", "c"]),
    ("[c-a]", ["a", "b", "c"]),       # reversed range works
    ("[^a]", ["b", "c"]),
    ("h[!e]llo", ["hello"]),          # '!' is not negation, just a set member
    ("h\\[e\\]llo", ["h[e]llo"]),
    ("x\\\\y", ["x\\y"]),
    ("hello", ["hello"]),
    ("A*", []),                       # case sensitive
    ("nomatch*", []),
])
def test_keys_glob(rc, pattern, expected):
    rc.execute_command("MSET", *[x for k in GLOB_KEYS for x in (k, "v")])
    assert sorted(rc.execute_command("KEYS", pattern)) == sorted(expected)


def test_keys_empty_db(rc):
    assert rc.execute_command("KEYS", "*") == []


def test_keys_binary(rb):
    rb.set(b"k\x00\xff", b"v")
    rb.set(b"k1", b"v")
    assert sorted(rb.keys(b"k?\xff")) == [b"k\x00\xff"]
    assert sorted(rb.keys(b"k*")) == [b"k\x00\xff", b"k1"]


# ------------------------------------------------------------------- SCAN

def test_scan_empty_db_reply_bytes(raw):
    c = raw()
    c.send(resp("SCAN", "0"))
    assert c.read_reply() == b"*2\r\n$1\r\n0\r\n*0\r\n"


def test_scan_full_iteration_returns_every_key(rc):
    keys = {"key:%d" % i for i in range(1000)}
    rc.execute_command("MSET", *[x for k in keys for x in (k, "v")])
    seen, batches, calls = scan_all(rc)
    assert seen == keys
    assert calls > 1  # default COUNT is 10


@pytest.mark.parametrize("count", [1, 7, 100, 5000])
def test_scan_with_count(rc, count):
    keys = {"k%d" % i for i in range(300)}
    rc.execute_command("MSET", *[x for k in keys for x in (k, "v")])
    seen, batches, calls = scan_all(rc, count=count)
    assert seen == keys


def test_scan_large_count_on_small_db_is_one_call(rc):
    keys = {"k%d" % i for i in range(20)}
    rc.execute_command("MSET", *[x for k in keys for x in (k, "v")])
    cursor, got = rc.execute_command("SCAN", "0", "COUNT", "1000")
    assert cursor == "0"
    assert sorted(got) == sorted(keys)


def test_scan_match(rc):
    rc.execute_command("MSET", *[x for i in range(200) for x in ("user:%d" % i, "v")])
    rc.execute_command("MSET", *[x for i in range(200) for x in ("item:%d" % i, "v")])
    seen, batches, calls = scan_all(rc, "MATCH", "user:1?", count=50)
    assert seen == {"user:1%d" % i for i in range(10)}
    for batch in batches:
        assert all(k.startswith("user:1") for k in batch)


def test_scan_match_nothing_still_iterates_to_zero(rc):
    rc.execute_command("MSET", *[x for i in range(100) for x in ("k%d" % i, "v")])
    seen, batches, calls = scan_all(rc, "MATCH", "zzz*")
    assert seen == set()


def test_scan_type_string(rc):
    keys = {"k%d" % i for i in range(50)}
    rc.execute_command("MSET", *[x for k in keys for x in (k, "v")])
    seen, _, _ = scan_all(rc, "TYPE", "string", count=100)
    assert seen == keys
    seen, _, _ = scan_all(rc, "TYPE", "hash", count=100)
    assert seen == set()


def test_scan_type_filters_other_types(server, rc):
    require_commands(server, "RPUSH")
    rc.execute_command("MSET", "s1", "v", "s2", "v")
    make_list(rc, "L")
    assert scan_all(rc, "TYPE", "string")[0] == {"s1", "s2"}
    assert scan_all(rc, "TYPE", "list")[0] == {"L"}
    assert scan_all(rc, "MATCH", "s*", "TYPE", "list")[0] == set()


def test_scan_errors(rc):
    with pytest.raises(redis.ResponseError, match="^invalid cursor$"):
        rc.execute_command("SCAN", "abc")
    with pytest.raises(redis.ResponseError, match=SYNTAX):
        rc.execute_command("SCAN", "0", "COUNT", "0")
    with pytest.raises(redis.ResponseError, match=SYNTAX):
        rc.execute_command("SCAN", "0", "COUNT", "-1")
    with pytest.raises(redis.ResponseError, match=NOT_INT):
        rc.execute_command("SCAN", "0", "COUNT", "x")
    with pytest.raises(redis.ResponseError, match=SYNTAX):
        rc.execute_command("SCAN", "0", "MATCH")
    with pytest.raises(redis.ResponseError, match=SYNTAX):
        rc.execute_command("SCAN", "0", "FOO", "bar")


def test_scan_guarantee_while_table_grows(rc):
    """Keys present for the whole iteration are returned even though 20k keys are
    added between SCAN calls (the table grows / rehashes mid-scan)."""
    originals = {"orig:%d" % i for i in range(1000)}
    rc.execute_command("MSET", *[x for k in originals for x in (k, "v")])
    seen = set()
    cursor, keys = rc.execute_command("SCAN", "0", "COUNT", "20")
    seen.update(keys)
    calls, added = 1, 0
    while cursor != "0":
        if added < 20000 and calls % 5 == 1:
            # 4 bursts of 5000 keys spread over the first calls.
            pipe = rc.pipeline(transaction=False)
            for b in range(5):
                base = added + b * 1000
                pipe.execute_command("MSET", *[x for i in range(base, base + 1000)
                                               for x in ("new:%d" % i, "v")])
            pipe.execute()
            added += 5000
        cursor, keys = rc.execute_command("SCAN", cursor, "COUNT", "20")
        seen.update(keys)
        calls += 1
        assert calls < 100000
    assert added == 20000
    assert rc.execute_command("DBSIZE") == 21000
    missing = originals - seen
    assert not missing, "%d original keys never returned, e.g. %s" % (
        len(missing), sorted(missing)[:5])


def test_scan_guarantee_with_deletions(rc):
    """Deleting other keys mid-scan (the table may shrink) loses no surviving key."""
    keep = {"keep:%d" % i for i in range(500)}
    drop = ["drop:%d" % i for i in range(5000)]
    rc.execute_command("MSET", *[x for k in keep for x in (k, "v")])
    rc.execute_command("MSET", *[x for k in drop for x in (k, "v")])
    seen = set()
    cursor, keys = rc.execute_command("SCAN", "0", "COUNT", "20")
    seen.update(keys)
    rc.execute_command("DEL", *drop)
    while cursor != "0":
        cursor, keys = rc.execute_command("SCAN", cursor, "COUNT", "20")
        seen.update(keys)
    assert keep <= seen


# -------------------------------------------------------------- RANDOMKEY

def test_randomkey_empty_db(rc):
    assert rc.execute_command("RANDOMKEY") is None


def test_randomkey(rc):
    rc.execute_command("SET", "only", "v")
    assert rc.execute_command("RANDOMKEY") == "only"
    keys = {"a", "b", "c"}
    rc.execute_command("DEL", "only")
    rc.execute_command("MSET", "a", "1", "b", "2", "c", "3")
    got = {rc.execute_command("RANDOMKEY") for _ in range(200)}
    assert got <= keys and len(got) >= 2


def test_randomkey_is_per_db(rc, db):
    db(1).execute_command("SET", "x", "v")
    assert rc.execute_command("RANDOMKEY") is None
    assert db(1).execute_command("RANDOMKEY") == "x"


# -------------------------------------------- SELECT SWAPDB DBSIZE FLUSHDB

def test_select_isolates_databases(server):
    c = server.client(decode_responses=True, single_connection_client=True)
    try:
        c.set("k", "db0")
        assert c.execute_command("SELECT", "1") is True
        assert c.get("k") is None
        c.set("k", "db1")
        assert c.execute_command("SELECT", "15") is True
        assert c.dbsize() == 0
        c.execute_command("SELECT", "0")
        assert c.get("k") == "db0"
        c.execute_command("SELECT", "1")
        assert c.get("k") == "db1"
    finally:
        c.close()


def test_select_errors(rc):
    with pytest.raises(redis.ResponseError, match=DB_RANGE):
        rc.execute_command("SELECT", "16")
    with pytest.raises(redis.ResponseError, match=DB_RANGE):
        rc.execute_command("SELECT", "-1")
    with pytest.raises(redis.ResponseError, match=NOT_INT):
        rc.execute_command("SELECT", "abc")


def test_dbsize_per_db(rc, db):
    rc.execute_command("MSET", "a", "1", "b", "2", "c", "3")
    db(2).execute_command("MSET", "x", "1")
    assert rc.execute_command("DBSIZE") == 3
    assert db(1).execute_command("DBSIZE") == 0
    assert db(2).execute_command("DBSIZE") == 1


def test_flushdb_only_current_db(rc, db):
    rc.execute_command("MSET", "a", "1", "b", "2")
    d1 = db(1)
    d1.execute_command("MSET", "a", "1", "x", "2", "y", "3")
    assert d1.execute_command("FLUSHDB") == "OK"
    assert d1.execute_command("DBSIZE") == 0
    assert rc.execute_command("DBSIZE") == 2
    assert rc.execute_command("FLUSHDB", "ASYNC") == "OK"
    assert rc.execute_command("DBSIZE") == 0
    assert rc.execute_command("FLUSHDB", "SYNC") == "OK"
    with pytest.raises(redis.ResponseError, match=SYNTAX):
        rc.execute_command("FLUSHDB", "FOO")


def test_flushall_clears_every_db(rc, db):
    rc.execute_command("SET", "a", "1")
    db(1).execute_command("SET", "a", "1")
    db(15).execute_command("SET", "a", "1")
    assert rc.execute_command("FLUSHALL") == "OK"
    assert [db(n).execute_command("DBSIZE") for n in (0, 1, 15)] == [0, 0, 0]


def test_swapdb(rc, db):
    rc.execute_command("MSET", "a", "db0", "only0", "x")
    rc.execute_command("EXPIRE", "only0", "100")
    d1 = db(1)
    d1.execute_command("MSET", "a", "db1", "b", "y", "c", "z")
    assert rc.execute_command("SWAPDB", "0", "1") == "OK"
    # Connections stay on their db index and see the swapped contents.
    assert rc.execute_command("GET", "a") == "db1"
    assert rc.execute_command("DBSIZE") == 3
    assert d1.execute_command("GET", "a") == "db0"
    assert d1.execute_command("DBSIZE") == 2
    assert 99 <= d1.execute_command("TTL", "only0") <= 100
    assert rc.execute_command("EXISTS", "only0") == 0
    assert d1.execute_command("SWAPDB", "1", "0") == "OK"
    assert rc.execute_command("GET", "a") == "db0"


def test_swapdb_same_and_empty(rc, db):
    rc.execute_command("SET", "a", "1")
    assert rc.execute_command("SWAPDB", "0", "0") == "OK"
    assert rc.execute_command("GET", "a") == "1"
    assert rc.execute_command("SWAPDB", "0", "9") == "OK"
    assert rc.execute_command("DBSIZE") == 0
    assert db(9).execute_command("GET", "a") == "1"


def test_swapdb_errors(rc):
    with pytest.raises(redis.ResponseError, match=DB_RANGE):
        rc.execute_command("SWAPDB", "0", "16")
    with pytest.raises(redis.ResponseError, match=DB_RANGE):
        rc.execute_command("SWAPDB", "-1", "0")
    with pytest.raises(redis.ResponseError, match="^invalid first DB index$"):
        rc.execute_command("SWAPDB", "a", "0")
    with pytest.raises(redis.ResponseError, match="^invalid second DB index$"):
        rc.execute_command("SWAPDB", "0", "b")


def test_keys_and_scan_are_per_db(rc, db):
    rc.execute_command("MSET", "a", "1", "b", "2")
    d3 = db(3)
    d3.execute_command("MSET", "c", "3")
    assert sorted(rc.execute_command("KEYS", "*")) == ["a", "b"]
    assert d3.execute_command("KEYS", "*") == ["c"]
    assert scan_all(d3)[0] == {"c"}
    assert d3.execute_command("EXISTS", "a", "c") == 1


# ------------------------------------------------------- exact error lines

@pytest.mark.parametrize("cmd,line", [
    (["RENAME", "nokey", "x"], b"-ERR no such key"),
    (["COPY", "k", "k"], b"-ERR source and destination objects are the same"),
    (["MOVE", "k", "16"], b"-ERR DB index is out of range"),
    (["SELECT", "99"], b"-ERR DB index is out of range"),
    (["SCAN", "x"], b"-ERR invalid cursor"),
    (["SWAPDB", "0", "x"], b"-ERR invalid second DB index"),
])
def test_error_reply_lines(raw, cmd, line):
    c = raw()
    c.send(resp("SET", "k", "1") + resp(*cmd))
    assert c.read_reply() == b"+OK\r\n"
    assert c.read_reply() == line + b"\r\n"
