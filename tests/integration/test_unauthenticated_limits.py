"""Before AUTH, Redis's small request limits: more than 10 arguments, or a bulk of more
than 16 KB, is a protocol error and the connection is closed, so a client that has not
authenticated can make the server hold or scan only a few kilobytes."""
import pytest

from conftest import RawConnection
from helpers import cmd, expect_closed, roundtrip, send_until_closed

PASSWORD = "sekret"


@pytest.fixture
def locked(server_factory):
    return server_factory(extra_args=["--requirepass", PASSWORD])


def test_more_than_ten_arguments_before_auth(locked):
    c = RawConnection(locked.port)
    try:
        # Ten arguments are still read (and refused for want of AUTH).
        assert roundtrip(c, cmd("MSET", "a", "1", "b", "2", "c", "3", "d", "4", "e")).startswith(
            b"-NOAUTH")
        # The header of an eleventh is enough: nothing more is read.
        data = send_until_closed(c, b"*11\r\n")
    finally:
        c.close()
    assert data == b"-ERR Protocol error: unauthenticated multibulk length\r\n"


def test_bulk_over_16k_before_auth(locked):
    c = RawConnection(locked.port)
    try:
        data = send_until_closed(c, b"*2\r\n$4\r\nAUTH\r\n$16385\r\n")
    finally:
        c.close()
    assert data == b"-ERR Protocol error: unauthenticated bulk length\r\n"


def test_a_huge_bulk_header_before_auth_is_refused_at_once(locked):
    """Three clients each announce a 400 MB value: each is cut after its header."""
    conns = [RawConnection(locked.port) for _ in range(3)]
    try:
        for c in conns:
            data = send_until_closed(c, b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$419430400\r\n" + b"x" * 4096)
            assert data == b"-ERR Protocol error: unauthenticated bulk length\r\n"
    finally:
        for c in conns:
            c.close()


def test_16k_password_is_read_and_checked(locked):
    c = RawConnection(locked.port)
    try:
        reply = roundtrip(c, cmd("AUTH", "x" * 16384))
        assert reply.startswith(b"-WRONGPASS")
        assert roundtrip(c, cmd("AUTH", PASSWORD)) == b"+OK\r\n"
    finally:
        c.close()


def test_after_auth_the_normal_limits_apply(locked):
    c = RawConnection(locked.port)
    try:
        assert roundtrip(c, cmd("AUTH", PASSWORD)) == b"+OK\r\n"
        args = ["RPUSH", "l"] + ["e%d" % i for i in range(100)]
        assert roundtrip(c, cmd(*args)) == b":100\r\n"
        assert roundtrip(c, cmd("SET", "big", "v" * 100000)) == b"+OK\r\n"
    finally:
        c.close()


def test_no_password_no_limits(server):
    c = RawConnection(server.port)
    try:
        args = ["RPUSH", "l"] + ["e%d" % i for i in range(100)]
        assert roundtrip(c, cmd(*args)) == b":100\r\n"
        assert roundtrip(c, cmd("SET", "big", "v" * 100000)) == b"+OK\r\n"
    finally:
        c.close()


def test_wrong_password_is_refused(locked):
    c = RawConnection(locked.port)
    try:
        for guess in ["", "s", "sekre", "sekreT", "sekrets"]:
            assert roundtrip(c, cmd("AUTH", guess)).startswith(b"-WRONGPASS"), guess
        assert roundtrip(c, cmd("AUTH", PASSWORD)) == b"+OK\r\n"
    finally:
        c.close()
