"""Geo: GEOADD, GEODIST, GEOHASH, GEOPOS, GEOSEARCH, GEOSEARCHSTORE, GEORADIUS,
GEORADIUSBYMEMBER and the _RO forms. The target and a real redis-server get the same
commands and must give the same replies, errors included, value for value: a geo key is a
sorted set of 52-bit geohash scores, and every distance and coordinate is printed from the
same arithmetic."""
import random

import pytest

from conftest import TARGET, RawConnection
from helpers import resp, roundtrip, same

SICILY = ["13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania"]


def random_points(n, seed, centre=None, spread=None):
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        if centre is None:
            lon = rnd.uniform(-180, 180)
            lat = rnd.uniform(-85.05, 85.05)
        else:
            lon = min(180, max(-180, centre[0] + rnd.uniform(-spread, spread)))
            lat = min(85.05, max(-85.05, centre[1] + rnd.uniform(-spread, spread)))
        out += ["%.6f" % lon, "%.6f" % lat, "m%d:%d" % (seed, i)]
    return out


def test_sicily_example(pair):
    assert same(pair, "GEOADD", "Sicily", *SICILY) == 2
    same(pair, "GEODIST", "Sicily", "Palermo", "Catania")
    same(pair, "GEODIST", "Sicily", "Palermo", "Catania", "km")
    same(pair, "GEODIST", "Sicily", "Palermo", "Catania", "MI")
    same(pair, "GEODIST", "Sicily", "Palermo", "Catania", "ft")
    same(pair, "GEODIST", "Sicily", "Palermo", "nosuch")
    same(pair, "GEODIST", "nokey", "Palermo", "Catania")
    same(pair, "GEOHASH", "Sicily", "Palermo", "Catania", "nosuch")
    same(pair, "GEOHASH", "nokey", "a")
    same(pair, "GEOHASH", "Sicily")
    same(pair, "GEOPOS", "Sicily", "Palermo", "Catania", "nosuch")
    same(pair, "GEOPOS", "nokey", "a", "b")
    same(pair, "ZRANGE", "Sicily", 0, -1, "WITHSCORES")
    same(pair, "GEORADIUS", "Sicily", 15, 37, 200, "km", "WITHDIST", "WITHCOORD", "WITHHASH")
    same(pair, "GEORADIUS", "Sicily", 15, 37, 200, "km", "DESC")
    same(pair, "GEORADIUSBYMEMBER", "Sicily", "Palermo", 200, "km", "WITHDIST", "ASC")
    same(pair, "GEOSEARCH", "Sicily", "FROMLONLAT", 15, 37, "BYBOX", 400, 400, "km", "ASC",
         "WITHCOORD", "WITHDIST")
    same(pair, "GEOSEARCH", "Sicily", "FROMMEMBER", "Catania", "BYRADIUS", 100, "km")


def test_geoadd_options(pair):
    same(pair, "GEOADD", "g", *SICILY)
    same(pair, "GEOADD", "g", "NX", "13.0", "38.0", "Palermo", "14", "38", "Messina")
    same(pair, "GEOPOS", "g", "Palermo", "Messina")
    same(pair, "GEOADD", "g", "XX", "13.5", "38.0", "Palermo", "12", "37", "Trapani")
    same(pair, "GEOPOS", "g", "Palermo", "Trapani")
    same(pair, "GEOADD", "g", "CH", "13.6", "38.0", "Palermo", "12", "37", "Trapani")
    same(pair, "GEOADD", "g", "XX", "CH", "13.6", "38.0", "Palermo", "13.7", "38", "Messina")
    same(pair, "GEOADD", "g", "ch", "xx", "13.6", "38.0", "Palermo")
    same(pair, "ZCARD", "g")
    same(pair, "GEOADD", "g", "13.361389", "38.115556", "Palermo")  # unchanged: 0
    # A geo key is a sorted set: sorted-set commands work on it.
    same(pair, "ZSCORE", "g", "Palermo")
    same(pair, "ZREM", "g", "Messina")
    same(pair, "TYPE", "g")


def test_geoadd_errors(pair):
    same(pair, "SET", "str", "x")
    same(pair, "GEOADD", "g", "1", "2")
    same(pair, "GEOADD", "g", "1", "2", "a", "3")
    same(pair, "GEOADD", "g", "NX", "XX", "1", "2", "a")
    same(pair, "GEOADD", "g", "CH", "NX", "XX")
    same(pair, "GEOADD", "g", "CH", "CH", "CH")
    same(pair, "GEOADD", "g", "GT", "1", "2", "a")
    same(pair, "GEOADD", "g", "abc", "2", "a")
    same(pair, "GEOADD", "g", "1", "2x", "a")
    same(pair, "GEOADD", "g", "200", "10", "a")
    same(pair, "GEOADD", "g", "10", "86", "a")
    same(pair, "GEOADD", "g", "-180.5", "-85.1", "a")
    same(pair, "GEOADD", "g", "1", "2", "ok", "1", "99", "bad")  # nothing added
    same(pair, "EXISTS", "g")
    same(pair, "GEOADD", "str", "1", "2", "a")
    same(pair, "GEOADD", "str", "1", "200", "a")  # the coordinates are checked first
    same(pair, "GEOADD", "g", "inf", "2", "a")
    same(pair, "GEOADD", "g", "nan", "2", "a")
    same(pair, "GEOADD", "g", "180", "85.05112878", "corner", "-180", "-85.05112878", "other")
    same(pair, "GEOPOS", "g", "corner", "other")
    same(pair, "GEOHASH", "g", "corner", "other")


def test_read_errors(pair):
    same(pair, "SET", "str", "x")
    same(pair, "GEOADD", "g", *SICILY)
    for args in [
        ("GEODIST", "g", "Palermo", "Catania", "parsec"),
        ("GEODIST", "g", "Palermo", "Catania", "km", "extra"),
        ("GEODIST", "str", "a", "b"),
        ("GEODIST", "str", "a", "b", "bad"),  # the unit is checked before the type
        ("GEOHASH", "str", "a"),
        ("GEOPOS", "str", "a"),
        ("GEODIST", "g"),
        ("GEOPOS",),
    ]:
        same(pair, *args)


SEARCH_ERRORS = [
    ("GEORADIUS", "g", "x", "37", "10", "km"),
    ("GEORADIUS", "g", "15", "95", "10", "km"),
    ("GEORADIUS", "g", "15", "37", "ten", "km"),
    ("GEORADIUS", "g", "15", "37", "-1", "km"),
    ("GEORADIUS", "g", "15", "37", "10", "leagues"),
    ("GEORADIUS", "g", "15", "37", "10", "km", "WITHSOMETHING"),
    ("GEORADIUS", "g", "15", "37", "10", "km", "COUNT"),
    ("GEORADIUS", "g", "15", "37", "10", "km", "COUNT", "0"),
    ("GEORADIUS", "g", "15", "37", "10", "km", "COUNT", "-3"),
    ("GEORADIUS", "g", "15", "37", "10", "km", "COUNT", "x"),
    ("GEORADIUS", "g", "15", "37", "10", "km", "ANY"),
    ("GEORADIUS", "g", "15", "37", "10", "km", "STORE"),
    ("GEORADIUS", "g", "15", "37", "10", "km", "STORE", "{g}d", "WITHDIST"),
    ("GEORADIUS", "g", "15", "37", "10", "km", "STOREDIST", "{g}d", "WITHHASH"),
    ("GEORADIUS", "g", "15", "37", "10", "km", "FROMLONLAT", "1", "2"),
    ("GEORADIUS_RO", "g", "15", "37", "10", "km", "STORE", "{g}d"),
    ("GEORADIUSBYMEMBER", "g", "nosuch", "10", "km"),
    ("GEORADIUSBYMEMBER", "g", "Palermo", "10", "parsecs"),
    ("GEORADIUSBYMEMBER", "nokey", "m", "x", "y"),  # no key: the radius is not read
    ("GEORADIUSBYMEMBER", "nokey", "m", "1", "km", "WITHDIST", "STORE", "{g}d"),
    ("GEORADIUSBYMEMBER_RO", "g", "Palermo", "10", "km", "STOREDIST", "{g}d"),
    ("GEOSEARCH", "g", "BYRADIUS", "10", "km", "ASC"),
    ("GEOSEARCH", "g", "FROMLONLAT", "15", "37", "COUNT", "2"),
    ("GEOSEARCH", "g", "FROMLONLAT", "15", "37", "FROMMEMBER", "Palermo", "BYRADIUS", "1", "m"),
    ("GEOSEARCH", "g", "FROMMEMBER", "Palermo", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "m"),
    ("GEOSEARCH", "g", "FROMMEMBER", "nosuch", "BYRADIUS", "1", "m"),
    ("GEOSEARCH", "nokey", "FROMMEMBER", "nosuch", "BYRADIUS", "1", "m"),
    ("GEOSEARCH", "nokey", "FROMMEMBER", "nosuch", "BYRADIUS", "1", "xx"),
    ("geosearch", "nokey", "BYRADIUS", "1", "m", "ASC"),
    ("GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "m", "BYBOX", "1", "1", "m"),
    ("GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYBOX", "1", "1", "m", "BYRADIUS", "1", "m"),
    ("GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYBOX", "w", "1", "m"),
    ("GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYBOX", "1", "h", "m"),
    ("GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYBOX", "-1", "1", "m"),
    ("GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYBOX", "1", "1", "yd"),
    ("GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYBOX", "1", "1"),
    ("GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "m", "STORE", "{g}d"),
    ("GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "m", "STOREDIST"),
    ("GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "m", "ANY"),
    ("GEOSEARCH", "g", "FROMLONLAT", "15"),
    ("GEOSEARCHSTORE", "{g}d", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "m", "WITHDIST"),
    ("GEOSEARCHSTORE", "{g}d", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "m", "STORE", "x"),
    ("GEOSEARCHSTORE", "{g}d", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "1"),
    ("GEOSEARCH", "str", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "m"),
    ("GEOSEARCH", "str", "bad"),
    ("GEORADIUS", "str", "x", "y", "z", "km"),
    ("GEOSEARCHSTORE", "{g}d", "str", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "m"),
]


@pytest.mark.parametrize("args", SEARCH_ERRORS, ids=lambda a: " ".join(a)[:60])
def test_search_errors(pair, args):
    same(pair, "SET", "str", "x")
    same(pair, "GEOADD", "g", *SICILY)
    same(pair, *args)


def search_calls(rnd, members):
    """Random searches: every command, shape, unit and option, around random points or
    members."""
    units = ["m", "km", "mi", "ft", "KM"]
    for _ in range(200):
        unit = rnd.choice(units)
        scale = {"m": 1, "km": 1000, "mi": 1609.34, "ft": 0.3048}[unit.lower()]
        radius = rnd.choice([0, 1, 500, 20000, 300000, 2000000, 7000000]) * rnd.random() / scale
        radius = "%.3f" % radius
        lon = "%.5f" % rnd.uniform(-180, 180)
        lat = "%.5f" % rnd.uniform(-85, 85)
        opts = []
        for o in ["WITHDIST", "WITHHASH", "WITHCOORD"]:
            if rnd.random() < 0.4:
                opts.append(o)
        order = rnd.choice([[], ["ASC"], ["DESC"]])
        count = []
        r = rnd.random()
        if r < 0.2:
            count = ["COUNT", str(rnd.randint(1, 50))]
        elif r < 0.3:
            count = ["COUNT", str(rnd.randint(1, 50)), "ANY"]
        member = rnd.choice(members)
        kind = rnd.randrange(4)
        if kind == 0:
            yield ("GEORADIUS", "g", lon, lat, radius, unit, *opts, *order, *count)
        elif kind == 1:
            yield ("GEORADIUSBYMEMBER_RO", "g", member, radius, unit, *opts, *order, *count)
        else:
            frm = (["FROMMEMBER", member] if rnd.random() < 0.5 else ["FROMLONLAT", lon, lat])
            if kind == 2:
                by = ["BYRADIUS", radius, unit]
            else:
                by = ["BYBOX", radius, "%.3f" % (float(radius) * rnd.uniform(0.2, 3)), unit]
            yield ("GEOSEARCH", "g", *frm, *by, *opts, *order, *count)


@pytest.mark.parametrize("n", [100, 3000])
def test_random_searches_match_redis(pair, n):
    # Small sets keep the packed form, big ones the indexed one; clusters make dense
    # neighbourhoods, near the poles and the antimeridian as well.
    pts = random_points(n // 3, 1)
    pts += random_points(n // 3, 2, centre=(12.5, 41.9), spread=0.5)
    pts += random_points(n - 2 * (n // 3), 3, centre=(179.9, 80), spread=3)
    for i in range(0, len(pts), 300):
        same(pair, "GEOADD", "g", *pts[i:i + 300])
    members = pts[2::3]
    rnd = random.Random(n)
    for call in search_calls(rnd, members):
        same(pair, *call)
    # Positions, hashes and distances of random members.
    sample = rnd.sample(members, 50)
    same(pair, "GEOPOS", "g", *sample)
    same(pair, "GEOHASH", "g", *sample)
    for a, b in zip(sample[:25], sample[25:]):
        same(pair, "GEODIST", "g", a, b, rnd.choice(["m", "km", "mi", "ft"]))


def test_stores(pair):
    same(pair, "GEOADD", "{g}src", *random_points(400, 5, centre=(2.35, 48.85), spread=0.3))
    same(pair, "SET", "{g}str", "x")
    same(pair, "EXPIRE", "{g}dst", 100)
    for args in [
        ("GEORADIUS", "{g}src", "2.35", "48.85", "10", "km", "STORE", "{g}dst"),
        ("GEORADIUS", "{g}src", "2.35", "48.85", "10", "km", "STOREDIST", "{g}dst", "COUNT", "5"),
        ("GEORADIUS", "{g}src", "2.35", "48.85", "10", "km", "STORE", "{g}x", "STOREDIST",
         "{g}dst", "DESC"),
        ("GEORADIUSBYMEMBER", "{g}src", "m5:3", "5", "km", "STORE", "{g}dst", "COUNT", "3",
         "ANY"),
        ("GEOSEARCHSTORE", "{g}dst", "{g}src", "FROMMEMBER", "m5:7", "BYBOX", "10", "5", "km"),
        ("GEOSEARCHSTORE", "{g}dst", "{g}src", "FROMLONLAT", "2.3", "48.8", "BYRADIUS", "3",
         "mi", "STOREDIST", "ASC", "COUNT", "10"),
        # The destination may be the source.
        ("GEOSEARCHSTORE", "{g}copy", "{g}src", "FROMLONLAT", "2.35", "48.85", "BYRADIUS",
         "100", "km"),
        ("GEOSEARCHSTORE", "{g}copy", "{g}copy", "FROMLONLAT", "2.35", "48.85", "BYRADIUS",
         "5", "km"),
        ("GEORADIUS", "{g}str", "2.35", "48.85", "10", "km", "STORE", "{g}dst"),
        ("GEORADIUS", "{g}src", "2.35", "48.85", "10", "km", "STORE", "{g}str"),  # overwritten
        ("TYPE", "{g}str"),
    ]:
        same(pair, *args)
        same(pair, "ZRANGE", "{g}dst", 0, -1, "WITHSCORES")
        same(pair, "TTL", "{g}dst")
    same(pair, "ZRANGE", "{g}copy", 0, -1, "WITHSCORES")
    same(pair, "OBJECT", "ENCODING", "{g}copy")
    # An empty result deletes the destination; so does a missing source.
    same(pair, "GEOSEARCHSTORE", "{g}dst", "{g}src", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "m")
    same(pair, "EXISTS", "{g}dst")
    same(pair, "SET", "{g}dst", "v")
    same(pair, "GEORADIUS", "{g}none", "0", "0", "1", "m", "STORE", "{g}dst")
    same(pair, "EXISTS", "{g}dst")
    same(pair, "SET", "{g}dst", "v")
    same(pair, "GEORADIUSBYMEMBER", "{g}none", "x", "1", "m", "STOREDIST", "{g}dst")
    same(pair, "EXISTS", "{g}dst")


def test_resp3_replies(server, redis_reference):
    replies = []
    for s in (server, redis_reference):
        conn = RawConnection(s.port)
        roundtrip(conn, resp("HELLO", 3))
        roundtrip(conn, resp("FLUSHALL"))
        roundtrip(conn, resp("GEOADD", "Sicily", *SICILY))
        got = [roundtrip(conn, resp(*c)) for c in [
            ("GEOPOS", "Sicily", "Palermo", "nosuch"),
            ("GEOHASH", "Sicily", "Palermo", "nosuch"),
            ("GEODIST", "Sicily", "Palermo", "Catania"),
            ("GEODIST", "Sicily", "Palermo", "nosuch"),
            ("GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "ASC",
             "WITHCOORD", "WITHDIST", "WITHHASH"),
            ("GEORADIUS", "nokey", "15", "37", "200", "km"),
        ]]
        replies.append(got)
        conn.close()
    assert replies[0] == replies[1]
    assert replies[0][0].startswith(b"*2\r\n*2\r\n,13.36138933897018433\r\n")


def test_command_getkeys(pair):
    same(pair, "COMMAND", "GETKEYS", "GEORADIUS", "k", "1", "2", "3", "m", "STORE", "d")
    same(pair, "COMMAND", "GETKEYS", "GEORADIUS", "k", "1", "2", "3", "m", "STORE", "d",
         "STOREDIST", "e")
    same(pair, "COMMAND", "GETKEYS", "GEORADIUS", "k", "1", "2", "3", "m", "STOREDIST", "e",
         "STORE", "d")
    same(pair, "COMMAND", "GETKEYS", "GEORADIUS", "k", "1", "2", "3", "m")
    same(pair, "COMMAND", "GETKEYS", "GEORADIUSBYMEMBER", "k", "m", "3", "m", "STOREDIST", "d")
    same(pair, "COMMAND", "GETKEYS", "GEORADIUSBYMEMBER_RO", "k", "m", "3", "m")
    same(pair, "COMMAND", "GETKEYS", "GEOSEARCHSTORE", "d", "s", "FROMMEMBER", "m", "BYRADIUS",
         "1", "m")
    same(pair, "COMMAND", "GETKEYS", "GEOSEARCH", "s", "FROMMEMBER", "m", "BYRADIUS", "1", "m")


@pytest.mark.skipif(TARGET == "redis", reason="strata's shards")
def test_stores_across_shards(server_factory):
    c = server_factory(threads=3).client()
    for name in ("GEOSEARCHSTORE", "GEORADIUS"):
        c.response_callbacks.pop(name, None)  # redis-py's parsers need its own arguments
    c.geoadd("src", random_points(300, 9, centre=(-0.12, 51.5), spread=0.2))
    c.set("str", "x")
    want = c.geosearch("src", longitude=-0.12, latitude=51.5, radius=8, unit="km", sort="ASC",
                       withdist=True)
    for i in range(20):
        dst = "dst%d" % i
        n = c.execute_command("GEOSEARCHSTORE", dst, "src", "FROMLONLAT", "-0.12", "51.5",
                              "BYRADIUS", "8", "km", "ASC", "STOREDIST")
        assert n == len(want)
        got = c.zrange(dst, 0, -1, withscores=True)
        assert [m for m, _ in got] == [m for m, _ in want]
        assert all(abs(s - d) < 1e-4 for (_, s), (_, d) in zip(got, want))
        n = c.execute_command("GEORADIUS", "src", "-0.12", "51.5", "8", "km", "STORE",
                              "r" + dst, "COUNT", "7")
        assert n == 7
        assert c.zcard("r" + dst) == 7
    # Errors and missing sources across shards.
    with pytest.raises(Exception, match="WRONGTYPE"):
        c.execute_command("GEOSEARCHSTORE", "dst0", "str", "FROMLONLAT", "0", "0",
                          "BYRADIUS", "1", "m")
    with pytest.raises(Exception, match="could not decode"):
        c.execute_command("GEOSEARCHSTORE", "dst0", "src", "FROMMEMBER", "nosuch",
                          "BYRADIUS", "1", "m")
    assert c.exists("dst0") == 1
    assert c.execute_command("GEOSEARCHSTORE", "dst0", "nokey", "FROMLONLAT", "0", "0",
                             "BYRADIUS", "1", "m") == 0
    assert c.exists("dst0") == 0
    # Inside a transaction, with the keys on several shards.
    p = c.pipeline(transaction=True)
    p.execute_command("GEOSEARCHSTORE", "tx", "src", "FROMLONLAT", "-0.12", "51.5", "BYRADIUS",
                      "8", "km")
    p.zcard("tx")
    assert p.execute() == [len(want), len(want)]
