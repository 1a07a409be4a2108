"""The Prometheus endpoint (metrics-port): scraped by a real HTTP client (urllib) and
parsed as Prometheus text (version 0.0.4), with redis_exporter's metric names and
strata's own figures; errors for other paths and methods; a port in use is refused at
start."""
import re
import socket
import urllib.error
import urllib.request

import pytest
import redis

from conftest import TARGET, free_port

pytestmark = pytest.mark.skipif(TARGET == "redis", reason="strata's endpoint")

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = r'[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*"'
SAMPLE = re.compile(r"^(%s)(\{(?:%s)(?:,%s)*\})? (\S+)$" % (NAME, LABEL, LABEL))


def parse(text):
    """Prometheus text -> {name: {"type": t, "help": h, "samples": {labels: value}}}, with
    the format's rules checked: HELP and TYPE once per family, before its samples;
    samples named by their family; values floats."""
    families = {}
    current = None
    assert text.endswith("\n")
    for line in text.splitlines():
        if line.startswith("# HELP "):
            name = line.split(" ", 3)[2]
            assert name not in families, name
            families[name] = {"help": line.split(" ", 3)[3], "samples": {}}
            current = name
        elif line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            assert name == current and kind in ("gauge", "counter"), line
            families[name]["type"] = kind
        else:
            m = SAMPLE.match(line)
            assert m, line
            assert m.group(1) == current, line
            value = float(m.group(3))
            labels = m.group(2) or ""
            assert labels not in families[current]["samples"], line
            families[current]["samples"][labels] = value
    return families


def scrape(port, path="/metrics", method="GET"):
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path), method=method)
    with urllib.request.urlopen(req, timeout=10) as resp:
        return resp.status, resp.headers.get("Content-Type"), resp.read().decode()


def value(fams, name, labels=""):
    return fams[name]["samples"][labels]


def test_scrape_is_prometheus_text_with_redis_exporter_names(server_factory):
    mport = free_port()
    s = server_factory(threads=2, extra_args=["--metrics-port", str(mport)])
    c = s.client()
    for i in range(50):
        c.set("k%d" % i, "v")
    for i in range(30):
        c.get("k%d" % i)
    c.get("missing")
    c.expire("k1", 100)
    c.hset("h", "f", "v")
    for i in range(3):
        with pytest.raises(redis.ResponseError):
            c.lpush("k%d" % i, "x")
    with pytest.raises(redis.ResponseError):
        c.execute_command("GET")
    status, ctype, text = scrape(mport)
    assert status == 200
    assert ctype.startswith("text/plain; version=0.0.4")
    fams = parse(text)
    assert value(fams, "redis_up") == 1
    assert value(fams, "redis_connected_clients") >= 1
    assert value(fams, "redis_commands_total", '{cmd="set"}') == 50
    assert value(fams, "redis_commands_total", '{cmd="get"}') == 31
    assert fams["redis_commands_total"]["type"] == "counter"
    assert value(fams, "redis_commands_duration_seconds_total", '{cmd="set"}') > 0
    assert value(fams, "redis_keyspace_hits_total") >= 30
    assert value(fams, "redis_keyspace_misses_total") >= 1
    assert value(fams, "redis_db_keys", '{db="db0"}') == 51
    assert value(fams, "redis_db_keys_expiring", '{db="db0"}') == 1
    assert value(fams, "redis_memory_used_bytes") > 0
    assert value(fams, "redis_errors_total", '{err="WRONGTYPE"}') == 3
    assert value(fams, "redis_errors_total", '{err="ERR"}') == 1
    assert fams["redis_errors_total"]["type"] == "counter"
    assert value(fams, "redis_total_error_replies") == 4
    assert value(fams, "redis_uptime_in_seconds") >= 0
    # strata's own figures.
    assert value(fams, "strata_threads") == 2
    assert value(fams, "strata_type_keys", '{type="string"}') == 50
    assert value(fams, "strata_type_keys", '{type="hash"}') == 1
    shards = fams["strata_shard_keys"]["samples"]
    assert len(shards) == 2 and sum(shards.values()) == 51
    assert len(fams["strata_io_backend"]["samples"]) == 1
    assert "strata_snapshot_last_bytes" in fams
    assert "strata_tiered_enabled" in fams
    # The scrape's own INFO is counted; the figures move between scrapes.
    fams2 = parse(scrape(mport)[2])
    assert value(fams2, "redis_commands_total", '{cmd="info"}') >= 2


def test_other_paths_and_methods(server_factory):
    mport = free_port()
    server_factory(extra_args=["--metrics-port", str(mport)])
    assert scrape(mport, "/")[0] == 200
    assert scrape(mport, "/metrics?x=1")[0] == 200
    with pytest.raises(urllib.error.HTTPError) as e:
        scrape(mport, "/nosuch")
    assert e.value.code == 404
    with pytest.raises(urllib.error.HTTPError) as e:
        scrape(mport, "/metrics", method="POST")
    assert e.value.code == 405
    # A client that sends nothing, or garbage, does not stop the endpoint.
    idle = socket.create_connection(("127.0.0.1", mport))
    bad = socket.create_connection(("127.0.0.1", mport))
    bad.sendall(b"\x00\x01garbage\r\n\r\n")
    bad.recv(100)
    bad.close()
    idle.close()
    assert scrape(mport)[0] == 200


def test_with_requirepass(server_factory):
    mport = free_port()
    s = server_factory(extra_args=["--metrics-port", str(mport), "--requirepass", "sekret"])
    fams = parse(scrape(mport)[2])
    assert value(fams, "redis_up") == 1
    assert s.client(password="sekret").ping()


def test_port_in_use_is_refused(server_factory):
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    port = busy.getsockname()[1]
    s = server_factory(extra_args=["--metrics-port", str(port)], expect_fail=True)
    assert s.proc.wait(timeout=20) != 0
    with open(s.log_path) as f:
        assert "Could not listen for metrics" in f.read()
    busy.close()
