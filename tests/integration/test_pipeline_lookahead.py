"""Pipelines of every shape give redis-server's replies, byte for byte.

Before a run of pipelined requests executes, the server looks ahead at the requests
waiting in the input and prefetches the keys they will look up (their second arguments),
and a shard does the same for a batch of commands from another worker's clients. These
tests send the same bytes to the target and to a redis-server and compare what comes
back: requests whose second argument is no key, a SELECT, SWAPDB or FLUSHALL in the
middle of a pipeline, requests the lookahead stops at (inline, more than 64 arguments,
split across writes), binary and empty keys, hash tags, and keys spread over every
shard."""
import functools
import socket

import conftest
from helpers import resp as cmd

import pytest


FILL_KEYS = 40000 * max(1, conftest.THREADS)


@functools.lru_cache(maxsize=1)
def fill():
    return b"".join(cmd("SET", "fill:%d" % i, "x") for i in range(FILL_KEYS))


def exchange(port, chunks):
    """Sends the chunks on one connection (each its own write) and reads until the
    connection's reply bytes stop growing after the last; returns them."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        for c in chunks:
            s.sendall(c)
        s.sendall(cmd("ECHO", b"--end-of-pipeline--"))
        marker = b"$19\r\n--end-of-pipeline--\r\n"
        out = b""
        while not out.endswith(marker):
            chunk = s.recv(1 << 20)
            assert chunk, "closed after %d bytes" % len(out)
            out += chunk
        return out[:-len(marker)]
    finally:
        s.close()


def compare(server, redis_reference, chunks):
    for port in (server.port, redis_reference.port):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.sendall(cmd("FLUSHALL"))
        assert s.recv(100) == b"+OK\r\n"
        s.close()
        # Database 0 big enough on every shard for the lookahead to run
        # (ClientConnection::kLookaheadMinKeys).
        assert exchange(port, [fill()]) == b"+OK\r\n" * FILL_KEYS
    got = exchange(server.port, chunks)
    want = exchange(redis_reference.port, chunks)
    assert got == want


def test_gets_and_sets_over_every_shard(server, redis_reference):
    keys = ["key:%d" % i for i in range(500)]
    writes = b"".join(cmd("SET", k, "value:" + k) for k in keys[::2])
    reads = b"".join(cmd("GET", k) for k in keys)
    mixed = b"".join(cmd("INCR", "n:%d" % (i % 7)) + cmd("GET", keys[i]) +
                     cmd("DEL", keys[(i * 7) % 500]) for i in range(300))
    compare(server, redis_reference, [writes, reads, mixed, reads])


def test_second_arguments_that_are_no_keys(server, redis_reference):
    p = b""
    for i in range(40):
        p += cmd("SET", "k%d" % i, i)
        p += cmd("ECHO", "k%d" % i)
        p += cmd("CONFIG", "GET", "maxmemory-policy")
        p += cmd("PING")
        p += cmd("EXISTS", "k%d" % i, "k%d" % (i + 1))
        p += cmd("GET", "k%d" % i)
        p += cmd("OBJECT", "ENCODING", "k%d" % i)
        p += cmd("TYPE", "k%d" % i)
    compare(server, redis_reference, [p])


def test_select_in_the_middle_of_a_pipeline(server, redis_reference):
    p = b""
    for i in range(30):
        p += cmd("SET", "s%d" % i, "db0")
    p += cmd("SELECT", 3)
    for i in range(30):
        p += cmd("GET", "s%d" % i) + cmd("SET", "s%d" % i, "db3")
    p += cmd("SELECT", 0)
    for i in range(30):
        p += cmd("GET", "s%d" % i)
    p += cmd("SELECT", 3)
    for i in range(30):
        p += cmd("GET", "s%d" % i)
    p += cmd("SELECT", 0)
    compare(server, redis_reference, [p])


def test_requests_the_lookahead_stops_at(server, redis_reference):
    many = ["MSET"]
    for i in range(50):
        many += ["m%d" % i, "v%d" % i]
    head = b"".join(cmd("SET", "a%d" % i, i) for i in range(10))
    inline = b"SET inline:1 one\r\nGET inline:1\r\n"
    tail = b"".join(cmd("GET", "a%d" % i) for i in range(10)) + cmd("GET", "m49")
    whole = head + inline + cmd(*many) + tail
    compare(server, redis_reference, [whole])
    # The same bytes cut at many places, each piece its own write.
    cuts = [whole[i:i + 37] for i in range(0, len(whole), 37)]
    compare(server, redis_reference, cuts)


def test_binary_empty_and_tagged_keys(server, redis_reference):
    keys = [b"", b"\r\n", b"*2\r\n$3\r\nGET\r\n", b"$1\r\nx", b"\x00\xff"] + \
        [b"{user:%d}.name" % (i % 5) for i in range(20)] + [b"{}.x", b"a{b"]
    p = b"".join(cmd("SET", k, b"v" + k) for k in keys)
    p += b"".join(cmd("GET", k) for k in keys)
    p += cmd("MGET", *keys[5:15])
    p += b"".join(cmd("APPEND", k, b"+") + cmd("STRLEN", k) for k in keys)
    compare(server, redis_reference, [p])


def test_collections_in_a_pipeline(server, redis_reference):
    p = b""
    for i in range(60):
        p += cmd("HSET", "h%d" % (i % 9), "f%d" % i, i)
        p += cmd("LPUSH", "l%d" % (i % 11), i)
        p += cmd("SADD", "s%d" % (i % 13), i)
        p += cmd("ZADD", "z%d" % (i % 7), i, "m%d" % i)
    for i in range(20):
        p += cmd("HGETALL", "h%d" % (i % 9)) + cmd("LRANGE", "l%d" % (i % 11), 0, -1)
        p += cmd("SCARD", "s%d" % (i % 13)) + cmd("ZRANGE", "z%d" % (i % 7), 0, -1)
        p += cmd("GET", "h%d" % (i % 9))  # WRONGTYPE
    compare(server, redis_reference, [p])


@pytest.mark.parametrize("value_size", [1, 100, 5000])
def test_values_of_every_size(server, redis_reference, value_size):
    p = b"".join(cmd("SET", "v%d" % i, b"%d" % i * value_size) for i in range(64))
    p += b"".join(cmd("GET", "v%d" % i) for i in range(64))
    p += b"".join(cmd("GETRANGE", "v%d" % i, 0, 9) for i in range(64))
    compare(server, redis_reference, [p])


def test_databases_flushed_and_swapped_in_the_middle_of_a_pipeline(server, redis_reference):
    def run(i):
        return b"".join(cmd("SET", "f%d" % j, "%d-%d" % (i, j)) for j in range(20)) + \
            b"".join(cmd("GET", "f%d" % j) for j in range(20))
    p = run(0) + cmd("SWAPDB", 0, 1) + run(1) + cmd("FLUSHALL", "ASYNC") + run(2)
    p += cmd("SELECT", 1) + run(3) + cmd("SWAPDB", 1, 0) + run(4) + cmd("FLUSHDB")
    p += run(5) + cmd("SELECT", 0) + b"".join(cmd("GET", "f%d" % j) for j in range(20))
    p += cmd("DBSIZE") + cmd("SELECT", 1) + cmd("DBSIZE") + cmd("SELECT", 0)
    compare(server, redis_reference, [p])
