"""Bitmaps: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD and BITFIELD_RO, with Redis
7's replies and errors. Most checks run the same commands on the target and on a real
redis-server beside it and compare every reply, errors included; the rest pin down
what only the target can show (in-place growth, BITOP's atomicity across shards).
"""
import random
import threading
import time

import pytest

from helpers import same, shard_of
from conftest import TARGET


def test_setbit_getbit(pair):
    assert same(pair, "SETBIT", "k", 7, 1) == 0
    assert same(pair, "SETBIT", "k", 7, 1) == 1
    assert same(pair, "GET", "k") == b"\x01"
    same(pair, "SETBIT", "k", 100, 1)  # grows with zero bytes
    assert same(pair, "STRLEN", "k") == 13
    for off in (0, 7, 8, 100, 101, 10 ** 6):
        same(pair, "GETBIT", "k", off)
    same(pair, "GETBIT", "missing", 5)
    same(pair, "SETBIT", "z", 50, 0)  # a clear bit still creates the key
    assert same(pair, "GET", "z") == b"\x00" * 7
    # Offsets and bit values Redis refuses.
    for off in (-1, "x", "1.5", 2 ** 32, 2 ** 40, ""):
        same(pair, "SETBIT", "k", off, 1)
        same(pair, "GETBIT", "k", off)
    same(pair, "SETBIT", "k", 2 ** 32 - 1, 0)  # the last bit of 512 MB: fine
    for bit in (2, -1, "01", "a", "", "1 "):
        same(pair, "SETBIT", "k", 1, bit)
    same(pair, "RPUSH", "list", "x")
    same(pair, "SETBIT", "list", 1, 1)
    same(pair, "GETBIT", "list", 1)
    same(pair, "SETBIT", "k", 1)  # arity


def test_bits_of_text_values(pair):
    """Text values (which the target stores packed) read and change as bytes."""
    text = "The quick brown fox jumps over the lazy dog, " * 20
    same(pair, "SET", "t", text)
    for off in (0, 1, 7, 8, 100, 4000, 7199, 7200, 9999):
        same(pair, "GETBIT", "t", off)
    same(pair, "BITCOUNT", "t")
    same(pair, "BITCOUNT", "t", 3, 400)
    same(pair, "BITPOS", "t", 1, 100)
    same(pair, "BITPOS", "t", 0, 17, 21)
    same(pair, "SETBIT", "t", 0, 1)  # a byte past 0x7f: no longer text
    same(pair, "SETBIT", "t", 9, 1)
    same(pair, "GET", "t")
    same(pair, "BITCOUNT", "t")


def test_bitcount(pair):
    same(pair, "SET", "s", "foobar")
    for args in [(), (0, 0), (1, 1), (0, -1), (-2, -1), (-1, -2), (5, 30), (-100, 100),
                 (-100, -200), (2, 1), (0, 0, "BYTE"), (5, 30, "BIT"), (-5, -1, "bit"),
                 (1, 100, "BIT"), (-100, -3, "BIT"), (3, 3, "bit"), (0, 0, "bits"),
                 (0,), (0, 1, "BIT", "x"), ("a", 1), (1, "b")]:
        same(pair, "BITCOUNT", "s", *args)
    # Redis 7.0 looks the key up first: a missing key is 0 whatever follows.
    same(pair, "BITCOUNT", "missing")
    same(pair, "BITCOUNT", "missing", 0)
    same(pair, "BITCOUNT", "missing", "a", "b")
    same(pair, "APPEND", "empty", "")
    same(pair, "BITCOUNT", "empty")
    same(pair, "BITCOUNT", "empty", 0, -1)
    same(pair, "RPUSH", "list", "x")
    same(pair, "BITCOUNT", "list")


def test_bitpos(pair):
    same(pair, "SET", "s", b"\xff\xf0\x00")
    same(pair, "SET", "ones", b"\xff\xff\xff")
    same(pair, "SET", "zeros", b"\x00\x00\x00")
    for key in ("s", "ones", "zeros"):
        for args in [(0,), (1,), (0, 0), (1, 2), (0, 1), (0, -1), (1, -1), (0, 0, -1),
                     (1, 2, -1), (0, 1, 1), (0, 2, 1), (1, -2, -1), (0, -100, -200),
                     (1, -100, -200), (0, 0, 0, "BIT"), (1, 7, 15, "BIT"),
                     (0, 7, 15, "bit"), (0, 12, 12, "BIT"), (1, 12, -1, "BIT"),
                     (0, 20, "BIT"), (1, 0, 23, "byte"), (0, 5, 3), (1, 5, 3, "BIT"),
                     (2,), (-1,), ("x",), (1, "a"), (1, 0, "b"), (1, 0, 1, "BITS"),
                     (1, 0, 1, "BIT", "x")]:
            same(pair, "BITPOS", key, *args)
    same(pair, "BITPOS", "missing", 0)
    same(pair, "BITPOS", "missing", 1)
    same(pair, "BITPOS", "missing", 2)
    same(pair, "APPEND", "empty", "")
    same(pair, "BITPOS", "empty", 0)
    same(pair, "BITPOS", "empty", 1)


def test_bitop(pair):
    same(pair, "SET", "a", b"\xff\x0f\x01")
    same(pair, "SET", "b", b"\x0f")
    same(pair, "SET", "c", b"abcdefghijklmnopqrstuvwxyz0123456789")
    for op in ("AND", "OR", "XOR", "and", "Or"):
        assert same(pair, "BITOP", op, "d", "a", "b", "c", "missing") is not None
        same(pair, "GET", "d")
    same(pair, "BITOP", "NOT", "d", "c")
    same(pair, "GET", "d")
    same(pair, "BITOP", "NOT", "d", "a", "b")
    same(pair, "BITOP", "NAND", "d", "a")
    same(pair, "BITOP", "AND", "a", "a", "b")  # the destination is a source
    same(pair, "GET", "a")
    # Nothing but missing or empty sources: the destination goes.
    same(pair, "SET", "d", "old")
    same(pair, "BITOP", "OR", "d", "nope", "nada")
    same(pair, "EXISTS", "d")
    same(pair, "SET", "d", "old")
    same(pair, "EXPIRE", "d", 100)
    same(pair, "BITOP", "OR", "d", "b")
    same(pair, "TTL", "d")  # overwritten: no TTL
    same(pair, "RPUSH", "list", "x")
    same(pair, "BITOP", "AND", "d", "a", "list")
    same(pair, "BITOP", "AND", "list", "a")  # a destination of another type is replaced
    same(pair, "TYPE", "list")


def test_bitfield(pair):
    same(pair, "BITFIELD", "f", "SET", "i8", 0, 100, "GET", "i8", 0, "GET", "u4", 0)
    same(pair, "BITFIELD", "f", "INCRBY", "i8", 0, 100)
    same(pair, "BITFIELD", "f", "OVERFLOW", "SAT", "INCRBY", "i8", 0, 100, "GET", "i8", 0)
    same(pair, "BITFIELD", "f", "OVERFLOW", "FAIL", "INCRBY", "i8", 0, 100, "GET", "i8", 0)
    same(pair, "BITFIELD", "f", "OVERFLOW", "WRAP", "INCRBY", "u2", 100, 1, "INCRBY", "u2",
         100, 1, "INCRBY", "u2", 100, 1, "INCRBY", "u2", 100, 1)
    same(pair, "BITFIELD", "f", "OVERFLOW", "FAIL", "SET", "u8", "#3", 300, "SET", "u8", "#3",
         -1, "OVERFLOW", "SAT", "SET", "u8", "#4", 300, "SET", "i8", "#5", -300)
    same(pair, "BITFIELD", "f", "SET", "i64", 5, -1, "GET", "u63", 5, "GET", "i64", 5,
         "INCRBY", "i64", 5, 2 ** 63 - 1, "GET", "i64", 5)
    same(pair, "BITFIELD", "f", "SET", "u63", 70, 2 ** 63 - 1, "INCRBY", "u63", 70, 1)
    same(pair, "BITFIELD", "f", "GET", "u16", "#1000")  # past the end: zeros
    same(pair, "GET", "f")
    same(pair, "BITFIELD", "f")  # no operations
    same(pair, "BITFIELD", "missing", "GET", "i8", 0)
    same(pair, "EXISTS", "missing")
    same(pair, "BITFIELD_RO", "f", "GET", "i8", 0, "GET", "u8", 3)
    same(pair, "BITFIELD_RO", "f", "SET", "i8", 0, 1)
    same(pair, "BITFIELD_RO", "f", "INCRBY", "i8", 0, 1)
    same(pair, "BITFIELD_RO", "f", "OVERFLOW", "SAT")
    for bad in [("GET", "i65", 0), ("GET", "u64", 0), ("GET", "x8", 0), ("GET", "i0", 0),
                ("GET", "i8", -1), ("GET", "i8", "#-1"), ("GET", "i8", "x"),
                ("SET", "i8", 0, "x"), ("INCRBY", "i8", 0), ("OVERFLOW", "MAYBE"),
                ("FROB", "i8", 0), ("GET", "i8"), ("GET", "i8", 2 ** 32),
                ("SET", "i8", 2 ** 32, 1), ("GET", "i8", "#" + str(2 ** 29))]:
        same(pair, "BITFIELD", "f", *bad)
    same(pair, "RPUSH", "list", "x")
    same(pair, "BITFIELD", "list", "GET", "i8", 0)
    same(pair, "BITFIELD", "list", "SET", "i8", 0, 1)


def test_random_bit_commands_match_redis(pair):
    rnd = random.Random(42)
    keys = ["{r}a", "{r}b", "{r}c"]
    for _ in range(1500):
        k = rnd.choice(keys)
        op = rnd.randrange(10)
        off = rnd.choice([rnd.randrange(64), rnd.randrange(2000)])
        if op == 0:
            same(pair, "SETBIT", k, off, rnd.randrange(2))
        elif op == 1:
            same(pair, "GETBIT", k, off)
        elif op == 2:
            same(pair, "BITCOUNT", k, rnd.randrange(-40, 40), rnd.randrange(-40, 40),
                 rnd.choice(["BYTE", "BIT"]))
        elif op == 3:
            args = [rnd.randrange(-30, 30), rnd.randrange(-30, 30), rnd.choice(["BYTE", "BIT"])]
            same(pair, "BITPOS", k, rnd.randrange(2), *args[:rnd.randrange(4)])
        elif op == 4:
            same(pair, "BITOP", rnd.choice(["AND", "OR", "XOR"]), rnd.choice(keys),
                 *rnd.sample(keys, rnd.randrange(1, 4)))
        elif op == 5:
            t = rnd.choice(["i", "u"]) + str(rnd.randrange(1, 64))
            same(pair, "BITFIELD", k, "OVERFLOW", rnd.choice(["WRAP", "SAT", "FAIL"]),
                 rnd.choice(["SET", "INCRBY"]), t, off, rnd.randrange(-300, 300), "GET", t, off)
        elif op == 6:
            same(pair, "SETRANGE", k, rnd.randrange(300), "xyz" * rnd.randrange(5))
        elif op == 7:
            same(pair, "APPEND", k, rnd.choice(["abc", "\xff\x00", "q" * 40]))
        elif op == 8:
            same(pair, "BITOP", "NOT", k, rnd.choice(keys))
        else:
            same(pair, "GET", k)


def test_setbit_on_a_big_bitmap_is_in_place(server, r):
    """SETBIT inside a 16 MB bitmap, and APPEND to a growing string, each cost about the
    same whatever the value's size (a copy per call took seconds here)."""
    bits = 16 * 8 * 1024 * 1024
    r.setbit("big", bits - 1, 1)
    offsets = [(i * 7919) % bits for i in range(20000)]
    p = r.pipeline(transaction=False)
    for off in offsets:
        p.setbit("big", off, 1)
    start = time.monotonic()
    p.execute()
    assert time.monotonic() - start < 10
    assert r.bitcount("big") == len(set(offsets) | {bits - 1})
    p = r.pipeline(transaction=False)
    for i in range(50000):
        p.append("log", "x" * 99 + "\n")
    start = time.monotonic()
    p.execute()
    assert time.monotonic() - start < 10
    assert r.strlen("log") == 50000 * 100


def test_setrange_and_append_keep_the_ttl(pair):
    same(pair, "SET", "k", "hello world, a longer value", "EX", 100)
    same(pair, "SETRANGE", "k", 6, "WORLD")
    same(pair, "APPEND", "k", "!")
    same(pair, "GET", "k")
    same(pair, "TTL", "k")
    same(pair, "SETRANGE", "new", 5, "x")
    same(pair, "GET", "new")
    same(pair, "SETRANGE", "none", 5, "")
    same(pair, "EXISTS", "none")


@pytest.mark.skipif(TARGET == "redis", reason="strata's shards")
def test_bitop_across_shards_is_atomic(server_factory):
    """A writer flips one bit in each of two keys on different shards inside MULTI, so
    exactly one of them is set at every instant. BITOP XOR over both, run all along
    from another client, must always see exactly one: a torn read would give 0."""
    s = server_factory(threads=3)
    c = s.client()
    a = "atomic{0}"
    b = next("atomic{%d}" % i for i in range(1, 1000)
             if shard_of(c, "atomic{%d}" % i) != shard_of(c, a))
    c.setbit(a, 0, 1)
    c.setbit(b, 0, 0)
    before = int(c.info("stats")["multi_shard_commands"])
    stop = threading.Event()
    errors = []

    def writer():
        w = s.client()
        try:
            state = 0
            while not stop.is_set():
                p = w.pipeline(transaction=True)
                p.setbit(a, 0, state)
                p.setbit(b, 0, 1 - state)
                p.execute()
                state = 1 - state
        except Exception as e:  # pragma: no cover
            errors.append(repr(e))
        finally:
            w.close()

    t = threading.Thread(target=writer)
    t.start()
    try:
        for _ in range(400):
            assert c.execute_command("BITOP", "XOR", "out{0}", a, b) == 1
            assert c.getbit("out{0}", 0) == 1
    finally:
        stop.set()
        t.join(10)
    assert not errors, errors
    assert int(c.info("stats")["multi_shard_commands"]) >= before + 400
    c.close()
