"""protected-mode: while no password is set, clients from any address but 127.0.0.1 and
::1 are told why and disconnected, as Redis does. Tests connect from 127.0.0.2 (still the
loopback interface, but not an address Redis counts as local)."""
from conftest import RawConnection
from helpers import cmd, read_until_closed, roundtrip

DENIED = (b"-DENIED Redis is running in protected mode because protected mode is enabled and "
          b"no password is set for the default user.")


def connect_from(port, source):
    return RawConnection(port, source=source)


def test_non_local_client_is_denied_and_closed(server):
    s = connect_from(server.port, "127.0.0.2")
    try:
        s.send(cmd("PING"))
        data, closed = read_until_closed(s)
    finally:
        s.close()
    assert data.startswith(DENIED)
    assert b"4) Setup a an authentication password for the default user." in data
    assert data.endswith(b"accepting connections from the outside.\r\n")
    assert closed
    c = server.client()
    try:
        assert c.info("stats")["rejected_connections"] >= 1
        assert c.ping() is True  # local clients are served
    finally:
        c.close()


def test_local_client_is_served(server):
    s = connect_from(server.port, "127.0.0.1")
    try:
        assert roundtrip(s, cmd("PING")) == b"+PONG\r\n"
    finally:
        s.close()


def test_protected_mode_off_serves_everyone(server_factory):
    srv = server_factory(extra_args=["--protected-mode", "no"])
    s = connect_from(srv.port, "127.0.0.2")
    try:
        assert roundtrip(s, cmd("PING")) == b"+PONG\r\n"
    finally:
        s.close()


def test_config_set_protected_mode_applies_to_new_connections(server_factory):
    srv = server_factory()
    c = srv.client()
    try:
        assert c.config_set("protected-mode", "no") is True
        s = connect_from(srv.port, "127.0.0.2")
        try:
            assert roundtrip(s, cmd("PING")) == b"+PONG\r\n"
        finally:
            s.close()
        assert c.config_set("protected-mode", "yes") is True
        s = connect_from(srv.port, "127.0.0.2")
        try:
            data, closed = read_until_closed(s)
        finally:
            s.close()
        assert data.startswith(DENIED) and closed
    finally:
        c.close()


def test_a_password_lifts_protected_mode(server_factory):
    srv = server_factory(extra_args=["--requirepass", "sekret"])
    s = connect_from(srv.port, "127.0.0.2")
    try:
        assert roundtrip(s, cmd("PING")).startswith(b"-NOAUTH")
        assert roundtrip(s, cmd("AUTH", "sekret")) == b"+OK\r\n"
        assert roundtrip(s, cmd("PING")) == b"+PONG\r\n"
    finally:
        s.close()
