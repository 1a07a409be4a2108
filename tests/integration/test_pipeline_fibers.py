"""Pipelines of commands over several shards.

A command whose keys live on several shards (an MGET or MSET of keys on different
workers) is coordinated by a fiber, and the connection reads its next request only once
the fiber has finished. A pipeline of them still leaves in one write, as a pipeline of
single-key commands does (and as Redis writes the replies of one read's commands): the
replies already written wait for the fiber when it is one that finishes on its own. A
blocking command does not: the replies before it go out while it waits."""
import socket

from helpers import read_exactly, resp as cmd, wait_for

import pytest

KEYS = ["pf:%d" % i for i in range(10)]
DEPTH = 16


def writes(r):
    return r.info("stats")["total_writes_processed"]


@pytest.mark.parametrize("kind", ["mget", "mset", "exists", "del"])
def test_a_pipeline_over_several_shards_leaves_in_one_write(r, server, kind):
    r.mset({k: "v%d" % i for i, k in enumerate(KEYS)})
    if kind == "mget":
        request = cmd("MGET", *KEYS)
        reply = b"*10\r\n" + b"".join(b"$2\r\nv%d\r\n" % i for i in range(10))
    elif kind == "mset":
        request = cmd("MSET", *[x for i, k in enumerate(KEYS) for x in (k, "w%d" % i)])
        reply = b"+OK\r\n"
    elif kind == "exists":
        request = cmd("EXISTS", *KEYS, "pf:none")
        reply = b":10\r\n"
    else:
        request = cmd("DEL", *KEYS)
        reply = b":0\r\n"
    before = writes(r)
    s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    try:
        if kind == "del":
            # The first DEL removes the ten keys, the others find none.
            s.sendall(request * DEPTH)
            got = read_exactly(s, len(b":10\r\n") + len(reply) * (DEPTH - 1))
            assert got == b":10\r\n" + reply * (DEPTH - 1)
        else:
            s.sendall(request * DEPTH)
            assert read_exactly(s, len(reply) * DEPTH) == reply * DEPTH
    finally:
        s.close()
    # One write for the pipeline (two or three if its bytes came in several reads), and
    # one for the INFO reply counted in `before`; a write per command would be 17.
    assert writes(r) - before <= 5


def test_a_blocking_command_does_not_hold_the_replies_before_it(r, server):
    r.delete("pf:list")
    s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    try:
        s.sendall(cmd("MSET", *[x for k in KEYS for x in (k, "x")]) + cmd("GET", KEYS[0]) +
                  cmd("BLPOP", "pf:list", "0"))
        # Both replies before the BLPOP arrive while it waits.
        assert read_exactly(s, len(b"+OK\r\n$1\r\nx\r\n")) == b"+OK\r\n$1\r\nx\r\n"
        wait_for(lambda: r.info("clients")["blocked_clients"] == 1, what="the BLPOP waiting")
        r.rpush("pf:list", "item")
        want = b"*2\r\n$7\r\npf:list\r\n$4\r\nitem\r\n"
        assert read_exactly(s, len(want)) == want
    finally:
        s.close()
