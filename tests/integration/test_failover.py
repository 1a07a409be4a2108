"""FAILOVER: the coordinated hand-over from a master to its replica (Redis 6.2+). The
argument checks are compared with redis-server's replies; the hand-overs run between two
target servers (with STRATA_TEST_TARGET=redis, two redis-servers: the same tests), and
between strata and redis-server both ways. A replica made to lag is a stopped process
(SIGSTOP), which holds it whatever its thread count."""
import os
import signal
import socket
import time

import pytest

import helpers
from conftest import TARGET
from helpers import error_of, replica_synced, same, start_redis_server

WAIT_S = 30.0


def wait_for(pred, what, timeout=WAIT_S):
    return helpers.wait_for(pred, timeout, what)


def info(server, section="replication"):
    c = server.client(decode_responses=True)
    try:
        return c.info(section)
    finally:
        c.close()


def role(server):
    c = server.client(decode_responses=True)
    try:
        return c.execute_command("ROLE")
    finally:
        c.close()


@pytest.fixture
def two(server_factory):
    """(master, replica), both the target, the replica synced."""
    m = server_factory(extra_args=["--repl-diskless-sync-delay", "0"])
    r = server_factory(extra_args=["--replicaof", "127.0.0.1 %d" % m.port,
                                   "--repl-diskless-sync-delay", "0"])
    wait_for(lambda: replica_synced(m, r) and
             info(m).get("slave0", {}).get("state") == "online", "the first sync")
    return m, r


class Stopped:
    """A server process held still (SIGSTOP) for the with-block, continued after."""

    def __init__(self, server):
        self.pid = server.proc.pid

    def __enter__(self):
        os.kill(self.pid, signal.SIGSTOP)
        return self

    def __exit__(self, *exc):
        os.kill(self.pid, signal.SIGCONT)


def handed_over(old, new):
    """The new master is one, the old one its replica with the link up, and the old one's
    failover is over."""
    nr, orole, oi = role(new), role(old), info(old)
    return (nr[0] == "master" and orole[0] == "slave" and orole[2] == new.port and
            oi.get("master_link_status") == "up" and
            oi.get("master_failover_state") == "no-failover")


def send_raw(port, *args):
    """A command on a socket of its own, not waiting for the reply: (socket, reader)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(helpers.resp(*args))
    return s


def reply_within(s, seconds):
    s.settimeout(seconds)
    try:
        return s.recv(4096)
    except socket.timeout:
        return None


@pytest.mark.parametrize("args", [
    ("FAILOVER", "FOO"),
    ("FAILOVER", "TO"),
    ("FAILOVER", "TO", "127.0.0.1"),
    ("FAILOVER", "TO", "127.0.0.1", "x"),
    ("FAILOVER", "TIMEOUT", "0"),
    ("FAILOVER", "TIMEOUT", "-5"),
    ("FAILOVER", "TIMEOUT", "x"),
    ("FAILOVER", "TIMEOUT", "10", "TIMEOUT", "20"),
    ("FAILOVER", "TO", "127.0.0.1", "1", "TO", "127.0.0.1", "1"),
    ("FAILOVER", "FORCE", "FORCE"),
    ("FAILOVER", "ABORT"),
    ("FAILOVER", "ABORT", "TIMEOUT", "10"),
    ("FAILOVER",),
    ("FAILOVER", "FORCE"),
    ("FAILOVER", "TO", "127.0.0.1", "1"),
    ("FAILOVER", "TIMEOUT", "100"),
])
def test_failover_arguments_and_a_master_without_replicas(pair, args):
    same(pair, *args)
    assert b"master_failover_state:no-failover" in pair[0].execute_command("INFO", "replication")


def test_psync_failover_is_refused_by_a_master(pair):
    same(pair, "PSYNC", "a" * 40, "1", "FAILOVER")


def test_psync_failover_is_refused_for_another_history(two):
    m, r = two
    c = r.client(decode_responses=True)
    assert error_of(c.execute_command, "PSYNC", "a" * 40, "1", "FAILOVER") == \
        "PSYNC FAILOVER replid must match my replid."
    assert role(r)[0] == "slave"


def test_failover_hands_the_master_role_to_its_replica(two):
    m, r = two
    mc, rc = m.client(decode_responses=True), r.client(decode_responses=True)
    for i in range(200):
        mc.set("k%d" % i, "v%d" % i)
    mc.rpush("list", *range(50))
    wait_for(lambda: replica_synced(m, r), "the writes to reach the replica")
    assert error_of(mc.execute_command, "FAILOVER", "TO", "127.0.0.1", "1") == \
        "FAILOVER target HOST and PORT is not a replica."
    assert error_of(mc.execute_command, "FAILOVER", "FORCE") == \
        "FAILOVER with force option requires both a timeout and target HOST and IP."
    assert error_of(mc.execute_command, "FAILOVER", "TO", "127.0.0.1", r.port, "FORCE") == \
        "FAILOVER with force option requires both a timeout and target HOST and IP."
    assert error_of(rc.execute_command, "FAILOVER") == \
        "FAILOVER is not valid when server is a replica."
    full_before = info(r, "stats")["sync_full"]
    assert mc.execute_command("FAILOVER", "TO", "127.0.0.1", r.port) in (b"OK", "OK", True)
    wait_for(lambda: handed_over(m, r), "the hand-over")
    # The old master continued its history from the new one: no full resync.
    assert info(r, "stats")["sync_full"] == full_before
    assert info(r, "stats")["sync_partial_ok"] >= 1
    assert rc.dbsize() == mc.dbsize() == 201
    assert error_of(mc.set, "x", "1") == "You can't write against a read only replica."
    rc.set("after", "yes")
    rc.lpush("list", "new")
    # The push is the later write: waiting for "after" alone would not cover it.
    wait_for(lambda: mc.get("after") == "yes" and mc.lindex("list", 0) == "new",
             "writes on the new master to reach the old")
    assert mc.lrange("list", 0, -1) == rc.lrange("list", 0, -1)
    assert error_of(mc.execute_command, "FAILOVER") == \
        "FAILOVER is not valid when server is a replica."
    # And back, to any replica.
    assert rc.execute_command("FAILOVER") in (b"OK", "OK", True)
    wait_for(lambda: handed_over(r, m), "the hand-over back")
    mc.set("back", "1")
    wait_for(lambda: rc.get("back") == "1", "a write on the first master again")


def test_failover_waits_for_the_replica_then_times_out_or_is_aborted(two):
    m, r = two
    mc = m.client(decode_responses=True)
    mc.set("before", "1")
    wait_for(lambda: replica_synced(m, r), "the write to reach the replica")
    with Stopped(r):
        mc.set("unseen", "1")  # the replica cannot acknowledge it
        assert mc.execute_command("FAILOVER", "TIMEOUT", "700") in (b"OK", "OK", True)
        assert info(m)["master_failover_state"] == "waiting-for-sync"
        assert error_of(mc.execute_command, "FAILOVER") == "FAILOVER already in progress."
        assert error_of(mc.execute_command, "REPLICAOF", "127.0.0.1", r.port) == \
            "REPLICAOF not allowed while failing over."
        # Writes wait; reads do not.
        held = send_raw(m.port, "SET", "held", "1")
        assert reply_within(held, 0.3) is None
        assert mc.get("before") == "1"
        wait_for(lambda: info(m)["master_failover_state"] == "no-failover",
                 "the timeout to end the failover")
        assert reply_within(held, 5) == b"+OK\r\n"
        held.close()
        assert role(m)[0] == "master"
        mc.set("free", "1")
        # No timeout: it waits until aborted.
        assert mc.execute_command("FAILOVER") in (b"OK", "OK", True)
        held = send_raw(m.port, "SET", "held2", "1")
        assert reply_within(held, 0.3) is None
        assert mc.execute_command("FAILOVER", "ABORT") in (b"OK", "OK", True)
        assert reply_within(held, 5) == b"+OK\r\n"
        held.close()
        assert info(m)["master_failover_state"] == "no-failover"
        assert error_of(mc.execute_command, "FAILOVER", "ABORT") == "No failover in progress."
    wait_for(lambda: replica_synced(m, r), "the replica to catch up")
    assert r.client(decode_responses=True).get("held2") == "1"


def test_failover_force_hands_over_to_a_replica_that_did_not_catch_up(two):
    m, r = two
    mc, rc = m.client(decode_responses=True), r.client(decode_responses=True)
    with Stopped(r):
        mc.set("late", "1")
        assert mc.execute_command("FAILOVER", "TO", "127.0.0.1", r.port, "FORCE",
                                  "TIMEOUT", "300") in (b"OK", "OK", True)
        time.sleep(0.6)
        # The timeout passed: this server is already following the target.
        assert info(m)["master_failover_state"] == "failover-in-progress"
        assert role(m)[0] == "slave"
    wait_for(lambda: handed_over(m, r), "the forced hand-over")
    wait_for(lambda: mc.dbsize() == rc.dbsize(), "the old master to follow the new one")


@pytest.mark.skipif(TARGET == "redis", reason="strata and redis-server together")
def test_a_redis_replica_takes_over_from_a_strata_master(server_factory):
    m = server_factory(extra_args=["--repl-diskless-sync-delay", "0"])
    r = start_redis_server(extra_args=["--replicaof", "127.0.0.1 %d" % m.port])
    try:
        mc, rc = m.client(decode_responses=True), r.client(decode_responses=True)
        mc.mset({"a%d" % i: str(i) for i in range(100)})
        mc.hset("h", mapping={"f": "1", "g": "2"})
        wait_for(lambda: replica_synced(m, r), "redis-server's sync")
        assert mc.execute_command("FAILOVER") == "OK"
        wait_for(lambda: handed_over(m, r), "the hand-over to redis-server")
        assert info(r, "stats")["sync_full"] == 0  # strata continued its own history
        rc.set("from-redis", "1")
        wait_for(lambda: mc.get("from-redis") == "1", "redis-server's write on strata")
        assert mc.hgetall("h") == {"f": "1", "g": "2"} and mc.dbsize() == rc.dbsize()
    finally:
        r.stop()


@pytest.mark.skipif(TARGET == "redis", reason="strata and redis-server together")
def test_a_strata_replica_takes_over_from_a_redis_master(server_factory):
    m = start_redis_server(extra_args=["--repl-diskless-sync-delay", "0"])
    try:
        r = server_factory(extra_args=["--replicaof", "127.0.0.1 %d" % m.port])
        mc, rc = m.client(decode_responses=True), r.client(decode_responses=True)
        mc.mset({"b%d" % i: str(i) for i in range(100)})
        mc.sadd("s", "x", "y")
        wait_for(lambda: replica_synced(m, r), "strata's sync")
        assert mc.execute_command("FAILOVER", "TO", "127.0.0.1", r.port) == "OK"
        wait_for(lambda: handed_over(m, r), "the hand-over to strata")
        assert info(r, "stats")["sync_full"] == 0  # redis-server continued its history
        rc.set("from-strata", "1")
        wait_for(lambda: mc.get("from-strata") == "1", "strata's write on redis-server")
        assert mc.smembers("s") == {"x", "y"} and mc.dbsize() == rc.dbsize()
    finally:
        m.stop()


@pytest.mark.skipif(TARGET == "redis", reason="Redis 7.0 keeps trying, with no master, "
                    "until FAILOVER ABORT")
def test_a_hand_over_to_a_target_that_is_gone_is_aborted(two):
    """FORCE after the timeout, to a replica killed meanwhile: the old master cannot reach
    it, so it is a master again and takes writes."""
    m, r = two
    mc = m.client(decode_responses=True)
    with Stopped(r):
        mc.set("late", "1")
        assert mc.execute_command("FAILOVER", "TO", "127.0.0.1", r.port, "FORCE",
                                  "TIMEOUT", "200") in (b"OK", "OK", True)
        r.proc.kill()
    r.proc.wait(10)
    wait_for(lambda: role(m)[0] == "master" and
             info(m)["master_failover_state"] == "no-failover", "the failover to be aborted")
    mc.set("after", "1")
    assert mc.get("late") == "1" and mc.get("after") == "1"
    assert "FAILOVER to 127.0.0.1:%d aborted" % r.port in m.read_log()


@pytest.mark.skipif(TARGET == "redis", reason="Redis answers it as sent to a master")
def test_a_target_that_took_over_answers_the_same_psync_failover_again(two):
    """The old master's PSYNC FAILOVER was answered but the answer lost: it asks again,
    and the new master continues the same history rather than refuse it."""
    m, r = two
    mc = m.client(decode_responses=True)
    mc.set("k", "v")
    wait_for(lambda: replica_synced(m, r), "the write to reach the replica")
    assert mc.execute_command("FAILOVER") == "OK"
    wait_for(lambda: handed_over(m, r), "the hand-over")
    ri = info(r)
    again = send_raw(r.port, "PSYNC", ri["master_replid2"], ri["second_repl_offset"],
                     "FAILOVER")
    try:
        assert reply_within(again, 10).startswith(b"+CONTINUE")
    finally:
        again.close()
    other = send_raw(r.port, "PSYNC", "b" * 40, "1", "FAILOVER")
    try:
        assert reply_within(other, 10) == b"-ERR PSYNC FAILOVER can't be sent to a master.\r\n"
    finally:
        other.close()
