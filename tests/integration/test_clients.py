"""Real client tools against the server (redis-cli, redis-benchmark) and a multi-threaded
MSET/MGET atomicity check through redis-py."""
import re
import shutil
import subprocess
import threading
import time

import pytest

needs_cli = pytest.mark.skipif(shutil.which("redis-cli") is None, reason="redis-cli not installed")
needs_benchmark = pytest.mark.skipif(shutil.which("redis-benchmark") is None,
                                     reason="redis-benchmark not installed")


def cli(server, *args, input=None, timeout=30):
    p = subprocess.run(["redis-cli", "-h", "127.0.0.1", "-p", str(server.port)] + list(args),
                       input=input, capture_output=True, timeout=timeout)
    return p


@needs_cli
def test_redis_cli_ping(server):
    p = cli(server, "PING")
    assert p.returncode == 0
    assert p.stdout == b"PONG\n"


@needs_cli
def test_redis_cli_set_get(server, r):
    assert cli(server, "SET", "cli:key", "hello world").stdout == b"OK\n"
    assert cli(server, "GET", "cli:key").stdout == b"hello world\n"
    assert r.get("cli:key") == "hello world"
    # a missing key prints an empty line when output is not a terminal
    assert cli(server, "GET", "cli:missing").stdout == b"\n"
    assert cli(server, "INCR", "cli:n").stdout == b"1\n"
    assert cli(server, "MSET", "cli:a", "a", "cli:b", "b").stdout == b"OK\n"
    # an array reply prints one element per line
    assert cli(server, "MGET", "cli:a", "cli:b").stdout == b"a\nb\n"


@needs_cli
def test_redis_cli_error_output(server):
    p = cli(server, "GET")
    assert p.stdout == b"ERR wrong number of arguments for 'get' command\n\n"


@needs_cli
def test_redis_cli_select_db(server, r):
    assert cli(server, "-n", "3", "SET", "dbkey", "v").stdout == b"OK\n"
    assert r.get("dbkey") is None
    assert cli(server, "-n", "3", "DBSIZE").stdout == b"1\n"


@needs_cli
def test_redis_cli_pipe_mass_insert(server, r):
    n = 10000
    data = "".join("SET mass:%d %d\r\n" % (i, i) for i in range(n)).encode()
    p = cli(server, "--pipe", input=data, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    assert b"errors: 0, replies: %d" % n in p.stdout
    assert r.dbsize() == n
    assert r.get("mass:0") == "0"
    assert r.get("mass:9999") == "9999"


@needs_cli
def test_redis_cli_pipe_resp_input(server, r):
    n = 2000
    # every command appends "<i>," to one key, so the value shows count and order
    data = b"".join(b"*3\r\n$6\r\nAPPEND\r\n$3\r\nseq\r\n$%d\r\n%d,\r\n" % (len(str(i)) + 1, i)
                    for i in range(n))
    p = cli(server, "--pipe", input=data, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    assert b"errors: 0, replies: %d" % n in p.stdout
    assert r.get("seq") == "".join("%d," % i for i in range(n))


@needs_cli
def test_redis_cli_info(server):
    p = cli(server, "INFO")
    assert p.returncode == 0
    out = p.stdout.decode()
    assert "# Server" in out
    assert re.search(r"^redis_version:\d+\.\d+\.\d+\r?$", out, re.M)
    assert re.search(r"^tcp_port:%d\r?$" % server.port, out, re.M)
    p = cli(server, "INFO", "keyspace")
    assert p.stdout.decode().startswith("# Keyspace")


@needs_benchmark
def test_redis_benchmark_set_get(server, r):
    p = subprocess.run(["redis-benchmark", "-h", "127.0.0.1", "-p", str(server.port),
                        "-t", "set,get", "-n", "2000", "-q"],
                       capture_output=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    out = p.stdout.decode(errors="replace")
    # -q prints e.g. "SET: 64516.13 requests per second, p50=0.359 msec" (with progress
    # lines overwritten by carriage returns before it)
    for name in ("SET", "GET"):
        m = re.search(r"%s: ([0-9.]+) requests per second" % name, out)
        assert m, out
        assert float(m.group(1)) > 0
    assert "ERR" not in out
    # without -r the benchmark writes its 3-byte payload to the literal key:__rand_int__
    assert r.strlen("key:__rand_int__") == 3


def test_mset_is_atomic_for_concurrent_mget(server):
    keys = ["atomic:%d" % i for i in range(10)]
    setup = server.client(decode_responses=True)
    setup.mset({k: "round-init" for k in keys})
    setup.close()

    stop = threading.Event()
    errors = []
    stats = {"reads": 0, "writes": 0}
    lock = threading.Lock()

    def writer(wid):
        c = server.client(decode_responses=True)
        n = 0
        try:
            while not stop.is_set():
                value = "round-%d-%d" % (wid, n)
                c.mset({k: value for k in keys})
                n += 1
            with lock:
                stats["writes"] += n
        except Exception as e:  # pragma: no cover - reported below
            errors.append("writer %d: %r" % (wid, e))
        finally:
            c.close()

    def reader(rid):
        c = server.client(decode_responses=True)
        n = 0
        try:
            while not stop.is_set():
                vals = c.mget(keys)
                n += 1
                if len(set(vals)) != 1 or vals[0] is None:
                    errors.append("reader %d saw mixed values: %r" % (rid, vals))
                    stop.set()
            with lock:
                stats["reads"] += n
        except Exception as e:  # pragma: no cover
            errors.append("reader %d: %r" % (rid, e))
        finally:
            c.close()

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(3)]
    threads += [threading.Thread(target=reader, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    time.sleep(3.0)
    stop.set()
    for t in threads:
        t.join(timeout=20)
    assert not any(t.is_alive() for t in threads), "client threads hung"
    assert not errors, errors[:5]
    assert stats["writes"] > 0 and stats["reads"] > 0


def test_mset_pairs_stay_consistent_under_pipelines(server):
    """Several clients pipeline MSETs of a key pair that must always stay equal."""
    stop = threading.Event()
    errors = []

    def worker(wid):
        c = server.client(decode_responses=True)
        try:
            i = 0
            while not stop.is_set():
                p = c.pipeline(transaction=False)
                for j in range(20):
                    v = "%d-%d-%d" % (wid, i, j)
                    p.mset({"pair:a": v, "pair:b": v})
                    p.mget(["pair:a", "pair:b"])
                for res in p.execute()[1::2]:
                    if res[0] != res[1]:
                        errors.append(res)
                        stop.set()
                i += 1
        except Exception as e:  # pragma: no cover
            errors.append(repr(e))
        finally:
            c.close()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    time.sleep(1.5)
    stop.set()
    for t in threads:
        t.join(timeout=20)
    assert not any(t.is_alive() for t in threads)
    assert not errors, errors[:5]
