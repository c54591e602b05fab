"""The optional extras (pyproject.toml's ``[project.optional-dependencies]``) and how to install them.

combatsim is installed from a clone of its repository, not from an index, so a missing extra's
message gives the two commands that work: ``pip install ".[EXTRA]"`` run in the clone (which
builds combatsim again), or the extra's packages alone installed into the environment that
already has combatsim.
"""

from __future__ import annotations

#: extra -> its packages, as pyproject.toml lists them (tests/test_install_hints.py compares the two)
EXTRAS = {
    "rl": ("gymnasium>=1.0", "pettingzoo>=1.24"),
    "dask": ("dask>=2024.1", "distributed>=2024.1"),
    "plot": ("matplotlib>=3.7",),
    "solve": ("scipy>=1.9",),
    "openspiel": ("open-spiel>=1.5", "cvxpy>=1.4", "ecos>=2.0", "gymnasium>=1.0", "pettingzoo>=1.24"),
    "train": ("gymnasium>=1.0", "pettingzoo>=1.24", "stable-baselines3>=2.3", "sb3-contrib>=2.3"),
}


def install_hint(extra: str) -> str:
    """The commands that install ``extra``, for an error message."""
    packages = " ".join(f'"{package}"' for package in EXTRAS[extra])
    return (f'pip install ".[{extra}]" in the clone of combatsim, or pip install {packages} into the '
            f'environment that has combatsim')
