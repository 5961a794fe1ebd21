"""What one process of a run measured, as JSON that another of its processes reads back.

A measured group (rackproof.nodes.together) holds the suite's own results (dataclasses of rackproof
such as IperfResult, with tuples, dicts keyed by pairs) and the errors a part raised. Nothing
is unpickled: a value comes back only as plain JSON data, a point in time (ISO 8601), a dataclass of a rackproof module
built from its fields, or an error of rackproof (or a plain builtin error) built from its
constructor's arguments. Any other name in the text is refused.
"""

from __future__ import annotations

import builtins
import dataclasses
import datetime
import importlib
import inspect
import json

_BUILTIN_ERRORS = {e.__name__: e for e in (AssertionError, KeyError, LookupError, OSError, RuntimeError,
                                            TimeoutError, TypeError, ValueError)}


class Unportable(ValueError):
    """Text that is not a value this module wrote."""


def dumps(value) -> str:
    return json.dumps(_encoded(value))


def loads(text: str):
    try:
        return _decoded(json.loads(text))
    except (ValueError, TypeError, KeyError, AttributeError) as e:
        raise Unportable(f"not a value a run wrote: {e}") from None


def _name(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _encoded(value):
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, list):
        return [_encoded(v) for v in value]
    if isinstance(value, tuple):
        return {"tuple": [_encoded(v) for v in value]}
    if isinstance(value, dict):
        return {"dict": [[_encoded(k), _encoded(v)] for k, v in value.items()]}
    if isinstance(value, datetime.datetime):     # a node's clock
        return {"datetime": value.isoformat()}
    if isinstance(value, BaseException):
        return {"error": _name(type(value)), "arguments": _error_arguments(value)}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {"dataclass": _name(type(value)), "fields": _fields(value)}
    raise TypeError(f"{type(value).__name__} cannot cross the run's processes")


def _fields(value) -> dict:
    return {f.name: _encoded(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init}


def _error_arguments(error: BaseException):
    """The error's constructor arguments: its fields (a dataclass), the attributes its
    __init__ names, or its args; an error of neither kind travels as a RuntimeError saying what it was."""
    cls = type(error)
    if dataclasses.is_dataclass(error):
        return _fields(error)
    if cls.__module__.startswith("rackproof."):
        if cls.__init__ is Exception.__init__:     # no constructor of its own: its message
            return [_encoded(a) for a in error.args]
        names = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
        if all(hasattr(error, n) for n in names):
            return {n: _encoded(getattr(error, n)) for n in names}
    if cls.__module__ == "builtins" and cls.__name__ in _BUILTIN_ERRORS:
        return [_encoded(a) for a in error.args]
    return {"~": f"{cls.__name__}: {error}"}


def _decoded(data):
    if data is None or isinstance(data, (bool, int, float, str)):
        return data
    if isinstance(data, list):
        return [_decoded(v) for v in data]
    if not isinstance(data, dict) or len(data) not in (1, 2):
        raise ValueError("an object of no known kind")
    if "tuple" in data:
        return tuple(_decoded(v) for v in data["tuple"])
    if "dict" in data:
        return {_decoded(k): _decoded(v) for k, v in data["dict"]}
    if "datetime" in data:
        return datetime.datetime.fromisoformat(data["datetime"])
    if "dataclass" in data:
        cls = _rackproof_class(data["dataclass"])
        if not dataclasses.is_dataclass(cls):
            raise ValueError(f"{data['dataclass']} is not a dataclass")
        return cls(**{k: _decoded(v) for k, v in data["fields"].items()})
    if "error" in data:
        arguments = data["arguments"]
        if isinstance(arguments, dict) and set(arguments) == {"~"}:
            return RuntimeError(arguments["~"])
        module, _, name = data["error"].partition(":")
        if module == "builtins":
            if name not in _BUILTIN_ERRORS:
                raise ValueError(f"{name} is not an error this module writes")
            return getattr(builtins, name)(*(_decoded(a) for a in arguments))
        cls = _rackproof_class(data["error"])
        if not (isinstance(cls, type) and issubclass(cls, Exception)):
            raise ValueError(f"{data['error']} is not an error")
        if isinstance(arguments, list):
            return cls(*(_decoded(a) for a in arguments))
        return cls(**{k: _decoded(v) for k, v in arguments.items()})
    raise ValueError("an object of no known kind")


def _rackproof_class(name: str) -> type:
    module, _, qualname = name.partition(":")
    if not module.startswith("rackproof.") or not qualname.isidentifier():
        raise ValueError(f"{name} is not a class of rackproof")
    cls = getattr(importlib.import_module(module), qualname)
    if not isinstance(cls, type):
        raise ValueError(f"{name} is not a class")
    return cls
