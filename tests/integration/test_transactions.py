"""Transactions: MULTI, EXEC, DISCARD, WATCH and UNWATCH.

Queueing and EXEC's reply array, queue-time errors (EXECABORT) against runtime errors
inside EXEC, SELECT and blocking commands inside a transaction, RESP2 and RESP3 null
replies, WATCH against every kind of change to a key (and against the changes that must
not abort a transaction, including Redis 7's rules for keys that are already logically
expired), multi-key commands over keys spread across shards, disconnects in the middle of
a transaction, CLIENT LIST's view of a client in MULTI, redis-py's transaction pipelines,
and atomicity of transactions against concurrent readers and writers.

Every expected value here was checked against redis-server 7.0.
redis-py strips the "ERR " prefix from error replies, so patterns below start after it;
byte-exact replies are checked on a RawConnection.
"""
import random
import socket
import struct
import threading
import time

import pytest
import redis

from conftest import TARGET, RawConnection
from helpers import call, parse_client_line, resp, roundtrip, wait_for

EXECABORT = b"-EXECABORT Transaction discarded because of previous errors.\r\n"
EXEC_WITHOUT_MULTI = b"-ERR EXEC without MULTI\r\n"
DISCARD_WITHOUT_MULTI = b"-ERR DISCARD without MULTI\r\n"
NESTED_MULTI = b"-ERR MULTI calls can not be nested\r\n"
WATCH_IN_MULTI = b"-ERR WATCH inside MULTI is not allowed\r\n"
EXEC_ARITY = (b"-EXECABORT Transaction discarded because of: "
              b"wrong number of arguments for 'exec' command\r\n")
OK = b"+OK\r\n"
QUEUED = b"+QUEUED\r\n"


# ---------------------------------------------------------------- helpers, fixtures

@pytest.fixture
def tx(server):
    """One connection (so MULTI state stays on it), str replies, no reply callbacks."""
    c = server.client(single_connection_client=True, decode_responses=True)
    c.response_callbacks.clear()
    yield c
    c.close()


@pytest.fixture
def clients(server):
    """clients(db=0, decode=True): another connection, bound to database db."""
    made = []

    def make(db=0, decode=True):
        c = server.client(db=db, decode_responses=decode, single_connection_client=True)
        c.response_callbacks.clear()
        made.append(c)
        return c

    yield make
    for c in made:
        c.close()


def wire(conn, *args):
    """Sends one command on a RawConnection and returns the raw bytes of its reply."""
    return roundtrip(conn, resp(*args))


def run_tx(c, *cmds):
    """MULTI, each command (each must be QUEUED), EXEC; returns EXEC's reply."""
    assert c.execute_command("MULTI") == "OK"
    for args in cmds:
        assert c.execute_command(*args) == "QUEUED"
    return c.execute_command("EXEC")


def error_text(reply):
    """The text of an error reply found inside an EXEC array."""
    assert isinstance(reply, redis.ResponseError), "expected an error, got %r" % (reply,)
    return str(reply)


def client_line(c, cid):
    """CLIENT LIST's line for client id cid, as {field: value}."""
    for line in call(c, "CLIENT", "LIST").strip().split("\n"):
        f = parse_client_line(line)
        if int(f["id"]) == cid:
            return f
    return None


def client_ids(c):
    return {int(parse_client_line(l)["id"])
            for l in call(c, "CLIENT", "LIST").strip().split("\n")}


def join_all(threads, timeout):
    deadline = time.monotonic() + timeout
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    alive = [t.name for t in threads if t.is_alive()]
    assert not alive, "threads still running after %.0fs: %s" % (timeout, alive)


# ================================================================ 1. MULTI/EXEC basics

def test_queued_replies_and_exec_array(raw):
    c = raw()
    assert wire(c, "MULTI") == OK
    assert wire(c, "SET", "a", "1") == QUEUED
    assert wire(c, "INCR", "a") == QUEUED
    assert wire(c, "GET", "a") == QUEUED
    assert wire(c, "RPUSH", "l", "x", "y") == QUEUED
    assert wire(c, "LRANGE", "l", 0, -1) == QUEUED
    assert wire(c, "EXEC") == (b"*5\r\n+OK\r\n:2\r\n$1\r\n2\r\n:2\r\n"
                               b"*2\r\n$1\r\nx\r\n$1\r\ny\r\n")
    # The connection is out of MULTI again.
    assert wire(c, "GET", "a") == b"$1\r\n2\r\n"


def test_queued_commands_do_not_run_before_exec(tx, r):
    assert tx.execute_command("MULTI") == "OK"
    assert tx.execute_command("SET", "a", "1") == "QUEUED"
    assert tx.execute_command("INCR", "n") == "QUEUED"
    assert r.get("a") is None
    assert r.get("n") is None
    assert tx.execute_command("EXEC") == ["OK", 1]
    assert r.get("a") == "1"
    assert r.get("n") == "1"


def test_pipelined_transaction_on_the_wire(raw):
    c = raw()
    c.send(resp("MULTI") + resp("SET", "k", "v") + resp("GET", "k") + resp("EXEC"))
    assert [c.read_reply() for _ in range(4)] == [
        OK, QUEUED, QUEUED, b"*2\r\n+OK\r\n$1\r\nv\r\n"]


def test_empty_multi_exec(raw):
    c = raw()
    assert wire(c, "MULTI") == OK
    assert wire(c, "EXEC") == b"*0\r\n"


def test_discard(raw, r):
    c = raw()
    assert wire(c, "MULTI") == OK
    assert wire(c, "SET", "a", "1") == QUEUED
    assert wire(c, "INCR", "n") == QUEUED
    assert wire(c, "DISCARD") == OK
    assert r.exists("a", "n") == 0
    # Out of MULTI: commands run at once, EXEC has no transaction to run.
    assert wire(c, "SET", "b", "2") == OK
    assert wire(c, "EXEC") == EXEC_WITHOUT_MULTI
    assert r.get("b") == "2"


def test_exec_without_multi(raw):
    c = raw()
    assert wire(c, "EXEC") == EXEC_WITHOUT_MULTI


def test_discard_without_multi(raw):
    c = raw()
    assert wire(c, "DISCARD") == DISCARD_WITHOUT_MULTI


def test_exec_twice(raw):
    c = raw()
    assert wire(c, "MULTI") == OK
    assert wire(c, "EXEC") == b"*0\r\n"
    assert wire(c, "EXEC") == EXEC_WITHOUT_MULTI


def test_nested_multi_is_an_error_and_the_transaction_still_runs(raw, r):
    c = raw()
    assert wire(c, "MULTI") == OK
    assert wire(c, "SET", "a", "1") == QUEUED
    assert wire(c, "MULTI") == NESTED_MULTI
    assert wire(c, "SET", "b", "2") == QUEUED
    assert wire(c, "EXEC") == b"*2\r\n+OK\r\n+OK\r\n"
    assert r.mget("a", "b") == ["1", "2"]


def test_watch_inside_multi_is_an_error_and_the_transaction_still_runs(raw, r):
    c = raw()
    assert wire(c, "MULTI") == OK
    assert wire(c, "SET", "a", "1") == QUEUED
    assert wire(c, "WATCH", "a") == WATCH_IN_MULTI
    assert wire(c, "SET", "b", "2") == QUEUED
    assert wire(c, "EXEC") == b"*2\r\n+OK\r\n+OK\r\n"
    assert r.mget("a", "b") == ["1", "2"]


def test_multi_exec_discard_arity(raw):
    c = raw()
    assert wire(c, "MULTI", "x") == b"-ERR wrong number of arguments for 'multi' command\r\n"
    assert wire(c, "EXEC", "x") == EXEC_ARITY
    assert wire(c, "DISCARD", "x") == (
        b"-ERR wrong number of arguments for 'discard' command\r\n")
    assert wire(c, "WATCH") == b"-ERR wrong number of arguments for 'watch' command\r\n"
    assert wire(c, "UNWATCH", "x") == (
        b"-ERR wrong number of arguments for 'unwatch' command\r\n")


def test_exec_with_arguments_inside_multi_discards_the_transaction(raw, r):
    c = raw()
    assert wire(c, "MULTI") == OK
    assert wire(c, "SET", "a", "1") == QUEUED
    assert wire(c, "EXEC", "x") == EXEC_ARITY
    assert wire(c, "EXEC") == EXEC_WITHOUT_MULTI
    assert r.exists("a") == 0


@pytest.mark.parametrize("args", [("MULTI", "x"), ("WATCH",), ("DISCARD", "x")],
                         ids=["multi", "watch", "discard"])
def test_arity_error_of_transaction_command_inside_multi_flags_it(raw, r, args):
    c = raw()
    assert wire(c, "MULTI") == OK
    assert wire(c, "SET", "a", "1") == QUEUED
    assert wire(c, *args) == (b"-ERR wrong number of arguments for '%s' command\r\n"
                              % args[0].lower().encode())
    assert wire(c, "SET", "b", "1") == QUEUED
    assert wire(c, "EXEC") == EXECABORT
    assert r.exists("a", "b") == 0


# ================================================================ 2. queue-time errors

def test_unknown_command_aborts_the_transaction(raw, r):
    c = raw()
    assert wire(c, "MULTI") == OK
    assert wire(c, "SET", "a", "1") == QUEUED
    assert wire(c, "NOSUCHCMD", "x") == (
        b"-ERR unknown command 'NOSUCHCMD', with args beginning with: 'x' \r\n")
    assert wire(c, "SET", "b", "2") == QUEUED  # later commands are still queued
    assert wire(c, "EXEC") == EXECABORT
    assert r.exists("a", "b") == 0
    # The transaction is gone.
    assert wire(c, "EXEC") == EXEC_WITHOUT_MULTI
    assert wire(c, "SET", "c", "3") == OK


@pytest.mark.parametrize("args", [("SAVE",), ("SHUTDOWN",), ("SHUTDOWN", "NOSAVE"),
                                  ("SYNC",), ("PSYNC", "?", "-1")])
def test_commands_not_allowed_inside_a_transaction_abort_it(raw, r, args):
    # Redis's no-multi commands: refused when queued, and EXEC then aborts. SHUTDOWN and
    # SAVE inside EXEC would wait for a snapshot while the transaction holds its locks.
    c = raw()
    assert wire(c, "MULTI") == OK
    assert wire(c, "SET", "a", "1") == QUEUED
    assert wire(c, *args) == b"-ERR Command not allowed inside a transaction\r\n"
    assert wire(c, "EXEC") == EXECABORT
    assert r.exists("a") == 0
    assert wire(c, "PING") == b"+PONG\r\n"  # the server still runs, the link is normal


def test_wrong_arity_aborts_the_transaction(raw, r):
    r.set("a", "old")
    c = raw()
    assert wire(c, "MULTI") == OK
    assert wire(c, "SET", "a", "new") == QUEUED
    assert wire(c, "GET") == b"-ERR wrong number of arguments for 'get' command\r\n"
    assert wire(c, "INCR", "n") == QUEUED
    assert wire(c, "EXEC") == EXECABORT
    assert r.get("a") == "old"
    assert r.exists("n") == 0


def test_queue_time_error_then_discard(raw, r):
    c = raw()
    assert wire(c, "MULTI") == OK
    assert wire(c, "SET", "a", "1") == QUEUED
    assert wire(c, "GET").startswith(b"-ERR wrong number of arguments")
    assert wire(c, "DISCARD") == OK
    assert wire(c, "MULTI") == OK
    assert wire(c, "SET", "b", "2") == QUEUED
    assert wire(c, "EXEC") == b"*1\r\n+OK\r\n"
    assert r.exists("a") == 0
    assert r.get("b") == "2"


def test_execabort_through_redis_py(tx, r):
    assert tx.execute_command("MULTI") == "OK"
    assert tx.execute_command("SET", "a", "1") == "QUEUED"
    with pytest.raises(redis.ResponseError, match="^unknown command 'NOSUCHCMD'"):
        tx.execute_command("NOSUCHCMD")
    with pytest.raises(redis.exceptions.ExecAbortError,
                       match=r"^Transaction discarded because of previous errors\.$"):
        tx.execute_command("EXEC")
    assert r.exists("a") == 0


# ================================================================ 3. runtime errors in EXEC

def test_runtime_errors_do_not_abort_the_other_commands(raw, r):
    r.set("s", "text")
    c = raw()
    assert wire(c, "MULTI") == OK
    for args in [("SET", "a", "1"), ("INCR", "s"), ("LPUSH", "s", "x"), ("INCR", "a"),
                 ("GET", "s"), ("SET", "b", "2")]:
        assert wire(c, *args) == QUEUED
    assert wire(c, "EXEC") == (
        b"*6\r\n+OK\r\n"
        b"-ERR value is not an integer or out of range\r\n"
        b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
        b":2\r\n$4\r\ntext\r\n+OK\r\n")
    assert r.mget("a", "b", "s") == ["2", "2", "text"]


def test_runtime_errors_through_redis_py(tx, r):
    r.rpush("l", "x")
    reply = run_tx(tx, ("SET", "k", "v"), ("GET", "l"), ("INCRBY", "k", "1"),
                   ("RPUSH", "l", "y"), ("HSET", "k", "f", "v"))
    assert reply[0] == "OK"
    assert error_text(reply[1]).startswith("WRONGTYPE ")
    assert error_text(reply[2]) == "value is not an integer or out of range"
    assert reply[3] == 2
    assert error_text(reply[4]).startswith("WRONGTYPE ")
    assert r.get("k") == "v"
    assert r.lrange("l", 0, -1) == ["x", "y"]


def test_error_before_a_write_does_not_roll_back_earlier_ones(tx, r):
    r.set("n", "9")
    reply = run_tx(tx, ("INCR", "n"), ("SADD", "n", "m"), ("INCR", "n"))
    assert reply[0] == 10 and reply[2] == 11
    assert error_text(reply[1]).startswith("WRONGTYPE ")
    assert r.get("n") == "11"


# ================================================================ 4. SELECT inside MULTI

def test_select_inside_multi(tx, clients):
    db0, db1 = clients(0), clients(1)
    reply = run_tx(tx, ("SET", "k", "in0"), ("SELECT", "1"), ("SET", "k", "in1"),
                   ("GET", "k"), ("INCR", "n"))
    assert reply == ["OK", "OK", "OK", "in1", 1]
    assert db0.execute_command("GET", "k") == "in0"
    assert db0.execute_command("EXISTS", "n") == 0
    assert db1.execute_command("GET", "k") == "in1"
    assert db1.execute_command("GET", "n") == "1"
    # The connection stays on database 1 after EXEC.
    assert tx.execute_command("GET", "n") == "1"
    tx.execute_command("SET", "after", "x")
    assert db1.execute_command("GET", "after") == "x"
    assert db0.execute_command("EXISTS", "after") == 0


def test_select_out_of_range_inside_exec(raw, clients):
    c = raw()
    assert wire(c, "MULTI") == OK
    assert wire(c, "SELECT", "100") == QUEUED
    assert wire(c, "SET", "k", "v") == QUEUED
    assert wire(c, "EXEC") == b"*2\r\n-ERR DB index is out of range\r\n+OK\r\n"
    assert clients(0).execute_command("GET", "k") == "v"


def test_select_back_and_forth_inside_multi(tx, clients):
    reply = run_tx(tx, ("SELECT", "2"), ("SET", "k", "two"), ("SELECT", "0"),
                   ("SET", "k", "zero"), ("SELECT", "2"), ("APPEND", "k", "!"))
    assert reply == ["OK", "OK", "OK", "OK", "OK", 4]
    assert clients(0).execute_command("GET", "k") == "zero"
    assert clients(2).execute_command("GET", "k") == "two!"
    assert tx.execute_command("GET", "k") == "two!"


# ================================================================ 5. RESP2 / RESP3 replies

def hello3(c):
    c.send(resp("HELLO", "3"))
    assert c.read_reply().startswith(b"%")


def test_resp2_null_inside_exec(raw):
    c = raw()
    assert wire(c, "MULTI") == OK
    assert wire(c, "GET", "missing") == QUEUED
    assert wire(c, "EXEC") == b"*1\r\n$-1\r\n"


def test_resp3_null_inside_exec(raw):
    c = raw()
    hello3(c)
    assert wire(c, "MULTI") == OK
    assert wire(c, "GET", "missing") == QUEUED
    assert wire(c, "SET", "k", "v") == QUEUED
    assert wire(c, "GET", "k") == QUEUED
    assert wire(c, "EXEC") == b"*3\r\n_\r\n+OK\r\n$1\r\nv\r\n"


def test_resp3_map_inside_exec(raw):
    c = raw()
    hello3(c)
    assert wire(c, "MULTI") == OK
    assert wire(c, "HSET", "h", "f", "v") == QUEUED
    assert wire(c, "HGETALL", "h") == QUEUED
    assert wire(c, "EXEC") == b"*2\r\n:1\r\n%1\r\n$1\r\nf\r\n$1\r\nv\r\n"


def test_resp2_aborted_exec_is_null_array(raw, r):
    c = raw()
    assert wire(c, "WATCH", "k") == OK
    r.set("k", "other")
    assert wire(c, "MULTI") == OK
    assert wire(c, "GET", "k") == QUEUED
    assert wire(c, "EXEC") == b"*-1\r\n"


def test_resp3_aborted_exec_is_null(raw, r):
    c = raw()
    hello3(c)
    assert wire(c, "WATCH", "k") == OK
    r.set("k", "other")
    assert wire(c, "MULTI") == OK
    assert wire(c, "GET", "k") == QUEUED
    assert wire(c, "EXEC") == b"_\r\n"


# ================================================================ 6. WATCH

def test_watch_reply(raw):
    c = raw()
    assert wire(c, "WATCH", "a", "b") == OK
    assert wire(c, "UNWATCH") == OK
    assert wire(c, "UNWATCH") == OK


@pytest.mark.parametrize("when", ["before_multi", "inside_multi"])
def test_write_by_another_client_aborts(tx, r, when):
    r.set("k", "1")
    assert tx.execute_command("WATCH", "k") == "OK"
    if when == "before_multi":
        r.set("k", "other")
    assert tx.execute_command("MULTI") == "OK"
    assert tx.execute_command("SET", "k", "mine") == "QUEUED"
    assert tx.execute_command("INCR", "marker") == "QUEUED"
    if when == "inside_multi":
        r.set("k", "other")
    assert tx.execute_command("EXEC") is None
    assert r.get("k") == "other"
    assert r.exists("marker") == 0


def test_own_write_before_multi_aborts(tx, r):
    r.set("k", "1")
    tx.execute_command("WATCH", "k")
    tx.execute_command("SET", "k", "2")
    assert run_tx(tx, ("SET", "marker", "1")) is None
    assert r.exists("marker") == 0


def test_watched_key_not_modified_exec_runs(tx, r):
    r.set("k", "1")
    tx.execute_command("WATCH", "k")
    r.set("unrelated", "x")
    assert run_tx(tx, ("INCR", "k"), ("GET", "k")) == [2, "2"]


def test_write_inside_the_transaction_itself_is_fine(tx, r):
    r.set("k", "1")
    tx.execute_command("WATCH", "k")
    assert run_tx(tx, ("SET", "k", "2"), ("INCR", "k")) == ["OK", 3]
    assert r.get("k") == "3"


def abort_once(tx, r):
    """WATCH k, another client writes k, the transaction is aborted."""
    tx.execute_command("WATCH", "k")
    r.set("k", "x")
    assert run_tx(tx, ("SET", "m", "1")) is None


def _after_exec_ok(tx, r):
    tx.execute_command("WATCH", "k")
    assert run_tx(tx, ("SET", "m", "1")) == ["OK"]


def _after_exec_aborted(tx, r):
    abort_once(tx, r)


def _after_execabort(tx, r):
    tx.execute_command("WATCH", "k")
    tx.execute_command("MULTI")
    with pytest.raises(redis.ResponseError):
        tx.execute_command("NOSUCHCMD")
    with pytest.raises(redis.exceptions.ExecAbortError):
        tx.execute_command("EXEC")


def _after_discard(tx, r):
    tx.execute_command("WATCH", "k")
    tx.execute_command("MULTI")
    tx.execute_command("SET", "m", "1")
    assert tx.execute_command("DISCARD") == "OK"


def _after_unwatch(tx, r):
    tx.execute_command("WATCH", "k")
    assert tx.execute_command("UNWATCH") == "OK"


@pytest.mark.parametrize("first", [_after_exec_ok, _after_exec_aborted, _after_execabort,
                                   _after_discard, _after_unwatch],
                         ids=["exec_ok", "exec_aborted", "execabort", "discard", "unwatch"])
def test_keys_are_unwatched_after(tx, r, first):
    r.set("k", "0")
    first(tx, r)
    r.set("k", "modified later")
    assert run_tx(tx, ("SET", "done", "1")) == ["OK"]
    assert r.get("done") == "1"


def test_watch_missing_key_then_created_aborts(tx, r):
    tx.execute_command("WATCH", "k")
    r.set("k", "created")
    assert run_tx(tx, ("SET", "k", "mine")) is None
    assert r.get("k") == "created"


def test_watch_missing_key_that_stays_missing(tx, r):
    tx.execute_command("WATCH", "k")
    assert run_tx(tx, ("SET", "k", "mine")) == ["OK"]


@pytest.mark.parametrize("modified", [None, "a", "b", "c"])
def test_watch_several_keys_in_one_call(tx, r, modified):
    r.mset({"a": "1", "b": "1"})  # "c" is missing
    tx.execute_command("WATCH", "a", "b", "c")
    if modified:
        r.set(modified, "x")
    reply = run_tx(tx, ("SET", "marker", "1"))
    if modified:
        assert reply is None
        assert r.exists("marker") == 0
    else:
        assert reply == ["OK"]


def test_watch_several_keys_over_several_calls(tx, r):
    tx.execute_command("WATCH", "a")
    tx.execute_command("WATCH", "b")
    tx.execute_command("WATCH", "c")
    r.set("b", "x")
    assert run_tx(tx, ("SET", "marker", "1")) is None


def test_watch_same_key_twice(tx, r):
    r.set("k", "1")
    tx.execute_command("WATCH", "k")
    tx.execute_command("WATCH", "k")
    tx.execute_command("WATCH", "k", "k")
    assert run_tx(tx, ("INCR", "k")) == [2]
    tx.execute_command("WATCH", "k")
    tx.execute_command("WATCH", "k")
    r.set("k", "x")
    assert run_tx(tx, ("SET", "k", "mine")) is None
    assert r.get("k") == "x"


def test_one_unwatch_clears_a_key_watched_twice(tx, r):
    tx.execute_command("WATCH", "k")
    tx.execute_command("WATCH", "k")
    tx.execute_command("UNWATCH")
    r.set("k", "x")
    assert run_tx(tx, ("GET", "k")) == ["x"]


def test_unwatch_queued_inside_multi(raw):
    c = raw()
    assert wire(c, "MULTI") == OK
    assert wire(c, "UNWATCH") == QUEUED
    assert wire(c, "SET", "k", "v") == QUEUED
    assert wire(c, "EXEC") == b"*2\r\n+OK\r\n+OK\r\n"


def test_unwatch_inside_multi_does_not_rescue_a_dirty_transaction(tx, r):
    r.set("k", "1")
    tx.execute_command("WATCH", "k")
    tx.execute_command("MULTI")
    r.set("k", "x")
    assert tx.execute_command("UNWATCH") == "QUEUED"
    assert tx.execute_command("SET", "k", "mine") == "QUEUED"
    assert tx.execute_command("EXEC") is None
    assert r.get("k") == "x"


def test_watch_remembers_the_database(tx, clients):
    db0, db1 = clients(0), clients(1)
    db0.execute_command("SET", "k", "0")
    tx.execute_command("WATCH", "k")        # k in database 0
    tx.execute_command("SELECT", "1")
    db1.execute_command("SET", "k", "1")    # same name, database 1: no abort
    assert run_tx(tx, ("GET", "k")) == ["1"]
    tx.execute_command("SELECT", "0")
    tx.execute_command("WATCH", "k")
    tx.execute_command("SELECT", "1")
    db0.execute_command("SET", "k", "changed")  # the watched key: abort
    assert run_tx(tx, ("SET", "k", "mine")) is None
    assert db1.execute_command("GET", "k") == "1"


def test_exec_without_multi_keeps_watching(tx, r):
    tx.execute_command("WATCH", "k")
    with pytest.raises(redis.ResponseError, match="^EXEC without MULTI$"):
        tx.execute_command("EXEC")
    r.set("k", "x")
    assert run_tx(tx, ("SET", "m", "1")) is None


def test_watch_by_many_clients(server, r):
    """Every client watching a key sees the write; one that watches another key does not."""
    cs = [server.client(single_connection_client=True, decode_responses=True)
          for _ in range(6)]
    try:
        for i, c in enumerate(cs):
            c.execute_command("WATCH", "k" if i % 2 == 0 else "other%d" % i)
        r.set("k", "x")
        for i, c in enumerate(cs):
            c.execute_command("MULTI")
            c.execute_command("INCR", "ran%d" % i)
            reply = c.execute_command("EXEC")
            assert reply == (None if i % 2 == 0 else [1]), i
    finally:
        for c in cs:
            c.close()


# ================================================================ 7. every kind of change aborts

def on1(*args):
    """A step run on database 1."""
    return lambda c0, c1: c1.execute_command(*args)


def restore_replace(c0, c1):
    payload = c0.execute_command("DUMP", "src")
    assert c0.execute_command("RESTORE", "w", 0, payload, "REPLACE") == b"OK"


def sleep_past_expiry(c0, c1):
    time.sleep(0.5)


# (id, setup before WATCH w, change made by other clients after it)
CHANGES = [
    ("del", [("SET", "w", "v")], [("DEL", "w")]),
    ("unlink", [("SET", "w", "v")], [("UNLINK", "w")]),
    ("getdel", [("SET", "w", "v")], [("GETDEL", "w")]),
    ("set_same_value", [("SET", "w", "v")], [("SET", "w", "v")]),
    ("expire", [("SET", "w", "v")], [("EXPIRE", "w", "100")]),
    ("pexpire_to_past", [("SET", "w", "v")], [("PEXPIREAT", "w", "1")]),
    ("persist", [("SET", "w", "v", "EX", "100")], [("PERSIST", "w")]),
    ("incr", [("SET", "w", "1")], [("INCR", "w")]),
    ("incrbyfloat", [("SET", "w", "1")], [("INCRBYFLOAT", "w", "0.5")]),
    ("append", [("SET", "w", "a")], [("APPEND", "w", "b")]),
    ("setrange", [("SET", "w", "abc")], [("SETRANGE", "w", "1", "X")]),
    ("getex_persist", [("SET", "w", "v", "EX", "100")], [("GETEX", "w", "PERSIST")]),
    ("hset_new_field", [("HSET", "w", "f", "v")], [("HSET", "w", "g", "v")]),
    ("hincrby", [("HSET", "w", "f", "1")], [("HINCRBY", "w", "f", "1")]),
    ("hdel", [("HSET", "w", "f", "v", "g", "v")], [("HDEL", "w", "f")]),
    ("lpush", [("LPUSH", "w", "a")], [("LPUSH", "w", "b")]),
    ("rpop", [("RPUSH", "w", "a", "b")], [("RPOP", "w")]),
    ("lset", [("RPUSH", "w", "a")], [("LSET", "w", "0", "b")]),
    ("lmove_from", [("RPUSH", "w", "a", "b")], [("LMOVE", "w", "dst", "LEFT", "RIGHT")]),
    ("lmove_onto", [("RPUSH", "src", "a")], [("LMOVE", "src", "w", "LEFT", "RIGHT")]),
    ("blpop_by_other_client", [("RPUSH", "w", "a")], [("BLPOP", "w", "1")]),
    ("sadd_new_member", [("SADD", "w", "a")], [("SADD", "w", "b")]),
    ("srem", [("SADD", "w", "a", "b")], [("SREM", "w", "a")]),
    ("spop", [("SADD", "w", "a", "b")], [("SPOP", "w")]),
    ("smove_onto", [("SADD", "src", "a")], [("SMOVE", "src", "w", "a")]),
    ("sunionstore_onto", [("SET", "w", "v"), ("SADD", "s1", "a")],
     [("SUNIONSTORE", "w", "s1")]),
    ("zadd_new_member", [("ZADD", "w", "1", "a")], [("ZADD", "w", "2", "b")]),
    ("zadd_new_score", [("ZADD", "w", "1", "a")], [("ZADD", "w", "2", "a")]),
    ("zincrby", [("ZADD", "w", "1", "a")], [("ZINCRBY", "w", "1", "a")]),
    ("zpopmin", [("ZADD", "w", "1", "a", "2", "b")], [("ZPOPMIN", "w")]),
    ("zunionstore_onto", [("ZADD", "z1", "1", "a")], [("ZUNIONSTORE", "w", "1", "z1")]),
    ("sort_store_onto", [("SET", "w", "v"), ("RPUSH", "l", "3", "1", "2")],
     [("SORT", "l", "STORE", "w")]),
    ("rename_onto", [("SET", "w", "v"), ("SET", "src", "x")], [("RENAME", "src", "w")]),
    ("rename_away", [("SET", "w", "v")], [("RENAME", "w", "elsewhere")]),
    ("renamenx_onto_missing", [("SET", "src", "x")], [("RENAMENX", "src", "w")]),
    ("move_away", [("SET", "w", "v")], [("MOVE", "w", "1")]),
    ("move_in", [on1("SET", "w", "v")], [on1("MOVE", "w", "0")]),
    ("swapdb", [("SET", "w", "v")], [("SWAPDB", "0", "1")]),
    ("swapdb_key_only_in_other_db", [on1("SET", "w", "v")], [("SWAPDB", "1", "0")]),
    ("flushdb", [("SET", "w", "v"), ("SET", "x", "1")], [("FLUSHDB",)]),
    ("flushdb_async", [("SET", "w", "v")], [("FLUSHDB", "ASYNC")]),
    ("flushall", [("SET", "w", "v")], [("FLUSHALL",)]),
    ("flushall_from_other_db", [("SET", "w", "v")], [on1("FLUSHALL")]),
    ("copy_replace", [("SET", "w", "v"), ("SET", "src", "x")],
     [("COPY", "src", "w", "REPLACE")]),
    ("copy_from_other_db", [("SET", "w", "v"), on1("SET", "src", "x")],
     [on1("COPY", "src", "w", "DB", "0", "REPLACE")]),
    ("restore_replace", [("SET", "w", "v"), ("RPUSH", "src", "a")], [restore_replace]),
    ("incrby_zero", [("SET", "w", "1")], [("INCRBY", "w", "0")]),
    ("sunionstore_of_missing_keys_deletes", [("SET", "w", "v")],
     [("SUNIONSTORE", "w", "nokey")]),
    ("expires_between_watch_and_exec", [("SET", "w", "v", "PX", "200")],
     [sleep_past_expiry]),
]


def run_steps(steps, c0, c1):
    for step in steps:
        if callable(step):
            step(c0, c1)
        else:
            c0.execute_command(*step)


@pytest.mark.parametrize("setup,change", [c[1:] for c in CHANGES],
                         ids=[c[0] for c in CHANGES])
def test_change_to_watched_key_aborts(tx, clients, setup, change):
    c0, c1 = clients(0, decode=False), clients(1, decode=False)
    run_steps(setup, c0, c1)
    assert tx.execute_command("WATCH", "w") == "OK"
    run_steps(change, c0, c1)
    assert run_tx(tx, ("SET", "w", "mine"), ("SET", "marker", "1")) is None, (
        "EXEC ran although w was changed")
    assert c0.execute_command("EXISTS", "marker") == 0
    if c0.execute_command("TYPE", "w") == b"string":
        assert c0.execute_command("GET", "w") != b"mine"


# ================================================================ 8. keys already expired at WATCH

def make_stale(c0):
    """w exists with a TTL that has passed (no command has touched it since)."""
    assert c0.execute_command("SET", "w", "v", "PX", "1") == "OK"
    time.sleep(0.02)


@pytest.mark.parametrize("change", [
    [],
    [("FLUSHDB",)],
    [("FLUSHALL",)],
    [("GET", "w")],          # another client's read deletes the stale key
    [("EXISTS", "w")],
    [("SET", "x", "1")],
], ids=["nothing", "flushdb", "flushall", "get_by_other", "exists_by_other", "other_key"])
def test_watch_of_already_expired_key_does_not_abort(tx, clients, change):
    c0, c1 = clients(0), clients(1)
    make_stale(c0)
    tx.execute_command("WATCH", "w")
    run_steps(change, c0, c1)
    assert run_tx(tx, ("GET", "w"), ("SET", "marker", "1")) == [None, "OK"]


def test_watch_of_already_expired_key_then_set_by_other_aborts(tx, clients):
    c0 = clients(0)
    make_stale(c0)
    tx.execute_command("WATCH", "w")
    c0.execute_command("SET", "w", "new")
    assert run_tx(tx, ("SET", "marker", "1")) is None
    assert c0.execute_command("GET", "w") == "new"


# ================================================================ 9. changes that do not abort

NO_ABORT = [
    ("write_to_other_key", [("SET", "w", "v")], [("SET", "x", "1"), ("DEL", "y")]),
    ("same_name_in_other_db", [("SET", "w", "v")], [on1("SET", "w", "x"), on1("DEL", "w")]),
    ("flushdb_of_other_empty_db", [("SET", "w", "v")], [on1("FLUSHDB")]),
    ("flushdb_of_other_db_with_same_name", [("SET", "w", "v"), on1("SET", "w", "x")],
     [on1("FLUSHDB")]),
    ("swapdb_of_other_dbs", [("SET", "w", "v"), on1("SET", "w", "x")],
     [("SWAPDB", "1", "2")]),
    ("flushdb_watched_key_missing", [("SET", "x", "1")], [("FLUSHDB",)]),
    ("flushall_watched_key_missing", [("SET", "x", "1"), on1("SET", "w", "1")],
     [("FLUSHALL",)]),
    ("swapdb_watched_key_in_neither_db", [("SET", "x", "1"), on1("SET", "y", "1")],
     [("SWAPDB", "0", "1")]),
    ("string_reads", [("SET", "w", "v", "EX", "100")],
     [("GET", "w"), ("EXISTS", "w"), ("TTL", "w"), ("TYPE", "w"), ("STRLEN", "w"),
      ("GETRANGE", "w", "0", "1"), ("MGET", "w", "x"), ("TOUCH", "w"),
      ("OBJECT", "ENCODING", "w"), ("MEMORY", "USAGE", "w"), ("SCAN", "0"),
      ("KEYS", "*"), ("RANDOMKEY",), ("DBSIZE",)]),
    ("collection_reads", [("RPUSH", "w", "b", "a")],
     [("LRANGE", "w", "0", "-1"), ("LINDEX", "w", "0"), ("LPOS", "w", "a"), ("LLEN", "w")]),
    ("hash_reads", [("HSET", "w", "f", "v")],
     [("HGETALL", "w"), ("HGET", "w", "f"), ("HRANDFIELD", "w"), ("HSCAN", "w", "0")]),
    ("set_reads", [("SADD", "w", "a", "b")],
     [("SMEMBERS", "w"), ("SISMEMBER", "w", "a"), ("SRANDMEMBER", "w"),
      ("SINTERSTORE", "dst", "w")]),
    ("zset_reads", [("ZADD", "w", "1", "a")],
     [("ZRANGE", "w", "0", "-1"), ("ZSCORE", "w", "a"), ("ZRANDMEMBER", "w")]),
    ("dump", [("SET", "w", "v")], [("DUMP", "w")]),
    ("dump_of_list", [("RPUSH", "w", "a")], [("DUMP", "w")]),
    ("sort_without_store", [("RPUSH", "w", "b", "a")], [("SORT", "w", "ALPHA")]),
    ("copy_from_watched_key", [("SET", "w", "v")], [("COPY", "w", "dst")]),
    ("del_of_missing_key", [], [("DEL", "w"), ("UNLINK", "w")]),
    ("expire_of_missing_key", [], [("EXPIRE", "w", "100")]),
    ("persist_without_ttl", [("SET", "w", "v")], [("PERSIST", "w")]),
    ("sadd_existing_member", [("SADD", "w", "a")], [("SADD", "w", "a")]),
    ("srem_missing_member", [("SADD", "w", "a")], [("SREM", "w", "b")]),
    ("smove_within_the_same_set", [("SADD", "w", "a", "b")], [("SMOVE", "w", "w", "a")]),
    ("zadd_same_score", [("ZADD", "w", "1", "a")], [("ZADD", "w", "1", "a")]),
    ("hdel_missing_field", [("HSET", "w", "f", "v")], [("HDEL", "w", "g")]),
    ("hsetnx_existing_field", [("HSET", "w", "f", "v")], [("HSETNX", "w", "f", "x")]),
    ("lrem_without_match", [("RPUSH", "w", "a")], [("LREM", "w", "0", "z")]),
    ("rename_onto_itself", [("SET", "w", "v")], [("RENAME", "w", "w")]),
    ("setnx_on_existing", [("SET", "w", "v")],
     [("SETNX", "w", "x"), ("SET", "w", "x", "NX")]),
    ("set_xx_on_missing", [], [("SET", "w", "x", "XX"), ("LPUSHX", "w", "x")]),
    ("rename_of_other_keys", [("SET", "w", "v"), ("SET", "a", "1")],
     [("RENAME", "a", "b")]),
]


@pytest.mark.parametrize("setup,change", [c[1:] for c in NO_ABORT],
                         ids=[c[0] for c in NO_ABORT])
def test_change_that_does_not_abort(tx, clients, setup, change):
    c0, c1 = clients(0, decode=False), clients(1, decode=False)
    run_steps(setup, c0, c1)
    assert tx.execute_command("WATCH", "w") == "OK"
    run_steps(change, c0, c1)
    assert run_tx(tx, ("SET", "marker", "1")) == ["OK"], "EXEC was aborted"
    assert c0.execute_command("GET", "marker") == b"1"


# ================================================================ 10. blocking commands

def test_blocking_commands_on_empty_keys_do_not_block(raw):
    c = raw()
    c.sock.settimeout(5)
    assert wire(c, "MULTI") == OK
    for args in [("BLPOP", "e1", "0"), ("BRPOP", "e1", "e2", "0"),
                 ("BLMOVE", "e1", "dst", "LEFT", "RIGHT", "0"),
                 ("BRPOPLPUSH", "e1", "dst", "0"), ("BLMPOP", "0", "1", "e1", "LEFT"),
                 ("BZPOPMIN", "z1", "0"), ("BZPOPMAX", "z1", "z2", "0"),
                 ("BZMPOP", "0", "1", "z1", "MIN"), ("BLPOP", "e1", "30")]:
        assert wire(c, *args) == QUEUED
    t0 = time.monotonic()
    assert wire(c, "EXEC") == (b"*9\r\n*-1\r\n*-1\r\n$-1\r\n$-1\r\n*-1\r\n*-1\r\n*-1\r\n"
                               b"*-1\r\n*-1\r\n")
    assert time.monotonic() - t0 < 2.0
    assert wire(c, "EXISTS", "dst") == b":0\r\n"


def test_blpop_on_non_empty_list_pops_inside_exec(tx, r):
    r.rpush("l", "a", "b")
    r.zadd("z", {"m": 1})
    reply = run_tx(tx, ("BLPOP", "l", "0"), ("BRPOP", "l", "0"), ("BLPOP", "l", "0"),
                   ("BZPOPMIN", "z", "0"))
    assert reply == [["l", "a"], ["l", "b"], None, ["z", "m", "1"]]
    assert r.exists("l", "z") == 0


def test_blpop_sees_a_push_queued_earlier_in_the_transaction(tx, r):
    reply = run_tx(tx, ("BLPOP", "q", "0"), ("RPUSH", "q", "x"), ("BLPOP", "q", "0"),
                   ("BLMOVE", "q", "d", "LEFT", "RIGHT", "0"))
    assert reply == [None, 1, ["q", "x"], None]


# ================================================================ 11. multi-key commands

KEYS20 = ["key:%d" % i for i in range(20)]


def test_mset_mget_twenty_keys(tx, r):
    pairs = []
    for i, k in enumerate(KEYS20):
        pairs += [k, "v%d" % i]
    reply = run_tx(tx, ("MSET", *pairs), ("MGET", *KEYS20, "missing"),
                   ("DBSIZE",), ("EXISTS", *KEYS20))
    assert reply == ["OK", ["v%d" % i for i in range(20)] + [None], 20, 20]
    assert r.mget(KEYS20) == ["v%d" % i for i in range(20)]


def test_del_of_many_keys(tx, r):
    r.mset({k: "1" for k in KEYS20})
    reply = run_tx(tx, ("DEL", *KEYS20[:7], "missing"), ("DBSIZE",),
                   ("UNLINK", *KEYS20[7:12]), ("DBSIZE",))
    assert reply == [7, 13, 5, 8]
    assert sorted(r.keys("*")) == sorted(KEYS20[12:])


def test_rename_chain_across_keys(tx, r):
    reply = run_tx(tx, ("SET", "ra", "v"), ("RENAME", "ra", "rb"), ("RENAME", "rb", "rc"),
                   ("RENAME", "rc", "rd"), ("GET", "rd"), ("EXISTS", "ra", "rb", "rc"),
                   ("COPY", "rd", "re"), ("MOVE", "re", "3"), ("EXISTS", "re"))
    assert reply == ["OK", "OK", "OK", "OK", "v", 0, 1, 1, 0]
    assert r.get("rd") == "v"


def test_order_of_commands_across_many_keys(tx, r):
    cmds = []
    for k in KEYS20:
        cmds += [("SET", k, "a"), ("APPEND", k, "b")]
    for k in KEYS20:
        cmds.append(("APPEND", k, "c"))
    cmds.append(("MGET", *KEYS20))
    reply = run_tx(tx, *cmds)
    assert reply[-1] == ["abc"] * 20
    assert reply[:40] == ["OK", 2] * 20
    assert reply[40:60] == [3] * 20


def test_set_algebra_across_keys(tx, r):
    r.sadd("s1", "a", "b")
    r.sadd("s2", "b", "c")
    r.sadd("s3", "d")
    reply = run_tx(tx, ("SUNIONSTORE", "dst", "s1", "s2", "s3", "missing"),
                   ("SMEMBERS", "dst"), ("SINTERSTORE", "i", "s1", "s2"), ("SMEMBERS", "i"),
                   ("SMOVE", "s3", "s1", "d"), ("SCARD", "s1"), ("EXISTS", "s3"))
    assert reply[0] == 4
    assert sorted(reply[1]) == ["a", "b", "c", "d"]
    assert reply[2:] == [1, ["b"], 1, 3, 0]


def test_lmove_between_lists_inside_exec(tx, r):
    r.rpush("la", "1", "2", "3")
    reply = run_tx(tx, ("LMOVE", "la", "lb", "LEFT", "RIGHT"),
                   ("LMOVE", "la", "lb", "LEFT", "RIGHT"),
                   ("RPOPLPUSH", "lb", "la"), ("LRANGE", "la", "0", "-1"),
                   ("LRANGE", "lb", "0", "-1"))
    assert reply == ["1", "2", "2", ["2", "3"], ["1"]]


def test_dbsize_and_keys_inside_exec(tx, r):
    r.mset({k: "1" for k in KEYS20[:10]})
    reply = run_tx(tx, ("DBSIZE",), ("MSET", *sum(([k, "2"] for k in KEYS20[10:]), [])),
                   ("DBSIZE",), ("KEYS", "*"), ("KEYS", "key:1*"))
    assert reply[0] == 10 and reply[1] == "OK" and reply[2] == 20
    assert sorted(reply[3]) == sorted(KEYS20)
    assert sorted(reply[4]) == sorted(k for k in KEYS20 if k.startswith("key:1"))


def test_flushdb_inside_exec(tx, clients):
    db0, db1 = clients(0), clients(1)
    db1.execute_command("SET", "keep", "1")
    reply = run_tx(tx, ("MSET", *sum(([k, "1"] for k in KEYS20), [])), ("FLUSHDB",),
                   ("DBSIZE",), ("GET", KEYS20[0]), ("SET", "after", "v"), ("DBSIZE",))
    assert reply == ["OK", "OK", 0, None, "OK", 1]
    assert db0.execute_command("KEYS", "*") == ["after"]
    assert db1.execute_command("GET", "keep") == "1"


def test_flushall_and_swapdb_inside_exec(tx, clients):
    db0, db1 = clients(0), clients(1)
    db1.execute_command("SET", "one", "1")
    reply = run_tx(tx, ("SET", "zero", "0"), ("SWAPDB", "0", "1"), ("GET", "one"),
                   ("GET", "zero"), ("FLUSHALL",), ("DBSIZE",), ("SET", "k", "v"))
    assert reply == ["OK", "OK", "1", None, "OK", 0, "OK"]
    assert db0.execute_command("KEYS", "*") == ["k"]
    assert db1.execute_command("DBSIZE") == 0


# ================================================================ 12. disconnects

def test_disconnect_in_the_middle_of_multi_runs_nothing(server, r):
    c = RawConnection(server.port)
    cid = int(wire(c, "CLIENT", "ID")[1:])
    assert wire(c, "WATCH", "w") == OK
    c.send(resp("MULTI") + b"".join(resp("SET", k, "1") for k in KEYS20))
    assert c.read_reply() == OK
    for _ in KEYS20:
        assert c.read_reply() == QUEUED
    c.close()
    wait_for(lambda: cid not in client_ids(r), what="the client to go away")
    assert r.dbsize() == 0
    # The watched key of the gone client can be written; the server keeps serving.
    assert r.set("w", "1")
    assert r.ping()
    c2 = RawConnection(server.port)
    try:
        assert wire(c2, "MULTI") == OK
        assert wire(c2, "INCR", "w") == QUEUED
        assert wire(c2, "EXEC") == b"*1\r\n:2\r\n"
    finally:
        c2.close()


def connected_clients(r):
    return int(r.info("clients")["connected_clients"])


def test_disconnect_before_exec_with_partial_command(server, r):
    before = connected_clients(r)
    c = RawConnection(server.port)
    c.send(resp("MULTI") + resp("SET", "a", "1") + resp("EXEC")[:-3])
    assert c.read_reply() == OK
    assert c.read_reply() == QUEUED
    c.close()
    wait_for(lambda: connected_clients(r) <= before, what="the client to go away")
    assert r.exists("a") == 0


def test_multi_exec_then_close_at_once(server, r):
    before = connected_clients(r)
    for i in range(40):
        s = socket.create_connection(("127.0.0.1", server.port), timeout=5)
        if i % 2:
            # Close with a reset rather than a FIN.
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        keys = ["t%d:%d" % (i, j) for j in range(10)]
        s.sendall(resp("MULTI") + b"".join(resp("SET", k, "1") for k in keys) + resp("EXEC"))
        s.close()
    wait_for(lambda: connected_clients(r) <= before, what="the closed clients to go away")
    assert r.ping()
    for i in range(40):
        n = r.exists(*["t%d:%d" % (i, j) for j in range(10)])
        assert n in (0, 10), "transaction %d ran in part: %d of 10 keys" % (i, n)


# ================================================================ 13. CLIENT LIST

def test_client_list_shows_multi_state(tx, r):
    cid = tx.execute_command("CLIENT", "ID")
    f = client_line(r, cid)
    assert f["multi"] == "-1"
    assert "x" not in f["flags"]
    tx.execute_command("MULTI")
    f = client_line(r, cid)
    assert f["multi"] == "0"
    assert f["flags"] == "x"
    tx.execute_command("SET", "a", "1")
    tx.execute_command("GET", "a")
    f = client_line(r, cid)
    assert f["multi"] == "2"
    assert f["flags"] == "x"
    assert tx.execute_command("EXEC") == ["OK", "1"]
    f = client_line(r, cid)
    assert f["multi"] == "-1"
    assert f["flags"] == "N"


def test_client_list_after_discard(tx, r):
    cid = tx.execute_command("CLIENT", "ID")
    tx.execute_command("MULTI")
    tx.execute_command("SET", "a", "1")
    tx.execute_command("DISCARD")
    f = client_line(r, cid)
    assert f["multi"] == "-1"
    assert f["flags"] == "N"


@pytest.mark.xfail(TARGET == "strata", strict=True,
                   reason="strata's CLIENT LIST has no d flag: the dirty state lives on the "
                          "watched key's shard until EXEC asks")
def test_client_list_dirty_flag(tx, r):
    cid = tx.execute_command("CLIENT", "ID")
    tx.execute_command("WATCH", "k")
    tx.execute_command("MULTI")
    tx.execute_command("SET", "k", "1")
    r.set("k", "other")
    f = client_line(r, cid)
    assert f["flags"] == "xd"
    assert f["multi"] == "1"
    assert tx.execute_command("EXEC") is None
    assert client_line(r, cid)["flags"] == "N"


# ================================================================ 14. redis-py

def test_pipeline_transaction(r):
    pipe = r.pipeline(transaction=True)
    pipe.set("a", "1").incr("a").get("a").rpush("l", "x", "y").lrange("l", 0, -1)
    pipe.hset("h", "f", "v").hgetall("h").delete("a").exists("a")
    assert pipe.execute() == [True, 2, "2", 2, ["x", "y"], 1, {"f": "v"}, 1, 0]


def test_pipeline_transaction_runtime_error(r):
    pipe = r.pipeline(transaction=True)
    pipe.set("a", "x").incr("a").set("b", "1")
    reply = pipe.execute(raise_on_error=False)
    assert reply[0] is True and reply[2] is True
    assert error_text(reply[1]) == "value is not an integer or out of range"
    assert r.mget("a", "b") == ["x", "1"]
    pipe.set("c", "x").incr("c")
    with pytest.raises(redis.ResponseError, match="value is not an integer"):
        pipe.execute()
    assert r.get("c") == "x"


def test_pipeline_transaction_queue_time_error(r):
    pipe = r.pipeline(transaction=True)
    pipe.set("a", "1").execute_command("NOSUCHCMD", "x").set("b", "2")
    with pytest.raises(redis.ResponseError, match="unknown command"):
        pipe.execute()
    assert r.exists("a", "b") == 0


def test_pipeline_watch_abort(server, r):
    r.set("k", "1")
    with r.pipeline() as pipe:
        pipe.watch("k")
        assert pipe.get("k") == "1"   # immediate mode while watching
        r.set("k", "2")
        pipe.multi()
        pipe.set("k", "3")
        with pytest.raises(redis.WatchError):
            pipe.execute()
    assert r.get("k") == "2"


def test_pipeline_watch_success(r):
    r.set("k", "1")
    with r.pipeline() as pipe:
        pipe.watch("k")
        val = int(pipe.get("k"))
        pipe.multi()
        pipe.set("k", val + 1)
        pipe.get("k")
        assert pipe.execute() == [True, "2"]


def test_redis_py_transaction_helper(r):
    r.set("k", "5")

    def double(pipe):
        v = int(pipe.get("k"))
        pipe.multi()
        pipe.set("k", v * 2)

    assert r.transaction(double, "k") == [True]
    assert r.get("k") == "10"


def test_optimistic_increment_from_threads(server, r):
    r.set("counter", "0")
    threads_n, per_thread = 4, 200
    errors, retries = [], [0]
    deadline = time.monotonic() + 60

    def worker():
        c = server.client(decode_responses=True)
        try:
            done = 0
            while done < per_thread:
                if time.monotonic() > deadline:
                    raise AssertionError("out of time after %d increments" % done)
                with c.pipeline() as pipe:
                    try:
                        pipe.watch("counter")
                        val = pipe.get("counter")
                        pipe.multi()
                        pipe.set("counter", int(val) + 1)
                        pipe.execute()
                        done += 1
                    except redis.WatchError:
                        retries[0] += 1
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
        finally:
            c.close()

    threads = [threading.Thread(target=worker, name="inc%d" % i, daemon=True)
               for i in range(threads_n)]
    for t in threads:
        t.start()
    join_all(threads, 70)
    assert not errors, errors
    assert r.get("counter") == str(threads_n * per_thread)


def test_redis_py_lock(server, r):
    other = server.client(decode_responses=True)
    try:
        lock = r.lock("resource", timeout=5)
        assert lock.acquire(blocking=False)
        assert 0 < r.pttl("resource") <= 5000
        rival = other.lock("resource", timeout=5)
        assert not rival.acquire(blocking=False)
        lock.release()
        assert r.exists("resource") == 0
        assert rival.acquire(blocking=False)
        rival.release()
    finally:
        other.close()


# ================================================================ 15. atomicity under concurrency

ACCOUNTS = ["acct:%d" % i for i in range(50)]


def test_transfers_keep_the_total(server_factory):
    s = server_factory(threads=3)
    setup = s.client(decode_responses=True)
    setup.mset({a: 100 for a in ACCOUNTS})
    stop = threading.Event()
    errors, reads = [], [0, 0]
    deadline = time.monotonic() + 30

    def transfer(seed):
        rnd = random.Random(seed)
        c = s.client(decode_responses=True)
        try:
            for _ in range(300):
                if time.monotonic() > deadline:
                    raise AssertionError("out of time")
                a, b = rnd.sample(ACCOUNTS, 2)
                x = rnd.randint(1, 20)
                pipe = c.pipeline(transaction=True)
                pipe.decrby(a, x).incrby(b, x)
                pipe.execute()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
        finally:
            c.close()

    def reader():
        c = s.client(decode_responses=True)
        tc = s.client(decode_responses=True, single_connection_client=True)
        tc.response_callbacks.clear()
        try:
            while not stop.is_set() and time.monotonic() < deadline:
                total = sum(int(v) for v in c.mget(ACCOUNTS))
                assert total == 5000, "MGET saw a total of %d" % total
                reads[0] += 1
                reply = run_tx(tc, *[("GET", a) for a in ACCOUNTS])
                total = sum(int(v) for v in reply)
                assert total == 5000, "MULTI/GET.../EXEC saw a total of %d" % total
                reads[1] += 1
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
        finally:
            c.close()
            tc.close()

    writers = [threading.Thread(target=transfer, args=(i,), name="w%d" % i, daemon=True)
               for i in range(4)]
    rd = threading.Thread(target=reader, name="reader", daemon=True)
    rd.start()
    for t in writers:
        t.start()
    join_all(writers, 35)
    stop.set()
    join_all([rd], 5)
    assert not errors, errors[:3]
    assert reads[0] > 0 and reads[1] > 0
    assert sum(int(v) for v in setup.mget(ACCOUNTS)) == 5000
    setup.close()


def test_transaction_writes_are_seen_all_or_nothing(server_factory):
    """A writer sets 20 keys to one generation number per transaction; readers never
    see two generations at once."""
    s = server_factory(threads=3)
    setup = s.client(decode_responses=True)
    setup.mset({k: 0 for k in KEYS20})
    stop = threading.Event()
    errors, seen = [], []
    deadline = time.monotonic() + 20

    def writer():
        c = s.client(decode_responses=True)
        try:
            for gen in range(1, 301):
                if time.monotonic() > deadline:
                    raise AssertionError("out of time")
                pipe = c.pipeline(transaction=True)
                for k in KEYS20:
                    pipe.set(k, gen)
                pipe.execute()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
        finally:
            c.close()

    def reader():
        c = s.client(decode_responses=True)
        try:
            while not stop.is_set() and time.monotonic() < deadline:
                vals = set(c.mget(KEYS20))
                assert len(vals) == 1, "MGET saw generations %s" % sorted(vals)
                seen.append(vals.pop())
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
        finally:
            c.close()

    w = threading.Thread(target=writer, name="writer", daemon=True)
    rds = [threading.Thread(target=reader, name="reader%d" % i, daemon=True)
           for i in range(2)]
    for t in rds:
        t.start()
    w.start()
    join_all([w], 25)
    stop.set()
    join_all(rds, 5)
    assert not errors, errors[:3]
    assert seen
    assert setup.mget(KEYS20) == ["300"] * 20
    setup.close()
