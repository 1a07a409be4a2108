"""ACL users: ACL SETUSER, GETUSER, LIST, USERS, DELUSER, WHOAMI, CAT, DRYRUN, GENPASS,
LOG, SAVE and LOAD; AUTH and HELLO AUTH with a user; what a user may run (commands,
subcommands, categories), which keys it may read and write and which channels it may
use, at the top level, inside MULTI and inside scripts; changes that reach connected
clients; requirepass as the default user's password; users from the config file and
from aclfile.

Every expected reply was checked against redis-server 7.0 (STRATA_TEST_TARGET=redis runs
the same tests there). ACL LIST writes a user's command rules in the order they were
given; Redis 7.0 writes some of them in another, equivalent, order, so those tests
compare what the rules allow rather than their text.
"""
import os
import time

import pytest
import redis

from conftest import TARGET, RawConnection, Server
from helpers import expect_closed, resp, roundtrip, wait_for

BOB_HASH = "30c952fab122c3f9759f02a6d95c3758b246b4fee239957b2d4fee46e26170c4"  # sha256("pw")
NOPERM_KEYS = b"-NOPERM this user has no permissions to access one of the keys used as arguments\r\n"
NOPERM_CHANNELS = (b"-NOPERM this user has no permissions to access one of the channels used "
                   b"as arguments\r\n")
WRONGPASS = b"-WRONGPASS invalid username-password pair or user is disabled.\r\n"


def noperm(cmd):
    return b"-NOPERM this user has no permissions to run the '%s' command\r\n" % cmd.encode()


@pytest.fixture(scope="module")
def acl_server():
    s = Server(threads=2) if TARGET == "strata" else Server()
    yield s
    s.stop()


@pytest.fixture
def admin(acl_server):
    """A client of the default user; every user but the default one is deleted and the
    default user is as it comes, before and after each test."""
    c = acl_server.client(decode_responses=True)

    def reset():
        for u in c.acl_users():
            if u != "default":
                c.acl_deluser(u)
        c.execute_command("ACL", "SETUSER", "default", "on", "nopass", "~*", "&*", "+@all")
        c.execute_command("ACL", "LOG", "RESET")

    reset()
    yield c
    reset()
    c.close()


def conn_as(server, user, password):
    c = RawConnection(server.port, timeout=10)
    assert roundtrip(c, resp("AUTH", user, password)) == b"+OK\r\n"
    return c


def acl(admin, *args):
    return admin.execute_command("ACL", *args)


def test_a_user_is_created_described_and_deleted(acl_server, admin):
    assert acl(admin, "SETUSER", "bob", "on", ">pw", "~k*", "&ch*", "+get", "+set") == "OK"
    lines = acl(admin, "LIST")
    bob = [l for l in lines if l.startswith("user bob ")][0]
    # Redis 7.0 may write the two command rules the other way round.
    head = "user bob on #%s ~k* resetchannels &ch* -@all " % BOB_HASH
    assert bob.startswith(head) and sorted(bob[len(head):].split()) == ["+get", "+set"]
    assert "user default on nopass ~* &* +@all" in lines
    u = acl(admin, "GETUSER", "bob")
    got = dict(zip(u[::2], u[1::2]))
    assert got["flags"] == ["on"]
    assert got["passwords"] == [BOB_HASH]
    assert got["commands"] in ("-@all +get +set", "-@all +set +get")
    assert got["keys"] == "~k*"
    assert got["channels"] == "&ch*"
    assert got["selectors"] == []
    assert acl(admin, "GETUSER", "nosuch") is None
    assert acl(admin, "USERS") == ["bob", "default"]
    # A new user is off, with nothing allowed.
    assert acl(admin, "SETUSER", "empty") == "OK"
    assert "user empty off resetchannels -@all" in acl(admin, "LIST")
    assert acl(admin, "DELUSER", "bob", "empty", "nosuch") == 2
    assert acl(admin, "USERS") == ["default"]
    with pytest.raises(redis.ResponseError, match="^The 'default' user cannot be removed$"):
        acl(admin, "DELUSER", "default")


@pytest.mark.parametrize("rule, why", [
    ("+nosuchcmd", "Unknown command or category name in ACL"),
    ("+@nosuchcat", "Unknown command or category name in ACL"),
    ("foo", "Syntax error"),
    ("%X~a", "Syntax error"),
    ("<nope", "The password you are trying to remove from the user does not exist"),
    ("#abc", "The password hash must be exactly 64 characters and contain only lowercase "
             "hexadecimal characters"),
])
def test_a_bad_rule_changes_nothing(admin, rule, why):
    acl(admin, "SETUSER", "u", "on", "+get")
    with pytest.raises(redis.ResponseError) as e:
        acl(admin, "SETUSER", "u", "+set", rule)
    assert str(e.value) == "Error in ACL SETUSER modifier '%s': %s" % (rule, why)
    assert "user u on resetchannels -@all +get" in acl(admin, "LIST")


def test_passwords_and_flags(admin):
    acl(admin, "SETUSER", "k", "on", ">a", ">b", "<a")
    u = acl(admin, "GETUSER", "k")
    assert dict(zip(u[::2], u[1::2]))["passwords"] == [
        "3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d"]
    acl(admin, "SETUSER", "k", "nopass", "%R~r*", "%W~w*", "~b*", "%RW~x", "allchannels")
    assert "user k on nopass %R~r* %W~w* ~b* ~x &* -@all" in acl(admin, "LIST")
    acl(admin, "SETUSER", "k", "resetkeys", "resetpass")
    u = acl(admin, "GETUSER", "k")
    got = dict(zip(u[::2], u[1::2]))
    assert got["flags"] == ["on"] and got["passwords"] == [] and got["keys"] == ""
    acl(admin, "SETUSER", "k", "reset")
    assert "user k off sanitize-payload resetchannels -@all" in acl(admin, "LIST")
    with pytest.raises(redis.ResponseError, match="Adding a pattern after the"):
        acl(admin, "SETUSER", "k", "allkeys", "~x")


def test_auth_hello_and_whoami(acl_server, admin):
    acl(admin, "SETUSER", "bob", "on", ">pw", "+@all", "~*")
    acl(admin, "SETUSER", "offuser", "off", ">pw", "+@all", "~*")
    c = RawConnection(acl_server.port, timeout=10)
    try:
        assert roundtrip(c, resp("AUTH", "bob", "wrong")) == WRONGPASS
        assert roundtrip(c, resp("AUTH", "offuser", "pw")) == WRONGPASS
        assert roundtrip(c, resp("AUTH", "nosuch", "pw")) == WRONGPASS
        assert roundtrip(c, resp("AUTH", "pw")) == (
            b"-ERR AUTH <password> called without any password configured for the default "
            b"user. Are you sure your configuration is correct?\r\n")
        assert roundtrip(c, resp("ACL", "WHOAMI")) == b"$7\r\ndefault\r\n"
        assert roundtrip(c, resp("AUTH", "bob", "pw")) == b"+OK\r\n"
        assert roundtrip(c, resp("ACL", "WHOAMI")) == b"$3\r\nbob\r\n"
        assert b" user=bob " in roundtrip(c, resp("CLIENT", "INFO"))
        h = roundtrip(c, resp("HELLO", "3", "AUTH", "default", "x"))
        assert h.startswith(b"%")
        assert roundtrip(c, resp("ACL", "WHOAMI")) == b"$7\r\ndefault\r\n"
        assert roundtrip(c, resp("HELLO", "2", "AUTH", "bob", "no")) == WRONGPASS
    finally:
        c.close()
    entries = acl(admin, "LOG")
    assert [dict(zip(e[::2], e[1::2]))["username"] for e in entries] == [
        "bob", "nosuch", "offuser", "bob"][:len(entries)]
    first, last = (dict(zip(e[::2], e[1::2])) for e in (entries[0], entries[-1]))
    assert (first["reason"], first["object"], first["context"]) == ("auth", "HELLO", "toplevel")
    assert (last["reason"], last["object"]) == ("auth", "AUTH")


def test_commands_subcommands_and_categories(acl_server, admin):
    acl(admin, "SETUSER", "u", "on", "nopass", "~*", "&*", "+get", "+set", "+config|get",
        "+@hash", "-hdel")
    c = conn_as(acl_server, "u", "x")
    try:
        assert roundtrip(c, resp("SET", "a", "1")) == b"+OK\r\n"
        assert roundtrip(c, resp("DEL", "a")) == noperm("del")
        assert roundtrip(c, resp("CONFIG", "GET", "maxmemory")).startswith(b"*2\r\n")
        assert roundtrip(c, resp("CONFIG", "SET", "maxmemory", "1")) == noperm("config|set")
        assert roundtrip(c, resp("HSET", "h", "f", "v")) == b":1\r\n"
        assert roundtrip(c, resp("HDEL", "h", "f")) == noperm("hdel")
        assert roundtrip(c, resp("ACL", "WHOAMI")) == noperm("acl|whoami")
        # AUTH, HELLO and QUIT are never refused by ACLs (no-auth commands).
        assert roundtrip(c, resp("AUTH", "u", "x")) == b"+OK\r\n"
    finally:
        c.close()
    for cmd, want in [(("get", "x"), "OK"), (("del", "x"),
                      "This user has no permissions to run the 'del' command"),
                      (("config", "set", "a", "b"),
                       "This user has no permissions to run the 'config|set' command"),
                      (("hget", "h", "f"), "OK")]:
        assert acl(admin, "DRYRUN", "u", *cmd) == want, cmd
    # A whole category, then one of its commands taken away.
    acl(admin, "SETUSER", "r", "on", "nopass", "~*", "+@read", "-get")
    assert acl(admin, "DRYRUN", "r", "hget", "h", "f") == "OK"
    assert acl(admin, "DRYRUN", "r", "get", "x") == (
        "This user has no permissions to run the 'get' command")
    assert acl(admin, "DRYRUN", "r", "set", "x", "1") == (
        "This user has no permissions to run the 'set' command")
    acl(admin, "SETUSER", "d", "on", "nopass", "~*", "+@all", "-@dangerous")
    assert acl(admin, "DRYRUN", "d", "flushall") == (
        "This user has no permissions to run the 'flushall' command")
    assert acl(admin, "DRYRUN", "d", "get", "x") == "OK"


def test_first_argument_rules_of_commands_without_subcommands(acl_server, admin):
    """`+cmd|arg` of a command without subcommands allows the calls whose first argument
    is arg, in any case (Redis 7.0 still reads it); a rule on the whole command replaces
    them. It cannot deny, nor reach past a subcommand."""
    acl(admin, "SETUSER", "f", "on", "nopass", "~*", "+select|0", "+select|1", "+get|Ab")

    def dry(*args):
        return acl(admin, "DRYRUN", "f", *args)
    ok = "OK"
    no = "This user has no permissions to run the '%s' command"
    assert [dry("select", "0"), dry("SELECT", "1"), dry("select", "2")] == [ok, ok, no % "select"]
    assert [dry("get", "ab"), dry("get", "AB"), dry("get", "b")] == [ok, ok, no % "get"]
    c = conn_as(acl_server, "f", "x")
    try:
        assert roundtrip(c, resp("SELECT", "1")) == b"+OK\r\n"
        assert roundtrip(c, resp("SELECT", "2")) == noperm("select")
    finally:
        c.close()
    acl(admin, "SETUSER", "f", "+select")
    assert dry("select", "5") == ok
    acl(admin, "SETUSER", "f", "-select")
    assert dry("select", "0") == no % "select"
    for rule, why in (("-select|0", "Unknown command or category name in ACL"),
                      ("+client|id|x", "Allowing first-arg of a subcommand is not supported"),
                      ("+config|nosuch", "Unknown command or category name in ACL")):
        with pytest.raises(redis.ResponseError) as e:
            acl(admin, "SETUSER", "f", rule)
        assert str(e.value) == "Error in ACL SETUSER modifier '%s': %s" % (rule, why)


def test_acl_cat(admin):
    cats = acl(admin, "CAT")
    assert cats[:3] == ["keyspace", "read", "write"] and len(cats) == 21
    read = acl(admin, "CAT", "read")
    assert "get" in read and "set" not in read
    scripting = acl(admin, "CAT", "scripting")
    assert "eval" in scripting and "script|kill" in scripting
    with pytest.raises(redis.ResponseError, match="^Unknown category 'nosuch'$"):
        acl(admin, "CAT", "nosuch")


@pytest.mark.parametrize("cmd, want", [
    (("exists", "x"), "OK"), (("exists", "y"), "OK"), (("get", "x"), "OK"),
    (("get", "y"), "This user has no permissions to access the 'y' key"),
    (("set", "x", "1"), "This user has no permissions to access the 'x' key"),
    (("set", "y", "1"), "OK"),
    (("set", "y", "1", "GET"), "This user has no permissions to access the 'y' key"),
    (("del", "x"), "This user has no permissions to access the 'x' key"), (("del", "y"), "OK"),
    (("type", "y"), "OK"), (("lpush", "x", "a"), "This user has no permissions to access the 'x' key"),
    (("lpush", "y", "a"), "OK"), (("rename", "x", "y"),
                                  "This user has no permissions to access the 'x' key"),
    (("copy", "x", "y"), "OK"), (("copy", "y", "x"),
                                 "This user has no permissions to access the 'y' key"),
    (("mget", "x", "z"), "This user has no permissions to access the 'z' key"),
])
def test_read_and_write_key_patterns(admin, cmd, want):
    acl(admin, "SETUSER", "kr", "on", "nopass", "%R~x", "%W~y", "+@all")
    assert acl(admin, "DRYRUN", "kr", *cmd) == want


def test_keys_and_channels_at_the_top_level(acl_server, admin):
    acl(admin, "SETUSER", "s", "on", "nopass", "~a*", "&c*", "+@all")
    c = conn_as(acl_server, "s", "x")
    try:
        assert roundtrip(c, resp("SET", "a1", "1")) == b"+OK\r\n"
        assert roundtrip(c, resp("GET", "b")) == NOPERM_KEYS
        assert roundtrip(c, resp("MSET", "a2", "1", "b2", "2")) == NOPERM_KEYS
        assert roundtrip(c, resp("PUBLISH", "d", "m")) == NOPERM_CHANNELS
        assert roundtrip(c, resp("PUBLISH", "chat", "m")) == b":0\r\n"
        # PSUBSCRIBE's pattern must be one of the user's, literally.
        assert roundtrip(c, resp("PSUBSCRIBE", "c*x")) == NOPERM_CHANNELS
        assert roundtrip(c, resp("SUBSCRIBE", "d")) == NOPERM_CHANNELS
        assert roundtrip(c, resp("PSUBSCRIBE", "c*")).startswith(b"*3\r\n$10\r\npsubscribe")
    finally:
        c.close()
    entries = [dict(zip(e[::2], e[1::2])) for e in acl(admin, "LOG")]
    reasons = [(e["reason"], e["object"], e["context"], e["username"]) for e in entries]
    assert ("key", "b", "toplevel", "s") in reasons
    assert ("channel", "d", "toplevel", "s") in reasons
    assert all(" user=s " in e["client-info"] for e in entries)


def test_a_refusal_inside_multi_fails_the_transaction(acl_server, admin):
    acl(admin, "SETUSER", "m", "on", "nopass", "~*", "+multi", "+exec", "+get")
    c = conn_as(acl_server, "m", "x")
    try:
        c.send(resp("MULTI") + resp("DEL", "a") + resp("GET", "a") + resp("EXEC"))
        assert [c.read_reply() for _ in range(4)] == [
            b"+OK\r\n", noperm("del"), b"+QUEUED\r\n",
            b"-EXECABORT Transaction discarded because of previous errors.\r\n"]
    finally:
        c.close()
    e = dict(zip(acl(admin, "LOG")[0][::2], acl(admin, "LOG")[0][1::2]))
    assert (e["reason"], e["context"], e["object"]) == ("command", "multi", "del")


def test_scripts_run_as_their_callers_user(acl_server, admin):
    acl(admin, "SETUSER", "s", "on", "nopass", "~a*", "&c*", "+eval", "+get", "+set",
        "+publish")
    c = conn_as(acl_server, "s", "x")
    import hashlib

    def err(body, text):
        sha = hashlib.sha1(body.encode()).hexdigest()
        return b"-%s script: %s, on @user_script:1.\r\n" % (text.encode(), sha.encode())

    try:
        body = "return redis.call('del','a')"
        assert roundtrip(c, resp("EVAL", body, 0)) == err(
            body, "ERR The user executing the script can't run this command or subcommand")
        body = "return redis.call('get','b')"
        assert roundtrip(c, resp("EVAL", body, 0)) == err(
            body, "ERR The user executing the script can't access at least one of the keys "
                  "mentioned in the command arguments")
        assert roundtrip(c, resp("EVAL", "return redis.pcall('get','b')", 0)) == (
            b"-ERR The user executing the script can't access at least one of the keys "
            b"mentioned in the command arguments\r\n")
        body = "return redis.call('publish','d', 1)"
        assert roundtrip(c, resp("EVAL", body, 0)) == err(
            body, "ERR The user executing the script can't publish to the channel mentioned "
                  "in the command")
        assert roundtrip(c, resp("EVAL", "return redis.call('set','a1', 1)", 0)) == b"+OK\r\n"
        assert roundtrip(c, resp("EVAL", "return redis.call('get','a1')", 1, "a1")) == (
            b"$1\r\n1\r\n")
    finally:
        c.close()
    e = dict(zip(acl(admin, "LOG")[0][::2], acl(admin, "LOG")[0][1::2]))
    assert (e["context"], e["username"]) == ("lua", "s")
    assert "user=s" in e["client-info"] and "cmd=eval" in e["client-info"]


def test_a_restricted_users_script_inside_multi_is_checked(acl_server, admin):
    """Queued inside MULTI, a restricted user's script runs at EXEC with its calls checked
    against the user, as outside: a refused call fails that script (its error in EXEC's
    reply, logged with context lua), and the transaction's other commands run."""
    acl(admin, "SETUSER", "m", "on", "nopass", "~a*", "+@all", "-del")
    c = conn_as(acl_server, "m", "x")
    try:
        assert roundtrip(c, resp("MULTI")) == b"+OK\r\n"
        for req in (resp("SET", "a1", "1"),
                    resp("EVAL", "return redis.call('get', KEYS[1])", 1, "a1"),
                    resp("EVAL", "return redis.pcall('get', 'b')", 0),
                    resp("EVAL", "return redis.pcall('del', 'a1')", 0),
                    resp("EVAL", "redis.call('set', 'a2', 'x') return redis.call('get', 'a2')", 0)):
            assert roundtrip(c, req) == b"+QUEUED\r\n"
        c.send(resp("EXEC"))
        got = b""
        want = (b"*5\r\n+OK\r\n$1\r\n1\r\n"
                b"-ERR The user executing the script can't access at least one of the keys "
                b"mentioned in the command arguments\r\n"
                b"-ERR The user executing the script can't run this command or subcommand\r\n"
                b"$1\r\nx\r\n")
        while len(got) < len(want):
            chunk = c.sock.recv(65536)
            assert chunk, "closed"
            got += chunk
        assert got == want
    finally:
        c.close()
    assert admin.get("a2") == "x" and admin.exists("a1") == 1
    e = dict(zip(acl(admin, "LOG")[0][::2], acl(admin, "LOG")[0][1::2]))
    assert (e["context"], e["username"], e["object"]) == ("lua", "m", "del")
    admin.delete("a1", "a2")


def test_changes_reach_connected_clients_and_deleted_users_are_disconnected(acl_server, admin):
    acl(admin, "SETUSER", "bob", "on", ">pw", "~*", "+@all")
    clients = [conn_as(acl_server, "bob", "pw") for _ in range(4)]  # on both workers
    try:
        for c in clients:
            assert roundtrip(c, resp("GET", "x")) == b"$-1\r\n"
        acl(admin, "SETUSER", "bob", "-get")
        for c in clients:
            assert roundtrip(c, resp("GET", "x")) == noperm("get")
        acl(admin, "SETUSER", "bob", "+get")
        for c in clients:
            assert roundtrip(c, resp("GET", "x")) == b"$-1\r\n"
        # The default user restricted: its clients are checked from the next command.
        acl(admin, "SETUSER", "default", "-debug")
        assert admin.get("x") is None
        assert acl(admin, "DELUSER", "bob") == 1
        for c in clients:
            c.send(resp("PING"))
            assert expect_closed(c, timeout=10) == b""
    finally:
        for c in clients:
            c.close()


def test_subscribers_that_lose_a_channel_are_disconnected(acl_server, admin):
    """As Redis 7.0: a change that takes away a channel, pattern or shard channel a
    client of the user is subscribed to disconnects that client; a change that leaves
    every subscription allowed, or touches a subscriber-less client, disconnects nobody.
    A pattern subscription is allowed only by the same pattern, as PSUBSCRIBE checks it."""
    acl(admin, "SETUSER", "sub", "on", ">pw", "~*", "+@all", "&news.*", "&alerts")
    def subscribed(cmd, *names):
        c = conn_as(acl_server, "sub", "pw")
        c.send(resp(cmd, *names))
        got = b""
        while got.count(b"\r\n") < 6 * len(names):
            chunk = c.sock.recv(4096)
            assert chunk, "closed while subscribing"
            got += chunk
        return c
    by_channel = subscribed("SUBSCRIBE", "news.1", "alerts")
    by_pattern = subscribed("PSUBSCRIBE", "news.*")
    plain = conn_as(acl_server, "sub", "pw")
    clients = [by_channel, by_pattern, plain]
    try:
        # More channels: everyone stays.
        acl(admin, "SETUSER", "sub", "&sports")
        for c in clients:
            assert roundtrip(c, resp("PING")) in (b"+PONG\r\n", b"*2\r\n$4\r\npong\r\n$0\r\n\r\n")
        # news.1 is still matched by a pattern, but the pattern subscription needs the
        # pattern itself.
        acl(admin, "SETUSER", "sub", "resetchannels", "&news.1", "&news.[0-9]", "&alerts")
        assert expect_closed(by_pattern, timeout=10) == b""
        assert roundtrip(by_channel, resp("PING")) == b"*2\r\n$4\r\npong\r\n$0\r\n\r\n"
        acl(admin, "SETUSER", "sub", "resetchannels", "&news.*")
        assert expect_closed(by_channel, timeout=10) == b""
        assert roundtrip(plain, resp("PING")) == b"+PONG\r\n"
    finally:
        for c in clients:
            c.close()


def test_requirepass_is_the_default_users_password(acl_server, admin):
    admin.config_set("requirepass", "secret")
    try:
        c = RawConnection(acl_server.port, timeout=10)
        try:
            assert roundtrip(c, resp("GET", "x")) == b"-NOAUTH Authentication required.\r\n"
            assert roundtrip(c, resp("AUTH", "secret")) == b"+OK\r\n"
            assert roundtrip(c, resp("GET", "x")) == b"$-1\r\n"
            assert roundtrip(c, resp("AUTH", "default", "secret")) == b"+OK\r\n"
        finally:
            c.close()
        u = acl(admin, "GETUSER", "default")
        got = dict(zip(u[::2], u[1::2]))
        assert "nopass" not in got["flags"]
        assert len(got["passwords"]) == 1
        assert admin.get("x") is None  # an authenticated client stays so
    finally:
        admin.config_set("requirepass", "")
    c = RawConnection(acl_server.port, timeout=10)
    try:
        assert roundtrip(c, resp("GET", "x")) == b"$-1\r\n"
    finally:
        c.close()


def test_a_disabled_default_user_requires_auth(acl_server, admin):
    acl(admin, "SETUSER", "bob", "on", ">pw", "~*", "+@all")
    acl(admin, "SETUSER", "default", "off")
    c = RawConnection(acl_server.port, timeout=10)
    try:
        assert roundtrip(c, resp("GET", "x")) == b"-NOAUTH Authentication required.\r\n"
        assert roundtrip(c, resp("AUTH", "bob", "pw")) == b"+OK\r\n"
        assert roundtrip(c, resp("GET", "x")) == b"$-1\r\n"
        assert roundtrip(c, resp("ACL", "SETUSER", "default", "on")) == b"+OK\r\n"
    finally:
        c.close()


def test_dryrun_genpass_and_errors(admin):
    acl(admin, "SETUSER", "bob", "on", "+get")
    with pytest.raises(redis.ResponseError, match="^User 'nosuch' not found$"):
        acl(admin, "DRYRUN", "nosuch", "get", "x")
    with pytest.raises(redis.ResponseError, match="^Command 'nosuch' not found$"):
        acl(admin, "DRYRUN", "bob", "nosuch")
    with pytest.raises(redis.ResponseError, match="^wrong number of arguments for 'get'"):
        acl(admin, "DRYRUN", "bob", "get")
    p = acl(admin, "GENPASS")
    assert len(p) == 64 and int(p, 16) >= 0
    assert len(acl(admin, "GENPASS", 32)) == 8
    assert len(acl(admin, "GENPASS", 5)) == 2
    assert acl(admin, "GENPASS") != p
    for bad in ("0", "5000"):
        with pytest.raises(redis.ResponseError, match="ACL GENPASS argument must be"):
            acl(admin, "GENPASS", bad)
    with pytest.raises(redis.ResponseError, match="^value is not an integer"):
        acl(admin, "GENPASS", "x")
    with pytest.raises(redis.ResponseError, match="^unknown subcommand 'nosuch'. Try ACL HELP.$"):
        acl(admin, "nosuch")
    with pytest.raises(redis.ResponseError, match="^This Redis instance is not configured to"):
        acl(admin, "SAVE")
    assert acl(admin, "HELP")[0].startswith("ACL <subcommand>")


def test_the_log_counts_repeats_and_resets(acl_server, admin):
    acl(admin, "SETUSER", "u", "on", "nopass", "~*", "+get")
    c = conn_as(acl_server, "u", "x")
    try:
        for _ in range(3):
            assert roundtrip(c, resp("DEL", "a")) == noperm("del")
        assert roundtrip(c, resp("SET", "a", "1")) == noperm("set")
    finally:
        c.close()
    entries = [dict(zip(e[::2], e[1::2])) for e in acl(admin, "LOG")]
    assert [(e["object"], e["count"]) for e in entries] == [("set", 1), ("del", 3)]
    assert len(acl(admin, "LOG", 1)) == 1
    assert acl(admin, "LOG", "RESET") == "OK"
    assert acl(admin, "LOG") == []


def config_server(server_factory, text, **kw):
    return server_factory(config_text=text, **kw)


def test_users_from_the_config_file(server_factory):
    s = config_server(server_factory,
                      "user alice on >apw ~a* +@all\nuser default on nopass ~* &* +@all "
                      "-flushall\n")
    c = s.client(decode_responses=True)
    users = c.acl_users()
    assert users == ["alice", "default"]
    r = s.client(username="alice", password="apw", decode_responses=True)
    assert r.set("a1", "v")
    with pytest.raises(redis.exceptions.NoPermissionError, match="one of the keys"):
        r.get("b")
    assert c.execute_command("ACL", "DRYRUN", "default", "flushall").startswith("This user")


def test_config_rewrite_writes_the_users_back(server_factory):
    """CONFIG REWRITE writes every user as ACL LIST describes it: into the file's `user`
    lines in order, the rest appended, as Redis does. The rewritten file starts a server
    with the same users."""
    s = config_server(server_factory,
                      "# users\nuser alice on >apw ~a* +@all\nmaxclients 1000\nuser bob off\n")
    c = s.client(decode_responses=True)
    acl(c, "SETUSER", "carol", "on", "nopass", "~c*", "+get")
    acl(c, "DELUSER", "bob")
    # Redis 7.0 leaves the default user's sanitize-payload (a default) out of the file.
    want = [u.replace(" sanitize-payload", "") for u in acl(c, "LIST")]
    assert c.config_rewrite()
    conf = os.path.join(s.dir, "test.conf")
    lines = [x.replace(" sanitize-payload", "") for x in open(conf).read().splitlines()]
    assert lines[:4] == ["# users", want[0], "maxclients 1000", want[1]]
    assert [x for x in lines if x.startswith("user ")] == want
    assert lines[-1] == want[2]
    again = server_factory(config_text=open(conf).read())
    assert [u.replace(" sanitize-payload", "")
            for u in acl(again.client(decode_responses=True), "LIST")] == want
    r = again.client(username="alice", password="apw", decode_responses=True)
    assert r.set("a1", "v")


def test_a_bad_user_line_or_both_sources_stop_the_start(server_factory, tmp_path):
    s = server_factory(config_text="user alice on +nosuchcmd\n", expect_fail=True)
    assert s.wait_exit(10) not in (None, 0)
    acl_file = tmp_path / "users.acl"
    acl_file.write_text("user bob on nopass +@all ~*\n")
    s = server_factory(config_text="aclfile %s\nuser alice on\n" % acl_file, expect_fail=True)
    assert s.wait_exit(10) not in (None, 0)


def test_a_missing_or_unwritable_aclfile(server_factory, tmp_path):
    # Missing at start: the server does not start, as Redis's does not.
    s = server_factory(config_text="aclfile %s\n" % (tmp_path / "nosuch.acl"),
                       expect_fail=True)
    assert s.wait_exit(10) not in (None, 0)
    # Its directory gone later: ACL SAVE fails with an error and the server goes on.
    d = tmp_path / "acl"
    d.mkdir()
    acl_file = d / "users.acl"
    acl_file.write_text("user bob on nopass ~* +@all\n")
    s = server_factory(config_text="aclfile %s\n" % acl_file)
    c = s.client(decode_responses=True)
    acl_file.unlink()
    d.rmdir()
    with pytest.raises(redis.ResponseError, match="error trying to save the ACLs"):
        c.execute_command("ACL", "SAVE")
    with pytest.raises(redis.ResponseError):
        c.execute_command("ACL", "LOAD")
    assert c.acl_users() == ["bob", "default"]
    assert c.ping()


def test_aclfile_save_and_load(server_factory, tmp_path):
    acl_file = tmp_path / "users.acl"
    acl_file.write_text("user bob on #%s ~k* +get\n" % BOB_HASH)
    s = server_factory(config_text="aclfile %s\n" % acl_file)
    c = s.client(decode_responses=True)
    assert c.acl_users() == ["bob", "default"]
    b = s.client(username="bob", password="pw", decode_responses=True)
    assert b.get("k1") is None
    c.execute_command("ACL", "SETUSER", "carol", "on", ">cpw", "+@all", "~*")
    assert c.execute_command("ACL", "SAVE") == "OK"
    text = acl_file.read_text()
    assert "user carol on #" in text and "user bob on #%s ~k* resetchannels -@all +get" % BOB_HASH \
        in text
    c.execute_command("ACL", "DELUSER", "carol")
    assert c.execute_command("ACL", "LOAD") == "OK"
    assert c.acl_users() == ["bob", "carol", "default"]
    acl_file.write_text("user dave on +nosuchcmd\n")
    with pytest.raises(redis.ResponseError):
        c.execute_command("ACL", "LOAD")
    assert c.acl_users() == ["bob", "carol", "default"]  # a bad file changes nothing


def test_client_kill_by_user(acl_server, admin):
    acl(admin, "SETUSER", "bob", "on", ">pw", "~*", "+@all")
    bobs = [conn_as(acl_server, "bob", "pw") for _ in range(2)]
    other = RawConnection(acl_server.port, timeout=10)
    try:
        assert admin.execute_command("CLIENT", "KILL", "USER", "bob") == 2
        for c in bobs:
            assert expect_closed(c, timeout=10) == b""
        assert roundtrip(other, resp("PING")) == b"+PONG\r\n"
        with pytest.raises(redis.ResponseError, match="^No such user 'nosuch'$"):
            admin.execute_command("CLIENT", "KILL", "USER", "nosuch")
    finally:
        for c in bobs + [other]:
            c.close()


@pytest.mark.skipif(TARGET == "redis", reason="CLIENT KILL MAXAGE is Redis 7.2's")
def test_client_kill_maxage_spares_younger_connections(acl_server, admin):
    old = RawConnection(acl_server.port, timeout=10)
    try:
        assert roundtrip(old, resp("PING")) == b"+PONG\r\n"
        time.sleep(1.2)
        young = RawConnection(acl_server.port, timeout=10)
        assert roundtrip(young, resp("PING")) == b"+PONG\r\n"
        assert admin.execute_command("CLIENT", "KILL", "MAXAGE", "1", "SKIPME", "yes") >= 1
        assert expect_closed(old, timeout=10) == b""
        assert roundtrip(young, resp("PING")) == b"+PONG\r\n"
        young.close()
    finally:
        old.close()
