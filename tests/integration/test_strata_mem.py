"""strata-mem (tools/strata-mem) driven as a black box against a real server.

Environment (besides conftest.py's):
  STRATA_MEM_BIN   path to strata-mem (default: build/tools/strata-mem/strata-mem)

`report` needs MEMORY USAGE; its tests skip on a server that answers it with an unknown
command error. `bench --type hash|set|zset|list` needs those data types; those tests
skip on a server that lacks the command. Both run everywhere once the server has them.
"""
import csv
import io
import json
import os
import shutil
import socket
import subprocess
import threading
import time

import pytest
import redis

from conftest import REPO, TARGET, RawConnection, Server, free_port
from helpers import cmd

STRATA_MEM_BIN = os.environ.get(
    "STRATA_MEM_BIN", os.path.join(REPO, "build", "tools", "strata-mem", "strata-mem"))
RUN_TIMEOUT_S = 120

pytestmark = pytest.mark.skipif(
    not os.access(STRATA_MEM_BIN, os.X_OK),
    reason="strata-mem not built at %s (set STRATA_MEM_BIN)" % STRATA_MEM_BIN)


def run_mem(*args, timeout=RUN_TIMEOUT_S):
    """Runs strata-mem; returns the CompletedProcess (text mode)."""
    return subprocess.run([STRATA_MEM_BIN] + [str(a) for a in args], capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def addr(server):
    return "127.0.0.1:%d" % server.port


def bench(server, *extra, keys=20000):
    return run_mem("bench", "--server", addr(server), "--keys", keys, "--yes",
                   "--settle-ms", 100, *extra)


def lacks_command(server, *command):
    """True when the server answers `command` with an unknown command/subcommand error."""
    c = RawConnection(server.port)
    try:
        c.send(cmd(*command))
        reply = c.read_reply().lower()
        return reply.startswith(b"-") and b"unknown" in reply
    finally:
        c.close()


def require_memory_usage(server):
    if lacks_command(server, "MEMORY", "USAGE", "strata-mem-probe"):
        pytest.skip("server lacks MEMORY USAGE")


def memory_usage_sum(client, keys):
    return sum(client.memory_usage(k, samples=0) for k in keys)


# ---------------------------------------------------------------- bench

def check_plausible(per_key_used, per_key_rss, data_size):
    # A key costs more than its value and, for small values, far less than 10x it.
    assert data_size < per_key_used < 10 * data_size, per_key_used
    # RSS moves in pages and may reuse memory freed earlier; only a loose sanity check.
    assert 0 < per_key_rss < 20 * data_size, per_key_rss


def test_bench_text(server):
    p = bench(server)
    assert p.returncode == 0, p.stderr
    lines = {}
    for line in p.stdout.splitlines():
        parts = line.rsplit(None, 1)
        if len(parts) == 2:
            lines[parts[0].strip()] = parts[1]
    assert lines["keys"] == "20000"
    assert lines["data size (bytes)"] == "100"
    check_plausible(float(lines["bytes/key (used_memory)"]), float(lines["bytes/key (rss)"]),
                    100)
    assert server.client().dbsize() == 20000
    # No progress bar when stderr is not a terminal.
    assert "populating" not in p.stderr


def test_bench_csv(server):
    p = bench(server, "--format", "csv", "--data-size", 64)
    assert p.returncode == 0, p.stderr
    rows = list(csv.DictReader(io.StringIO(p.stdout)))
    assert len(rows) == 1
    row = rows[0]
    assert row["server"] == addr(server)
    assert row["type"] == "string"
    assert int(row["keys"]) == 20000
    assert int(row["used_memory_after"]) - int(row["used_memory_before"]) == \
        int(row["used_memory_delta"])
    check_plausible(float(row["bytes_per_key_used_memory"]), float(row["bytes_per_key_rss"]),
                    64)
    assert row["server_name"] == ("redis" if server.is_redis else "strata")
    assert row["version"]


def test_bench_json_and_memtier_names(server):
    p = bench(server, "--format", "json", "--key-prefix", "mt-", keys=5000)
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    assert isinstance(data, list) and len(data) == 1
    assert data[0]["keys"] == 5000
    assert data[0]["fields"] is None
    check_plausible(data[0]["bytes_per_key_used_memory"], data[0]["bytes_per_key_rss"], 100)
    c = server.client()
    assert c.exists("mt-1", "mt-5000") == 2
    assert c.exists("mt-0", "mt-5001") == 0
    values = {c.get("mt-%d" % i) for i in range(1, 101)}
    assert len(values) == 100  # different for every key
    for v in values:
        assert len(v) == 100
        assert all(0x21 <= b <= 0x7e for b in v)  # printable


def test_bench_refuses_non_empty_db_without_yes(server):
    c = server.client()
    c.set("precious", "data")
    p = run_mem("bench", "--server", addr(server), "--keys", 10)
    assert p.returncode != 0
    assert "--yes" in p.stderr
    assert "1 keys" in p.stderr
    assert c.get("precious") == b"data"
    assert c.dbsize() == 1


def test_bench_empty_db_needs_no_yes(server):
    p = run_mem("bench", "--server", addr(server), "--keys", 100, "--settle-ms", 0,
                "--format", "csv")
    assert p.returncode == 0, p.stderr
    assert server.client().dbsize() == 100


def test_bench_two_servers(server_factory):
    a = server_factory()
    b = server_factory()
    p = run_mem("bench", "--server", addr(a), "--server", addr(b), "--keys", 3000, "--yes",
                "--settle-ms", 50, "--format", "csv")
    assert p.returncode == 0, p.stderr
    rows = list(csv.DictReader(io.StringIO(p.stdout)))
    assert [r["server"] for r in rows] == [addr(a), addr(b)]
    assert a.client().dbsize() == 3000
    assert b.client().dbsize() == 3000
    p = run_mem("bench", "--server", addr(a), "--server", addr(b), "--keys", 100, "--yes",
                "--settle-ms", 0)
    assert p.returncode == 0, p.stderr
    header = p.stdout.splitlines()[0]
    assert addr(a) in header and addr(b) in header


def test_bench_stops_at_first_error_reply(server):
    c = server.client()
    base = int(c.info("memory")["used_memory"])
    c.config_set("maxmemory", str(base + 1024 * 1024))
    try:
        p = bench(server, "--data-size", 1000)
    finally:
        c.config_set("maxmemory", "0")
    assert p.returncode != 0
    assert "server %s replied: OOM" % addr(server) in p.stderr, p.stderr
    assert "writing key 'memtier-" in p.stderr
    assert 0 < c.dbsize() < 20000


@pytest.mark.parametrize("kind,command", [("hash", "HSET"), ("set", "SADD"),
                                          ("zset", "ZADD"), ("list", "RPUSH")])
def test_bench_other_types(server, kind, command):
    if lacks_command(server, command, "strata-mem-probe", "0", "0"):
        p = bench(server, "--type", kind, keys=10)
        assert p.returncode != 0
        assert "replied: ERR unknown command" in p.stderr, p.stderr
        pytest.skip("server lacks %s" % command)
    server.client().delete("strata-mem-probe")
    p = bench(server, "--type", kind, "--fields", 5, "--data-size", 20, "--format", "json",
              keys=2000)
    assert p.returncode == 0, p.stderr
    row = json.loads(p.stdout)[0]
    assert row["type"] == kind and row["fields"] == 5
    assert row["bytes_per_key_used_memory"] > 20
    c = server.client(decode_responses=True)
    assert c.type("memtier-1") == kind
    assert c.dbsize() == 2000
    if kind == "hash":
        assert c.hlen("memtier-7") == 5 and len(c.hget("memtier-7", "f4")) == 20
    elif kind == "set":
        assert c.smembers("memtier-7") == {"7", "8", "9", "10", "11"}
    elif kind == "zset":
        assert c.zrange("memtier-7", 0, -1, withscores=True) == \
            [("m0", 0), ("m1", 1), ("m2", 2), ("m3", 3), ("m4", 4)]
    else:
        assert c.llen("memtier-7") == 5


# ---------------------------------------------------------------- errors and flags

def test_unreachable_server():
    port = free_port()  # nothing listens there
    start = time.monotonic()
    p = run_mem("bench", "--server", "127.0.0.1:%d" % port, "--keys", 10, "--timeout-ms", 500)
    assert p.returncode == 1
    assert "127.0.0.1:%d" % port in p.stderr and "cannot connect" in p.stderr, p.stderr
    p = run_mem("report", "--server", "127.0.0.1:%d" % port, "--timeout-ms", 500)
    assert p.returncode == 1
    assert "cannot connect" in p.stderr, p.stderr
    assert time.monotonic() - start < 10


def test_silent_server_times_out():
    """A listener that accepts and never answers: the timeout ends the run."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    port = listener.getsockname()[1]
    accepted = []

    def accept_loop():
        try:
            while True:
                conn, _ = listener.accept()
                accepted.append(conn)
        except OSError:
            pass

    t = threading.Thread(target=accept_loop, daemon=True)
    t.start()
    try:
        for sub in ("bench", "report"):
            start = time.monotonic()
            p = run_mem(sub, "--server", "127.0.0.1:%d" % port, "--timeout-ms", 300, timeout=30)
            elapsed = time.monotonic() - start
            assert p.returncode == 1
            assert "timed out after 300 ms" in p.stderr, p.stderr
            assert elapsed < 5
    finally:
        listener.close()
        for c in accepted:
            c.close()


def test_bad_flags():
    for args in (["bench", "--keys", "0"], ["bench", "--type", "stream"],
                 ["bench", "--server", "nohostport"], ["report", "--depth", "0"],
                 ["report", "--bogus"], []):
        p = run_mem(*args)
        assert p.returncode == 2, (args, p.stdout, p.stderr)
        assert p.stderr.startswith("strata-mem: "), (args, p.stderr)
    p = run_mem("report", "--help")
    assert p.returncode == 0
    assert "--max-keys-per-sec" in p.stdout and "MEMORY USAGE" in p.stdout


def test_wrong_password(server):
    p = run_mem("report", "--server", addr(server), "-a", "not-the-password")
    assert p.returncode == 1
    assert "AUTH" in p.stderr, p.stderr


# ---------------------------------------------------------------- report

def populate_prefixed(c):
    pipe = c.pipeline(transaction=False)
    keys = []
    for i in range(300):
        keys.append("a:%d:name" % i)
        pipe.set(keys[-1], "x" * (10 + i % 50))
    for i in range(100):
        keys.append("b:%d" % i)
        pipe.set(keys[-1], "y" * 500)
    keys.append("plain")
    pipe.set("plain", "z" * 3000)
    pipe.execute()
    return keys


def run_report(server, *extra, timeout=RUN_TIMEOUT_S):
    return run_mem("report", "--server", addr(server), "--max-keys-per-sec", 0, *extra,
                   timeout=timeout)


def report_json(server, *extra):
    p = run_report(server, "--json", "-", *extra)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def check_report_groups(server):
    c = server.client(decode_responses=True)
    keys = populate_prefixed(c)
    expected_total = memory_usage_sum(c, keys)
    data = report_json(server, "--scan-count", 50, "--top", 3)
    totals = data["totals"]
    assert totals["keys"] == len(keys)
    assert totals["bytes"] == expected_total
    assert totals["vanished"] == 0
    assert totals["used_memory"] >= expected_total * 0.5
    groups = {g["prefix"]: g for g in data["prefixes"]}
    assert set(groups) == {"a:#:*", "b:*", "(no prefix)"}
    assert groups["a:#:*"]["keys"] == 300
    assert groups["a:#:*"]["bytes"] == memory_usage_sum(c, keys[:300])
    assert groups["b:*"]["keys"] == 100
    assert groups["(no prefix)"]["bytes"] == c.memory_usage("plain", samples=0)
    assert sum(g["bytes"] for g in data["prefixes"]) == expected_total
    assert data["types"] == [{"type": "string", "keys": len(keys), "bytes": expected_total,
                              "share": 1.0}]
    assert sum(h["keys"] for h in data["histogram"]) == len(keys)
    for h in data["histogram"]:
        assert h["min"] <= h["max"]
    assert data["top_keys"][0]["key"] == "plain"
    assert len(data["top_keys"]) == 3
    return c


def test_report_groups_and_totals(server):
    require_memory_usage(server)
    c = check_report_groups(server)
    # Depth 1 and no collapsing; the text report shows the same groups.
    p = run_report(server, "--depth", 1, "--no-collapse-numbers")
    assert p.returncode == 0, p.stderr
    assert "a:*" in p.stdout and "b:*" in p.stdout and "(no prefix)" in p.stdout
    assert "%d counted" % c.dbsize() in p.stdout


def test_report_types_db_and_match(server):
    require_memory_usage(server)
    c = server.client(decode_responses=True)
    c.set("s:1", "v")
    c.set("s:2", "v")
    c.set("t:1", "v")
    data = report_json(server, "--match", "s:*")
    assert data["totals"]["keys"] == 2
    assert data["match"] == "s:*"
    c1 = server.client(db=1, decode_responses=True)
    c1.set("other:1", "v")
    data = report_json(server, "--db", 1)
    assert data["db"] == 1
    assert data["totals"]["keys"] == 1
    assert data["prefixes"][0]["prefix"] == "other:*"
    has_hash = not lacks_command(server, "HSET", "strata-mem-probe", "f", "v")
    c.delete("strata-mem-probe")
    has_list = not lacks_command(server, "RPUSH", "strata-mem-probe", "a")
    c.delete("strata-mem-probe")
    expected = {"string": 3}
    if has_hash:
        c.hset("h:1", "f", "v")
        expected["hash"] = 1
    if has_list:
        c.rpush("l:1", "a", "b")
        expected["list"] = 1
    data = report_json(server)
    types = {t["type"]: t["keys"] for t in data["types"]}
    assert types == expected


def test_report_html(server, tmp_path):
    require_memory_usage(server)
    c = server.client()
    populate_prefixed(c)
    c.set("<script>alert(1)</script>:1", "x")
    html_path = tmp_path / "mem.html"
    json_path = tmp_path / "mem.json"
    p = run_report(server, "--html", html_path, "--json", json_path)
    assert p.returncode == 0, p.stderr
    assert "By prefix" in p.stdout  # the text report still goes to stdout
    html = html_path.read_text()
    assert "<svg" in html
    assert "<script" not in html
    assert "&lt;script&gt;" in html
    assert "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in html
    assert json.loads(json_path.read_text())["totals"]["keys"] == 402


def test_report_rate_limit(server):
    require_memory_usage(server)
    c = server.client()
    pipe = c.pipeline(transaction=False)
    for i in range(3000):
        pipe.set("r:%d" % i, "v")
    pipe.execute()
    start = time.monotonic()
    p = run_mem("report", "--server", addr(server), "--max-keys-per-sec", 2000,
                "--scan-count", 100, "--json", "-")
    elapsed = time.monotonic() - start
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["totals"]["keys"] == 3000
    # 3000 keys at 2000/s, the bucket starting empty: at least 1.5 s.
    assert elapsed >= 1.4, elapsed


def test_report_without_memory_usage_says_so(server):
    if not lacks_command(server, "MEMORY", "USAGE", "strata-mem-probe"):
        pytest.skip("server has MEMORY USAGE")
    server.client().set("k:1", "v")
    p = run_report(server)
    assert p.returncode == 1
    assert "replied: ERR unknown" in p.stderr and "needs MEMORY USAGE" in p.stderr, p.stderr


@pytest.fixture
def redis_server():
    """A redis-server: the test target itself when it is redis, else one started here."""
    if TARGET == "redis":
        s = Server()
    else:
        if shutil.which("redis-server") is None:
            pytest.skip("redis-server not installed")
        port = free_port()
        s = _StandaloneRedis(port)
    yield s
    s.stop()


class _StandaloneRedis:
    """redis-server on a free port, persistence off (when the target is strata)."""

    def __init__(self, port):
        self.port = port
        self.is_redis = True
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL, cwd="/tmp")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                if redis.Redis(port=port, socket_timeout=1).ping():
                    return
            except redis.ConnectionError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError("redis-server did not start on port %d" % port)

    def client(self, **kw):
        kw.setdefault("socket_timeout", 10)
        return redis.Redis(host="127.0.0.1", port=self.port, **kw)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


def test_report_against_redis(redis_server):
    check_report_groups(redis_server)
    c = redis_server.client(decode_responses=True)
    c.hset("h:1", mapping={"f%d" % i: "v" * 100 for i in range(50)})
    c.xadd("st:1", {"a": "1"})
    c.zadd("z:1", {"m": 1})
    data = report_json(redis_server)
    types = {t["type"]: t["keys"] for t in data["types"]}
    assert types == {"string": 401, "hash": 1, "stream": 1, "zset": 1}
    assert data["software"].startswith("redis ")
