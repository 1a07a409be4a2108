"""The .deb and .rpm (scripts/package), installed for real.

These tests change the machine: they install the .deb with dpkg, create the strata user,
and purge it all again at the end. So they run only as root and only when asked:
CI=true (scripts/test under .ci/run) or STRATA_PACKAGE_TESTS=1. The tests run in file
order, each building on the one before (build, lintian, install, run, remove, purge);
the module fixture purges the package whatever happens.

Environment:
  STRATA_PACKAGE_TESTS  1 to run outside CI
  STRATA_PACKAGES_DIR   use packages built already (default: build them with
                        SKIP_BUILD=1 scripts/package into build/packages)
"""
import glob
import os
import pwd
import re
import shutil
import socket
import subprocess
import tempfile
import time

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENABLED = os.environ.get("CI") == "true" or os.environ.get("STRATA_PACKAGE_TESTS") == "1"
TIMEOUT_S = 600

pytestmark = [
    pytest.mark.skipif(not ENABLED, reason="changes the machine; set STRATA_PACKAGE_TESTS=1"),
    pytest.mark.skipif(os.geteuid() != 0, reason="installs packages: needs root"),
]


def run(*cmd, check=True, timeout=TIMEOUT_S, **kw):
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL, **kw)
    if check and proc.returncode != 0:
        raise AssertionError("%s exited %d\nstdout:\n%s\nstderr:\n%s"
                             % (" ".join(map(str, cmd)), proc.returncode, proc.stdout,
                                proc.stderr))
    return proc


def dpkg_status(name="strata"):
    proc = run("dpkg-query", "-W", "-f=${db:Status-Abbrev}", name, check=False)
    return proc.stdout.strip() if proc.returncode == 0 else ""


def purge():
    if dpkg_status():
        run("dpkg", "--purge", "strata", check=False)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def user_exists(name):
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


@pytest.fixture(scope="module")
def packages():
    purge()  # a leftover from an interrupted run
    out = os.environ.get("STRATA_PACKAGES_DIR")
    if not out:
        env = dict(os.environ, SKIP_BUILD="1")
        run(os.path.join(REPO, "scripts", "package"), env=env, cwd=REPO)
        out = os.path.join(REPO, "build", "packages")
    debs = glob.glob(os.path.join(out, "strata_*.deb"))
    rpms = glob.glob(os.path.join(out, "strata-*.rpm"))
    assert len(debs) == 1 and len(rpms) == 1, os.listdir(out)
    yield {"deb": debs[0], "rpm": rpms[0]}
    purge()


def project_version():
    with open(os.path.join(REPO, "CMakeLists.txt")) as f:
        return re.search(r"project\(strata VERSION ([0-9.]+)", f.read()).group(1)


def test_deb_metadata(packages):
    info = run("dpkg-deb", "--info", packages["deb"]).stdout
    assert re.search(r"^ Package: strata$", info, re.M)
    assert re.search(r"^ Version: %s$" % re.escape(project_version()), info, re.M)
    assert "Description: Redis-compatible" in info
    depends = re.search(r"^ Depends: (.*)$", info, re.M).group(1)
    # From dpkg-shlibdeps: the libraries the binaries link.
    for lib in ("libc6", "liburing2", "libstdc++6"):
        assert lib in depends, depends
    files = run("dpkg-deb", "--contents", packages["deb"]).stdout
    for path in ("./usr/bin/strata-server", "./usr/bin/strata-mem", "./usr/bin/strata-bench",
                 "./usr/bin/strata-dump",
                 "./etc/strata/strata.conf", "./etc/logrotate.d/strata-server",
                 "./lib/systemd/system/strata-server.service",
                 "./lib/systemd/system/strata-server@.service",
                 "./usr/share/doc/strata/copyright", "./usr/share/doc/strata/changelog.gz"):
        assert path in files, path
    with tempfile.TemporaryDirectory() as tmp:
        run("dpkg-deb", "--control", packages["deb"], tmp)
        with open(os.path.join(tmp, "conffiles")) as f:
            conffiles = f.read().split()
        assert "/etc/strata/strata.conf" in conffiles
        for script in ("postinst", "prerm", "postrm"):
            assert os.access(os.path.join(tmp, script), os.X_OK), script


def test_lintian_reports_no_errors(packages):
    proc = run("lintian", "--fail-on", "error", "--no-tag-display-limit", packages["deb"],
               check=False)
    errors = [l for l in proc.stdout.splitlines() if l.startswith("E:")]
    assert proc.returncode == 0 and not errors, proc.stdout + proc.stderr


def test_install_creates_user_dirs_and_config(packages):
    run("dpkg", "-i", packages["deb"])
    assert dpkg_status() == "ii"
    assert user_exists("strata")
    for d in ("/var/lib/strata", "/var/log/strata"):
        st = os.stat(d)
        assert pwd.getpwuid(st.st_uid).pw_name == "strata", d
        assert oct(st.st_mode & 0o777) == "0o750", d
    st = os.stat("/etc/strata/strata.conf")
    assert oct(st.st_mode & 0o777) == "0o640"
    with open("/etc/strata/strata.conf") as f:
        conf = f.read()
    # Every option the server knows is listed with its default.
    options = run("/usr/bin/strata-server", "--print-config").stdout
    names = re.findall(r"^# ([a-z0-9-]+) ", options, re.M)
    assert len(names) > 40
    for name in names:
        assert re.search(r"^# %s " % re.escape(name), conf, re.M), name
    assert re.search(r"^dir /var/lib/strata$", conf, re.M)
    assert re.search(r"^logfile /var/log/strata/strata-server.log$", conf, re.M)
    for prog in ("strata-server", "strata-mem", "strata-bench", "strata-dump"):
        help_text = run("/usr/bin/" + prog, "--help").stdout
        assert "--" in help_text and len(help_text) > 500, prog


def test_runs_as_strata_user_with_packaged_config(packages):
    port = free_port()
    log_path = "/var/log/strata/strata-server.log"
    server = subprocess.Popen(
        ["runuser", "-u", "strata", "--", "/usr/bin/strata-server", "/etc/strata/strata.conf",
         "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        pong = ""
        while time.monotonic() < deadline:
            proc = run("redis-cli", "-p", port, "PING", check=False, timeout=5)
            pong = proc.stdout.strip()
            if pong == "PONG":
                break
            assert server.poll() is None, server.stdout.read().decode()
            time.sleep(0.1)
        assert pong == "PONG"
        assert run("redis-cli", "-p", port, "SET", "k", "v").stdout.strip() == "OK"
        assert run("redis-cli", "-p", port, "SAVE").stdout.strip() == "OK"
        assert run("redis-cli", "-p", port, "CONFIG", "GET", "dir").stdout.split() == [
            "dir", "/var/lib/strata"]
        saved = os.listdir("/var/lib/strata")
        assert "dump.strata" in saved, saved
        for name in saved:
            st = os.stat(os.path.join("/var/lib/strata", name))
            assert pwd.getpwuid(st.st_uid).pw_name == "strata", name
        with open(log_path) as f:
            log = f.read()
        assert "Ready to accept connections" in log
        run("redis-cli", "-p", port, "SHUTDOWN", check=False)
        assert server.wait(30) == 0
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(10)


def test_remove_leaves_only_the_config(packages):
    run("dpkg", "--remove", "strata")
    assert dpkg_status() == "rc"  # removed, config files remain
    for path in ("/usr/bin/strata-server", "/usr/bin/strata-bench", "/usr/bin/strata-mem",
                 "/usr/bin/strata-dump",
                 "/lib/systemd/system/strata-server.service",
                 "/usr/share/doc/strata/copyright"):
        assert not os.path.exists(path), path
    assert os.path.exists("/etc/strata/strata.conf")
    assert os.path.exists("/etc/logrotate.d/strata-server")
    # Of the package only its conffiles stay; the data written at run time, the logs and
    # the user stay too until purge, as with Debian's redis-server (removing a package
    # must not delete a database).
    owned = run("dpkg-query", "-L", "strata", check=False).stdout.split()
    conffiles = {"/etc/strata/strata.conf", "/etc/logrotate.d/strata-server"}
    for path in owned:
        assert path in conffiles or os.path.isdir(path), path
    assert "dump.strata" in os.listdir("/var/lib/strata")
    assert user_exists("strata")


def test_purge_leaves_nothing(packages):
    run("dpkg", "--purge", "strata")
    assert dpkg_status() == ""
    for path in ("/etc/strata", "/etc/logrotate.d/strata-server", "/var/lib/strata",
                 "/var/log/strata"):
        assert not os.path.exists(path), path
    assert not user_exists("strata")


def test_rpm_files_requires_and_scripts(packages):
    rpm = packages["rpm"]
    info = run("rpm", "-qpi", rpm).stdout
    assert re.search(r"^Version\s*: %s$" % re.escape(project_version()), info, re.M)
    assert re.search(r"^License\s*: BSD-3-Clause$", info, re.M)
    files = run("rpm", "-qpl", rpm).stdout.split()
    for path in ("/usr/bin/strata-server", "/usr/bin/strata-mem", "/usr/bin/strata-bench",
                 "/usr/bin/strata-dump",
                 "/etc/strata/strata.conf", "/etc/logrotate.d/strata-server",
                 "/usr/lib/systemd/system/strata-server.service",
                 "/usr/lib/systemd/system/strata-server@.service"):
        assert path in files, path
    config = run("rpm", "-qpc", rpm).stdout.split()
    assert "/etc/strata/strata.conf" in config
    requires = run("rpm", "-qpR", rpm).stdout
    # rpm's automatic requires, from the binaries' shared libraries.
    for lib in ("liburing.so.2", "libstdc++.so.6", "libc.so.6"):
        assert lib in requires, requires
    scripts = run("rpm", "-qp", "--scripts", rpm).stdout
    assert "useradd -r -g strata" in scripts
    assert "install -d -o strata -g strata -m 0750 /var/lib/strata" in scripts
    assert "systemctl" in scripts
