"""The combat engine's shared contract: one state machine per ruleset, stepped one step at a time.

Each ruleset writes its rules once, in ``combatsim.<ruleset>.engine``: plain module-level
functions over int64 arrays and ints, no Python objects, no allocation per step. That module runs
as it is as the pure-Python reference (the executable specification), and
``combatsim.kernels.engine_nb.compile_engine`` compiles the very same functions with Numba. A fight
(``combatsim fight``), a Gymnasium or PettingZoo episode and a policy's fight are all the same
calls: ``reset`` then ``step`` until the fight ends, each member's action coming from its scripted
policy (``SCRIPTED``) or from outside.

Every ruleset engine module provides the same kernels, with the same signatures:

``reset(table, config, seeds, indices, which, state, counts, obs, mask)``
    For each env ``e`` with ``which[e] != 0``: start fight ``indices[e]`` of seed ``seeds[e]``
    (its dice come from item stream ``indices[e]``, in order), zero ``counts[e]``, play what the
    rules do before the first step (an ambush's contests), then write every member's observation
    and action mask.
``step(table, config, seeds, state, actions, counts, obs, mask)``
    For each env whose fight is still running: one step (an EXP unit, a d100 pass, a TSS phase)
    with ``actions[e, c]`` for member ``c`` (``SCRIPTED``: its scripted policy chooses, drawing the
    same dice a fight does). An action that is in range but masked does nothing (counted in the
    counts' ``masked`` field). Then every member's observation and mask are written again, and
    ``state[e, S_OUTCOME]`` says whether the fight ended in this step. Envs already ended are
    left as they are.
``member_standing(state, e, members, c)``
    Whether member ``c`` of env ``e`` is still in the fight (the fight kernel counts each
    member's fights ended so); ``e`` may be a slice, for a whole chunk's final states at once.

Arrays: ``table`` int64 (members, columns) and ``config`` int64 (fields), from the ruleset's
``game(spec)``; ``seeds`` uint64 (n); ``indices`` int64 (n); ``which`` uint8 (n); ``state`` int64
(n, state size); ``actions`` int64 (n, members); ``counts`` int64 (n, count fields); ``obs``
float32 (n, members, observation size); ``mask`` int8 (n, members, actions).

The first ``S_RULESET`` state columns are the same in every ruleset (below); a scripted policy's
random choices and every die are drawn from the fight's own item stream, whose position (words
and retry words used, and the words of a partly read block) is kept in the state between steps,
so an outcome depends only on (seed, fight index, scenario, actions).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path
from types import ModuleType, SimpleNamespace

import numpy as np

from combatsim.rng import MASK32, MASK64, ItemStream
from combatsim.rng import rejection_threshold as _rejection_threshold
from combatsim.validation import check_choice

#: An action value: the member's scripted policy chooses.
SCRIPTED = -1
#: ``state[e, S_OUTCOME]`` while the fight runs; at its end: 0 or 1 (that side won), DRAW or UNFINISHED.
RUNNING, DRAW, UNFINISHED = -1, 2, 3
#: A fight kernel's per-fight winner when no side won; WINNERS[outcome] is the winner of a final outcome.
WINNER_UNFINISHED, WINNER_DRAW = -1, -2
WINNERS = (0, 1, WINNER_DRAW, WINNER_UNFINISHED)

# State columns shared by every ruleset: the fight's item index, the stream position (words and
# retry words used), steps played, the outcome, the fight's length in the ruleset's unit (rounds,
# or EXP units), then S_BLOCK and S_BLOCK + 1: the words of the block that holds word S_WORDS,
# two to a column (stream_block), while that block is partly read (else 0), so a step goes on
# reading it without drawing it again. The ruleset's own columns start at S_RULESET.
S_INDEX, S_WORDS, S_RETRIES, S_STEPS, S_OUTCOME, S_LENGTH, S_BLOCK = 0, 1, 2, 3, 4, 5, 6
S_RULESET = 8


# ---- the item stream, pure-Python side (Numba twin: combatsim.kernels.engine_nb) ----
class StreamHolder:
    """The one item stream an engine call reads at a time."""

    __slots__ = ("stream",)

    def __init__(self) -> None:
        self.stream = ItemStream(0, 0)


def new_stream() -> StreamHolder:
    return StreamHolder()


def stream_resume(rng: StreamHolder, seed, index, words_used, retries_used) -> None:
    """Item ``index`` of ``seed`` with ``words_used`` words and ``retries_used`` retry words spent."""
    rng.stream = ItemStream(int(seed), int(index), int(words_used), int(retries_used))


def stream_continue(rng: StreamHolder, seed, index, words_used, retries_used, block_low, block_high) -> None:
    """``stream_resume``, the partly read block's words (if any) given as ``stream_block`` packed them
    (``block_low``, ``block_high``) instead of drawn again."""
    stream = rng.stream = ItemStream(int(seed), int(index), 0, int(retries_used))
    stream.words_used = words_used = int(words_used)
    if words_used & 3:
        low, high = int(block_low) & MASK64, int(block_high) & MASK64
        stream._block = (low & MASK32, low >> 32, high & MASK32, high >> 32)


def stream_block(rng: StreamHolder, half) -> int:
    """Words ``2 * half`` and ``2 * half + 1`` of the block that holds the next word, packed low word
    first into an int64 (a state column), while that block is partly read; else 0."""
    stream = rng.stream
    if stream.words_used & 3 == 0:
        return 0
    packed = stream._block[2 * int(half)] | (stream._block[2 * int(half) + 1] << 32)
    return packed - (1 << 64) if packed >> 63 else packed


def stream_words_used(rng: StreamHolder) -> int:
    return rng.stream.words_used


def stream_retries_used(rng: StreamHolder) -> int:
    return rng.stream.retries_used


def rejection_threshold(sides) -> int:
    return _rejection_threshold(int(sides))


def stream_word(rng: StreamHolder) -> int:
    return rng.stream.word()


def stream_bounded(rng: StreamHolder, word, sides, threshold) -> int:
    """Uniform 0..sides-1 from ``word`` (``threshold``: rejection_threshold(sides), used by the twins)."""
    return rng.stream.bounded(int(word), int(sides))


def stream_die(rng: StreamHolder, sides, threshold) -> int:
    return rng.stream.die(int(sides))


def stream_roll(rng: StreamHolder, count, sides, threshold, modifier) -> int:
    """``count`` dice of ``sides`` plus ``modifier``, consuming words left to right."""
    return rng.stream.roll(int(count), int(sides), int(modifier))


#: The names above that a compiled engine takes from its backend instead.
STREAM_FUNCTIONS = ("new_stream", "stream_resume", "stream_continue", "stream_block", "stream_words_used",
                    "stream_retries_used", "rejection_threshold", "stream_word", "stream_bounded", "stream_die",
                    "stream_roll")


@dataclass(frozen=True)
class Game:
    """A scenario made ready for the engine: its arrays and the names of everything in them.

    Built by ``combatsim.<ruleset>.game.game(spec)`` from a validated scenario spec. Member ``c``
    is row ``c`` of ``table``; its side is ``member_sides[c]``.
    """

    ruleset: str
    table: np.ndarray
    config: np.ndarray
    member_names: tuple[str, ...]
    member_sides: tuple[int, ...]
    side_names: tuple[str, str]
    #: Discrete actions of every member (action k is ``action_names[k]``)
    action_names: tuple[str, ...]
    #: One member's observation, field by field (float32, each documented in docs/rl.md)
    observation_names: tuple[str, ...]
    #: per-env count fields the engine adds up over an episode (``masked`` among them)
    count_names: tuple[str, ...]
    state_size: int
    #: what one step is ("unit", "pass", "phase") and the unit a fight's length is measured in
    step_name: str
    length_unit: str
    #: the ruleset's engine module (its functions run as the reference and compile with Numba)
    engine_module: str = field(default="")

    @property
    def members(self) -> int:
        return len(self.member_names)

    def engine(self, backend: str = "python") -> ModuleType | object:
        """The engine's kernels (``reset``, ``step`` and the module's constants) in ``backend``
        (one of ENGINE_BACKENDS; "auto": Cython where built, else Numba)."""
        return engine_kernels(self.engine_module or f"combatsim.{self.ruleset}.engine", backend)

    def buffers(self, n: int) -> dict[str, np.ndarray]:
        """Zeroed state and output arrays for ``n`` envs, dtypes as the kernels take them."""
        m, actions = self.members, len(self.action_names)
        return {
            "seeds": np.zeros(n, dtype=np.uint64),
            "indices": np.zeros(n, dtype=np.int64),
            "which": np.ones(n, dtype=np.uint8),
            "state": np.zeros((n, self.state_size), dtype=np.int64),
            "actions": np.full((n, m), SCRIPTED, dtype=np.int64),
            "counts": np.zeros((n, len(self.count_names)), dtype=np.int64),
            "obs": np.zeros((n, m, len(self.observation_names)), dtype=np.float32),
            "mask": np.zeros((n, m, actions), dtype=np.int8),
        }


_ENGINES: dict[tuple[str, str], object] = {}
#: The backends engine_kernels takes; "auto" is the fastest one built (cython, else numba).
ENGINE_BACKENDS = ("auto", "cython", "numba", "python")


def engine_kernels(module_name: str, backend: str) -> object:
    """The engine module itself (``python``), its Numba compilation (``numba``) or its Cython build
    (``cython``: combatsim.kernels.<ruleset>.engine_cy, written by combatsim.engine_cython), made once.

    ``auto`` is the Cython build where one is built from the engine's current source, else Numba,
    else the module itself.
    """
    found = _ENGINES.get((module_name, backend))
    if found is not None:
        return found
    check_choice("backend", backend, ENGINE_BACKENDS)
    if backend == "auto":
        found = _cython_engine(module_name, required=False)
        if found is None:
            try:
                found = engine_kernels(module_name, "numba")
            except ImportError:  # no Numba where it was installed: the reference itself
                found = engine_kernels(module_name, "python")
    elif backend == "python":
        found = import_module(module_name)
    elif backend == "numba":
        from combatsim.kernels.engine_nb import compile_engine

        found = compile_engine(import_module(module_name))
    else:
        found = _cython_engine(module_name, required=True)
    _ENGINES[(module_name, backend)] = found
    return found


def _cython_engine(module_name: str, required: bool) -> object | None:
    """The Cython build's kernels with the engine module's constants, or None (not ``required``)
    where there is none or it was built from another source than the engine's current one."""
    parts = module_name.split(".")
    built = None
    if len(parts) == 3 and parts[0] == "combatsim" and parts[2] == "engine":
        with suppress(ImportError):
            built = import_module(f"combatsim.kernels.{parts[1]}.engine_cy")
    if built is None:
        if required:
            raise ValueError(f"engine backend cython: {module_name} has no Cython build (build the extensions)")
        return None
    if not built_from_current_source(built):
        if required:
            raise ValueError(f"engine backend cython: the build of {module_name} is older than its source "
                             "(rebuild the extensions: python setup.py build_ext --inplace)")
        return None
    module = import_module(module_name)
    engine = SimpleNamespace(**{name: value for name, value in vars(module).items()
                                      if not name.startswith("__")})
    for kernel in ("reset", "step", "fight"):
        setattr(engine, kernel, getattr(built, kernel))
    engine.backend = "cython"
    return engine


def source_digest(sources: Sequence[str]) -> str:
    """sha256 of the package files ``sources`` (paths relative to the combatsim package), name and text."""
    root = Path(__file__).parent
    digest = hashlib.sha256()
    for name in sources:
        digest.update(name.encode() + b"\0" + (root / name).read_bytes() + b"\0")
    return digest.hexdigest()


def built_from_current_source(built: object) -> bool:
    """Whether a module generated from an engine (its Cython build, or an attack kernel module that
    includes its kernel rules) was written from the package's sources as they are now: its stamp
    (``ENGINE_SOURCES``, ``ENGINE_SOURCE_DIGEST``, combatsim.engine_cython) against their digest.
    Sources that cannot be read (a frozen application) cannot disagree with the build."""
    try:
        return source_digest(built.ENGINE_SOURCES) == built.ENGINE_SOURCE_DIGEST
    except OSError:
        return True
