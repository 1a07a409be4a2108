"""unixsocket and unixsocketperm: clients on a Unix socket beside (or instead of) TCP,
as Redis serves them; the same tests run against redis-server (STRATA_TEST_TARGET=redis)."""
import os
import shutil
import socket as sk
import stat
import subprocess

import pytest
import redis

from conftest import TARGET


def test_a_unix_socket(server_factory, tmp_path):
    """unixsocket and unixsocketperm, as Redis: clients connect on the path too, the
    socket gets the permissions given in octal, CLIENT INFO shows the path as both
    addresses, the setting is fixed at start, and the socket goes when the server stops.
    A stale socket left at the path by a server that died is replaced."""
    path = str(tmp_path / "s.sock")
    stale = sk.socket(sk.AF_UNIX, sk.SOCK_STREAM)
    stale.bind(path)
    stale.close()  # the file stays, nobody listens
    s = server_factory(extra_args=["--unixsocket", path, "--unixsocketperm", "700"])
    c = redis.Redis(unix_socket_path=path, socket_timeout=10, decode_responses=True)
    assert c.ping()
    c.set("unix:k", "v")
    assert s.client().get("unix:k") == b"v"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o700
    info = c.client_info()
    assert info["addr"] == path + ":0" and info["laddr"] == path + ":0", info
    assert c.config_get("unixsocket") == {"unixsocket": path}
    with pytest.raises(redis.ResponseError):
        c.config_set("unixsocket", path + "2")
    if shutil.which("redis-cli"):
        out = subprocess.run(["redis-cli", "-s", path, "GET", "unix:k"], capture_output=True,
                             timeout=30)
        assert out.stdout.strip() == b"v"
    c.close()
    s.stop()
    assert not os.path.exists(path)


@pytest.mark.skipif(TARGET == "redis", reason="Redis takes the path over")
def test_a_unix_socket_another_server_listens_on_is_refused(server_factory, tmp_path):
    path = str(tmp_path / "s.sock")
    s = server_factory(extra_args=["--unixsocket", path])
    other = server_factory(extra_args=["--unixsocket", path], expect_fail=True)
    assert other.wait_exit(10) not in (None, 0)
    assert "another server listens on " + path in other.read_log()
    assert redis.Redis(unix_socket_path=path, socket_timeout=10).ping()
    s.stop()
