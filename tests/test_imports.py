"""The import structure: no cycles, layers import downward only, swarmlog's privates stay home.

Every module of the three packages is parsed (not imported), and every import statement
anywhere in it counts: top level, inside functions (lazy imports) and under
``if TYPE_CHECKING:``. The layers are ``swarmlog`` <- ``synthesizer`` <- ``dashboards``:
a package may import its own modules and the layers below it, never one above. Inside
``synthesizer`` the same holds floor by floor (``FLOORS``), with no whitelist, and no
two subpackages or top-level modules import each other.

Above ``swarmlog`` no private name of it (``_x``) is imported, and no attribute that
only swarmlog defines under a private name (``event._d``) is read: what the other layers
need is public (``Log``, ``Event.envelope``). Tests and benchmark scripts may look inside.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ("swarmlog", "synthesizer", "dashboards")  # each may import those before it


def _modules() -> dict[str, Path]:
    out = {}
    for pkg in LAYERS:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


MODULES = _modules()


@functools.cache
def _tree(mod: str) -> ast.Module:
    return ast.parse(MODULES[mod].read_text(), str(MODULES[mod]))


def _is_package(mod: str) -> bool:
    return MODULES[mod].name == "__init__.py"


def _imported(mod: str, tree: ast.AST) -> Iterator[tuple[str, int, list[str]]]:
    """(module named, line, names taken from it) for every import statement in ``tree``."""
    base = mod.split(".") if _is_package(mod) else mod.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno, []
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parent = base[: len(base) - (node.level - 1)]
                name = ".".join([*parent, node.module] if node.module else parent)
            else:
                name = node.module or ""
            yield name, node.lineno, [a.name for a in node.names]


def _edges() -> dict[str, set[str]]:
    """Module -> the project modules it imports.

    ``from pkg import mod`` names ``pkg.mod``; ``from pkg import Name`` names ``pkg``
    (its ``__init__``). The parent packages a submodule import runs first are not
    counted: Python imports them before any of their modules, whoever asks.
    """
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for mod in MODULES:
        for name, _, names in _imported(mod, _tree(mod)):
            for n in names or [""]:
                sub = f"{name}.{n}"
                target = sub if sub in MODULES else name
                if target in MODULES:
                    graph[mod].add(target)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """Strongly connected components with more than one module (or a self-import)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1 or v in graph[v]:
                found.append(frozenset(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_checker_sees_lazy_type_checking_and_relative_imports() -> None:
    """The parser finds imports in functions and TYPE_CHECKING blocks, resolves dots."""
    src = (
        "from typing import TYPE_CHECKING\n"
        "from . import events as T\n"
        "from .state import SwarmState\n"
        "if TYPE_CHECKING:\n    from .swarm import Swarm\n"
        "def f():\n    from swarmlog.envelope import _x\n    import dashboards.app\n"
    )
    got = {(n, tuple(names)) for n, _, names in _imported("synthesizer.board", ast.parse(src))}
    assert ("synthesizer", ("events",)) in got
    assert ("synthesizer.state", ("SwarmState",)) in got
    assert ("synthesizer.swarm", ("Swarm",)) in got
    assert ("swarmlog.envelope", ("_x",)) in got and ("dashboards.app", ()) in got
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"d"}, "e": {"a"}}
    assert sorted(map(sorted, _cycles(graph))) == [["a", "b", "c"], ["d"]]


def test_no_import_cycles() -> None:
    cycles = _cycles(_edges())
    assert not cycles, "import cycles: " + "; ".join(" <-> ".join(sorted(c)) for c in cycles)


def test_layers_import_downward_only() -> None:
    upward = []
    for mod, path in MODULES.items():
        layer = LAYERS.index(mod.split(".")[0])
        for name, line, _ in _imported(mod, _tree(mod)):
            top = name.split(".")[0]
            if top in LAYERS and LAYERS.index(top) > layer:
                upward.append(f"{path.relative_to(ROOT)}:{line} imports {name}")
    assert not upward, "upward imports:\n" + "\n".join(upward)


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _private_attributes(packages: tuple[str, ...]) -> set[str]:
    """Private names defined in ``packages``: functions, classes, attributes, slots."""
    names: set[str] = set()
    for mod, path in MODULES.items():
        if mod.split(".")[0] not in packages:
            continue
        for node in ast.walk(_tree(mod)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                names.add(node.value)  # __slots__ entries
    return {n for n in names if _private(n)}


def test_no_private_swarmlog_names_above_it() -> None:
    swarmlog_private = _private_attributes(("swarmlog",))
    leaks = []
    for layer in LAYERS[1:]:
        own = _private_attributes((layer,))
        for mod, path in MODULES.items():
            if mod.split(".")[0] != layer:
                continue
            tree = _tree(mod)
            for name, line, names in _imported(mod, tree):
                if name.split(".")[0] == "swarmlog":
                    bad = [p for p in name.split(".") if _private(p)]
                    bad += [n for n in names if _private(n)]
                    if bad:
                        leaks.append(f"{path.relative_to(ROOT)}:{line} imports {', '.join(bad)}")
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Attribute)
                    and node.attr in swarmlog_private
                    and node.attr not in own
                    and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
                ):
                    leaks.append(f"{path.relative_to(ROOT)}:{node.lineno} reads .{node.attr}")
    assert not leaks, "private swarmlog names used outside swarmlog/:\n" + "\n".join(leaks)


def test_the_private_name_check_catches_event_d() -> None:
    """``._d`` is swarmlog's private slot and no other layer defines it."""
    assert "_d" in _private_attributes(("swarmlog",))
    assert "_d" not in _private_attributes(("synthesizer",)) | _private_attributes(
        ("dashboards",)
    )


# -- the house: the folder tree is the architecture, and these rules keep it so --
# (docs/design.md §1, "Layers and floors")

BACKENDS = ("swarmlog.file", "swarmlog.jetstream")
CORE_FACES = {"swarmlog", "swarmlog.open"}  # the package face and ``open_log`` pick a backend
FOLD = "synthesizer.state"
FLOORS: tuple[tuple[str, ...], ...] = (
    # 1. vocabulary: names, settings, errors and small helpers that import no other floor
    (
        "synthesizer.configmodel",
        "synthesizer.config",
        "synthesizer.errors",
        "synthesizer.events",
        "synthesizer.seedvocab",
        "synthesizer.body_models",
        "synthesizer.reserved",
        "synthesizer.retry",
        "synthesizer.heapfreeze",
        "synthesizer.storeview",
    ),
    # 2. the fold: pure, deterministic, reads only the vocabulary and the core
    (FOLD,),
    # 3. what reads the fold: search, the merge rule, the board, configuration in the log
    ("synthesizer.search", "synthesizer.merge", "synthesizer.board", "synthesizer.configlog"),
    # 4. history: checkpoints, retention, loading a state, erasure, what the dashboard counts
    (
        "synthesizer.checkpoints",
        "synthesizer.retention",
        "synthesizer.replay",
        "synthesizer.backlog",
        "synthesizer.metrics",
        "synthesizer.forget",
    ),
    # 5. the synthesizer worker and promotion into a global memory
    ("synthesizer.worker", "synthesizer.promotion"),
    # 6. the faces: the agent API, the seeds' facades, integrations, the package face
    (
        "synthesizer.swarm",
        "synthesizer.compat",
        "synthesizer.integrations",
        "synthesizer.bodies",
        "synthesizer",
    ),
)
"""The floors of ``synthesizer``, lowest first; each entry a subpackage or a module.
A module imports its own unit, its floor and the floors below; never one above."""
NONDETERMINISTIC = ("time", "random", "datetime", "secrets", "uuid")
MAX_MODULES_PER_FOLDER = 20


def _within(mod: str, pkg: str) -> bool:
    return mod == pkg or mod.startswith(pkg + ".")


def _backend(mod: str) -> str | None:
    return next((b for b in BACKENDS if _within(mod, b)), None)


def _is_core(mod: str) -> bool:
    return _within(mod, "swarmlog") and _backend(mod) is None


def _imports_of(select: object) -> Iterator[tuple[str, str]]:
    """(module, project module it imports) for every module ``select(mod)`` is true of."""
    graph = _edges()
    for mod in sorted(graph):
        if select(mod):  # type: ignore[operator]
            for target in sorted(graph[mod]):
                yield mod, target


def test_a_backend_imports_only_the_core_and_itself() -> None:
    bad = [
        f"{m} imports {t}"
        for m, t in _imports_of(_backend)
        if _within(t, "swarmlog") and not (_is_core(t) or _within(t, _backend(m) or ""))
    ]
    assert not bad, "a backend reaches past the core:\n" + "\n".join(bad)


def test_the_core_imports_a_backend_only_through_its_face() -> None:
    bad = [
        f"{m} imports {t}"
        for m, t in _imports_of(_is_core)
        if _backend(t) and m not in CORE_FACES
    ]
    assert not bad, "the core depends on a backend:\n" + "\n".join(bad)


def test_code_above_swarmlog_uses_the_core_and_the_backends_faces_only() -> None:
    bad = [
        f"{m} imports {t}"
        for m, t in _imports_of(lambda m: not _within(m, "swarmlog"))
        if _backend(t) and t not in BACKENDS
    ]
    assert not bad, "a backend's inner module used above swarmlog:\n" + "\n".join(bad)


def _unit(mod: str) -> str | None:
    """The floor entry ``mod`` belongs to (its subpackage or itself), None if none."""
    entries = [u for floor in FLOORS for u in floor if _within(mod, u)]
    return max(entries, key=len) if entries else None


def _floor(mod: str) -> int:
    unit = _unit(mod)
    return next(i for i, floor in enumerate(FLOORS) if unit in floor)


def test_every_synthesizer_module_stands_on_a_floor() -> None:
    homeless = [m for m in MODULES if _within(m, "synthesizer") and _unit(m) is None]
    assert not homeless, "modules on no floor (add them to FLOORS): " + ", ".join(homeless)


def test_imports_run_down_the_floors_only() -> None:
    """No whitelist: a module never imports one on a higher floor, lazily or not."""
    bad = [
        f"{m} (floor {_floor(m) + 1}) imports {t} (floor {_floor(t) + 1})"
        for m, t in _imports_of(lambda m: _within(m, "synthesizer"))
        if _within(t, "synthesizer") and _floor(t) > _floor(m)
    ]
    assert not bad, "imports up the floors:\n" + "\n".join(bad)


def test_no_two_units_import_each_other() -> None:
    """Subpackages and top-level modules form no cycle either (``replay`` and
    ``checkpoints/``, say), even where no two modules do."""
    graph: dict[str, set[str]] = {}
    for m, t in _imports_of(lambda m: _within(m, "synthesizer") and m != "synthesizer"):
        a, b = _unit(m), _unit(t) if _within(t, "synthesizer") else None
        graph.setdefault(a or m, set())
        if b and b != a and b != "synthesizer":
            graph[a or m].add(b)
            graph.setdefault(b, set())
    cycles = _cycles(graph)
    assert not cycles, "units that import each other: " + "; ".join(
        " <-> ".join(sorted(c)) for c in cycles
    )


def test_the_fold_imports_itself_the_core_and_the_vocabulary_only() -> None:
    """So nothing from search/, worker/, merge/, compat/ … reaches ``apply``
    (docs/design.md §4, "The fold")."""
    bad = [
        f"{m} imports {t}"
        for m, t in _imports_of(lambda m: _within(m, FOLD))
        if not (_within(t, FOLD) or _is_core(t) or (_within(t, "synthesizer") and _floor(t) == 0))
    ]
    assert not bad, "the fold imports beyond itself:\n" + "\n".join(bad)


def test_the_fold_imports_no_clock_and_no_randomness() -> None:
    bad = []
    for mod, path in MODULES.items():
        if _within(mod, FOLD):
            for name, line, _ in _imported(mod, _tree(mod)):
                if name.split(".")[0] in NONDETERMINISTIC:
                    bad.append(f"{path.relative_to(ROOT)}:{line} imports {name}")
    assert not bad, "determinism is a build rule here:\n" + "\n".join(bad)


def test_the_house_rules_catch_what_they_are_for() -> None:
    """The predicates above say yes and no where they should."""
    assert _backend("swarmlog.file.view.index") == "swarmlog.file"
    assert _is_core("swarmlog.chain") and not _is_core("swarmlog.jetstream.seal.chain")
    assert not _within("swarmlog.filex", "swarmlog.file")
    tree = ast.parse("import time\nfrom random import random\n")
    assert {n for n, _, _ in _imported(f"{FOLD}.loop", tree)} == {"time", "random"}
    assert _unit("synthesizer.state.loop") == FOLD and _unit("synthesizer.replay") == (
        "synthesizer.replay"
    )
    assert _floor("synthesizer.events") == 0 and _floor("synthesizer.worker.synth") == 4


def test_no_folder_holds_more_than_twenty_modules() -> None:
    counts: dict[str, int] = {}
    for path in MODULES.values():
        folder = str(path.parent.relative_to(ROOT))
        counts[folder] = counts.get(folder, 0) + 1
    crowded = {f: n for f, n in counts.items() if n > MAX_MODULES_PER_FOLDER}
    assert not crowded, f"folders over {MAX_MODULES_PER_FOLDER} modules: {crowded}"
    assert len(counts) >= 15  # the subpackages exist (a flat tree would pass trivially)


def _face_names(path: Path) -> set[str]:
    """The names a package face exports: its ``__all__``."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            value = node.value
            assert isinstance(value, ast.List)
            return {e.value for e in value.elts if isinstance(e, ast.Constant)}
    return set()


def test_a_face_name_is_never_one_of_its_modules() -> None:
    """Importing ``pkg.x`` binds ``x`` on the package: a face name ``x`` would be replaced
    by the module as soon as anyone imported it."""
    bad = []
    for mod, path in MODULES.items():
        if _is_package(mod):
            subs = {m.rsplit(".", 1)[1] for m in MODULES if "." in m and m.rsplit(".", 1)[0] == mod}
            bad += [f"{mod}.{n}" for n in sorted(_face_names(path) & subs)]
    assert not bad, "face names shadowed by modules: " + ", ".join(bad)
