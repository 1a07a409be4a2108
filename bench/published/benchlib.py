"""Shared helpers for bench/published/*.py (standard library only).

Servers: start strata-server / redis-server pinned with taskset on a free loopback port,
wait for PING with a bounded timeout, stop them on exit (also on an error, Ctrl-C,
SIGTERM or SIGHUP). A tiny RESP client talks to them (PING, FLUSHALL, DBSIZE, INFO,
pipelined SETs). Commands run through run_cmd(), which bounds every wait and kills the
whole process group on a timeout. Nothing here is specific to one script.
"""
import atexit
import datetime
import hashlib
import json
import os
import platform
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RESULTS_DIR = os.path.join(ROOT, "bench", "results")

_servers = []    # Server objects still running, stopped at exit
_children = []   # Popen objects of commands in flight (killed at exit)


class BenchError(Exception):
    """A failed step; the message says which and why."""


def log(msg):
    print("[%s] %s" % (time.strftime("%H:%M:%S"), msg), file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------- cleanup

def _kill_group(p, sig):
    try:
        os.killpg(p.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def cleanup():
    """Kills commands in flight and stops every server still running. Idempotent."""
    while _children:
        p = _children.pop()
        if p.poll() is None:
            _kill_group(p, signal.SIGKILL)
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
    while _servers:
        _servers[-1].stop()


def _on_signal(signum, _frame):
    # Turn SIGTERM / SIGHUP into an exception so that `finally` blocks and atexit run.
    raise SystemExit(128 + signum)


def install_cleanup():
    atexit.register(cleanup)
    # Ctrl-C -> KeyboardInterrupt even when started in the background of a non-interactive
    # shell (which would otherwise leave SIGINT ignored).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for s in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, _on_signal)


# ----------------------------------------------------------------------------- helpers

def free_port():
    """A loopback port that was free a moment ago (bound on port 0 and closed again)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
    finally:
        s.close()


def parse_cpu_list(spec):
    """taskset -c list ("0", "0-3,6") -> sorted list of ints; raises ValueError."""
    cpus = set()
    for part in spec.split(","):
        part = part.strip()
        if not part:
            raise ValueError("empty item in CPU list %r" % spec)
        if "-" in part:
            a, b = part.split("-", 1)
            a, b = int(a), int(b)
            if b < a:
                raise ValueError("bad range %r in CPU list %r" % (part, spec))
            cpus.update(range(a, b + 1))
        else:
            cpus.add(int(part))
    return sorted(cpus)


def check_cpus(name, spec):
    """Validates a taskset list against the CPUs this process may use."""
    try:
        cpus = parse_cpu_list(spec)
    except ValueError as e:
        raise BenchError("%s: %s" % (name, e))
    allowed = os.sched_getaffinity(0)
    missing = [c for c in cpus if c not in allowed]
    if missing:
        raise BenchError("%s %s: CPU(s) %s not available here (allowed: %s)"
                         % (name, spec, missing, sorted(allowed)))
    return cpus


def check_label_and_cpus(parser, a):
    """argparse checks shared by the scripts: --label's characters and both CPU lists.
    Reports a bad value through parser.error (exit status 2)."""
    if a.label and not a.label.replace("-", "").replace("_", "").replace(".", "").isalnum():
        parser.error("--label: letters, digits, '-', '_' and '.' only")
    for flag, spec in (("--server-cpus", a.server_cpus), ("--client-cpus", a.client_cpus)):
        try:
            check_cpus(flag, spec)
        except BenchError as e:
            parser.error(str(e))


def run_paths(a, kind, name):
    """Sets a.stamp; returns (out_dir, scratch, base): the results folder (--out-dir,
    relative to the repo root), this run's scratch folder under bench/results/tmp and the
    results' path without extension, <out_dir>/<stamp>-<name>."""
    a.stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    out_dir = a.out_dir if os.path.isabs(a.out_dir) else os.path.join(ROOT, a.out_dir)
    scratch = os.path.join(RESULTS_DIR, "tmp", "%s-%s-%d" % (kind, a.stamp, os.getpid()))
    return out_dir, scratch, os.path.join(out_dir, "%s-%s" % (a.stamp, name))


def staged_binary(path, shown, flag, scratch):
    """Copies a project binary into scratch (snapshot_bin); returns (copy, "<version>
    (<shown>; <build id>)") for the report. Raises BenchError without a version."""
    copy, build_id = snapshot_bin(path, scratch)
    return copy, "%s (%s; %s)" % (require_version(copy, flag), shown, build_id)


def resolve_bin(path, what):
    """Absolute path of an executable given as a path (relative to the repo root or the
    current directory) or a bare name looked up in PATH."""
    if os.sep in path:
        for cand in (path, os.path.join(ROOT, path)):
            if os.path.isfile(cand) and os.access(cand, os.X_OK):
                return os.path.abspath(cand)
        raise BenchError("%s: %s is not an executable file" % (what, path))
    found = shutil.which(path)
    if not found:
        raise BenchError("%s: %s not found in PATH" % (what, path))
    return found


def snapshot_bin(path, scratch):
    """Copies a binary into scratch (the tree may be rebuilt during a long run) and
    returns (copy, 'mtime sha256:prefix')."""
    dst = os.path.join(scratch, "bin-" + os.path.basename(path))
    shutil.copy2(path, dst)
    h = hashlib.sha256()
    with open(dst, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    mtime = datetime.datetime.fromtimestamp(os.path.getmtime(path)).strftime("%Y-%m-%d %H:%M:%S")
    return dst, "built %s, sha256 %s" % (mtime, h.hexdigest()[:12])


def run_cmd(cmd, timeout, stdout_path=None, cpus=None, check=True, what=None):
    """Runs cmd (a list), optionally pinned with taskset, with a hard timeout. stdout and
    stderr go to stdout_path (+ '.err') if given, else are captured. Returns
    (returncode, stdout_text, stderr_text). Raises BenchError on timeout, or on a
    non-zero exit when check is set."""
    full = (["taskset", "-c", cpus] if cpus else []) + list(cmd)
    what = what or os.path.basename(cmd[0])
    out_f = open(stdout_path, "w+") if stdout_path else None
    err_f = open(stdout_path + ".err", "w+") if stdout_path else None
    try:
        p = subprocess.Popen(full, stdin=subprocess.DEVNULL,
                             stdout=out_f or subprocess.PIPE, stderr=err_f or subprocess.PIPE,
                             text=True, start_new_session=True)
        _children.append(p)
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(p, signal.SIGKILL)
            p.wait(timeout=10)
            raise BenchError("%s did not finish within %ss: %s" % (what, timeout, shlex.join(full)))
        except BaseException:
            # Ctrl-C, SIGTERM: the child runs in its own session and would outlive us.
            _kill_group(p, signal.SIGKILL)
            p.wait(timeout=10)
            raise
        finally:
            if p in _children:
                _children.remove(p)
        if out_f:
            out_f.seek(0)
            err_f.seek(0)
            out, err = out_f.read(), err_f.read()
        if check and p.returncode != 0:
            tail = (err or out or "").strip().splitlines()[-8:]
            raise BenchError("%s exited with status %s: %s\n    %s"
                             % (what, p.returncode, shlex.join(full), "\n    ".join(tail)))
        return p.returncode, out, err
    finally:
        if out_f:
            out_f.close()
            err_f.close()


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def machine_info():
    """Kernel, nproc, CPU model, git revision."""
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    git = ""
    try:
        git = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"],
                             capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        pass
    return {"kernel": platform.release(), "nproc": str(os.cpu_count() or ""),
            "cpus_allowed": str(len(os.sched_getaffinity(0))),
            "cpu": model or platform.processor() or "unknown", "git": git,
            "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds")}


def require_version(binary, what):
    """The first line of `binary --version`; raises BenchError when it does not run (e.g. a
    binary copied while the build was still writing it)."""
    try:
        r = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise BenchError("%s: %s --version failed: %s" % (what, binary, e))
    lines = (r.stdout or r.stderr).strip().splitlines()
    if r.returncode != 0 or not lines:
        raise BenchError("%s: %s --version exited with status %d" % (what, binary, r.returncode))
    return lines[0]


def version_of(binary, flag="--version"):
    try:
        r = subprocess.run([binary, flag], capture_output=True, text=True, timeout=10)
        return (r.stdout or r.stderr).strip().splitlines()[0]
    except (OSError, subprocess.TimeoutExpired, IndexError):
        return "unknown"


def command_line():
    return shlex.join([os.path.relpath(sys.argv[0], ROOT) if os.path.isabs(sys.argv[0])
                       else sys.argv[0]] + sys.argv[1:])


def md_table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        out.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(out)


def fmt(x, nd=3):
    if x is None:
        return ""
    if isinstance(x, float):
        return "%.*f" % (nd, x)
    return str(x)


# ----------------------------------------------------------------------------- RESP

class RespError(Exception):
    pass


class Resp:
    """Minimal blocking RESP2 client (enough for admin commands and bulk loading)."""

    def __init__(self, port, host="127.0.0.1", timeout=10.0):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    @staticmethod
    def encode(*args):
        parts = [b"*%d\r\n" % len(args)]
        for a in args:
            if not isinstance(a, bytes):
                a = str(a).encode()
            parts.append(b"$%d\r\n%s\r\n" % (len(a), a))
        return b"".join(parts)

    def _fill(self):
        chunk = self.sock.recv(1 << 20)
        if not chunk:
            raise ConnectionError("server closed the connection")
        self.buf += chunk

    def _line(self):
        while True:
            i = self.buf.find(b"\r\n")
            if i >= 0:
                line, self.buf = self.buf[:i], self.buf[i + 2:]
                return line
            self._fill()

    def read(self):
        line = self._line()
        t, rest = line[:1], line[1:]
        if t == b"+":
            return rest.decode()
        if t == b"-":
            return RespError(rest.decode())
        if t == b":":
            return int(rest)
        if t == b"$":
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                self._fill()
            data, self.buf = self.buf[:n], self.buf[n + 2:]
            return data
        if t == b"*":
            n = int(rest)
            return None if n < 0 else [self.read() for _ in range(n)]
        raise ConnectionError("bad RESP reply %r" % line[:80])

    def cmd(self, *args):
        self.sock.sendall(self.encode(*args))
        r = self.read()
        if isinstance(r, RespError):
            raise r
        return r

    def info(self, section=None):
        raw = self.cmd("INFO", section) if section else self.cmd("INFO")
        out = {}
        for line in raw.decode(errors="replace").splitlines():
            if ":" in line and not line.startswith("#"):
                k, v = line.split(":", 1)
                out[k] = v.strip()
        return out

    def pipeline_set(self, keys_and_values, batch=2000):
        """SETs every (key, value) pair, `batch` commands per round trip; returns the
        number of OK replies, raises on an error reply."""
        ok = 0
        items = list(keys_and_values)
        for i in range(0, len(items), batch):
            chunk = items[i:i + batch]
            self.sock.sendall(b"".join(self.encode(b"SET", k, v) for k, v in chunk))
            for _ in chunk:
                r = self.read()
                if isinstance(r, RespError):
                    raise r
                ok += 1
        return ok


# ----------------------------------------------------------------------------- servers

class Server:
    """A strata-server or redis-server child, pinned with taskset, on a free port."""

    def __init__(self, kind, binary, cpus, workdir, threads=1, extra_args=()):
        self.kind = kind          # "strata" or "redis"
        self.binary = binary
        self.cpus = cpus
        self.threads = threads
        self.workdir = os.path.join(workdir, kind + "-data")
        self.logfile = os.path.join(workdir, kind + ".log")
        self.extra_args = list(extra_args)
        self.proc = None
        self.port = None

    def _args(self):
        common = ["--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                  "--appendonly", "no", "--dir", self.workdir, "--logfile", self.logfile]
        if self.kind == "strata":
            return [self.binary] + common + ["--threads", str(self.threads)] + self.extra_args
        return [self.binary] + common + ["--io-threads", "1", "--daemonize", "no",
                                         "--maxmemory", "0"] + self.extra_args

    def start(self, ready_timeout=30.0, attempts=3):
        """Starts the server and waits for PONG; retries on another port if the chosen
        one was taken in the meantime."""
        os.makedirs(self.workdir, exist_ok=True)
        last = ""
        for _ in range(attempts):
            self.port = free_port()
            cmd = ["taskset", "-c", self.cpus] + self._args()
            with open(self.logfile + ".stderr", "a") as err:
                self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                             stdout=subprocess.DEVNULL, stderr=err,
                                             start_new_session=True)
            _servers.append(self)
            try:
                self.wait_ready(ready_timeout)
                log("%s-server up: port %d, pid %d, cpus %s%s" % (
                    self.kind, self.port, self.proc.pid, self.cpus,
                    ", threads %d" % self.threads if self.kind == "strata" else ""))
                return self
            except BenchError as e:
                last = str(e)
                self.stop()
        raise BenchError("%s-server did not start: %s (log: %s)" % (self.kind, last, self.logfile))

    def wait_ready(self, timeout):
        deadline = time.monotonic() + timeout
        err = "no answer"
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise BenchError("exited with status %s" % self.proc.returncode)
            try:
                c = Resp(self.port, timeout=2.0)
                try:
                    if c.cmd("PING") == "PONG":
                        return
                finally:
                    c.close()
            except (OSError, ConnectionError, RespError) as e:
                err = str(e)
            time.sleep(0.05)
        raise BenchError("no PONG within %.0fs (%s)" % (timeout, err))

    def client(self, timeout=30.0):
        return Resp(self.port, timeout=timeout)

    def cmd(self, *args, timeout=60.0):
        c = self.client(timeout)
        try:
            return c.cmd(*args)
        finally:
            c.close()

    def info(self, section=None):
        c = self.client()
        try:
            return c.info(section)
        finally:
            c.close()

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout=10.0):
        if self.proc is not None and self.proc.poll() is None:
            try:
                self.proc.terminate()   # taskset exec()s the server: this is its pid
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                try:
                    self.proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    pass
        if self in _servers:
            _servers.remove(self)


def cpu_ticks(pid):
    """utime + stime of a process (all threads) in clock ticks, or None."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, IndexError, ValueError):
        return None


# ----------------------------------------------------------------------------- strata-bench

def bench_stats(path):
    """Reads a strata-bench / memtier --json-out-file; returns {row: {...}} for the rows
    Sets, Gets, Waits, Totals of "ALL STATS" plus "Runtime". Raises BenchError when the
    file is missing or malformed."""
    try:
        with open(path) as f:
            doc = json.load(f)
        stats = doc["ALL STATS"]
        for row in ("Sets", "Gets", "Totals"):
            stats[row]["Ops/sec"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise BenchError("strata-bench JSON %s unreadable: %s: %s" % (path, type(e).__name__, e))
    return stats


def pct(row, name):
    """Percentile from a JSON row: name "p99.00" etc.; None when absent."""
    v = (row.get("Percentile Latencies") or {}).get(name)
    return float(v) if v is not None else None


def avg_latency(row):
    for k in ("Average Latency", "Latency"):
        if row.get(k) is not None:
            return float(row[k])
    return None
