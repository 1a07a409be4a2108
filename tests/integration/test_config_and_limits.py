"""Config file and command-line configuration, and the connection/request limits:
maxclients, client-query-buffer-limit, proto-max-bulk-len.

Checked against redis-server 7.0. The harness puts the config file first on the command
line and its own flags (--port, --bind, --save, --appendonly, --dir) after it, so those
flags always override the file.
"""
import os

import helpers
from conftest import RawConnection, free_port
from helpers import cmd, read_until_closed, roundtrip, send_then_read_until_closed, wait_for


def config(c, name):
    return c.config_get(name).get(name)


def expect_start_failure(server_factory, **kw):
    s = server_factory(expect_fail=True, **kw)
    rc = s.wait_exit(10)
    assert rc is not None, "server did not exit:\n" + s.read_log()
    assert rc != 0
    return s, s.read_log()


def kill_other_clients(c):
    """Closes every other connection (e.g. the harness's readiness probe) by id and waits
    until the server counts only this one."""
    helpers.kill_other_clients(c)
    wait_for(lambda: int(c.info("clients")["connected_clients"]) == 1,
             what="other clients to go away")


# ---------------------------------------------------------------- config file

CONFIG_FILE = """# strata test configuration
# (comments and blank lines are ignored)

port {file_port}
save ""
appendonly no
maxmemory 4gb
databases 8
   maxmemory-policy "allkeys-lru"
maxmemory-samples '7'

# trailing comment
"""


def test_config_file_is_honoured(server_factory):
    s = server_factory(config_text=CONFIG_FILE.format(file_port=free_port()))
    c = s.client(decode_responses=True)
    # --port on the command line (added by the harness) wins over the file
    assert config(c, "port") == str(s.port)
    assert config(c, "maxmemory") == "4294967296"
    assert config(c, "databases") == "8"
    assert config(c, "maxmemory-policy") == "allkeys-lru"
    assert config(c, "maxmemory-samples") == "7"
    assert config(c, "save") == ""
    assert config(c, "appendonly") == "no"
    assert c.execute_command("SELECT", "7") is True
    c.close()


def test_config_file_databases_limit_select(server_factory):
    s = server_factory(config_text="databases 8\n")
    c = RawConnection(s.port)
    try:
        assert roundtrip(c, cmd("SELECT", "7")) == b"+OK\r\n"
        assert roundtrip(c, cmd("SELECT", "8")) == b"-ERR DB index is out of range\r\n"
    finally:
        c.close()


def test_flags_override_config_file(server_factory):
    s = server_factory(config_text="maxmemory 4gb\ndatabases 8\nmaxmemory-policy allkeys-lru\n",
                       extra_args=["--databases", "4", "--maxmemory", "1mb"])
    c = s.client(decode_responses=True)
    assert config(c, "databases") == "4"
    assert config(c, "maxmemory") == "1048576"
    # settings only in the file still apply
    assert config(c, "maxmemory-policy") == "allkeys-lru"
    c.close()


def test_config_file_path_in_info(server_factory):
    s = server_factory(config_text="databases 8\n")
    c = s.client(decode_responses=True)
    assert c.info("server")["config_file"] == os.path.join(s.dir, "test.conf")
    c.close()


def test_config_file_booleans(server_factory):
    s = server_factory(config_text="protected-mode no\nlazyfree-lazy-user-del YES\n")
    c = s.client(decode_responses=True)
    assert config(c, "protected-mode") == "no"
    assert config(c, "lazyfree-lazy-user-del") == "yes"
    assert c.config_set("lazyfree-lazy-user-del", "no") is True
    assert config(c, "lazyfree-lazy-user-del") == "no"
    c.close()


def test_bad_boolean_refuses_to_start(server_factory):
    s, log = expect_start_failure(server_factory, config_text="protected-mode maybe\n")
    assert "protected-mode" in log
    if s.is_redis:
        assert "argument must be 'yes' or 'no'" in log


def test_unknown_config_key_refuses_to_start(server_factory):
    s, log = expect_start_failure(
        server_factory, config_text="# comment\ndatabases 8\nno-such-directive yes\n")
    assert "no-such-directive" in log
    if s.is_redis:
        assert "Bad directive or wrong number of arguments" in log
        assert "at line 3" in log


def test_unknown_command_line_option_refuses_to_start(server_factory):
    s, log = expect_start_failure(server_factory, extra_args=["--no-such-option", "1"])
    assert "no-such-option" in log


def test_bad_memory_value_refuses_to_start(server_factory):
    s, log = expect_start_failure(server_factory, config_text="maxmemory lots\n")
    assert "maxmemory" in log
    if s.is_redis:
        assert "argument must be a memory value" in log


def test_out_of_range_databases_refuses_to_start(server_factory):
    s, log = expect_start_failure(server_factory, extra_args=["--databases", "0"])
    assert "databases" in log


# ---------------------------------------------------------------- maxclients

def test_maxclients_reached(server_factory):
    s = server_factory(extra_args=["--maxclients", "3"])
    admin = s.client(decode_responses=True)
    kill_other_clients(admin)
    conns = []
    try:
        for _ in range(2):
            c = RawConnection(s.port)
            conns.append(c)
            assert roundtrip(c, cmd("PING")) == b"+PONG\r\n"
        # a fourth connection is told why and closed, without sending anything
        extra = RawConnection(s.port)
        conns.append(extra)
        data, closed = read_until_closed(extra)
        assert data == b"-ERR max number of clients reached\r\n"
        assert closed
        # existing clients keep working
        for c in conns[:2]:
            assert roundtrip(c, cmd("PING")) == b"+PONG\r\n"
        assert admin.ping() is True
        assert admin.info("stats")["rejected_connections"] == 1
        # after one leaves, a new connection is accepted
        conns[0].close()

        def accepted():
            c = RawConnection(s.port)
            conns.append(c)
            try:
                return roundtrip(c, cmd("PING")) == b"+PONG\r\n"
            except (ConnectionError, OSError):
                return False
        wait_for(accepted, what="a free client slot")
    finally:
        for c in conns:
            c.close()
        admin.close()


# ---------------------------------------------------------------- client-query-buffer-limit

def test_query_buffer_limit_closes_connection(server_factory):
    s = server_factory(extra_args=["--client-query-buffer-limit", "1mb"])
    c = s.client(decode_responses=True)
    assert config(c, "client-query-buffer-limit") == "1048576"
    big = RawConnection(s.port)
    try:
        data, closed = send_then_read_until_closed(
            big, cmd("SET", "big", b"x" * (2 * 1024 * 1024)))
        assert closed
        assert b"+OK" not in data
    finally:
        big.close()
    assert c.get("big") is None
    assert c.ping() is True
    # a request well under the limit is fine
    small = RawConnection(s.port)
    try:
        assert roundtrip(small, cmd("SET", "small", b"y" * (256 * 1024))) == b"+OK\r\n"
    finally:
        small.close()
    assert c.strlen("small") == 256 * 1024
    c.close()


def test_query_buffer_limit_minimum(server_factory):
    # Redis does not accept a limit under 1mb
    s, log = expect_start_failure(server_factory,
                                  extra_args=["--client-query-buffer-limit", "1000"])
    assert "client-query-buffer-limit" in log


# ---------------------------------------------------------------- proto-max-bulk-len

def test_proto_max_bulk_len_lowered(server_factory):
    s = server_factory(extra_args=["--proto-max-bulk-len", "1mb"])
    c = s.client(decode_responses=True)
    assert config(c, "proto-max-bulk-len") == "1048576"
    over = RawConnection(s.port)
    try:
        data, closed = send_then_read_until_closed(
            over, b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1048577\r\n")
        assert data == b"-ERR Protocol error: invalid bulk length\r\n"
        assert closed
    finally:
        over.close()
    at_limit = RawConnection(s.port)
    try:
        assert roundtrip(at_limit, cmd("SET", "k", b"z" * 1048576)) == b"+OK\r\n"
    finally:
        at_limit.close()
    assert c.strlen("k") == 1048576
    c.close()


def test_proto_max_bulk_len_minimum(server_factory):
    # Redis does not accept a limit under 1mb
    s, log = expect_start_failure(server_factory, extra_args=["--proto-max-bulk-len", "1000"])
    assert "proto-max-bulk-len" in log
