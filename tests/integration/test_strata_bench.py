"""strata-bench (tools/strata-bench) driven as a black box against a real server, and
against fake servers that refuse, drop, stall or garble.

Environment (besides conftest.py's):
  STRATA_BENCH_BIN   path to strata-bench (default: build/tools/strata-bench/strata-bench)

Every run is bounded (RUN_TIMEOUT_S); a strata-bench that hangs fails the test.
"""
import json
import os
import signal
import socket
import subprocess
import threading
import time

import pytest

from conftest import REPO, Server, free_port

STRATA_BENCH_BIN = os.environ.get(
    "STRATA_BENCH_BIN", os.path.join(REPO, "build", "tools", "strata-bench", "strata-bench"))
RUN_TIMEOUT_S = 60

pytestmark = pytest.mark.skipif(
    not os.access(STRATA_BENCH_BIN, os.X_OK),
    reason="strata-bench not built at %s (set STRATA_BENCH_BIN)" % STRATA_BENCH_BIN)


def run_bench(port, *args, timeout=RUN_TIMEOUT_S, json_path=None):
    """Runs strata-bench against 127.0.0.1:port; returns (CompletedProcess, json or None)."""
    cmd = [STRATA_BENCH_BIN, "-s", "127.0.0.1", "-p", str(port)] + [str(a) for a in args]
    if json_path is not None:
        cmd += ["--json-out-file", json_path]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)
    data = None
    if json_path is not None and os.path.exists(json_path):
        with open(json_path) as f:
            data = json.load(f)
    return proc, data


def table_row(stdout, name):
    """The figures of one row of the ALL STATS table, as strings."""
    for line in stdout.splitlines():
        parts = line.split()
        if parts and parts[0] == name:
            return parts[1:]
    raise AssertionError("no %s row in:\n%s" % (name, stdout))


def keys_looked_up(row):
    """Hits + misses of a JSON row, from its rates (all share one duration)."""
    return (row["Hits/sec"] + row["Misses/sec"]) / row["Ops/sec"] * row["Count"]


def test_short_run_counts_every_request(server, tmp_path):
    proc, j = run_bench(server.port, "-t", 2, "-c", 4, "-n", 500, "--ratio", "1:1",
                        "--key-maximum", 999, "-d", 50, "--hide-histogram",
                        json_path=str(tmp_path / "r.json"))
    assert proc.returncode == 0, proc.stderr
    stats = j["ALL STATS"]
    # 2 threads x 4 clients x 500 requests, exactly one SET per GET for every client.
    assert stats["Sets"]["Count"] == 2000
    assert stats["Gets"]["Count"] == 2000
    assert stats["Totals"]["Count"] == 4000
    assert stats["Totals"]["Connection Errors"] == 0
    assert stats["Totals"]["Error Replies"] == 0
    # Every GET is a hit or a miss.
    gets = stats["Gets"]
    assert keys_looked_up(gets) == pytest.approx(2000, abs=0.5)
    for row in ("Sets", "Gets", "Totals"):
        p = stats[row]["Percentile Latencies"]
        assert 0 < p["p50.00"] <= p["p99.00"] <= p["p99.90"] <= stats[row]["Max Latency"]
        assert stats[row]["Min Latency"] <= stats[row]["Average Latency"]
    # The text table says the same.
    assert "ALL STATS" in proc.stdout
    assert float(table_row(proc.stdout, "Totals")[0]) > 0
    assert "Request Latency Distribution" not in proc.stdout
    r = server.client()
    keys = r.keys("memtier-*")
    assert 0 < len(keys) <= 1000
    assert len(r.get(keys[0])) == 50
    r.close()


def test_rate_limiting_paces_each_connection(server, tmp_path):
    """--rate-limiting N: each connection sends N requests a second, on a schedule, so
    a run of R requests per connection lasts about R / N seconds whatever the server's
    speed."""
    start = time.monotonic()
    proc, j = run_bench(server.port, "-t", 1, "-c", 4, "-n", 100, "--rate-limiting", 200,
                        "--ratio", "1:1", "--key-maximum", 99, "--hide-histogram",
                        "--show-config", json_path=str(tmp_path / "r.json"))
    took = time.monotonic() - start
    assert proc.returncode == 0, proc.stderr
    assert "200 requests/s per client" in proc.stderr
    stats = j["ALL STATS"]
    assert stats["Totals"]["Count"] == 400
    assert stats["Totals"]["Connection Errors"] == 0
    # 100 requests at 200 a second: half a second, never less (the last one leaves at
    # 99 intervals after the first).
    assert took >= 0.49, took
    assert stats["Totals"]["Ops/sec"] <= 4 * 200 * 1.05
    # Unpaced, the same run is far quicker than that.
    start = time.monotonic()
    proc, _ = run_bench(server.port, "-t", 1, "-c", 4, "-n", 100, "--ratio", "1:1",
                        "--key-maximum", 99, "--hide-histogram")
    assert proc.returncode == 0, proc.stderr
    assert time.monotonic() - start < took


def test_allkeys_populates_every_key_then_gets_all_hit(server, tmp_path):
    proc, _ = run_bench(server.port, "-t", 2, "-c", 3, "--ratio", "1:0", "--key-pattern", "P:P",
                        "-n", "allkeys", "--key-minimum", 1, "--key-maximum", 5000, "-d", 20,
                        "--key-prefix", "pop:", "--hide-histogram")
    assert proc.returncode == 0, proc.stderr
    r = server.client()
    assert r.dbsize() == 5000
    assert r.exists(*["pop:%d" % i for i in (1, 2, 2500, 4999, 5000)]) == 5
    assert r.exists("pop:0", "pop:5001") == 0
    r.close()
    proc, j = run_bench(server.port, "-t", 2, "-c", 5, "--ratio", "0:1", "-n", 400,
                        "--key-minimum", 1, "--key-maximum", 5000, "--key-prefix", "pop:",
                        "--distinct-client-seed", "--pipeline", 8, "--hide-histogram",
                        json_path=str(tmp_path / "g.json"))
    assert proc.returncode == 0, proc.stderr
    gets = j["ALL STATS"]["Gets"]
    assert gets["Count"] == 4000
    assert gets["Misses/sec"] == 0
    assert gets["Hits/sec"] > 0
    assert table_row(proc.stdout, "Gets")[2] == "0.00"  # Misses/sec column


def test_allkeys_with_more_clients_than_keys_writes_each_key_once(server, tmp_path):
    proc, j = run_bench(server.port, "-t", 2, "-c", 10, "--ratio", "1:0", "--key-pattern",
                        "P:P", "-n", "allkeys", "--key-minimum", 0, "--key-maximum", 6,
                        "--hide-histogram", json_path=str(tmp_path / "a.json"))
    assert proc.returncode == 0, proc.stderr
    assert j["ALL STATS"]["Sets"]["Count"] == 7
    r = server.client()
    assert r.dbsize() == 7
    r.close()


def test_multi_key_set_and_get(server, tmp_path):
    proc, j = run_bench(server.port, "-t", 1, "-c", 2, "--ratio", "1:0", "--key-pattern", "P:P",
                        "-n", "allkeys", "--key-maximum", 999, "--multi-key-set", 10,
                        "--hide-histogram", json_path=str(tmp_path / "s.json"))
    assert proc.returncode == 0, proc.stderr
    assert j["ALL STATS"]["Sets"]["Count"] == 100  # 1000 keys / 10 per MSET
    r = server.client()
    assert r.dbsize() == 1000
    r.close()
    proc, j = run_bench(server.port, "-t", 1, "-c", 2, "--ratio", "0:1", "-n", 50,
                        "--key-maximum", 1999, "--multi-key-get", 4, "--hide-histogram",
                        json_path=str(tmp_path / "g.json"))
    assert proc.returncode == 0, proc.stderr
    gets = j["ALL STATS"]["Gets"]
    assert gets["Count"] == 100
    assert keys_looked_up(gets) == pytest.approx(400, abs=0.5)  # hits and misses per key
    assert gets["Hits/sec"] > 0 and gets["Misses/sec"] > 0  # half the range exists


def test_expiry_range_sets_ttls(server):
    proc, _ = run_bench(server.port, "-t", 1, "-c", 2, "--ratio", "1:0", "-n", 200,
                        "--key-maximum", 99, "--expiry-range", "100-200", "--hide-histogram")
    assert proc.returncode == 0, proc.stderr
    r = server.client()
    keys = r.keys("memtier-*")
    assert keys
    for k in keys:
        assert 95 <= r.ttl(k) <= 200
    r.close()


def test_data_size_range_random_and_sequential(server):
    proc, _ = run_bench(server.port, "-t", 1, "-c", 1, "--ratio", "1:0", "-n", 300,
                        "--key-pattern", "S:S", "--key-maximum", 299,
                        "--data-size-range", "5-9", "--data-size-pattern", "S",
                        "--hide-histogram")
    assert proc.returncode == 0, proc.stderr
    r = server.client()
    # Sequential: key n (the n-th SET of the one connection) gets size 5 + n % 5.
    for n in (0, 1, 4, 5, 299):
        assert r.strlen("memtier-%d" % n) == 5 + n % 5, n
    r.flushall()
    proc, _ = run_bench(server.port, "-t", 1, "-c", 2, "--ratio", "1:0", "-n", 500,
                        "--key-maximum", 999, "--data-size-range", "1-4", "--hide-histogram")
    assert proc.returncode == 0, proc.stderr
    sizes = {r.strlen(k) for k in r.keys("memtier-*")}
    assert sizes == {1, 2, 3, 4}
    r.close()


def test_select_db_and_histogram(server):
    proc, _ = run_bench(server.port, "-t", 1, "-c", 1, "--ratio", "1:0", "-n", 10,
                        "--key-pattern", "S:S", "--select-db", 3)
    assert proc.returncode == 0, proc.stderr
    r = server.client()
    assert r.dbsize() == 0
    r.execute_command("SELECT", 3)
    assert r.dbsize() == 10
    r.close()
    assert "Request Latency Distribution" in proc.stdout
    assert "\nSET " in proc.stdout and "100.000" in proc.stdout


def test_test_time_progress_and_out_file(server, tmp_path):
    out = tmp_path / "report.txt"
    start = time.monotonic()
    proc, j = run_bench(server.port, "-t", 1, "-c", 4, "--test-time", 2, "--pipeline", 4,
                        "--key-maximum", 999, "-o", str(out), json_path=str(tmp_path / "t.json"))
    elapsed = time.monotonic() - start
    assert proc.returncode == 0, proc.stderr
    assert 1.9 < elapsed < 15
    assert 1900 <= j["ALL STATS"]["Runtime"]["Total duration"] <= 10000
    assert j["ALL STATS"]["Totals"]["Count"] > 0
    assert proc.stdout == ""  # the report went to the file
    text = out.read_text()
    assert "2         Seconds" in text and "Totals" in text
    # One progress line per second on stderr (not a terminal: one line each).
    progress = [l for l in proc.stderr.splitlines() if l.startswith("[RUN #1 ")]
    assert len(progress) >= 1, proc.stderr
    assert "ops/sec" in progress[0] and "msec latency" in progress[0]


def test_pipelining_keeps_exact_counts(server, tmp_path):
    proc, j = run_bench(server.port, "-t", 2, "-c", 3, "--pipeline", 32, "-n", 1000,
                        "--ratio", "1:3", "--key-maximum", 9999, "--hide-histogram",
                        json_path=str(tmp_path / "p.json"))
    assert proc.returncode == 0, proc.stderr
    stats = j["ALL STATS"]
    assert stats["Totals"]["Count"] == 6000
    assert stats["Sets"]["Count"] == 1500  # 1:3 over whole cycles of each client
    assert stats["Gets"]["Count"] == 4500


def test_bad_arguments_exit_2(server):
    for args in (["--ratio", "0:0"], ["--key-pattern", "Q:Q"], ["-n", "0"], ["--bogus"],
                 ["--key-minimum", 10, "--key-maximum", 1]):
        proc, _ = run_bench(server.port, *args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert "strata-bench:" in proc.stderr and "--help" in proc.stderr
    proc, _ = run_bench(server.port, "--help")
    assert proc.returncode == 0
    assert "--key-pattern" in proc.stdout


def test_connection_refused_reports_and_exits_1():
    port = free_port()  # nothing listens here
    start = time.monotonic()
    proc, _ = run_bench(port, "-t", 2, "-c", 3, "-n", 10, "--hide-histogram")
    assert time.monotonic() - start < 10
    assert proc.returncode == 1
    assert "Connection refused" in proc.stderr
    assert "6 connection errors" in proc.stdout


def test_requirepass_error_replies_and_auth(server_factory, tmp_path):
    s = server_factory(extra_args=["--requirepass", "sekret"])
    # No password: every request gets -NOAUTH, counted as error replies, exit 1.
    proc, j = run_bench(s.port, "-t", 1, "-c", 2, "-n", 20, "--hide-histogram",
                        json_path=str(tmp_path / "e.json"))
    assert proc.returncode == 1
    assert j["ALL STATS"]["Totals"]["Error Replies"] == 40
    assert j["ALL STATS"]["Totals"]["Count"] == 0
    assert "NOAUTH" in proc.stdout and "NOAUTH" in proc.stderr
    # The right password: clean run.
    proc, _ = run_bench(s.port, "-t", 1, "-c", 2, "-n", 20, "-a", "sekret", "--hide-histogram")
    assert proc.returncode == 0, proc.stderr
    # A wrong one: AUTH fails, each connection is an error.
    proc, _ = run_bench(s.port, "-t", 1, "-c", 2, "-n", 20, "-a", "nope", "--hide-histogram")
    assert proc.returncode == 1
    assert "2 connection errors" in proc.stdout
    assert "setup command failed" in proc.stderr


class FakeServer:
    """A loopback listener whose connections get `behaviour(conn)` on a thread."""

    def __init__(self, behaviour):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.behaviour = behaviour
        self.stopping = threading.Event()
        self.conns = []
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self):
        while not self.stopping.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.conns.append(conn)
            threading.Thread(target=self.behaviour, args=(conn, self.stopping),
                             daemon=True).start()

    def close(self):
        self.stopping.set()
        self.thread.join(5)
        self.sock.close()
        for c in self.conns:
            try:
                c.close()
            except OSError:
                pass


def silent(conn, stopping):
    """Reads requests and never answers."""
    conn.settimeout(0.2)
    while not stopping.is_set():
        try:
            if not conn.recv(65536):
                return
        except socket.timeout:
            continue
        except OSError:
            return


def garbage(conn, stopping):
    """Answers the first request with bytes that are not RESP."""
    conn.settimeout(2)
    try:
        conn.recv(65536)
        conn.sendall(b"?this is not RESP\r\n")
        while not stopping.is_set() and conn.recv(65536):
            pass
    except OSError:
        pass


def hang_up(conn, stopping):
    """Answers the first request, then closes the connection."""
    conn.settimeout(2)
    try:
        conn.recv(65536)
        conn.sendall(b"+OK\r\n")
        time.sleep(0.1)
    except OSError:
        pass
    conn.close()


def chatty(conn, stopping):
    """Answers the first request twice."""
    conn.settimeout(2)
    try:
        conn.recv(65536)
        conn.sendall(b"+OK\r\n+OK\r\n")
        while not stopping.is_set() and conn.recv(65536):
            pass
    except OSError:
        pass


def test_silent_server_times_out_instead_of_hanging():
    fake = FakeServer(silent)
    try:
        start = time.monotonic()
        proc, _ = run_bench(fake.port, "-t", 1, "-c", 3, "-n", 100, "--pipeline", 4,
                            "--reply-timeout", 1, "--hide-histogram")
        assert time.monotonic() - start < 10
        assert proc.returncode == 1
        assert "no reply for 1 s" in proc.stderr
        assert "3 connection errors, 12 requests lost in flight" in proc.stdout
    finally:
        fake.close()


def test_malformed_reply_is_a_connection_error():
    fake = FakeServer(garbage)
    try:
        proc, _ = run_bench(fake.port, "-t", 1, "-c", 2, "-n", 10, "--reply-timeout", 5,
                            "--hide-histogram", timeout=30)
        assert proc.returncode == 1
        assert "malformed reply" in proc.stderr
    finally:
        fake.close()


def test_server_closing_connections_is_reported():
    fake = FakeServer(hang_up)
    try:
        proc, _ = run_bench(fake.port, "-t", 1, "-c", 2, "-n", 1000, "--pipeline", 1,
                            "--reply-timeout", 5, "--hide-histogram", timeout=30)
        assert proc.returncode == 1
        assert "2 connection errors" in proc.stdout
        # Depending on timing the client sees the close, a reset, or a failed send.
        assert any(m in proc.stderr for m in ("server closed the connection",
                                              "Connection reset", "Broken pipe")), proc.stderr
    finally:
        fake.close()


def test_reply_without_request_is_a_connection_error():
    fake = FakeServer(chatty)
    try:
        proc, _ = run_bench(fake.port, "-t", 1, "-c", 1, "-n", 10, "--reply-timeout", 5,
                            "--hide-histogram", timeout=30)
        assert proc.returncode == 1
        assert "reply without a request" in proc.stderr
    finally:
        fake.close()


def test_server_killed_mid_run_ends_the_run(server_factory):
    s = server_factory()
    cmd = [STRATA_BENCH_BIN, "-p", str(s.port), "-t", 2, "-c", 4, "--test-time", 60,
           "--pipeline", 8, "--hide-histogram", "--reply-timeout", 5]
    proc = subprocess.Popen([str(a) for a in cmd], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    try:
        time.sleep(1.0)
        s.proc.kill()
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)
    assert proc.returncode == 1
    assert "8 connection errors" in out
    assert float(table_row(out, "Totals")[0]) > 0  # what was done before is reported


def test_sigint_stops_and_reports(server):
    cmd = [STRATA_BENCH_BIN, "-p", str(server.port), "-t", 1, "-c", 2, "--test-time", 60,
           "--hide-histogram"]
    proc = subprocess.Popen([str(a) for a in cmd], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    try:
        time.sleep(1.0)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)
    assert proc.returncode == 0, err
    assert "interrupted" in err
    assert float(table_row(out, "Totals")[0]) > 0


def test_second_sigint_ends_a_draining_run_at_once():
    fake = FakeServer(silent)  # replies never come, so the first SIGINT drains for long
    cmd = [STRATA_BENCH_BIN, "-p", str(fake.port), "-t", 1, "-c", 2, "--test-time", 60,
           "--reply-timeout", 60, "--hide-histogram"]
    proc = subprocess.Popen([str(a) for a in cmd], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    try:
        time.sleep(1.0)
        proc.send_signal(signal.SIGINT)
        time.sleep(0.5)
        assert proc.poll() is None  # still waiting for the replies in flight
        start = time.monotonic()
        proc.send_signal(signal.SIGINT)
        proc.wait(10)
        assert time.monotonic() - start < 5
        assert proc.returncode == -signal.SIGINT
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)
        proc.stdout.close()
        proc.stderr.close()
        fake.close()
