"""Package faces that load their names on first use (PEP 562), written once for all.

A face (a package's ``__init__``) names its public names and the module each lives in;
the module is imported when a name is first read, then the value is kept in the
package's namespace. So ``import swarmlog`` costs only what an append needs, and a
subpackage's face never imports its own modules while they are still loading (no
cycles through a face).

    __getattr__, __dir__ = lazy_names(__name__, {"FileLog": ".log", "step": ".redact:step"})

A value is ``".module"`` (the same name there) or ``".module:attr"`` (another name).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(
    package: str, table: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``'s face, loading ``table``'s names lazily."""

    def __getattr__(name: str) -> Any:
        spec = table.get(name)
        if spec is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, attr = spec.partition(":")
        value = getattr(importlib.import_module(module, package), attr or name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *table})

    return __getattr__, __dir__
