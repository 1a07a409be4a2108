"""Key expiry: EXPIRE PEXPIRE EXPIREAT PEXPIREAT (NX XX GT LT), TTL PTTL, EXPIRETIME
PEXPIRETIME, PERSIST, lazy expiry on access and active (background) expiry.

Every expected value here was checked against redis-server 7.0.
redis-py strips the "ERR " prefix from error replies, so patterns below start after it.
Waits poll for the awaited event under a bounded deadline; no long fixed sleeps.
"""
import time

import pytest
import redis

from helpers import NOT_INT

NX_CONFLICT = "^NX and XX, GT or LT options at the same time are not compatible$"
GT_LT_CONFLICT = "^GT and LT options at the same time are not compatible$"

EXPIRE_CMDS = ["EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT"]


def wait_for(pred, timeout=10.0, interval=0.02):
    """Polls pred() until it is truthy or timeout seconds pass; returns the last value."""
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v or time.monotonic() >= deadline:
            return v
        time.sleep(interval)


def far_arg(cmd, seconds):
    """The argument that makes `cmd` set a TTL of about `seconds` from now."""
    now = time.time()
    return {
        "EXPIRE": seconds,
        "PEXPIRE": seconds * 1000,
        "EXPIREAT": int(now) + seconds,
        "PEXPIREAT": int(now * 1000) + seconds * 1000,
    }[cmd]


# ------------------------------------------------------ TTL PTTL basics

def test_ttl_pttl_missing_and_persistent(rc):
    assert rc.execute_command("TTL", "nokey") == -2
    assert rc.execute_command("PTTL", "nokey") == -2
    rc.execute_command("SET", "k", "v")
    assert rc.execute_command("TTL", "k") == -1
    assert rc.execute_command("PTTL", "k") == -1


def test_expiretime_missing_and_persistent(rc):
    assert rc.execute_command("EXPIRETIME", "nokey") == -2
    assert rc.execute_command("PEXPIRETIME", "nokey") == -2
    rc.execute_command("SET", "k", "v")
    assert rc.execute_command("EXPIRETIME", "k") == -1
    assert rc.execute_command("PEXPIRETIME", "k") == -1


def test_expire_and_pexpire(rc):
    rc.execute_command("SET", "k", "v")
    assert rc.execute_command("EXPIRE", "k", "100") == 1
    assert 99 <= rc.execute_command("TTL", "k") <= 100
    assert 98000 <= rc.execute_command("PTTL", "k") <= 100000
    assert rc.execute_command("PEXPIRE", "k", "50000") == 1
    assert 48000 <= rc.execute_command("PTTL", "k") <= 50000
    assert 49 <= rc.execute_command("TTL", "k") <= 50
    assert rc.execute_command("GET", "k") == "v"


def test_ttl_rounds_to_nearest_second(rc):
    # 2900 ms left reads as TTL 3 (rounded), not 2 (truncated).
    pipe = rc.pipeline(transaction=False)
    pipe.execute_command("SET", "k", "v", "PX", "2900")
    pipe.execute_command("TTL", "k")
    assert pipe.execute() == ["OK", 3]


def test_expireat_and_expiretime(rc):
    at = int(time.time()) + 1000
    rc.execute_command("SET", "k", "v")
    assert rc.execute_command("EXPIREAT", "k", at) == 1
    assert rc.execute_command("EXPIRETIME", "k") == at
    assert rc.execute_command("PEXPIRETIME", "k") == at * 1000
    assert 998 <= rc.execute_command("TTL", "k") <= 1000


def test_pexpireat_and_pexpiretime(rc):
    at_ms = int(time.time() * 1000) + 1000000 + 123
    rc.execute_command("SET", "k", "v")
    assert rc.execute_command("PEXPIREAT", "k", at_ms) == 1
    assert rc.execute_command("PEXPIRETIME", "k") == at_ms


def test_expiretime_rounds_milliseconds(rc):
    rc.execute_command("SET", "k", "v")
    rc.execute_command("PEXPIREAT", "k", "4000000000700")
    assert rc.execute_command("EXPIRETIME", "k") == 4000000001
    rc.execute_command("PEXPIREAT", "k", "4000000000499")
    assert rc.execute_command("EXPIRETIME", "k") == 4000000000
    assert rc.execute_command("PEXPIRETIME", "k") == 4000000000499


@pytest.mark.parametrize("cmd", EXPIRE_CMDS)
def test_expire_missing_key(rc, cmd):
    assert rc.execute_command(cmd, "nokey", far_arg(cmd, 100)) == 0
    assert rc.execute_command("EXISTS", "nokey") == 0


def test_expire_updates_existing_ttl(rc):
    rc.execute_command("SET", "k", "v", "EX", "100")
    assert rc.execute_command("EXPIRE", "k", "500") == 1
    assert 499 <= rc.execute_command("TTL", "k") <= 500
    assert rc.execute_command("EXPIRE", "k", "10") == 1
    assert 9 <= rc.execute_command("TTL", "k") <= 10


# ------------------------------------------------- past / negative times

@pytest.mark.parametrize("cmd,arg", [
    ("EXPIRE", "0"), ("EXPIRE", "-1"), ("PEXPIRE", "0"), ("PEXPIRE", "-1000"),
    ("EXPIREAT", "1"), ("EXPIREAT", "0"), ("EXPIREAT", "-5"),
    ("PEXPIREAT", "1"), ("PEXPIREAT", "-9223372036854775808"),
])
def test_past_expire_deletes_key(rc, cmd, arg):
    rc.execute_command("SET", "k", "v")
    assert rc.execute_command(cmd, "k", arg) == 1
    assert rc.execute_command("EXISTS", "k") == 0
    assert rc.execute_command("GET", "k") is None
    assert rc.execute_command("TTL", "k") == -2
    assert rc.execute_command("DBSIZE") == 0


def test_past_expire_respects_flags_first(rc):
    rc.execute_command("SET", "k", "v")
    # No TTL yet: GT and XX refuse, so the key survives.
    assert rc.execute_command("EXPIRE", "k", "0", "GT") == 0
    assert rc.execute_command("EXPIRE", "k", "-1", "XX") == 0
    assert rc.execute_command("EXISTS", "k") == 1
    assert rc.execute_command("EXPIRE", "k", "-1", "LT") == 1
    assert rc.execute_command("EXISTS", "k") == 0
    rc.execute_command("SET", "k", "v")
    assert rc.execute_command("EXPIRE", "k", "-1", "NX") == 1
    assert rc.execute_command("EXISTS", "k") == 0


# ------------------------------------------------------------ NX XX GT LT

@pytest.mark.parametrize("cmd", EXPIRE_CMDS)
def test_nx(rc, cmd):
    rc.execute_command("SET", "k", "v")
    assert rc.execute_command(cmd, "k", far_arg(cmd, 100), "NX") == 1
    assert 99 <= rc.execute_command("TTL", "k") <= 100
    assert rc.execute_command(cmd, "k", far_arg(cmd, 500), "NX") == 0
    assert 99 <= rc.execute_command("TTL", "k") <= 100


@pytest.mark.parametrize("cmd", EXPIRE_CMDS)
def test_xx(rc, cmd):
    rc.execute_command("SET", "k", "v")
    assert rc.execute_command(cmd, "k", far_arg(cmd, 100), "XX") == 0
    assert rc.execute_command("TTL", "k") == -1
    rc.execute_command("EXPIRE", "k", "100")
    assert rc.execute_command(cmd, "k", far_arg(cmd, 500), "XX") == 1
    assert 499 <= rc.execute_command("TTL", "k") <= 500


@pytest.mark.parametrize("cmd", EXPIRE_CMDS)
def test_gt(rc, cmd):
    rc.execute_command("SET", "k", "v")
    # A key without TTL counts as infinite: GT never applies to it.
    assert rc.execute_command(cmd, "k", far_arg(cmd, 100), "GT") == 0
    assert rc.execute_command("TTL", "k") == -1
    rc.execute_command("EXPIRE", "k", "100")
    assert rc.execute_command(cmd, "k", far_arg(cmd, 50), "GT") == 0
    assert 99 <= rc.execute_command("TTL", "k") <= 100
    assert rc.execute_command(cmd, "k", far_arg(cmd, 500), "GT") == 1
    assert 499 <= rc.execute_command("TTL", "k") <= 500


@pytest.mark.parametrize("cmd", EXPIRE_CMDS)
def test_lt(rc, cmd):
    rc.execute_command("SET", "k", "v")
    # A key without TTL counts as infinite: any LT time is lower.
    assert rc.execute_command(cmd, "k", far_arg(cmd, 500), "LT") == 1
    assert 499 <= rc.execute_command("TTL", "k") <= 500
    assert rc.execute_command(cmd, "k", far_arg(cmd, 1000), "LT") == 0
    assert 499 <= rc.execute_command("TTL", "k") <= 500
    assert rc.execute_command(cmd, "k", far_arg(cmd, 100), "LT") == 1
    assert 99 <= rc.execute_command("TTL", "k") <= 100


def test_xx_combined_with_gt_lt(rc):
    rc.execute_command("SET", "k", "v")
    assert rc.execute_command("EXPIRE", "k", "100", "XX", "GT") == 0
    assert rc.execute_command("EXPIRE", "k", "100", "LT", "XX") == 0
    assert rc.execute_command("TTL", "k") == -1
    rc.execute_command("EXPIRE", "k", "100")
    assert rc.execute_command("EXPIRE", "k", "200", "XX", "GT") == 1
    assert 199 <= rc.execute_command("TTL", "k") <= 200
    assert rc.execute_command("EXPIRE", "k", "50", "lt", "xx") == 1
    assert 49 <= rc.execute_command("TTL", "k") <= 50


def test_equal_time_is_neither_gt_nor_lt(rc):
    rc.execute_command("SET", "k", "v")
    rc.execute_command("PEXPIREAT", "k", "4000000000000")
    assert rc.execute_command("PEXPIREAT", "k", "4000000000000", "GT") == 0
    assert rc.execute_command("PEXPIREAT", "k", "4000000000000", "LT") == 0
    assert rc.execute_command("EXPIREAT", "k", "4000000000", "XX") == 1


@pytest.mark.parametrize("cmd", EXPIRE_CMDS)
@pytest.mark.parametrize("flags,pattern", [
    (["NX", "XX"], NX_CONFLICT),
    (["XX", "NX"], NX_CONFLICT),
    (["NX", "GT"], NX_CONFLICT),
    (["LT", "NX"], NX_CONFLICT),
    (["GT", "LT"], GT_LT_CONFLICT),
    (["lt", "gt"], GT_LT_CONFLICT),
])
def test_incompatible_flags(rc, cmd, flags, pattern):
    rc.execute_command("SET", "k", "v")
    with pytest.raises(redis.ResponseError, match=pattern):
        rc.execute_command(cmd, "k", far_arg(cmd, 100), *flags)
    assert rc.execute_command("TTL", "k") == -1


def test_unsupported_option(rc):
    rc.execute_command("SET", "k", "v")
    with pytest.raises(redis.ResponseError, match="^Unsupported option FOO$"):
        rc.execute_command("EXPIRE", "k", "100", "FOO")
    with pytest.raises(redis.ResponseError, match="^Unsupported option 2$"):
        rc.execute_command("PEXPIRE", "k", "100", "2")
    assert rc.execute_command("TTL", "k") == -1


def test_expire_error_lines(raw):
    c = raw()
    c.send(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"
           b"*5\r\n$6\r\nEXPIRE\r\n$1\r\nk\r\n$3\r\n100\r\n$2\r\nNX\r\n$2\r\nXX\r\n"
           b"*3\r\n$6\r\nEXPIRE\r\n$1\r\nk\r\n$1\r\nx\r\n")
    assert c.read_reply() == b"+OK\r\n"
    assert c.read_reply() == (b"-ERR NX and XX, GT or LT options at the same time are not"
                              b" compatible\r\n")
    assert c.read_reply() == b"-ERR value is not an integer or out of range\r\n"


# ----------------------------------------------------- argument errors

@pytest.mark.parametrize("cmd", EXPIRE_CMDS)
def test_non_integer_time(rc, cmd):
    rc.execute_command("SET", "k", "v")
    for bad in ("abc", "1.5", "", "9223372036854775808"):
        with pytest.raises(redis.ResponseError, match=NOT_INT):
            rc.execute_command(cmd, "k", bad)
    assert rc.execute_command("TTL", "k") == -1


@pytest.mark.parametrize("cmd,arg", [
    ("EXPIRE", "9223372036854775807"),
    ("EXPIRE", "9223372036854770"),       # fits as ms, overflows once "now" is added
    ("PEXPIRE", "9223372036854775807"),
    ("EXPIREAT", "9223372036854775807"),
])
def test_expire_time_overflow(rc, cmd, arg):
    rc.execute_command("SET", "k", "v")
    with pytest.raises(redis.ResponseError,
                       match="^invalid expire time in '%s' command$" % cmd.lower()):
        rc.execute_command(cmd, "k", arg)
    assert rc.execute_command("TTL", "k") == -1


def test_pexpireat_int64_max_is_accepted(rc):
    rc.execute_command("SET", "k", "v")
    assert rc.execute_command("PEXPIREAT", "k", "9223372036854775807") == 1
    assert rc.execute_command("PEXPIRETIME", "k") == 9223372036854775807
    assert rc.execute_command("GET", "k") == "v"


# ---------------------------------------------------------------- PERSIST

def test_persist(rc):
    assert rc.execute_command("PERSIST", "nokey") == 0
    rc.execute_command("SET", "k", "v")
    assert rc.execute_command("PERSIST", "k") == 0
    rc.execute_command("EXPIRE", "k", "100")
    assert rc.execute_command("PERSIST", "k") == 1
    assert rc.execute_command("TTL", "k") == -1
    assert rc.execute_command("EXPIRETIME", "k") == -1
    assert rc.execute_command("PERSIST", "k") == 0
    assert rc.execute_command("GET", "k") == "v"


# ---------------------------------------- which writes keep or clear a TTL

def test_set_overwrite_clears_ttl(rc):
    rc.execute_command("SET", "k", "v", "EX", "100")
    rc.execute_command("SET", "k", "v2")
    assert rc.execute_command("TTL", "k") == -1


def test_set_keepttl_keeps_ttl(rc):
    rc.execute_command("SET", "k", "v", "PX", "100000")
    rc.execute_command("SET", "k", "v2", "KEEPTTL")
    assert 98000 <= rc.execute_command("PTTL", "k") <= 100000


def test_del_then_set_has_no_ttl(rc):
    rc.execute_command("SET", "k", "v", "EX", "100")
    rc.execute_command("DEL", "k")
    rc.execute_command("SET", "k", "v")
    assert rc.execute_command("TTL", "k") == -1


def test_in_place_modifications_keep_ttl(rc):
    rc.execute_command("SET", "n", "1", "EX", "100")
    rc.execute_command("SET", "s", "a", "EX", "100")
    rc.execute_command("INCRBY", "n", "5")
    rc.execute_command("APPEND", "s", "b")
    rc.execute_command("SETRANGE", "s", "0", "z")
    assert 99 <= rc.execute_command("TTL", "n") <= 100
    assert 99 <= rc.execute_command("TTL", "s") <= 100


# ------------------------------------------------------------ lazy expiry

def test_key_gone_after_px_passes(rc):
    rc.execute_command("SET", "k", "v", "PX", "50")
    rc.execute_command("SET", "keep", "v")
    time.sleep(0.1)
    assert rc.execute_command("GET", "k") is None
    assert rc.execute_command("EXISTS", "k") == 0
    assert rc.execute_command("TTL", "k") == -2
    assert rc.execute_command("PTTL", "k") == -2
    assert rc.execute_command("EXPIRETIME", "k") == -2
    assert rc.execute_command("DBSIZE") == 1


def test_expired_keys_invisible_to_every_read(rc):
    rc.execute_command("MSET", *[x for i in range(20) for x in ("keep:%d" % i, "v")])
    for i in range(20):
        rc.execute_command("SET", "gone:%d" % i, "v", "PX", "30")
    time.sleep(0.1)
    assert sorted(rc.execute_command("KEYS", "*")) == sorted("keep:%d" % i for i in range(20))
    assert rc.execute_command("MGET", "gone:0", "keep:0") == [None, "v"]
    assert rc.execute_command("EXISTS", "gone:1", "gone:2", "keep:1") == 1
    assert rc.execute_command("TYPE", "gone:3") == "none"
    assert rc.execute_command("STRLEN", "gone:4") == 0
    seen, cursor = set(), "0"
    while True:
        cursor, keys = rc.execute_command("SCAN", cursor, "COUNT", "7")
        seen.update(keys)
        if cursor == "0":
            break
    assert seen == {"keep:%d" % i for i in range(20)}


def test_writes_to_expired_key_start_fresh(rc):
    rc.execute_command("SET", "a", "41", "PX", "30")
    rc.execute_command("SET", "b", "x", "PX", "30")
    rc.execute_command("SET", "c", "x", "PX", "30")
    rc.execute_command("SET", "d", "x", "PX", "30")
    time.sleep(0.1)
    assert rc.execute_command("INCR", "a") == 1
    assert rc.execute_command("APPEND", "b", "y") == 1
    assert rc.execute_command("SETNX", "c", "new") == 1
    assert rc.execute_command("SET", "d", "new", "NX") == "OK"
    for k in "abcd":
        assert rc.execute_command("TTL", k) == -1
    assert rc.execute_command("EXPIRE", "e", "100") == 0


def test_expire_then_key_disappears_on_its_own(rc):
    rc.execute_command("SET", "k", "v")
    rc.execute_command("PEXPIRE", "k", "100")
    assert wait_for(lambda: rc.execute_command("EXISTS", "k") == 0, timeout=5)


def test_rename_of_expired_key(rc):
    rc.execute_command("SET", "k", "v", "PX", "30")
    time.sleep(0.1)
    with pytest.raises(redis.ResponseError, match="^no such key$"):
        rc.execute_command("RENAME", "k", "k2")


# ---------------------------------------------------------- active expiry

def test_active_expiry_removes_untouched_keys(rc):
    pipe = rc.pipeline(transaction=False)
    for i in range(1000):
        pipe.execute_command("SET", "vol:%d" % i, "v", "PX", "100")
    pipe.execute_command("SET", "persistent", "v")
    pipe.execute()
    # DBSIZE does not touch keys, so only the background cycle can shrink it.
    final = wait_for(lambda: rc.execute_command("DBSIZE") == 1, timeout=10)
    assert final, "DBSIZE still %s after 10 s" % rc.execute_command("DBSIZE")
    assert rc.execute_command("GET", "persistent") == "v"


def test_active_expiry_counts_in_info(server):
    c = server.client(decode_responses=True)
    try:
        before = c.info("stats")["expired_keys"]
        pipe = c.pipeline(transaction=False)
        for i in range(1000):
            pipe.set("vol:%d" % i, "v", px=100)
        pipe.execute()
        ks = c.info("keyspace")
        assert ks["db0"]["keys"] == 1000 and ks["db0"]["expires"] == 1000

        def done():
            return c.info("stats")["expired_keys"] - before >= 1000

        assert wait_for(done, timeout=10)
        assert c.info("stats")["expired_keys"] - before == 1000
        assert "db0" not in c.info("keyspace")
        assert c.dbsize() == 0
    finally:
        c.close()


def test_lazy_expiry_counts_in_info(server):
    c = server.client(decode_responses=True)
    try:
        before = c.info("stats")["expired_keys"]
        for i in range(5):
            c.set("k%d" % i, "v", px=20)
        time.sleep(0.08)
        for i in range(5):
            assert c.get("k%d" % i) is None
        assert c.info("stats")["expired_keys"] - before == 5
    finally:
        c.close()
