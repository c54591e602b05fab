"""Packages whose public names are imported on first use, so that importing one of their modules
(a command line, say) stays light."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable


def lazy_names(package: str, names: dict[str, tuple[str, ...]]) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of ``package``, whose public names ``names`` lists
    under the module of ``package`` that defines them; a name is imported once, then kept in the package."""
    namespace = vars(sys.modules[package])
    modules = {name: f"{package}.{module}" for module, listed in names.items() for name in listed}

    def __getattr__(name: str) -> object:
        if name not in modules:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = namespace[name] = getattr(importlib.import_module(modules[name]), name)
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(modules))

    return __getattr__, __dir__
