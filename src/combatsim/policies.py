"""Outside policies: members of a scenario played by a Python callable instead of their scripted policy.

A policy is batched: ``policy(obs, masks) -> actions`` with ``obs`` float32 (N, observation size)
and ``masks`` int8 (N, actions) in, the very observations and masks the environments give
(combatsim.rl.fight_env), and an integer array (N,) of actions 0..actions-1 out. Every returned
array is checked (shape, integer dtype, range): a wrong action is an error, never played as
another. ``play_fights`` plays fights 0..n-1 of a seed through the engine's ``reset``/``step`` in
lockstep chunks, members without a policy on their scripted policy, so fight ``i`` here is fight
``i`` of ``combatsim fight --seed`` and episode ``i`` of an environment seeded alike.
"""

from __future__ import annotations

import importlib
import itertools
import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_for
from dataclasses import dataclass, field

import numpy as np

from combatsim.engine import DRAW, ENGINE_BACKENDS, RUNNING, S_LENGTH, S_OUTCOME, SCRIPTED, UNFINISHED, Game
from combatsim.fight_summary import engine_outcomes
from combatsim.runner import RunArguments
from combatsim.validation import brief, check_int, check_seed, check_threads

Policy = Callable[[np.ndarray, np.ndarray], np.ndarray]
#: Fights stepped together: the buffers, observations and masks of a chunk stay a few MB.
DEFAULT_CHUNK = 4096
MAX_CHUNK = 1 << 20


def load_callable(target: str, flag: str = "--policy") -> Policy:
    """The callable that ``package.module:callable`` names (a dotted attribute path is allowed), or
    the policy saved at PATH for ``file:PATH`` (``combatsim solve --out``)."""
    if target.startswith("file:"):
        from combatsim.solve.policy import load_policy

        return load_policy(target[len("file:"):], flag)
    module_name, colon, attribute = target.partition(":")
    if not colon or not module_name.strip() or not attribute.strip():
        raise ValueError(f"{flag}: expected NAME=package.module:callable or NAME=file:PATH, got the target {target!r}")
    try:
        found = importlib.import_module(module_name.strip())
    except KeyboardInterrupt:
        raise
    except BaseException as problem:  # any import-time failure of the user's module, sys.exit() too
        raise ValueError(f"{flag}: module {brief(module_name.strip())} does not import "
                         f"({_problem(problem)})") from None
    for part in attribute.strip().split("."):
        if not hasattr(found, part):
            raise ValueError(f"{flag}: module {module_name.strip()!r} has no attribute {attribute.strip()!r}")
        found = getattr(found, part)
    if not callable(found):
        raise ValueError(f"{flag}: {brief(target)} is a {type(found).__name__}, not callable; "
                         f"a policy is policy(obs, masks) -> actions")
    return found


def parse_policy(text: str, flag: str = "--policy") -> tuple[str, Policy]:
    """``"NAME=package.module:callable"`` -> (member name, the callable)."""
    name, equals, target = text.rpartition("=")
    if not equals or not name.strip() or not target.strip():
        raise ValueError(f"{flag}: expected NAME=package.module:callable or NAME=file:PATH (NAME: a member's name), "
                         f"got {text!r}")
    try:
        return name.strip(), load_callable(target.strip(), flag)
    except ValueError as error:  # which member's policy it was
        raise ValueError(f"{error} (the policy of member {brief(name.strip())})") from None


def parse_policies(texts: Sequence[str], flag: str = "--policy") -> dict[str, Policy]:
    policies: dict[str, Policy] = {}
    for text in texts:
        name, policy = parse_policy(text, flag)
        if name in policies:
            raise ValueError(f"{flag}: member {name!r} is given two policies; give each member one")
        policies[name] = policy
    return policies


def member_index(game: Game, name: str, field: str = "agent") -> int:
    """Row of the member called ``name`` in ``game``'s table (``field``: what the error names)."""
    if not isinstance(name, str) or name not in game.member_names:
        known = ", ".join(repr(n) for n in game.member_names)
        raise ValueError(f"{field}: no member is named {name!r}; the scenario's members: {known}")
    return game.member_names.index(name)


def member_policies(game: Game, policies: Mapping[str, Policy] | None, flag: str = "policies") -> dict[int, Policy]:
    """``{member name: policy}`` -> ``{member row: policy}``, each name and callable checked."""
    if policies is None:
        return {}
    if not isinstance(policies, Mapping):
        raise TypeError(f"{flag} must be a mapping of member name -> policy(obs, masks) -> actions, "
                        f"got {type(policies).__name__}")
    rows = {}
    for name, policy in policies.items():
        row = member_index(game, name, field=flag)
        if not callable(policy):
            raise TypeError(f"{flag}[{name!r}] must be callable as policy(obs, masks) -> actions, "
                            f"got {type(policy).__name__}")
        rows[row] = policy
    return rows


def policy_label(policy: Policy) -> str:
    module = getattr(policy, "__module__", None)
    name = getattr(policy, "__qualname__", None) or type(policy).__name__
    return f"{module}:{name}" if module else name


def _problem(problem: BaseException) -> str:
    """An exception in one short line: its type and the first line of its message."""
    text = str(problem).strip()
    first = text.splitlines()[0] if text else ""
    return f"{type(problem).__name__}: {brief(first, 200)[1:-1]}" if first else type(problem).__name__


def call_policy(policy: Policy, member: str, obs: np.ndarray, masks: np.ndarray, actions: int,
                uniforms: np.ndarray | None = None) -> np.ndarray:
    """``policy(obs, masks)`` (``policy(obs, masks, uniforms)`` for a policy that draws from the
    policy die), checked (checked_actions); anything it raises, SystemExit included, is one error
    naming the policy and its member: a policy's failure is the input's, not ours."""
    try:
        result = policy(obs, masks) if uniforms is None else policy(obs, masks, uniforms)
    except KeyboardInterrupt:
        raise
    except BaseException as problem:
        raise ValueError(f"policy {policy_label(policy)} of {member!r} raised {_problem(problem)}; "
                         f"a policy is policy(obs, masks) -> actions") from None
    return checked_actions(policy, member, result, len(obs), actions)


def checked_actions(policy: Policy, member: str, result: object, rows: int, actions: int) -> np.ndarray:
    """``result`` as int64 actions, or a one-line error naming the policy and what is allowed."""
    allowed = f"an integer array of shape ({rows},) with actions in 0..{actions - 1}"
    who = f"policy {policy_label(policy)} of {member!r}"
    array = result if isinstance(result, np.ndarray) else None
    if array is None:
        raise TypeError(f"{who} returned a {type(result).__name__}; allowed: {allowed} (a numpy array)")
    if isinstance(array, np.ma.MaskedArray) and np.ma.getmaskarray(array).any():
        raise ValueError(f"{who} returned a masked array with masked entries; allowed: {allowed}")
    if array.dtype.kind not in "iu":
        raise TypeError(f"{who} returned dtype {array.dtype}; allowed: {allowed}")
    if array.shape != (rows,):
        raise ValueError(f"{who} returned shape {array.shape}; allowed: {allowed}")
    if rows and (int(array.min()) < 0 or int(array.max()) >= actions):
        bad = int(array[(array < 0) | (array >= actions)][0])
        raise ValueError(f"{who} returned action {bad}; allowed: {allowed}")
    return array.astype(np.int64, copy=False)


@dataclass
class FightResults:
    """What ``play_fights`` counted: per side, the fights' ends, lengths and the engine's counts."""

    fights: int
    side_names: tuple[str, str]
    wins: list[int]
    #: wins in which the foes left in the fight fled
    wins_by_flight: list[int]
    #: members of each side who fled successfully
    escapes: list[int]
    draws: int
    unfinished: int
    #: fight length (in ``length_unit``) -> fights
    length_histogram: dict[int, int]
    length_unit: str
    #: the engine's counts summed over every fight, by name (``masked``: masked actions played)
    totals: dict[str, int]
    #: per member, in table order: the fights it ended still standing (the engine's member_standing)
    standing: list[int]
    seed: int
    backend: str
    #: per fight (outcomes=True): the outcome code (0, 1, DRAW, UNFINISHED) and the length
    outcome: np.ndarray | None = field(default=None, repr=False)
    length: np.ndarray | None = field(default=None, repr=False)
    #: per member played by a policy, by name: the masked actions its policy chose (each is played
    #: as the member's do-nothing action, as in the environments)
    masked_actions: dict[str, int] = field(default_factory=dict)
    #: threads that played chunks at once
    threads: int = 1
    #: interrupted (Ctrl-C): ``fights`` is the whole chunks finished before it, fights 0..fights-1
    partial: bool = False


@dataclass
class _ChunkTally:
    """What one chunk of fights counted (see play_fights)."""

    ends: np.ndarray
    totals: np.ndarray
    standing: np.ndarray
    masked: dict[int, int]
    #: per fight
    outcome: np.ndarray
    length: np.ndarray


class _Stopped(Exception):
    """A chunk abandoned because the run was interrupted."""


def _play_chunk(game: Game, engine, rows: Mapping[int, Policy], b: dict[str, np.ndarray], seed: int, first: int,
                size: int, stop: threading.Event | None) -> _ChunkTally:
    """Fights ``first .. first+size-1`` of ``seed`` in lockstep in buffers ``b``: each step asks
    every policy once for its member's actions in every fight still running, then calls the
    engine's ``step`` once."""
    actions_count = len(game.action_names)
    view = {key: value[:size] for key, value in b.items()}
    view["seeds"][:] = seed
    view["indices"][:] = np.arange(first, first + size, dtype=np.int64)
    view["which"][:] = 1
    view["actions"][:] = SCRIPTED
    engine.reset(game.table, game.config, view["seeds"], view["indices"], view["which"], view["state"],
                 view["counts"], view["obs"], view["mask"])
    state = view["state"]
    masked = dict.fromkeys(rows, 0)
    running = state[:, S_OUTCOME] == RUNNING
    while running.any():
        if stop is not None and stop.is_set():
            raise _Stopped
        # every fight running: a slice, whose views spare the copies a boolean index makes
        which = slice(None) if running.all() else running
        for row, policy in rows.items():
            obs, mask = view["obs"][which, row], view["mask"][which, row]
            uniforms = None
            if getattr(policy, "uses_policy_die", False):  # a mixed solved policy (combatsim.solve)
                uniforms = policy.policy_uniforms(view["seeds"][which], state[which], row)
            chosen = call_policy(policy, game.member_names[row], obs, mask, actions_count, uniforms)
            masked[row] += int(np.count_nonzero(np.take_along_axis(mask, chosen[:, None], axis=1) == 0))
            view["actions"][which, row] = chosen
        engine.step(game.table, game.config, view["seeds"], state, view["actions"], view["counts"],
                    view["obs"], view["mask"])
        running = state[:, S_OUTCOME] == RUNNING
    member_standing = game.engine("python").member_standing
    standing = np.array([np.count_nonzero(member_standing(state, slice(None), game.members, c))
                         for c in range(game.members)], dtype=np.int64)
    outcome = state[:, S_OUTCOME].copy()
    return _ChunkTally(ends=np.bincount(outcome, minlength=4)[:4], totals=view["counts"].sum(axis=0),
                       standing=standing, masked=masked, outcome=outcome, length=state[:, S_LENGTH].copy())


def play_fights(game: Game, n: int, seed: int, policies: Mapping[str, Policy] | None = None, *,
                backend: str = "auto", chunk: int = DEFAULT_CHUNK, start: int = 0,
                outcomes: bool = False, progress: Callable[[int, int], None] | None = None,
                threads: int = 1) -> FightResults:
    """Fights ``start .. start+n-1`` of ``seed``, the named members played by their policies.

    Fights run ``chunk`` at a time, all of a chunk in lockstep: each step asks every policy once
    for the actions of its member in every fight of the chunk still running, then calls the
    engine's ``step`` once. With ``threads`` > 1, that many chunks are played at once, each on a
    thread of its own (the engine's step runs without the GIL), so the policies are called from
    several threads at once; the results are the same as on one thread for any policy whose
    actions depend only on its arguments. ``progress(done, n)`` is called as chunks finish.
    Ctrl-C returns the fights of the chunks finished before it (fights start..start+k-1), marked
    partial.
    """
    n = check_int("n", n, 0, 1 << 40)
    seed = check_seed(seed)
    chunk = check_int("chunk", chunk, 1, MAX_CHUNK)
    start = check_int("start", start, 0, (1 << 62) - (1 << 40))
    threads = check_threads(threads)
    if outcomes:
        check_int("n", n, 0, 100_000_000)
    rows = member_policies(game, policies)
    engine = game.engine(backend)
    outcome_all = np.empty(n if outcomes else 0, dtype=np.int64)
    length_all = np.empty(n if outcomes else 0, dtype=np.int64)
    totals = np.zeros(len(game.count_names), dtype=np.int64)
    standing = np.zeros(game.members, dtype=np.int64)
    ends = np.zeros(4, dtype=np.int64)  # side 0, side 1, DRAW, UNFINISHED
    masked = dict.fromkeys(rows, 0)
    histogram: dict[int, int] = {}
    starts = list(range(0, n, chunk))
    threads = max(1, min(threads, len(starts)))
    done = 0

    def add(first: int, tally: _ChunkTally) -> None:
        nonlocal done
        size = len(tally.outcome)
        ends[:] += tally.ends
        totals[:] += tally.totals
        standing[:] += tally.standing
        for row, count in tally.masked.items():
            masked[row] += count
        lengths, counts = np.unique(tally.length, return_counts=True)
        for length, count in zip(lengths.tolist(), counts.tolist(), strict=True):
            histogram[length] = histogram.get(length, 0) + count
        if outcomes:
            outcome_all[first:first + size] = tally.outcome
            length_all[first:first + size] = tally.length
        done = first + size
        if progress is not None:
            progress(done, n)

    partial = False
    try:
        if threads == 1:
            b = game.buffers(min(chunk, max(n, 1)))
            for first in starts:
                add(first, _play_chunk(game, engine, rows, b, seed, start + first, min(chunk, n - first), None))
        else:
            partial = _play_threaded(game, engine, rows, seed, n, chunk, start, starts, threads, add)
    except KeyboardInterrupt:
        partial = True
    named = {name: int(value) for name, value in zip(game.count_names, totals.tolist(), strict=True)}
    return FightResults(
        fights=done, side_names=game.side_names, wins=[int(ends[0]), int(ends[1])],
        wins_by_flight=[named.get(f"wins_by_flight_side_{side}", 0) for side in (0, 1)],
        escapes=[named.get(f"escapes_side_{side}", 0) for side in (0, 1)],
        draws=int(ends[DRAW]), unfinished=int(ends[UNFINISHED]),
        length_histogram=dict(sorted(histogram.items())), length_unit=game.length_unit, totals=named,
        standing=standing.tolist(),
        seed=seed, backend=getattr(engine, "backend", backend),
        outcome=outcome_all[:done] if outcomes else None, length=length_all[:done] if outcomes else None,
        masked_actions={game.member_names[row]: count for row, count in masked.items()},
        threads=threads, partial=partial,
    )


def _play_threaded(game: Game, engine, rows: Mapping[int, Policy], seed: int, n: int, chunk: int, start: int,
                   starts: list[int], threads: int, add: Callable[[int, _ChunkTally], None]) -> bool:
    """The chunks at ``starts`` on ``threads`` threads, at most ``threads`` in flight, each thread
    with buffers of its own; finished chunks are added in index order, so an interrupted run
    keeps fights 0..k-1. Returns True when interrupted (Ctrl-C in this thread)."""
    local = threading.local()
    stop = threading.Event()

    def play(first: int) -> _ChunkTally:
        if not hasattr(local, "buffers"):
            local.buffers = game.buffers(chunk)
        return _play_chunk(game, engine, rows, local.buffers, seed, start + first, min(chunk, n - first), stop)

    pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="combatsim-policy")
    pending: deque[tuple[int, Future]] = deque()
    queued = iter(starts)
    try:
        for first in itertools.islice(queued, threads):
            pending.append((first, pool.submit(play, first)))
        while pending:
            first, future = pending.popleft()
            tally = future.result()
            following = next(queued, None)
            if following is not None:
                pending.append((following, pool.submit(play, following)))
            add(first, tally)
    except BaseException as error:
        stop.set()
        for _, future in pending:
            future.cancel()
        if not isinstance(error, KeyboardInterrupt):
            raise
        wait_for([future for _, future in pending])
        return True
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return False


def api_member_names(sides: Sequence[int]) -> tuple[str, ...]:
    """Names for an API call's members (``sides``: each member's side), as combatsim.game names a
    scenario's members whose sides are called "side 0" and "side 1": "side 0" alone on its side,
    else "side 0 1", "side 0 2"... in order."""
    sides = list(sides)
    return tuple(f"side {side}" if sides.count(side) == 1 else f"side {side} {sides[:k + 1].count(side)}"
                 for k, side in enumerate(sides))


def api_fights(build: Callable[..., Game], spec: dict, sides: Sequence[int], run: RunArguments,
               policies: Mapping[str, Policy], table: object = None) -> FightResults:
    """A ruleset API's ``simulate_fights(..., policies=...)``: its spec's fights through the engine
    (``build``: the ruleset's Game builder, ``combatsim.<ruleset>.game.game``, handed in by the API
    that defines it; ``run``: the API's checked run options; ``table``: the fight table the API has
    built from the spec, which the game then uses)."""
    from combatsim.validation import check_choice

    game = build(spec, api_member_names(sides), ("side 0", "side 1"), table)
    check_choice("backend", run.asked_backend, ENGINE_BACKENDS)
    return play_fights(game, run.n, run.seed, policies, backend=run.asked_backend, outcomes=run.outcomes,
                       chunk=DEFAULT_CHUNK if run.chunk_size is None else min(run.chunk_size, MAX_CHUNK))


def policy_result(cls: type, run: RunArguments, results: FightResults, /, length: str = "rounds",
                  **values: object) -> object:
    """A ruleset API's fight result (a FightInfo) of its api_fights run: ``values``, the fights,
    each member's standing, with outcomes each fight's winner and length (the result's field
    ``length``), and how it ran."""
    winner, lengths = engine_outcomes(results)
    return cls(fights=results.fights, standing=tuple(results.standing), winner=winner, **{length: lengths},
               seed=run.seed, backend=results.backend, threads=results.threads, partial=results.partial, **values)
