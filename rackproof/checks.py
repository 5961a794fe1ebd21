"""The suite's checks as source: where they are, and which probes each one runs (for `rackproof
probes`). Read from the code, not from a run: a check uses a probe when its test function, a
fixture it asks for, the plan entry it names (`planned(ENTRY)`: rackproof.measurements), or a
library function any of them calls (followed through imports and module attributes,
transitively) names the probe. A method called on an object has no known type
here: every library class's method of that name is followed (a builtin's name, d.get, never),
which can only add checks to a probe, never leave one out.
"""

from __future__ import annotations

import ast
import importlib
import io
import pkgutil
from functools import cache
from pathlib import Path

import rackproof

from rackproof.measuring.plan import Entry
from rackproof.probes.probe import Probe

PACKAGE = Path(rackproof.__file__).parent
FOLDERS = ("tests_physical", "tests_network", "tests_ssh", "tests_serving")
FIXTURES = "fixtures"       # the suite's fixtures, beside its tests
MEASUREMENTS = "rackproof.measurements"    # the plan's entries, which a check names: planned(ENTRY)

Ref = tuple[str, str]   # (module, top-level name)
# a call of one of these is taken for the builtin's (d.get, s.add, f.read), never followed
_BUILTIN_METHODS = frozenset(name for kind in (dict, list, set, str, bytes, io.TextIOBase) for name in dir(kind))


def suite_root() -> Path | None:
    """The folder holding the suite (tests_* and its pytest.ini): inside the installed package
    (`pip install .` puts it there as rackproof/suite), or the checkout the package runs from
    (not installed, or installed in place with `pip install -e`)."""
    return next((root for root in (PACKAGE / "suite", PACKAGE.parent)
                 if (root / "pytest.ini").is_file() and (root / "tests_physical").is_dir()), None)


class _Module:
    """One source file: its imports, its top-level definitions and what each of them names."""

    def __init__(self, name: str, path: Path):
        self.name = name
        self.package = path.name == "__init__.py"
        tree = ast.parse(path.read_text())
        self.modules: dict[str, str] = {}     # local name -> module it stands for
        self.names: dict[str, Ref] = {}       # local name -> (module, name) imported from it
        for node in tree.body:
            if isinstance(node, ast.Import):
                self.modules.update({a.asname or a.name: a.name for a in node.names})
            elif isinstance(node, ast.ImportFrom):
                base = self._absolute(node)
                for a in node.names:
                    # `from . import probes` imports a module; `from .x import f` a name of x
                    if _is_package(base) and _path(f"{base}.{a.name}") is not None:
                        self.modules[a.asname or a.name] = f"{base}.{a.name}"
                    else:
                        self.names[a.asname or a.name] = (base, a.name)
        # a check's or a fixture's arguments are fixtures; a library function's are not
        self.asks_fixtures = not name.startswith(rackproof.__name__) or name.startswith(f"{rackproof.__name__}.plugin")
        self.defs: dict[str, list[ast.AST]] = {}
        self._refs: dict[str, frozenset[Ref]] = {}
        for node in tree.body:
            for defined in _defined(node):
                self.defs.setdefault(defined, []).append(node)
            if isinstance(node, ast.ClassDef):   # its methods apart: "Class.method"
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        self.defs.setdefault(f"{node.name}.{item.name}", []).append(item)

    def _absolute(self, node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        parts = self.name.split(".")[:len(self.name.split(".")) - node.level + self.package]
        return ".".join(parts + ([node.module] if node.module else []))

    def refs(self, name: str) -> frozenset[Ref]:
        """What the definition `name` names, resolved to (module, name); read once (every check's
        walk asks again for what the library's functions name)."""
        if name not in self._refs:
            self._refs[name] = frozenset(self._read_refs(name))
        return self._refs[name]

    def _read_refs(self, name: str) -> set[Ref]:
        found: set[Ref] = set()
        for definition in self.defs.get(name, ()):
            for node in _walk(definition):
                if isinstance(node, ast.Name):
                    found |= self.resolve(node.id)
                elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                        and node.value.id in self.modules:
                    found.add((self.modules[node.value.id], node.attr))
                elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                        and node.func.attr not in _BUILTIN_METHODS and not (
                            isinstance(node.func.value, ast.Name) and node.func.value.id in self.modules):
                    # a method called: any class's of that name
                    found.add(("<method>", node.func.attr))
                elif isinstance(node, ast.arg) and self.asks_fixtures:
                    found.add(("<fixture>", node.arg))
        return found - {(self.name, name)}

    def resolve(self, local: str) -> set[Ref]:
        if local in self.names:
            return {self.names[local]}
        return {(self.name, local)} if local in self.defs else set()


def _walk(definition: ast.AST):
    """The nodes of a definition; a class's methods are definitions of their own."""
    todo = [definition]
    while todo:
        node = todo.pop()
        yield node
        todo += [child for child in ast.iter_child_nodes(node)
                 if not (isinstance(node, ast.ClassDef) and isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)))]


@cache
def _methods() -> dict[str, list[Ref]]:
    """Method name -> every class's method of that name, in the library and the suite's fixtures."""
    found: dict[str, list[Ref]] = {}
    for name in _source_modules():
        for definition in _module(name).defs:
            if "." in definition:
                found.setdefault(definition.split(".", 1)[1], []).append((name, definition))
    return found


def _source_modules() -> list[str]:
    """The library's modules (the suite's copy in an installed package left out) and the fixtures'."""
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if parts[0] != "suite":
            names.append(".".join((rackproof.__name__, *parts)).removesuffix(".__init__"))
    root = suite_root()
    return names + ([f"{FIXTURES}.{p.stem}".removesuffix(".__init__") for p in sorted((root / FIXTURES).glob("*.py"))]
                    if root else [])


def _path(name: str) -> Path | None:
    """The source file of a module of the package or of the suite's fixtures (found, not imported)."""
    top, *rest = name.split(".")
    if top == rackproof.__name__:
        base = PACKAGE.joinpath(*rest)
    elif top == FIXTURES and (root := suite_root()) is not None:
        base = root.joinpath(top, *rest)
    else:
        return None
    return next((p for p in (base.with_suffix(".py"), base / "__init__.py") if p.is_file()), None)


def _is_package(name: str) -> bool:
    path = _path(name)
    return path is not None and path.name == "__init__.py"


def _defined(node: ast.AST) -> list[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    return []


@cache
def _module(name: str) -> _Module | None:
    path = _path(name)
    return _Module(name, path) if path else None


def _fixtures() -> dict[str, Ref]:
    """Fixture name -> the function behind it, in the suite's fixtures/ and the plugin's modules:
    `@pytest.fixture def f` and `f = pytest.fixture(_g, name="f")`."""
    found: dict[str, Ref] = {}
    for name in _source_modules():
        if not name.startswith((f"{rackproof.__name__}.plugin", FIXTURES)):
            continue
        for node in ast.parse(_path(name).read_text()).body:
            if isinstance(node, ast.FunctionDef) and any("fixture" in ast.unparse(d) for d in node.decorator_list):
                found[node.name] = (name, node.name)
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) \
                    and ast.unparse(node.value.func).endswith("fixture") and node.value.args:
                fixture = next((k.value.value for k in node.value.keywords if k.arg == "name"), node.targets[0].id)
                found[fixture] = (name, ast.unparse(node.value.args[0]))
    return found


def _probes_reached(start: set[Ref], fixtures: dict[str, Ref]) -> set[str]:
    """The probes that what `start` names reaches, through fixtures, modules and methods."""
    known = _known()
    seen: set[Ref] = set()
    todo = list(start)
    probes = set()
    while todo:
        ref = todo.pop()
        if ref in seen:
            continue
        seen.add(ref)
        if ref[0] == "<fixture>":
            todo += [fixtures[ref[1]]] if ref[1] in fixtures else []
            continue
        if ref[0] == "<method>":
            todo += _methods().get(ref[1], [])
            continue
        module = _module(ref[0])
        if module is None:
            continue
        if ref in known:
            probes.add(known[ref].name)
        elif ref[1] in module.names:      # a name the module imported from another
            todo.append(module.names[ref[1]])
        todo += module.refs(ref[1])
    return probes


def probe_users() -> dict[str, list[str]]:
    """Probe name -> the checks ("tests_network/test_link_health.py::test_lane_error_counters_under_load")
    that run it; {} when the suite's source is not there."""
    root = suite_root()
    if root is None:
        return {}
    fixtures = _fixtures()
    users: dict[str, list[str]] = {}
    every: list[str] = []
    for folder in FOLDERS:
        for path in sorted((root / folder).glob("test_*.py")):
            module = _test_module(path)
            for name, definitions in module.defs.items():
                if not name.startswith("test_") or not isinstance(definitions[0], ast.FunctionDef):
                    continue
                start = module.refs(name) | {("<fixture>", f) for f in _autouse(module)}
                check = f"{folder}/{path.name}::{name}"
                every.append(check)
                for probe in _probes_reached(_imported(module, start), fixtures):
                    users.setdefault(probe, []).append(check)
    # the survey runs on each node before any check's first command there (Host.runnable)
    from .probes import survey
    for probe in (survey.SURVEY, *survey.PARTS):
        users[probe.name] = every
    return users


@cache
def _test_module(path: Path) -> _Module:
    return _Module(f"{path.parent.name}.{path.stem}", path)


@cache
def entries_named(path: Path, check: str) -> tuple[Entry, ...]:
    """The plan's entries (rackproof.measuring.plan.Entry, in rackproof.measurements) that a check names,
    in its body or in a helper of its module it calls: what the run's plan measures for it."""
    module = _test_module(path)
    named = (getattr(importlib.import_module(m), name, None) for m, name in sorted(_imported(module, module.refs(check)))
             if m == MEASUREMENTS or m.startswith(f"{MEASUREMENTS}."))
    return tuple(entry for entry in named if isinstance(entry, Entry))


def _imported(module: _Module, refs: set[Ref]) -> set[Ref]:
    """A test module's own definitions (its helpers and fixtures) followed by hand: it is no package module."""
    out, todo, seen = set(), list(refs), set()
    while todo:
        ref = todo.pop()
        if ref in seen:
            continue
        seen.add(ref)
        if ref[0] == module.name:
            todo += module.refs(ref[1])
        else:
            out.add(ref)
    return out


def _autouse(module: _Module) -> list[str]:
    return [name for name, (node, *_) in module.defs.items() if isinstance(node, ast.FunctionDef)
            and any("autouse=True" in ast.unparse(d) for d in node.decorator_list)]


def _probe_modules() -> list[str]:
    """The modules that define probes: each tool's (every module of rackproof.probes, found, not
    listed), then the batches, traffic and disruption built from them."""
    from rackproof import probes
    from rackproof.measuring import disrupt, traffic
    from rackproof.nodes import host
    return [f"{probes.__name__}.{m.name}" for m in pkgutil.iter_modules(probes.__path__)] + \
        [host.__name__, traffic.__name__, disrupt.__name__]


def catalog() -> list[Probe]:
    """Every probe, each once (a probe imported by another module is listed where it is made
    first in that order)."""
    return list(dict.fromkeys(value for m in _probe_modules() for value in vars(importlib.import_module(m)).values()
                              if isinstance(value, Probe)))


@cache
def _known() -> dict[Ref, Probe]:
    """(module, name) -> the probe of each probe defined at the top of the modules catalog() reads."""
    return {(m, name): value for m in _probe_modules() for name, value in vars(importlib.import_module(m)).items()
            if isinstance(value, Probe) and name in _module(m).defs}
