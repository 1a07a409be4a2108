"""DEBUG POPULATE count [prefix] [size]: the keys, values, errors and the keys it leaves
alone, side by side with redis-server (both started with enable-debug-command yes)."""
import pytest

from conftest import TARGET
from helpers import same, start_redis_server

DEBUG_ON = ["--enable-debug-command", "yes"]


@pytest.fixture
def debug_pair(server_factory):
    s = server_factory(extra_args=DEBUG_ON)
    r = start_redis_server(extra_args=DEBUG_ON)
    a, b = s.client(), r.client()
    yield a, b
    a.close()
    b.close()
    r.stop()


def contents(c):
    return {k: c.get(k) for k in c.keys("*")}


@pytest.mark.parametrize("args", [
    ("DEBUG", "POPULATE"),
    ("DEBUG", "POPULATE", "x"),
    ("DEBUG", "POPULATE", "-1"),
    ("DEBUG", "POPULATE", "2", "r", "-1"),
    ("DEBUG", "POPULATE", "2", "r", "x"),
    ("DEBUG", "POPULATE", "2", "r", "5", "extra"),
    ("DEBUG", "POPULATE", "0"),
])
def test_populate_arguments_as_redis(debug_pair, args):
    same(debug_pair, *args)


def test_populate_makes_the_same_keys_as_redis_and_leaves_existing_ones(debug_pair):
    for c in debug_pair:
        c.set("key:1", "mine")
        c.set("p:2", "other")
    same(debug_pair, "DEBUG", "POPULATE", "50")
    same(debug_pair, "DEBUG", "POPULATE", "20", "p", "12")  # padded with zero bytes
    same(debug_pair, "DEBUG", "POPULATE", "5", "q", "3")  # cut
    same(debug_pair, "DEBUG", "POPULATE", "4", "z", "0")  # 0: the plain value
    same(debug_pair, "DEBUG", "POPULATE", "30")  # all there already
    a, b = debug_pair
    assert a.dbsize() == b.dbsize() == 79
    assert contents(a) == contents(b)
    assert a.get("key:1") == b"mine" and a.get("p:2") == b"other"
    assert a.get("p:3") == b"value:3" + b"\0" * 5 and a.get("q:4") == b"val"


def test_populate_of_many_keys_spans_every_shard(server_factory):
    s = server_factory(extra_args=DEBUG_ON)
    c = s.client()
    assert c.execute_command("DEBUG", "POPULATE", "100000", "big", "16") in (b"OK", True)
    assert c.dbsize() == 100000
    assert c.get("big:99999") == b"value:99999" + b"\0" * 5
    assert c.strlen("big:0") == 16


@pytest.mark.skipif(TARGET == "redis", reason="Redis allocates whatever size is asked")
def test_populate_value_size_is_bounded(server_factory):
    s = server_factory(extra_args=DEBUG_ON + ["--proto-max-bulk-len", "1mb"])
    c = s.client()
    with pytest.raises(Exception, match="exceeds maximum allowed size"):
        c.execute_command("DEBUG", "POPULATE", "1", "k", str(2 * 1024 * 1024))
    assert c.dbsize() == 0
