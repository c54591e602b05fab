"""Backward induction over a decision chain: values, best responses and the policies' outcomes.

The chain's horizon is finite (max_rounds), so no discounting is needed and backward induction is
exact: the value before the last step is the expected reward of the step's ends, and before step
t the best over the legal actions of the step's expected reward plus the value of where it leads.

:class:`Rows` holds the transitions the solver met, one row per (pass kind, state, joint
decision): sparse (row, next state, probability) entries and the row's ended fights by outcome.
Exact chains keep Fractions in numpy object arrays, float64 chains float arrays; the same code
runs both.
"""

from __future__ import annotations

import itertools
import os
import signal
import sys
import time
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from combatsim.engine import DRAW
from combatsim.fight_odds.chain import UNIT_ROUNDOFF, TooManyStates, check_states, segment_sum, zeros
from combatsim.solve.chain import SCRIPTED, DecisionChain, reward
from combatsim.validation import available_memory

#: float64: actions within this much of the best are ties, resolved by the lowest action number.
TIE = 1e-12


#: A walk stops before its process holds more than what it held at the start plus this share of
#: the memory the machine had free then: a chain near its state bound can need tens of gigabytes,
#: and the bound, a count of states, cannot tell how many a fight really reaches.
MEMORY_SHARE = 0.8


class TooMuchMemory(TooManyStates):
    """A solve stopped because its chain was about to take more memory than the machine had free."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during a solve: a value needs every state, so nothing partial is reported; the
    command line says "interrupted" (exit 130)."""


@dataclass
class Outcome:
    """The outcome of a policy profile, for one member: probabilities of its side's win and loss,
    a draw, an unfinished fight, and its expected reward (win - loss)."""

    win: Fraction | float
    loss: Fraction | float
    draw: Fraction | float
    unfinished: Fraction | float

    @property
    def reward(self) -> Fraction | float:
        return self.win - self.loss

    def as_dict(self) -> dict:
        from combatsim.fight_odds.chain import both_forms

        return {name: both_forms(getattr(self, name)) for name in ("win", "loss", "draw", "unfinished", "reward")}


class Progress:
    """A progress line on stderr once work has run past ``after`` seconds (redrawn in place)."""

    def __init__(self, label: str, enabled: bool, after: float = 2.0) -> None:
        self.label = label
        self.enabled = enabled
        self.after = after
        self.started = time.perf_counter()
        self.shown = False
        self.last = 0.0

    def __call__(self, what: str) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self.started >= self.after and now - self.last >= 0.5:
            self.last = now
            self.shown = True
            sys.stderr.write(f"\r{self.label}: {what} ({now - self.started:.0f} s)\x1b[K")
            sys.stderr.flush()

    def done(self) -> None:
        if self.shown:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


class Rows:
    """The transitions met so far. A row is one step's transitions from one state under one joint
    decision; rows are numbered in the order met. Entries are kept in typed arrays (8 bytes each;
    exact probabilities as Fractions in a list), a row's next states the slice of ``moved_to``
    from its start."""

    def __init__(self, exact: bool) -> None:
        self.exact = exact
        self.index: dict = {}  # (pass kind, state, decisions) -> row
        self.moved_start = array("q")  # per row: where its entries start in moved_to and moved_p
        self.moved_to = array("q")
        self.moved_p = [] if exact else array("d")
        self.ended_row = array("q")
        self.ended_code = array("q")
        self.ended_p = [] if exact else array("d")
        #: the most entries of a row (the longest sum in a value), for the float64 error bound
        self.widest = 0
        self.arrays: tuple | None = None

    def row(self, chain: DecisionChain, state: int, t: int, decisions: tuple, kind: int) -> int:
        key = (kind, state, decisions)
        number = self.index.get(key)
        if number is None:
            number = self.index[key] = len(self.index)
            step = chain.transitions(state, t, decisions)
            self.moved_start.append(len(self.moved_to))
            self.moved_to.extend(step.moved)
            self.moved_p.extend(step.moved_p)
            self.ended_row.extend([number] * len(step.ended))
            self.ended_code.extend(step.ended)
            self.ended_p.extend(step.ended_p)
            self.widest = max(self.widest, len(step.moved) + len(step.ended))
            self.arrays = None
        return number

    def next_states(self, row: int) -> Sequence[int]:
        """The states ``row`` can lead to."""
        end = self.moved_start[row + 1] if row + 1 < len(self.moved_start) else len(self.moved_to)
        return self.moved_to[self.moved_start[row]:end]

    def as_arrays(self) -> tuple:
        if self.arrays is None:
            starts = np.frombuffer(self.moved_start, dtype=np.int64) if len(self.moved_start) else np.zeros(0, np.int64)
            self.starts = np.r_[starts, len(self.moved_to)]
            sizes = np.diff(self.starts)
            moved_p = np.array(self.moved_p, dtype=object) if self.exact else _numpy(self.moved_p, np.float64)
            ended_p = np.array(self.ended_p, dtype=object) if self.exact else _numpy(self.ended_p, np.float64)
            self.arrays = (np.repeat(np.arange(len(starts), dtype=np.int64), sizes),
                           _numpy(self.moved_to, np.int64), moved_p, _numpy(self.ended_row, np.int64),
                           _numpy(self.ended_code, np.int64), ended_p)
        return self.arrays

    def ended_value(self, side: int) -> np.ndarray:
        """Per row: the expected reward of its ended fights to a member of ``side``."""
        _, _, _, ended_row, ended_code, ended_p = self.as_arrays()
        signs = np.array([reward(code, side) for code in range(4)], dtype=np.int64)[ended_code]
        return segment_sum(ended_row, ended_p * signs if len(signs) else ended_p, len(self.index), self.exact)

    def expected(self, values: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """Per row (of ``rows``, default all): the expected next value, ``values`` indexed by state
        (0 past the known ones)."""
        moved_row, moved_to, moved_p, *_ = self.as_arrays()
        if rows is None:
            return segment_sum(moved_row, moved_p * values[moved_to], len(self.index), self.exact)
        entries, owner = self.entries(rows)
        return segment_sum(owner, moved_p[entries] * values[moved_to[entries]], len(rows), self.exact)

    def entries(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The moved entries of ``rows`` (indices into ``as_arrays``' moved arrays), and for each
        entry its row's place in ``rows``: a step touches only the rows its states can take."""
        self.as_arrays()
        counts = self.starts[rows + 1] - self.starts[rows]
        return ragged_index(self.starts[rows], counts), np.repeat(np.arange(len(rows)), counts)


def ragged_index(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The indices starts[0] .. starts[0] + counts[0] - 1, then starts[1] .., one after another."""
    offsets = np.cumsum(counts) - counts
    return np.repeat(starts - offsets, counts) + np.arange(int(counts.sum()))


def _numpy(values: array, dtype) -> np.ndarray:
    """A copy of a typed array as numpy (the array may grow afterwards)."""
    return np.frombuffer(values, dtype=dtype).copy() if len(values) else np.zeros(0, dtype=dtype)


@dataclass
class Options:
    """A step's choices: per live state, the rows of the deciders' joint actions.

    ``state``, ``row`` and ``actions`` (n, deciders) are parallel, grouped by state, actions in
    increasing order within a state."""

    state: np.ndarray
    row: np.ndarray
    actions: np.ndarray


class Walk:
    """The chain's states reachable at each step when ``deciders`` take any legal action and every
    other member plays ``fixed`` (per member: SCRIPTED, or a function (chain, states, t) ->
    actions), with the rows of every joint decision met.

    A state's options in a step (the rows of the deciders' joint decisions and the states they
    lead to) are worked out once per (step kind, state, decisions of the fixed members) and kept
    as flat integer arrays, so the many steps that meet a state again gather them with numpy."""

    def __init__(self, chain: DecisionChain, deciders: Sequence[int], fixed: dict[int, Callable | int],
                 max_states: int, progress: Progress) -> None:
        self.chain = chain
        self.deciders = tuple(deciders)
        self.fixed = fixed
        self.rows = Rows(chain.exact)
        self.options: list[Options] = []
        self.live: list[np.ndarray] = []
        self.max_states = max_states
        # an entry is one (step kind, state, fixed decisions): its options and its next states
        self._entries: dict[tuple, int] = {}
        self._choices_of = _Ragged(len(self.deciders) + 1)  # per entry: (row, joint actions) per option
        self._nexts_of = _Ragged(0)  # per entry: the states its options can lead to
        # where every fixed member is scripted, an entry is found by (kind, state) in an array
        self._by_state: dict[int, np.ndarray] = {}
        members = len(chain.game.member_names)
        self.peak = 0
        live = np.array(sorted({state for state, _ in chain.initial()}), dtype=np.int64)
        functions = {c: f for c, f in fixed.items() if f != SCRIPTED}
        interrupted = _Watch(chain.state_count)
        try:
            for t in range(chain.horizon):
                if interrupted():
                    raise Interrupted
                progress(f"step {t + 1} of {chain.horizon}, {len(live):,} states")
                self.peak = max(self.peak, len(live))
                check_states(len(live), max_states)
                kind = chain.step_kind(t)
                if functions:
                    entries = self._entries_given(live, t, kind, functions, members, interrupted)
                else:
                    entries = self._entries_scripted(live, t, kind, members, interrupted)
                choices, counts = self._choices_of.gather(entries)
                self.live.append(live)
                self.options.append(Options(np.repeat(live, counts), choices[:, 0].copy(),
                                            np.ascontiguousarray(choices[:, 1:])))
                nexts, _ = self._nexts_of.gather(entries)
                following = np.zeros(chain.state_count(), dtype=bool)
                following[nexts] = True
                live = np.flatnonzero(following)
        finally:
            interrupted.restore()
        self.states = chain.state_count()

    def _entries_scripted(self, live: np.ndarray, t: int, kind: int, members: int, interrupted) -> np.ndarray:
        """Each live state's entry when every member but the deciders plays its scripted policy."""
        lookup = self._by_state.get(kind, np.zeros(0, dtype=np.int64))
        if len(live) and len(lookup) <= live[-1]:
            lookup = np.r_[lookup, np.full(self.chain.state_count() - len(lookup), -1, dtype=np.int64)]
        entries = lookup[live]
        for k in np.flatnonzero(entries < 0).tolist():
            if k & 255 == 0 and interrupted():
                raise Interrupted
            state = int(live[k])
            entries[k] = lookup[state] = self._entry(state, t, [SCRIPTED] * members, kind)
        self._by_state[kind] = lookup
        return entries

    def _entries_given(self, live: np.ndarray, t: int, kind: int, functions: dict, members: int,
                       interrupted) -> np.ndarray:
        """Each live state's entry, the fixed members' actions given by their policies."""
        states = live.tolist()
        # per member: an env action per state, or a mix ((action, probability), ...) per state
        fixed_actions = {c: f(self.chain, states, t) for c, f in functions.items()}
        entries = np.empty(len(states), dtype=np.int64)
        known = self._entries
        for k, state in enumerate(states):
            if k & 255 == 0 and interrupted():
                raise Interrupted
            decisions = [SCRIPTED] * members
            for c, actions in fixed_actions.items():
                decisions[c] = actions[k] if isinstance(actions[k], tuple) else int(actions[k])
            entry = known.get((kind, state, tuple(decisions)))
            entries[k] = self._entry(state, t, decisions, kind) if entry is None else entry
        return entries

    def _entry(self, state: int, t: int, decisions: list, kind: int) -> int:
        """The entry of ``state`` under the fixed members' ``decisions``: the rows of every joint
        decision of the deciders, and every next state they can lead to."""
        key = (kind, state, tuple(decisions))
        choices, nexts = [], set()
        for joint in itertools.product(*(self.chain.legal(state, t, d) for d in self.deciders)):
            for d, a in zip(self.deciders, joint, strict=True):
                decisions[d] = a
            row = self.rows.row(self.chain, state, t, tuple(decisions), kind)
            choices.append((row, *joint))
            nexts.update(self.rows.next_states(row))
        entry = self._entries[key] = len(self._entries)
        self._choices_of.append(choices)
        self._nexts_of.append(sorted(nexts))
        return entry


class _Ragged:
    """Rows of integers of varying lengths (each item an int, or a tuple of ``width`` ints),
    appended one at a time and gathered many at a time."""

    def __init__(self, width: int) -> None:
        self.width = width
        shape = (0, width) if width else (0,)
        self.values = np.zeros(shape, dtype=np.int64)
        self.starts = np.zeros(0, dtype=np.int64)
        self.counts = np.zeros(0, dtype=np.int64)
        self._items: list = []
        self._counts: list[int] = []

    def append(self, items: Sequence) -> None:
        self._items.extend(items)
        self._counts.append(len(items))

    def gather(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The items of ``rows``, one after another, and how many each row has."""
        if self._counts:
            shape = (len(self._items), self.width) if self.width else (len(self._items),)
            counts = np.array(self._counts, dtype=np.int64)
            self.starts = np.r_[self.starts, len(self.values) + np.cumsum(counts) - counts]
            self.counts = np.r_[self.counts, counts]
            self.values = np.concatenate([self.values, np.array(self._items, dtype=np.int64).reshape(shape)])
            self._items, self._counts = [], []
        counts = self.counts[rows]
        return self.values[ragged_index(self.starts[rows], counts)], counts


class _Watch:
    """Ctrl-C, and the memory the walk holds: called every few hundred states, it says whether
    Ctrl-C came, and raises :class:`TooMuchMemory` once the process holds more than it did at the
    start plus ``MEMORY_SHARE`` of the memory then free (on Linux; where /proc is missing it only
    watches Ctrl-C)."""

    def __init__(self, states: Callable[[], int]) -> None:
        self.hit = False
        try:
            self.previous = signal.signal(signal.SIGINT, self._handler)
        except ValueError:  # not the main thread: Ctrl-C stays Python's KeyboardInterrupt
            self.previous = None
        self.states = states
        start, free = _resident_bytes(), available_memory()
        self.free = free
        self.limit = None if start is None or free is None else start + MEMORY_SHARE * free

    def _handler(self, signum, frame) -> None:
        self.hit = True

    def restore(self) -> None:
        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)

    def __call__(self) -> bool:
        if self.limit is not None:
            held = _resident_bytes()
            if held is not None and held > self.limit:
                self.restore()
                gigabytes = 2**30
                raise TooMuchMemory(
                    f"memory: the solve holds {held / gigabytes:.1f} GB after {self.states():,} states, "
                    f"{MEMORY_SHARE:.0%} of the {self.free / gigabytes:.1f} GB free when it began; solve fewer "
                    f"rounds (--set options.max_rounds=N) or estimate the odds by simulation with "
                    f"combatsim fight --target-error")
        return self.hit


def _resident_bytes() -> int | None:
    """The process's resident memory (Linux), or None."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def float_error_bound(steps: int, widest: int) -> float:
    """A bound on a float64 value's absolute error: each value is a sum over at most ``widest``
    products of a transition probability (itself a product of at most 64 roundings in the chain)
    and the next value, down ``steps`` steps, so its relative error is at most gamma_N with N =
    steps x (widest + 64) (Higham, ch. 3); a value is a difference of two probabilities."""
    n = steps * (widest + 64)
    return 2 * n * UNIT_ROUNDOFF / (1 - n * UNIT_ROUNDOFF)


def group_starts(states: np.ndarray) -> np.ndarray:
    """Where each state's options start (options are grouped by state)."""
    if not len(states):
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(np.r_[True, states[1:] != states[:-1]])


def best_response_values(walk: Walk, member: int, progress: Progress) -> tuple[list[np.ndarray], np.ndarray]:
    """Backward induction for ``member`` (the walk's one decider): per step, the option chosen in
    each live state (the best; ties to the lowest action), and the values before the first step."""
    chain = walk.chain
    side = chain.game.member_sides[member]
    rows = walk.rows
    ended_value = rows.ended_value(side)
    values = zeros(walk.states, chain.exact)
    chosen: list[np.ndarray] = [np.zeros(0, dtype=np.int64)] * chain.horizon
    tie = 0 if chain.exact else TIE
    for t in reversed(range(chain.horizon)):
        progress(f"values before step {t + 1}")
        options = walk.options[t]
        needed, place = np.unique(options.row, return_inverse=True)
        q = (ended_value[needed] + rows.expected(values, needed))[place.ravel()]
        starts = group_starts(options.state)
        best = np.maximum.reduceat(q, starts) if len(q) else q
        group = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(q)]))
        good = np.flatnonzero(q >= best[group] - tie)
        _, first = np.unique(group[good], return_index=True)
        chosen[t] = good[first]
        values = zeros(walk.states, chain.exact)
        values[options.state[chosen[t]]] = q[chosen[t]]
    return chosen, values


def play(walk: Walk, option_weights: list[np.ndarray], progress: Progress) -> tuple[list, object, dict[int, object]]:
    """The outcome of playing the walk's options with ``option_weights`` (per step, per option: the
    chance of that joint decision in its state): ([P(the fight ends as code 0, 1, DRAW) at each
    step], P(unfinished), {length in steps: P(ends there)})."""
    chain = walk.chain
    rows = walk.rows
    _, moved_to, moved_p, ended_row, ended_code, ended_p = rows.as_arrays()
    weights = zeros(walk.states, chain.exact)
    for state, p in chain.initial():
        weights[state] += p
    ends = zeros(4, chain.exact)
    lengths: dict[int, object] = {}
    for t in range(chain.horizon):
        progress(f"the policy's outcome, step {t + 1}")
        options = walk.options[t]
        row_weight = zeros(len(rows.index), chain.exact)
        np.add.at(row_weight, options.row, weights[options.state] * option_weights[t])
        ended = segment_sum(ended_code, ended_p * row_weight[ended_row], 4, chain.exact)
        ends = ends + ended
        lengths[t + 1] = ended.sum()
        needed = np.unique(options.row)
        entries, owner = rows.entries(needed)
        weights = segment_sum(moved_to[entries], moved_p[entries] * row_weight[needed][owner], walk.states, chain.exact)
    unfinished = weights.sum()
    lengths[chain.horizon] = lengths.get(chain.horizon, 0) + unfinished
    return ends, unfinished, lengths


def outcome_for(ends, unfinished, side: int) -> Outcome:
    return Outcome(win=ends[side], loss=ends[1 - side], draw=ends[DRAW], unfinished=unfinished)


def chosen_weights(walk: Walk, chosen: list[np.ndarray]) -> list[np.ndarray]:
    out = []
    for t, options in enumerate(walk.options):
        w = zeros(len(options.row), walk.chain.exact)
        w[chosen[t]] = 1
        out.append(w)
    return out

