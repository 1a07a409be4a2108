"""Plain helper functions shared by the integration tests (fixtures live in conftest.py).

Import what a test module needs: `from helpers import cmd, roundtrip`.
"""
import socket
import time

import pytest
import redis

# Error-reply patterns for pytest.raises(match=...). redis-py strips the "ERR " prefix
# from error replies, so these start after it.
WRONGTYPE = "^WRONGTYPE Operation against a key holding the wrong kind of value$"
NOT_INT = "^value is not an integer or out of range$"
NOT_FLOAT = "^value is not a valid float$"
SYNTAX = "^syntax error$"


# ---------------------------------------------------------------- raw RESP requests

def cmd(*args):
    """Encodes one command as a RESP multibulk request (str or bytes arguments)."""
    out = b"*%d\r\n" % len(args)
    for a in args:
        if isinstance(a, str):
            a = a.encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


def resp(*args):
    """Encodes one command as a RESP array of bulk strings (bytes as they are, anything
    else through str(), so numbers can be passed as they are)."""
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


def read_exactly(s, n):
    """Reads exactly n bytes from a socket (the exact bytes of a known reply)."""
    out = b""
    while len(out) < n:
        chunk = s.recv(n - len(out))
        assert chunk, "closed after %d of %d bytes" % (len(out), n)
        out += chunk
    return out


def roundtrip(conn, data, n=1):
    """Sends data on a RawConnection and returns the raw bytes of the next n replies."""
    conn.send(data)
    return b"".join(conn.read_reply() for _ in range(n))


# ---------------------------------------------------------------- connection close

def is_closed(conn, timeout=5.0):
    """True when the server closes the RawConnection `conn` within timeout seconds."""
    conn.sock.settimeout(timeout)
    try:
        return conn.sock.recv(1024) == b""
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False


def read_until_closed(conn, timeout=5.0):
    """Returns (bytes received, closed?) after waiting up to timeout for the server to close."""
    conn.sock.settimeout(timeout)
    data = conn.buf
    conn.buf = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            chunk = conn.sock.recv(65536)
        except (ConnectionResetError, BrokenPipeError):
            return data, True
        except socket.timeout:
            return data, False
        if not chunk:
            return data, True
        data += chunk
    return data, False


def send_then_read_until_closed(conn, payload, timeout=5.0):
    """Sends payload (tolerating the server closing mid-send), then read_until_closed."""
    try:
        conn.send(payload)
    except (ConnectionResetError, BrokenPipeError):
        return conn.buf, True
    return read_until_closed(conn, timeout)


def expect_closed(conn, timeout=5.0):
    """Asserts the server closes `conn` (EOF or reset) within `timeout` seconds and
    returns any bytes that arrived first."""
    data, closed = read_until_closed(conn, timeout)
    if not closed:
        pytest.fail("server did not close the connection; got %r" % data[:200])
    return data


def send_until_closed(conn, payload, timeout=5.0):
    """Sends payload (tolerating the server closing mid-send) and waits for the close."""
    data, closed = send_then_read_until_closed(conn, payload, timeout)
    if not closed:
        pytest.fail("server did not close the connection; got %r" % data[:200])
    return data


# ---------------------------------------------------------------- redis-py clients

def error_of(fn, *args):
    """The error text of the redis.ResponseError that fn(*args) raises."""
    with pytest.raises(redis.ResponseError) as e:
        fn(*args)
    return str(e.value)


def call(r, *args):
    """Runs a command on redis-py client r without redis-py's reply post-processing."""
    conn = r.connection_pool.get_connection(args[0])
    try:
        conn.send_command(*args)
        reply = conn.read_response()
    finally:
        r.connection_pool.release(conn)
    if isinstance(reply, redis.ResponseError):
        raise reply
    return reply


def parse_client_line(line):
    """One CLIENT LIST / CLIENT INFO line as {field: value}."""
    return dict(f.split("=", 1) for f in line.split(" "))


def kill_other_clients(c):
    """Closes every other connection (e.g. the harness's readiness probe) by id.
    c is a client with str replies."""
    me = c.client_id()
    for line in call(c, "CLIENT", "LIST").strip().split("\n"):
        cid = int(parse_client_line(line)["id"])
        if cid != me:
            c.execute_command("CLIENT", "KILL", "ID", str(cid))


def make_list(client, key):
    """Creates a non-string key. Tests that call it first call
    require_commands(server, "RPUSH"), so they skip where the server has no lists yet."""
    assert client.execute_command("RPUSH", key, "item") == 1


# ---------------------------------------------------------------- waiting

def wait_for(pred, timeout=5.0, what="condition"):
    """Polls pred() until it is truthy and returns its value; fails the test after
    timeout seconds."""
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for " + what)
        time.sleep(0.02)


def repl_bytes_growth(writer, watched, side, settle, n=50, size=1000):
    """INFO's replication bytes around n writes of `size`-byte values made through
    `writer`, as `watched` (the master or the replica's client) counts them for `side`
    ("input" or "output"); settle() waits for the replica to have them. Returns (before,
    after, growth of total_net_repl_<side>_bytes, growth of total_net_<side>_bytes)."""
    repl_field, total_field = "total_net_repl_%s_bytes" % side, "total_net_%s_bytes" % side
    before = watched.info("stats")
    value = "v" * size
    for i in range(n):
        writer.set("big%d" % i, value)
    settle()
    after = watched.info("stats")
    return (before, after, after[repl_field] - before[repl_field],
            after[total_field] - before[total_field])


def replica_synced(master, replica):
    """True once the replica's link is up and it has applied the master's whole stream
    (INFO replication of both, each on a connection of its own, closed after)."""
    infos = []
    for server in (master, replica):
        c = server.client()
        try:
            infos.append(c.info("replication"))
        finally:
            c.close()
    mi, ri = infos
    return (ri.get("master_link_status") == "up" and
            ri.get("slave_repl_offset") == mi.get("master_repl_offset"))


def published_messages_reach(replica_client, mc):
    """Subscribers on the replica get what is published on the master: PUBLISH and
    SPUBLISH travel the replication stream, alone, inside a transaction and from a
    script."""
    sub = replica_client.pubsub()
    sub.subscribe("news")
    sub.psubscribe("n*")
    seen = []
    wait_for(lambda: seen.append(sub.get_message(timeout=0.1)) or
             len([m for m in seen if m]) == 2, what="the subscriptions")
    # Shard channels on a socket of its own: not every redis-py knows SSUBSCRIBE.
    kw = replica_client.connection_pool.connection_kwargs
    shard = socket.create_connection((kw.get("host", "127.0.0.1"), kw["port"]), timeout=10)
    shard.sendall(resp("SSUBSCRIBE", "shard-news"))
    got = b""
    while b"shard-news\r\n:1\r\n" not in got:
        got += shard.recv(4096)
    mc.publish("news", "one")
    p = mc.pipeline(transaction=True)
    p.set("k", "v")
    p.publish("news", "two")
    p.execute()
    mc.eval("redis.call('PUBLISH', 'news', 'three')", 0)
    mc.execute_command("SPUBLISH", "shard-news", "four")
    got = []
    deadline = time.monotonic() + 10
    while len(got) < 6 and time.monotonic() < deadline:
        m = sub.get_message(timeout=0.2)
        if m and m["type"] in ("message", "pmessage"):
            got.append((m["type"], m["data"]))
    assert [d for t, d in got if t == "message"] == [b"one", b"two", b"three"]
    assert [d for t, d in got if t == "pmessage"] == [b"one", b"two", b"three"]
    data = b""
    while b"$4\r\nfour\r\n" not in data:  # recv times out (10 s) if it never comes
        chunk = shard.recv(4096)
        assert chunk, "the replica closed the shard subscriber"
        data += chunk
    assert data.startswith(b"*3\r\n$8\r\nsmessage\r\n$10\r\nshard-news\r\n"), data
    sub.close()
    shard.close()


# ---------------------------------------------------------------- a second server, values

def start_redis_server(**kw):
    """A real redis-server beside the target (whatever the target is), for tests that
    move data between the two. Stop it with .stop()."""
    import conftest
    saved = conftest.TARGET
    conftest.TARGET = "redis"
    try:
        return conftest.Server(**kw)
    finally:
        conftest.TARGET = saved


_VALUE_READS = {
    "string": lambda p, k: p.get(k),
    "list": lambda p, k: p.lrange(k, 0, -1),
    "set": lambda p, k: p.smembers(k),
    "zset": lambda p, k: p.zrange(k, 0, -1, withscores=True),
    "hash": lambda p, k: p.hgetall(k),
}


def _comparable(kind, v):
    """A value as read by _VALUE_READS, in a comparable form: sets and hashes sorted."""
    if kind == "hash":
        return sorted(v.items())
    if kind == "set":
        return sorted(v)
    return v


def read_value(c, key, kind):
    """A key's value in a comparable form: lists in order, sets, hashes and sorted sets
    sorted (sorted sets by score, with their scores)."""
    if kind not in _VALUE_READS:
        raise AssertionError(kind)
    return _comparable(kind, _VALUE_READS[kind](c, key))


def read_entries(c, keys, expiry="PTTL", chunk=500):
    """[(kind, value, expiry)] for each of keys, in the form read_value gives, with the
    reply of `expiry` (PTTL or PEXPIRETIME). Pipelined in chunks: a chunk's TYPEs in one
    round trip, then its values and expiries in another, so an image of tens of thousands
    of keys costs a few hundred round trips rather than three per key. A stream's value,
    or that of any other type read_value does not know, is None: the caller reads it."""
    out = []
    keys = list(keys)
    for i in range(0, len(keys), chunk):
        part = keys[i:i + chunk]
        p = c.pipeline(transaction=False)
        for k in part:
            p.type(k)
        kinds = [t.decode() if isinstance(t, bytes) else t for t in p.execute()]
        p = c.pipeline(transaction=False)
        for k, kind in zip(part, kinds):
            _VALUE_READS.get(kind, lambda p, k: p.exists(k))(p, k)
            p.execute_command(expiry, k)
        got = p.execute()
        for j, kind in enumerate(kinds):
            v = _comparable(kind, got[2 * j]) if kind in _VALUE_READS else None
            out.append((kind, v, got[2 * j + 1]))
    return out


# ---------------------------------------------------------------- RESP3 replies, parsed
# For tests that read raw replies: every RESP2 and RESP3 type, pushes told apart.

class Push(list):
    """A parsed RESP3 push frame, told apart from an array reply."""


class Err(str):
    """A parsed error reply (its text, without the leading '-')."""


def parse(data):
    """Parses the bytes of one whole reply: bulk and simple strings as str (latin-1, so
    no byte is lost), errors as Err, arrays as list, pushes as Push, maps as dict."""
    value, end = _parse(data, 0)
    assert end == len(data), data
    return value


def _parse(b, i):
    j = b.index(b"\r\n", i)
    t, line, i = b[i:i + 1], b[i + 1:j], j + 2
    if t == b"+":
        return line.decode("latin-1"), i
    if t == b"-":
        return Err(line.decode("latin-1")), i
    if t == b":":
        return int(line), i
    if t == b"_":
        return None, i
    if t in (b"$", b"=", b"!"):
        n = int(line)
        if n < 0:
            return None, i
        return b[i:i + n].decode("latin-1"), i + n + 2
    if t in (b"*", b"~", b">"):
        n = int(line)
        if n < 0:
            return None, i
        out = Push() if t == b">" else []
        for _ in range(n):
            v, i = _parse(b, i)
            out.append(v)
        return out, i
    if t == b"%":
        out = {}
        for _ in range(int(line)):
            k, i = _parse(b, i)
            v, i = _parse(b, i)
            out[k] = v
        return out, i
    raise AssertionError("unexpected reply type %r" % b[i:])


# ---------------------------------------------------------------- side by side with redis

def reply_or_error(c, *args):
    """A command's reply, or its error as "ERR:<text>" (so errors compare as values)."""
    try:
        return c.execute_command(*args)
    except redis.ResponseError as e:
        return "ERR:" + str(e)


def same(pair, *args):
    """Runs args on both clients of pair (the target's, then redis-server's; the `pair`
    fixture); asserts equal replies, errors included, and returns the target's."""
    a, b = pair
    got, want = reply_or_error(a, *args), reply_or_error(b, *args)
    assert got == want, (args, got, want)
    return got


def shard_of(c, key):
    """The shard holding key on a strata server (from INFO memory's per-shard key counts)."""
    def counts():
        info = c.info("memory")
        return {k: v["keys"] for k, v in info.items() if k.startswith("mem_shard_")}
    before = counts()
    c.execute_command("SADD", key, "probe")
    after = counts()
    c.execute_command("DEL", key)
    changed = [k for k in after if after[k] != before.get(k)]
    assert len(changed) == 1
    return changed[0]


def keys_on_distinct_shards(c, n, prefix):
    """n key names on n distinct shards."""
    found = {}
    for i in range(1000):
        key = "%s{%d}" % (prefix, i)
        found.setdefault(shard_of(c, key), key)
        if len(found) == n:
            return list(found.values())
    raise AssertionError("no %d distinct shards" % n)
