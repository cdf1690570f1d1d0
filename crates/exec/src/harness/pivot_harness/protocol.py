"""The runner <-> zygote protocol: one JSON object a line each way.

A request names every field; one that lacks a field, has one of the wrong type, a version
other than ours, or a limit that is not positive is refused with an error reply and runs
nothing (fail closed: a missing limit must not mean "no limit")."""

import json
import os

VERSION = 5

# Field -> accepted types. `alarm` may be null (no alarm: only the kill at `timeout`).
FIELDS = {
    "version": (int,),
    "id": (int,),
    "mode": (str,),
    "solution": (str,),
    "test": (str,),
    "entry_point": (str,),
    "timeout": (int, float),
    "cpu": (int,),
    "memory": (int,),
    "fsize": (int,),
    "nproc": (int,),
    "nofile": (int,),
    "output_cap": (int,),
    "alarm": (int, float, type(None)),
    "quirks": (bool,),
    "preload": (list,),
    "seed": (int,),
}
MODES = ("humaneval", "unittest")
LIMITS = ("timeout", "cpu", "memory", "fsize", "nproc", "nofile", "output_cap")


class ProtocolError(Exception):
    pass


def validate(req):
    """Returns `req` when it is a complete request of this version, else raises ProtocolError
    naming the first problem."""
    if not isinstance(req, dict):
        raise ProtocolError("a request is a JSON object")
    for key, types in FIELDS.items():
        if key not in req:
            raise ProtocolError("the request has no %r" % key)
        value = req[key]
        if type(value) is bool and bool not in types:
            raise ProtocolError("%r must be %s, not a boolean" % (key, types[0].__name__))
        if not isinstance(value, types):
            raise ProtocolError("%r must be %s" % (key, " or ".join(t.__name__ for t in types)))
    unknown = sorted(set(req) - set(FIELDS))
    if unknown:
        raise ProtocolError("unknown field %r" % unknown[0])
    if req["version"] != VERSION:
        raise ProtocolError("protocol version %r; this harness speaks %d" % (req["version"], VERSION))
    if req["mode"] not in MODES:
        raise ProtocolError("mode %r is none of %s" % (req["mode"], ", ".join(MODES)))
    for key in LIMITS:
        if req[key] <= 0:
            raise ProtocolError("limit %r must be positive, got %r" % (key, req[key]))
    if req["alarm"] is not None and req["alarm"] <= 0:
        raise ProtocolError("'alarm' must be positive or null")
    if not 0 <= req["seed"] < 1 << 63:
        raise ProtocolError("'seed' must be in [0, 2**63)")
    if not all(isinstance(line, str) for line in req["preload"]):
        raise ProtocolError("'preload' must be a list of strings")
    return req


# What the zygote reads of a task before it forks the task's server (the line before the
# request): the request's own values, checked equal by the server.
HEAD_FIELDS = {
    "version": (int,),
    "id": (int,),
    "quirks": (bool,),
    "alarm": (int, float, type(None)),
    "timeout": (int, float),
    "preload": (list,),
}


def validate_head(head):
    """Returns `head` when it is a complete head of this version, else raises ProtocolError."""
    if not isinstance(head, dict):
        raise ProtocolError("a request's head is a JSON object")
    for key, types in HEAD_FIELDS.items():
        if key not in head:
            raise ProtocolError("the request's head has no %r" % key)
        if type(head[key]) is bool and bool not in types or not isinstance(head[key], types):
            raise ProtocolError("%r of the head must be %s" % (key, " or ".join(t.__name__ for t in types)))
    unknown = sorted(set(head) - set(HEAD_FIELDS))
    if unknown:
        raise ProtocolError("unknown field %r in the head" % unknown[0])
    if head["version"] != VERSION:
        raise ProtocolError("protocol version %r; this harness speaks %d" % (head["version"], VERSION))
    if not all(isinstance(line, str) for line in head["preload"]):
        raise ProtocolError("'preload' must be a list of strings")
    return head


def check_head(req, head):
    """The request must say what its head said: the zygote acted on the head."""
    for key in HEAD_FIELDS:
        if req[key] != head[key]:
            raise ProtocolError("the request's %r differs from its head's" % key)


def write_all(fd, data):
    view = memoryview(data)
    while view:
        try:
            n = os.write(fd, view)
        except InterruptedError:
            continue
        view = view[n:]


class Channel:
    """The zygote's private copy of its stdout: the protocol's only way out."""

    fd = None

    @classmethod
    def send(cls, obj):
        # Text from the task may hold lone surrogates, which JSON readers refuse: U+FFFD instead.
        text = json.dumps(obj, ensure_ascii=False) + "\n"
        write_all(cls.fd, text.encode("utf-8", "surrogatepass").decode("utf-8", "replace").encode("utf-8"))
