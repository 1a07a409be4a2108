"""node-redis and ioredis, real Node.js clients, against the server.

scripts/test installs them (npm, tests/clients/node) and sets
STRATA_REQUIRE_NODE_CLIENTS=1, so in CI a missing install fails instead of skipping."""
import os
import shutil
import subprocess

import pytest

from conftest import REPO

NODE_DIR = os.path.join(REPO, "tests", "clients", "node")


def run_node_check(script, port, ok_line):
    """Runs tests/clients/node/SCRIPT against PORT and asserts it printed OK_LINE; skips
    (or, in CI, fails) when node or the client packages are missing."""
    installed = os.path.isdir(os.path.join(NODE_DIR, "node_modules", "ioredis")) and \
        os.path.isdir(os.path.join(NODE_DIR, "node_modules", "redis"))
    if shutil.which("node") is None or not installed:
        if os.environ.get("STRATA_REQUIRE_NODE_CLIENTS") == "1":
            pytest.fail("node or the client packages in tests/clients/node are missing")
        pytest.skip("node clients not installed (scripts/test installs them)")
    p = subprocess.run(["node", os.path.join(NODE_DIR, script), str(port)],
                       capture_output=True, timeout=60, cwd=NODE_DIR)
    assert p.returncode == 0, (p.stdout + p.stderr).decode(errors="replace")
    assert ok_line in p.stdout


def test_node_redis_and_ioredis(server):
    run_node_check("check.js", server.port, b"node clients OK")
