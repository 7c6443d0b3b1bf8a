"""The house's words: what the code and the docs cite is in the repository, and by name.

* no citation of a design document outside the repository ("DESIGN 4", "DESIGN.md",
  "DESIGN §"): the design is ``docs/design.md``, cited by section (``docs/design.md §4``);
* no issue numbers ("(issue 24)", "issue 26", "issue #3"): a reference says what it means
  (the work it belongs to, the page that explains it);
* no retired module names (``vecckpt``, ``mergerule``, ``filesync`` …): a docstring or a
  doc names the module that exists (``synthesizer/checkpoints/vectors.py``);
* no function over ``MAX_FUNCTION_LINES`` lines in the package code, unless a ``# long:``
  comment right above it (or on its first body line) says why it must be.

Grep-like checks over ``swarmlog/``, ``synthesizer/``, ``dashboards/`` (Python sources),
``docs/`` and ``README.md``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("swarmlog", "synthesizer", "dashboards")

_RETIRED_NAMES = (
    "ckptcheck ckptwriter cmd_board cmd_config cmd_dash cmd_diff cmd_forget cmd_global "
    "cmd_log cmd_mcp cmd_retention cmd_synth embed_minilm facade_args facade_bank "
    "facade_common facade_events facade_fold facade_models facade_pool facade_state "
    "facade_store factcols facttable factwords filealone filecatchup fileindex filelog "
    "filemeta filereader filestate filesync fileverify filewriter foldloop foldstate "
    "forgetcheck forgetplan jsappend jsauth jschain jscheckpoint jsclient jscore jsloop "
    "jsproto jsread jsreadback jsredact jsseallease jssealrole jssetup jsside jsskip "
    "jsstampfeed jssubjects jsverify mcp_guard mcp_server mcp_tools mergerule redactcheck "
    "statepayload vecckpt viewindex viewsnap worker_main"
)
RETIRED = _RETIRED_NAMES.split()
"""Modules renamed or folded into others (``git log --diff-filter=DR``)."""

LEFT_ALIASES: dict[str, set[str]] = {}
"""Import aliases still named after a retired module, in files under active work: the
alias (``import snapshot as viewsnap``) and its uses only, never in prose. Rename each to
the module's own name and delete its line here."""

MAX_FUNCTION_LINES = 80
LONG_PENDING: set[tuple[str, str]] = set()
"""(path, function) of long functions allowed for now while other work cuts them, each
with a comment saying which work (empty: every long function has been cut)."""

DESIGN = re.compile(r"\bDESIGN(\s*§|\s+\d|\.md)")
ISSUE = re.compile(r"\(issues?\s+#?\d|\bissues?\s+#?\d+\b", re.IGNORECASE)
RETIRED_WORD = re.compile(r"\b(" + "|".join(RETIRED) + r")\b")


def _files() -> list[Path]:
    out = [p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))]
    out += sorted((ROOT / "docs").rglob("*.md"))
    out.append(ROOT / "README.md")
    return [p for p in out if p.is_file()]


def _hits(pattern: re.Pattern[str], allow: dict[str, set[str]] | None = None) -> list[str]:
    hits = []
    for path in _files():
        rel = str(path.relative_to(ROOT))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for m in pattern.finditer(line):
                word = m.group(0)
                if allow and word in allow.get(rel, set()) and _alias_use(line, word):
                    continue
                hits.append(f"{rel}:{n}: {line.strip()[:120]}")
    return hits


def _alias_use(line: str, word: str) -> bool:
    """``import x as word`` or ``word.attr`` in code (not in a docstring's prose)."""
    return bool(re.search(rf"\bas {word}\b|\b{word}\.[A-Za-z_]", line))


def test_no_citation_of_a_design_document_outside_the_repository() -> None:
    hits = _hits(DESIGN)
    assert not hits, "cite docs/design.md §N instead:\n" + "\n".join(hits)


def test_no_issue_numbers() -> None:
    hits = _hits(ISSUE)
    assert not hits, "say what the issue was about instead:\n" + "\n".join(hits)


def test_no_retired_module_names() -> None:
    hits = _hits(RETIRED_WORD, LEFT_ALIASES)
    assert not hits, "name the module that exists:\n" + "\n".join(hits)


def test_retired_names_are_retired_and_the_design_is_here() -> None:
    """The list names no module that exists, and the page cited exists."""
    live = {p.stem for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")}
    assert not live & set(RETIRED)
    assert (ROOT / "docs" / "design.md").is_file()


def test_the_checks_catch_what_they_are_for() -> None:
    assert DESIGN.search("the clock (DESIGN 2)") and DESIGN.search("see DESIGN.md")
    assert not DESIGN.search("assert 'DESIGN' not in out")
    assert ISSUE.search("(issue 24, round 5)") and ISSUE.search("Issue 22.1: rot")
    assert ISSUE.search("see issue #3") and not ISSUE.search("an issue with the disk")
    assert RETIRED_WORD.search("see ``vecckpt.attach``")
    assert not RETIRED_WORD.search("tests/test_viewsnap.py")
    assert _alias_use("from x import snapshot as viewsnap", "viewsnap")
    assert not _alias_use("a snapshot (viewsnap) of it", "viewsnap")


def _long_functions(source: str, path: str) -> list[str]:
    """``path:line name (n lines)`` for each function of ``source`` longer than
    ``MAX_FUNCTION_LINES`` with no ``# long:`` comment above it (above its decorators) or
    on its first body line, and not in ``LONG_PENDING``."""
    lines = source.splitlines()
    out = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        n = (node.end_lineno or node.lineno) - node.lineno + 1
        if n <= MAX_FUNCTION_LINES or (path, node.name) in LONG_PENDING:
            continue
        top = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        near = [lines[top - 2] if top >= 2 else "", lines[node.body[0].lineno - 1]]
        if any("# long:" in line for line in near):
            continue
        out.append(f"{path}:{node.lineno} {node.name} ({n} lines)")
    return out


def test_no_function_over_80_lines() -> None:
    """Long functions are cut at their seams (named steps); the few that must stay long
    say why in a ``# long:`` comment."""
    hits = []
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            rel = str(path.relative_to(ROOT))
            hits += _long_functions(path.read_text(encoding="utf-8"), rel)
    assert not hits, (
        "cut these at their seams (or say why not in a '# long:' comment):\n" + "\n".join(hits)
    )


def test_the_length_check_catches_what_it_is_for() -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES))
    long_fn = "def f() -> None:\n" + body
    assert _long_functions(long_fn, "m.py") == ["m.py:1 f (81 lines)"]
    assert _long_functions("def f() -> None:\n" + body[: -len("    x79 = 79\n")], "m.py") == []
    said = "# long: one table, read top to bottom\n@decorated\n" + long_fn
    assert _long_functions(said, "m.py") == []
    inside = long_fn.replace("    x0 = 0\n", "    x0 = 0  # long: a state machine\n")
    assert _long_functions(inside, "m.py") == []
    assert _long_functions(
        "class C:\n" + "\n".join("    " + ln for ln in long_fn.splitlines()), "m.py"
    )


def _private_writes(source: str, path: str) -> list[str]:
    """``path:line target`` for each statement of ``source`` that sets another object's
    private field (``x._name = …``, ``+=``, ``del x._name``, ``setattr(x, "_name", …)``
    with ``x`` not ``self`` or ``cls``) and has no ``# private:`` comment on its lines
    saying why. One owner per field: a module moves another object's state by calling it."""
    lines = source.splitlines()
    out = []
    for node in ast.walk(ast.parse(source)):
        targets: list[ast.expr] = []
        if isinstance(node, (ast.Assign, ast.Delete)):
            targets = list(node.targets)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "setattr"
            and len(node.args) == 3
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
        ):
            targets = [ast.Attribute(value=node.args[0], attr=node.args[1].value)]
        flat = [
            e for t in targets for e in (t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t])
        ]
        for t in flat:
            if not isinstance(t, ast.Attribute) or not t.attr.startswith("_"):
                continue
            if t.attr.startswith("__") or (
                isinstance(t.value, ast.Name) and t.value.id in ("self", "cls")
            ):
                continue
            said = lines[node.lineno - 1 : (node.end_lineno or node.lineno)]
            if not any("# private:" in line for line in said):
                out.append(f"{path}:{node.lineno} {ast.unparse(t)}")
    return out


def test_no_module_writes_another_objects_private_fields() -> None:
    """A FileLog's state has owners (its writer's end: ``WriterEnd``, view/state.py); the
    modules that move it call them. An exception says why in a ``# private:`` comment."""
    hits = []
    for path in sorted((ROOT / "swarmlog").rglob("*.py")):
        rel = str(path.relative_to(ROOT))
        hits += _private_writes(path.read_text(encoding="utf-8"), rel)
    assert not hits, "call the owner instead (or say why in '# private:'):\n" + "\n".join(hits)


def test_the_private_write_check_catches_what_it_is_for() -> None:
    assert _private_writes("log._last = 1\n", "m.py") == ["m.py:1 log._last"]
    assert _private_writes("a, log._seg_end = 1, 2\n", "m.py") == ["m.py:1 log._seg_end"]
    assert _private_writes("log._end.x += 1\nlog._n += 1\n", "m.py") == ["m.py:2 log._n"]
    assert _private_writes("del log._ids\nsetattr(log, '_tip', b'')\n", "m.py") == [
        "m.py:1 log._ids",
        "m.py:2 log._tip",
    ]
    assert _private_writes("self._last = 1\ncls._n = 2\nlog.last = 3\nx.__a = 4\n", "m.py") == []
    assert _private_writes("log._partial = True  # private: the fused copy\n", "m.py") == []
    assert _private_writes("log._partial = True  # the fused copy\n", "m.py")
