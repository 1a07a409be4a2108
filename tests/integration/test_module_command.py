"""MODULE: strata loads no modules, and answers as a redis-server without modules does
under its default enable-module-command no. Each call is compared with redis-server's
reply (errors included) through helpers.same()."""
import pytest
import redis

from helpers import same


@pytest.mark.parametrize("args", [
    ("MODULE", "LIST"),
    ("MODULE", "HELP"),
    ("MODULE", "LOAD", "/nonexistent/module.so"),
    ("MODULE", "LOAD", "/nonexistent/module.so", "arg1", "arg2"),
    ("MODULE", "LOADEX", "/nonexistent/module.so", "CONFIG", "a", "1", "ARGS", "x"),
    ("MODULE", "UNLOAD", "search"),
    ("MODULE", "list"),
    ("MODULE", "LIST", "extra"),
    ("MODULE", "LOAD"),
    ("MODULE", "LOADEX"),
    ("MODULE", "UNLOAD"),
    ("MODULE", "UNLOAD", "a", "b"),
    ("MODULE", "HELP", "extra"),
    ("MODULE", "NOSUCH"),
    ("MODULE",),
])
def test_module_subcommands_answer_as_redis_does(pair, args):
    same(pair, *args)


def test_module_list_is_empty_and_a_client_library_sees_no_modules(r):
    assert r.module_list() == []
    with pytest.raises(redis.ResponseError, match="MODULE command not allowed"):
        r.module_load("/nonexistent/module.so")


def test_module_is_not_allowed_in_a_script(pair):
    same(pair, "EVAL", "return redis.call('module', 'list')", "0")
