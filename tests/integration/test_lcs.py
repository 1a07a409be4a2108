"""LCS, side by side with redis-server: the string, LEN, IDX with MINMATCHLEN and
WITHMATCHLEN (the matches in Redis's order), RESP3's map, and the errors."""
import random

import pytest

from helpers import resp, roundtrip, same
from conftest import TARGET, RawConnection


def test_lcs_forms(pair):
    same(pair, "MSET", "{l}a", "ohmytext", "{l}b", "mynewtext")
    for opts in [(), ("LEN",), ("IDX",), ("IDX", "MINMATCHLEN", 4), ("IDX", "WITHMATCHLEN"),
                 ("IDX", "MINMATCHLEN", 2, "WITHMATCHLEN"), ("idx", "minmatchlen", -5),
                 ("LEN", "IDX"), ("IDX", "MINMATCHLEN"), ("IDX", "MINMATCHLEN", "x"),
                 ("FOO",), ("LEN", "LEN")]:
        same(pair, "LCS", "{l}a", "{l}b", *opts)
    same(pair, "LCS", "{l}a", "{l}missing")
    same(pair, "LCS", "{l}missing", "{l}nothing", "IDX")
    same(pair, "LCS", "{l}a", "{l}a", "IDX", "WITHMATCHLEN")
    same(pair, "RPUSH", "{l}list", "x")
    same(pair, "LCS", "{l}a", "{l}list")
    same(pair, "LCS", "{l}list", "{l}a", "FOO")  # the type is checked first
    same(pair, "LCS", "{l}a")


def test_lcs_past_its_memory_bound_is_refused(pair):
    """The table is 4 bytes per pair of positions: 12000 x 12000 bytes pass 512 MB."""
    same(pair, "MSET", "{b}a", "x" * 12000, "{b}b", "y" * 12000)
    for opts in [(), ("LEN",), ("IDX",)]:
        same(pair, "LCS", "{b}a", "{b}b", *opts)


def test_lcs_random_strings(pair):
    rnd = random.Random(3)
    for n in range(60):
        a = "".join(rnd.choice("ACGT") for _ in range(rnd.randrange(0, 60)))
        b = "".join(rnd.choice("ACGT") for _ in range(rnd.randrange(0, 60)))
        same(pair, "MSET", "{r}a", a, "{r}b", b)
        same(pair, "LCS", "{r}a", "{r}b")
        same(pair, "LCS", "{r}a", "{r}b", "LEN")
        same(pair, "LCS", "{r}a", "{r}b", "IDX", "MINMATCHLEN", rnd.randrange(4),
             "WITHMATCHLEN")


def test_lcs_resp3(server, redis_reference):
    """IDX in RESP3 is a map: the same bytes from both servers."""
    replies = []
    for s in (server, redis_reference):
        conn = RawConnection(s.port)
        roundtrip(conn, resp("HELLO", 3))
        roundtrip(conn, resp("MSET", "x{3}", "ohmytext", "y{3}", "mynewtext"))
        replies.append(roundtrip(conn, resp("LCS", "x{3}", "y{3}", "IDX", "WITHMATCHLEN")))
        conn.close()
    assert replies[0] == replies[1]
    assert replies[0].startswith(b"%2\r\n")


@pytest.mark.skipif(TARGET == "redis", reason="strata's shards")
def test_lcs_across_shards(server_factory):
    c = server_factory(threads=3).client()
    c.set("lcs:one", "ohmytext")
    c.set("lcs:two", "mynewtext")
    # Some pair of these lands on two shards; each gives the same answer.
    for k in ("lcs:two", "lcs:three", "lcs:four", "lcs:five"):
        c.set(k, "mynewtext")
        assert c.execute_command("LCS", "lcs:one", k) == b"mytext"
        assert c.execute_command("LCS", "lcs:one", k, "LEN") == 6
    assert int(c.info("stats")["multi_shard_commands"]) > 0
    c.close()
