"""COMMAND DOCS, COMMAND GETKEYSANDFLAGS and COMMAND INFO's key-spec flags, side by side
with redis-server 7: the argument trees, versions, groups and deprecation of every
command both servers have, and the keys with their access flags of many calls."""
import pytest

from conftest import TARGET
from helpers import same


def _text(x):
    if isinstance(x, bytes):
        return x.decode()
    if isinstance(x, list):
        return [_text(i) for i in x]
    return x


def _map(flat):
    return {flat[i]: flat[i + 1] for i in range(0, len(flat), 2)}


def _args(args):
    out = []
    for a in args:
        m = _map(a)
        m.pop("deprecated_since", None)  # one argument of Redis's has it; strata omits it
        if "arguments" in m:
            m["arguments"] = _args(m["arguments"])
        out.append(m)
    return out


def _docs(client, *names):
    raw = _text(client.execute_command("COMMAND", "DOCS", *names))
    out = {}

    def walk(name, value):
        m = _map(value)
        out[name] = m
        subs = m.get("subcommands", [])
        for i in range(0, len(subs), 2):
            walk(subs[i], subs[i + 1])

    for i in range(0, len(raw), 2):
        walk(raw[i], raw[i + 1])
    return out


def test_docs_of_every_command_match_redis(pair):
    ours, redis = (_docs(c) for c in pair)
    compared = 0
    for name, d in ours.items():
        if name not in redis:  # CLIENT SETINFO is Redis 7.2's
            continue
        want = redis[name]
        assert _args(d.get("arguments", [])) == _args(want.get("arguments", [])), name
        for field in ("since", "group", "doc_flags", "deprecated_since"):
            assert d.get(field) == want.get(field), (name, field)
        assert d["summary"], name
        if "complexity" in want:
            assert d.get("complexity"), name
        assert ("replaced_by" in d) == ("replaced_by" in want), name
        compared += 1
    assert compared > 250


def test_every_command_of_redis_is_here_but_a_known_few(pair):
    """COMMAND LIST, subcommands included: strata has every command and subcommand of
    Redis 7.0 (a subcommand left out of the table shows up here)."""
    ours, redis = (set(_text(c.execute_command("COMMAND", "LIST"))) for c in pair)
    if TARGET == "redis":
        assert ours == redis
        return
    assert redis - ours == set()
    assert ours - redis <= {"client|setinfo", "cluster|myshardid"}  # Redis 7.2's


def test_docs_of_a_subcommand_and_unknown_names(pair):
    ours, redis = pair
    for names in (("config|get",), ("CONFIG|GET", "get"), ("nosuch",), ("config|nosuch",),
                  ("get|x",)):
        a, b = _docs(ours, *names), _docs(redis, *names)
        assert sorted(a) == sorted(b), names
        for n in a:
            assert _args(a[n].get("arguments", [])) == _args(b[n].get("arguments", []))
    container = _docs(ours, "config")
    assert "config|get" in _map(_text(ours.execute_command("COMMAND", "DOCS", "config"))[1])[
        "subcommands"]
    assert container["config|set"]["since"] == "2.0.0"


def test_resp3_shapes_match_redis(server, redis_reference):
    """Flags are RESP3 sets and each argument a map, as Redis sends them."""
    from conftest import RawConnection
    replies = []
    for port in (server.port, redis_reference.port):
        conn = RawConnection(port)
        conn.send(b"HELLO 3\r\n")
        conn.read_reply()
        conn.send(b"COMMAND DOCS getset\r\nCOMMAND GETKEYSANDFLAGS smove a b m\r\n")
        replies.append((conn.read_reply(), conn.read_reply()))
        conn.close()
    (docs, flags), (_, want_flags) = replies
    assert flags == want_flags
    assert b"$9\r\ndoc_flags\r\n~1\r\n+deprecated\r\n" in docs
    assert (b"%3\r\n$4\r\nname\r\n$3\r\nkey\r\n$4\r\ntype\r\n$3\r\nkey\r\n"
            b"$14\r\nkey_spec_index\r\n:0\r\n") in docs


CALLS = [
    ("SET", "k", "v"), ("SET", "k", "v", "GET"), ("SET", "k", "v", "EX", "10"),
    ("GET", "k"), ("GETEX", "k", "PERSIST"), ("MSET", "a", "1", "b", "2"),
    ("MGET", "a", "b"), ("DEL", "a", "b"), ("RENAME", "a", "b"), ("COPY", "a", "b"),
    ("SMOVE", "a", "b", "m"), ("LMOVE", "a", "b", "LEFT", "RIGHT"),
    ("BLMOVE", "a", "b", "LEFT", "RIGHT", "0"), ("RPOPLPUSH", "a", "b"),
    ("BITOP", "AND", "d", "s1", "s2"), ("BITFIELD", "k", "GET", "u8", "0"),
    ("BITFIELD", "k", "SET", "u8", "0", "1"), ("BITFIELD", "k", "INCRBY", "u8", "0", "1"),
    ("BITFIELD_RO", "k", "GET", "u8", "0"), ("PFADD", "h", "a"), ("PFCOUNT", "h1", "h2"),
    ("PFMERGE", "d", "s1", "s2"), ("SINTERSTORE", "d", "a", "b"), ("SUNION", "a", "b"),
    ("ZUNIONSTORE", "d", "2", "a", "b", "WEIGHTS", "1", "2"), ("ZUNION", "2", "a", "b"),
    ("ZINTERCARD", "2", "a", "b"), ("ZRANGESTORE", "d", "s", "0", "-1"),
    ("ZADD", "z", "1", "m"), ("ZINCRBY", "z", "1", "m"), ("LMPOP", "2", "a", "b", "LEFT"),
    ("BZMPOP", "0", "2", "a", "b", "MIN"), ("SORT", "k", "STORE", "d"),
    ("SORT", "k", "BY", "w_*", "GET", "o_*"), ("SORT_RO", "k"),
    ("MIGRATE", "h", "1", "", "0", "10", "KEYS", "a", "b"),
    ("MIGRATE", "h", "1", "k", "0", "10"), ("EVAL", "return 1", "2", "a", "b"),
    ("FCALL_RO", "f", "1", "a"), ("XADD", "s", "*", "f", "v"),
    ("XREAD", "STREAMS", "a", "b", "0", "0"),
    ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", "0"), ("XGROUP", "CREATE", "s", "g", "$"),
    ("OBJECT", "ENCODING", "k"), ("MEMORY", "USAGE", "k"), ("XINFO", "STREAM", "s"),
    ("GEOADD", "g", "1", "2", "m"), ("GEOSEARCHSTORE", "d", "s", "FROMLONLAT", "1", "2",
                                        "BYRADIUS", "1", "m"),
    ("GEORADIUS", "k", "1", "2", "3", "m", "STORE", "d", "STOREDIST", "e"),
    ("GEORADIUS", "k", "1", "2", "3", "m", "STOREDIST", "e"), ("LCS", "a", "b"),
    ("EXPIRE", "k", "10"), ("TOUCH", "a", "b"), ("UNLINK", "a"), ("HSET", "h", "f", "v"),
    ("INCR", "k"), ("APPEND", "k", "v"), ("GETDEL", "k"), ("RESTORE", "k", "0", "x"),
    ("DUMP", "k"), ("WATCH", "a", "b"), ("TYPE", "k"), ("SPUBLISH", "ch", "m"),
    ("PING", "x"), ("NOSUCH", "k"), ("GET", "a", "b"),
]


@pytest.mark.parametrize("call", CALLS, ids=[" ".join(c) for c in CALLS])
def test_getkeysandflags_matches_redis(pair, call):
    same(pair, "COMMAND", "GETKEYSANDFLAGS", *call)
    same(pair, "COMMAND", "GETKEYS", *call)


def test_getkeysandflags_arity(pair):
    same(pair, "COMMAND", "GETKEYSANDFLAGS")
    same(pair, "COMMAND", "GETKEYSANDFLAGS", "GET")


def test_command_info_key_spec_flags_match_redis(pair):
    """The flags of each key spec, for every command whose keys are a plain range in
    both servers (keys found by a count or a keyword are described differently)."""
    ours, redis = ({e[0]: e for e in _text(c.execute_command("COMMAND", "INFO"))} for c in pair)
    compared = 0
    for name, e in ours.items():
        if name not in redis:
            continue
        want = [_map(s) for s in redis[name][8]]
        got = [_map(s) for s in e[8]]
        if not all(_map(s["find_keys"])["type"] == "range" and
                   _map(s["begin_search"])["type"] == "index" for s in want):
            continue
        if len(want) != len(got):
            continue  # a container (OBJECT, MEMORY) reports its subcommands' specs
        for g, w in zip(got, want):
            w.pop("notes", None)
            g.pop("notes", None)
            assert g == w, name
        compared += 1
    assert compared > 150


def test_command_info_flags_and_key_range_match_redis(pair):
    """Flags (movablekeys among them) and the legacy first/last/step, for every command."""
    ours, redis = ({e[0]: e for e in _text(c.execute_command("COMMAND", "INFO"))} for c in pair)
    compared = 0
    for name, e in ours.items():
        if name not in redis:
            continue
        want = redis[name]
        if name not in ("zrank", "zrevrank"):  # strata takes 7.2's WITHSCORE too
            assert e[1] == want[1], (name, "arity")
        assert sorted(e[2]) == sorted(want[2]), (name, "flags")
        assert e[3:6] == want[3:6], (name, "key range")
        assert sorted(e[6]) == sorted(want[6]), (name, "categories")
        # Subcommands: the same entries (strata has 7.2's CLIENT SETINFO and CLUSTER
        # MYSHARDID too).
        got_subs = {sub[0]: sub for sub in e[9]}
        want_subs = {sub[0]: sub for sub in want[9]}
        assert set(got_subs) - {"client|setinfo", "cluster|myshardid"} <= set(want_subs), name
        for sub_name, sub in got_subs.items():
            if sub_name not in want_subs:
                continue
            w = want_subs[sub_name]
            assert sub[1] == w[1], (sub_name, "arity")
            assert sorted(sub[2]) == sorted(w[2]), (sub_name, "flags")
            assert sub[3:6] == w[3:6], (sub_name, "key range")
            assert sorted(sub[6]) == sorted(w[6]), (sub_name, "categories")
            if all(_map(ks)["find_keys"][1] == "range" for ks in w[8]):
                got_specs = [_map(ks) for ks in sub[8]]
                want_specs = [_map(ks) for ks in w[8]]
                for g in got_specs + want_specs:
                    g.pop("notes", None)
                assert got_specs == want_specs, (sub_name, "key specs")
        compared += 1
    assert compared > 200


def test_command_help_lists_getkeysandflags(r):
    from helpers import call
    lines = call(r, "COMMAND", "HELP")
    assert "GETKEYSANDFLAGS <full-command>" in lines
    assert lines[-1] == "    Prints this help."
