"""CLIENT PAUSE and CLIENT UNPAUSE, as in Redis 7: while paused, clients' commands that may
write (WRITE) or all of them (ALL) wait, not fail; UNPAUSE, or the timeout, lets them go
on, in order. Each test ends the pause it starts (the server is shared)."""
import threading
import time

import pytest
import redis

from conftest import TARGET


@pytest.fixture
def paused(server):
    c = server.client(decode_responses=True)
    yield c
    c.execute_command("CLIENT", "UNPAUSE")
    c.close()


def test_client_pause_errors(paused):
    for args, message in [(("abc",), "timeout is not an integer or out of range"),
                          (("-1",), "timeout is negative"),
                          (("10", "foo"), "CLIENT PAUSE mode must be WRITE or ALL"),
                          (("10", "write", "x"), "wrong number of arguments|unknown subcommand")]:
        with pytest.raises(redis.ResponseError, match=message):
            paused.execute_command("CLIENT", "PAUSE", *args)
    with pytest.raises(redis.ResponseError, match="wrong number of arguments|unknown subcommand"):
        paused.execute_command("CLIENT", "UNPAUSE", "x")
    assert paused.execute_command("CLIENT", "PAUSE", 0) == "OK"
    assert paused.execute_command("CLIENT", "UNPAUSE") == "OK"


def test_a_write_pause_holds_writes_and_lets_reads_through(server, paused):
    other = server.client(decode_responses=True)
    other.set("pause:k", "old")
    assert paused.execute_command("CLIENT", "PAUSE", 2000, "WRITE") == "OK"
    t0 = time.monotonic()
    assert other.get("pause:k") == "old"
    assert other.ping()
    assert time.monotonic() - t0 < 1.5  # reads are not held
    assert other.set("pause:k", "new")  # held until the pause ends
    assert time.monotonic() - t0 >= 1.9
    assert other.get("pause:k") == "new"
    other.close()


def test_an_all_pause_holds_every_command(server, paused):
    other = server.client(decode_responses=True)
    assert paused.execute_command("CLIENT", "PAUSE", 400, "ALL") == "OK"
    t0 = time.monotonic()
    assert other.ping()
    assert time.monotonic() - t0 >= 0.3
    other.close()


def test_unpause_releases_the_waiting_clients_in_order(server, paused):
    other = server.client(decode_responses=True)
    other.set("pause:n", "1")
    assert paused.execute_command("CLIENT", "PAUSE", 20000, "WRITE") == "OK"
    results = []

    def pipelined():
        p = other.pipeline(transaction=False)
        p.get("pause:n")
        p.incr("pause:n")
        p.get("pause:n")
        p.set("pause:m", "x")
        results.append(p.execute())

    t = threading.Thread(target=pipelined)
    t.start()
    time.sleep(0.3)
    assert not results  # the INCR waits, and what came after it
    t0 = time.monotonic()
    assert paused.execute_command("CLIENT", "UNPAUSE") == "OK"
    t.join(10)
    assert not t.is_alive()
    assert time.monotonic() - t0 < 5
    assert results == [["1", 2, "2", True]]
    other.close()


def test_a_transaction_with_writes_waits_for_a_write_pause(server, paused):
    other = server.client(decode_responses=True)
    assert paused.execute_command("CLIENT", "PAUSE", 500, "WRITE") == "OK"
    t0 = time.monotonic()
    p = other.pipeline(transaction=True)
    p.get("pause:t")
    p.set("pause:t", "v")
    assert p.execute() == [None, True]
    assert time.monotonic() - t0 >= 0.35
    # A read-only transaction is not held.
    assert paused.execute_command("CLIENT", "PAUSE", 5000, "WRITE") == "OK"
    t0 = time.monotonic()
    p = other.pipeline(transaction=True)
    p.get("pause:t")
    assert p.execute() == ["v"]
    assert time.monotonic() - t0 < 3
    other.close()


def test_a_paused_server_does_not_expire_keys_actively(server, paused):
    other = server.client(decode_responses=True)
    other.flushall()
    other.set("pause:e", "v", px=50)
    assert paused.execute_command("CLIENT", "PAUSE", 1500, "WRITE") == "OK"
    time.sleep(0.6)
    assert other.dbsize() == 1  # the expiry cycle waits for the pause
    assert paused.execute_command("CLIENT", "UNPAUSE") == "OK"
    deadline = time.monotonic() + 10
    while other.dbsize() != 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert other.dbsize() == 0
    other.close()


def test_a_paused_server_keeps_the_expired_keys_it_reads(server, paused):
    """As Redis's expireIfNeeded during a pause: a read answers as if an expired key were
    gone, but the dataset stays as it is (nothing deleted, nothing for the replicas)
    until the pause ends."""
    other = server.client(decode_responses=True)
    other.set("pause:r", "v", px=50)
    other.set("pause:live", "v")
    expired = other.info("stats")["expired_keys"]
    assert paused.execute_command("CLIENT", "PAUSE", 5000, "WRITE") == "OK"
    time.sleep(0.3)
    assert other.get("pause:r") is None
    assert other.exists("pause:r") == 0
    assert other.ttl("pause:r") == -2
    assert other.keys("pause:*") == ["pause:live"]
    assert other.scan(0, match="pause:*", count=100)[1] == ["pause:live"]
    assert other.dbsize() == 2  # read, and still held
    assert other.info("stats")["expired_keys"] == expired
    assert paused.execute_command("CLIENT", "UNPAUSE") == "OK"
    assert other.get("pause:r") is None
    deadline = time.monotonic() + 10
    while other.dbsize() != 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert other.dbsize() == 1
    assert other.info("stats")["expired_keys"] == expired + 1
    other.close()


def test_a_paused_server_does_not_evict(server_factory):
    """As Redis: while clients are paused no key is evicted, even over maxmemory; the
    eviction catches up once the pause ends."""
    s = server_factory()
    c = s.client(decode_responses=True)
    c.config_set("maxmemory-policy", "allkeys-random")
    pipe = c.pipeline(transaction=False)
    for i in range(3000):
        pipe.set("pause:ev:%d" % i, "x" * 1000)
    pipe.execute()
    used = c.info("memory")["used_memory"]
    try:
        assert c.execute_command("CLIENT", "PAUSE", 20000, "WRITE") == "OK"
        c.config_set("maxmemory", str(used - 1000 * 1000))
        time.sleep(0.5)
        assert c.dbsize() == 3000
        assert c.info("stats")["evicted_keys"] == 0
    finally:
        c.execute_command("CLIENT", "UNPAUSE")
    deadline = time.monotonic() + 10
    while c.dbsize() == 3000 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert c.dbsize() < 3000
    assert c.info("stats")["evicted_keys"] > 0
    c.config_set("maxmemory", "0")
    c.close()


@pytest.mark.skipif(TARGET == "redis", reason="strata's CLIENT HELP lines")
def test_client_help_names_pause_and_unpause(server):
    lines = server.client(decode_responses=True).execute_command("CLIENT", "HELP")
    assert "PAUSE <timeout> [WRITE|ALL]" in lines and "UNPAUSE" in lines


def test_a_command_refused_anyway_is_answered_during_a_pause(server, paused):
    """Redis answers before it looks at a pause: a wrong arity, an unknown command and
    a syntax-level refusal come back at once, while a valid write waits."""
    other = server.client(decode_responses=True)
    # ALL holds even CLIENT UNPAUSE (as in Redis): the pause is short, and runs out.
    assert paused.execute_command("CLIENT", "PAUSE", 2500, "ALL") == "OK"
    t0 = time.monotonic()
    with pytest.raises(redis.ResponseError, match="wrong number of arguments"):
        other.execute_command("SET", "pause:only-key")
    with pytest.raises(redis.ResponseError, match="unknown command"):
        other.execute_command("NOSUCHCOMMAND", "x")
    assert time.monotonic() - t0 < 1.5
    assert other.set("pause:refused", "v")  # a valid write waits for the end
    assert time.monotonic() - t0 >= 2.3
    other.close()
