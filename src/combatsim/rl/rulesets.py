"""Duel configurations: validation and the int64 parameter vectors of the step kernels.

Each ruleset turns two persona descriptions (``agent`` for side 0, ``opponent`` for side 1) and a
few globals into the kernel's ``iparams`` (layouts in combatsim.rl.<ruleset>_reference). Every
error names the field (``agent.weapons[1].damage``) and its allowed range.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from types import ModuleType
from typing import Any

import numpy as np

from combatsim.dice import Dice
from combatsim.registry import resolve_backend
from combatsim.validation import check_choice, check_int

MAX_HIT_POINTS = 1_000_000
MAX_EPISODE_STEPS = 1_000_000
EXP_TYPES = {"A": 1, "B": 1, "C": 1, "D": 2, "E": 3, "F": 4, "automatic": 5}


def _mapping(name: str, value: object) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise TypeError(f"{name} must be a mapping of persona fields, got {type(value).__name__}")
    return value


def _unknown(name: str, value: Mapping[str, Any], allowed: tuple[str, ...]) -> None:
    extra = sorted(set(value) - set(allowed))
    if extra:
        raise ValueError(f"{name} has unknown field(s) {', '.join(extra)}; allowed: {', '.join(allowed)}")


def _bool(name: str, value: object) -> int:
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__} {value!r}")
    return int(bool(value))


def _dice(name: str, value: object, max_count: int) -> Dice:
    try:
        dice = Dice.parse(value, name)
    except (TypeError, ValueError) as error:
        raise type(error)(f"{name}: {error}") from None
    if dice.count > max_count:
        raise ValueError(f"{name} must roll at most {max_count} dice, got {dice.count}")
    if dice.count == 0:
        dice = Dice(1, 1, dice.modifier - 1)  # a constant: one d1 keeps the word layout uniform
    return dice


# ---- EXP ----
EXP_WEAPON_FIELDS = ("bonus", "maximum_roll", "damage_adjustment", "damage", "type", "ammunition")
EXP_PERSONA_FIELDS = ("hit_points", "armour_rating", "weapons")

#: A type B bow with its quiver, a type C pistol (the nomad's 3-30 damage) and a type A sword.
EXP_DEFAULT_PERSONA: dict[str, Any] = {
    "hit_points": 30,
    "armour_rating": 600,
    "weapons": [
        {"bonus": 110, "maximum_roll": 760, "damage_adjustment": 3, "damage": "d6", "type": "B", "ammunition": 12},
        {"bonus": 178, "maximum_roll": 853, "damage_adjustment": 0, "damage": "3d10", "type": "C", "ammunition": 6},
        {"bonus": 125, "maximum_roll": 750, "damage_adjustment": 6, "damage": "d8", "type": "A", "ammunition": 0},
    ],
}


def exp_params(agent=None, opponent=None, *, max_steps: int = 200, hit_on_equal: bool = False) -> np.ndarray:
    from combatsim.rl import exp_reference as layout

    params = np.zeros(layout.PARAMS, dtype=np.int64)
    for side, (name, persona) in enumerate((("agent", agent), ("opponent", opponent))):
        persona = _mapping(name, EXP_DEFAULT_PERSONA if persona is None else persona)
        _unknown(name, persona, EXP_PERSONA_FIELDS)
        base = side * layout.SIDE_PARAMS
        params[base + layout.P_HIT_POINTS] = check_int(
            f"{name}.hit_points", persona.get("hit_points", 30), 1, MAX_HIT_POINTS
        )
        params[base + layout.P_ARMOUR_RATING] = check_int(
            f"{name}.armour_rating", persona.get("armour_rating", 600), -10_000, 10_000
        )
        weapons = persona.get("weapons", EXP_DEFAULT_PERSONA["weapons"])
        if not isinstance(weapons, list | tuple) or not 1 <= len(weapons) <= layout.SLOTS:
            raise ValueError(f"{name}.weapons must be a list of 1..{layout.SLOTS} weapons")
        for k, weapon in enumerate(weapons):
            field = f"{name}.weapons[{k}]"
            weapon = _mapping(field, weapon)
            _unknown(field, weapon, EXP_WEAPON_FIELDS)
            w = base + layout.P_SLOTS + k * layout.SLOT_PARAMS
            kind = check_choice(f"{field}.type", weapon.get("type", "C"), tuple(EXP_TYPES))
            dice = _dice(f"{field}.damage", weapon.get("damage", "d6"), layout.MAX_DICE)
            params[w + layout.P_BONUS] = check_int(f"{field}.bonus", weapon.get("bonus", 0), -10_000, 10_000)
            params[w + layout.P_MAXIMUM_ROLL] = check_int(
                f"{field}.maximum_roll", weapon.get("maximum_roll", 1000), -10_000, 20_000
            )
            params[w + layout.P_DAMAGE_ADJUSTMENT] = check_int(
                f"{field}.damage_adjustment", weapon.get("damage_adjustment", 0), -10_000, 10_000
            )
            params[w + layout.P_DICE_COUNT] = dice.count
            params[w + layout.P_DICE_SIDES] = dice.sides
            params[w + layout.P_DICE_MODIFIER] = dice.modifier
            params[w + layout.P_ROLLS] = EXP_TYPES[kind]
            params[w + layout.P_BURST] = int(kind == "automatic")
            ammunition = check_int(f"{field}.ammunition", weapon.get("ammunition", 0), 0, 1_000_000)
            if kind == "automatic" and ammunition == 0:
                raise ValueError(f"{field}.ammunition must be >= 3 for a fully automatic weapon (3 rounds a burst)")
            if ammunition and kind == "automatic" and ammunition < 3:
                raise ValueError(f"{field}.ammunition must be >= 3 for a fully automatic weapon, got {ammunition}")
            params[w + layout.P_CAPACITY] = ammunition
    params[layout.G_MAX_STEPS] = check_int("max_steps", max_steps, 1, MAX_EPISODE_STEPS)
    params[layout.G_HIT_ON_EQUAL] = _bool("hit_on_equal", hit_on_equal)
    return params


# ---- d100 ----
D100_PERSONA_FIELDS = (
    "skill", "attack_pool", "specialty_ranks", "ranged", "nonlethal", "weapon_lethality", "weapon_severity",
    "armour", "dual_wield_allowed", "flee_target",
)
D100_ARMOUR = {"none": Fraction(1), "light": Fraction(3, 4), "heavy": Fraction(1, 2)}
D100_DEFAULT_PERSONA: dict[str, Any] = {
    "skill": 60, "ranged": False, "nonlethal": False, "weapon_lethality": 20, "weapon_severity": "2",
    "armour": "light", "dual_wield_allowed": True, "flee_target": 40,
}


def specialty_multiplier(ranks, taper: bool = True) -> Fraction:
    """RULINGS d100: ranks sorted high to low, 1 + 0.1 r1 + sum_k>=2 0.1 r_k 0.5^(k-1), capped at 1.5."""
    ranks = sorted(ranks, reverse=True)
    if not ranks:
        return Fraction(1)
    total = 1 + Fraction(ranks[0], 10)
    for k, rank in enumerate(ranks[1:], start=2):
        total += Fraction(rank, 10) * (Fraction(1, 2) ** (k - 1) if taper else 1)
    return min(total, Fraction(3, 2))


def _fraction(name: str, value: object) -> Fraction:
    if isinstance(value, bool) or not isinstance(value, int | str | Fraction):
        raise TypeError(f"{name} must be an int, a decimal string or a Fraction, got {type(value).__name__}")
    try:
        result = Fraction(value)
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"{name} must be a number such as '1.5', got {value!r}") from None
    if not 0 <= result <= 100:
        raise ValueError(f"{name} must be in 0..100, got {value!r}")
    return result


def d100_params(
    agent=None, opponent=None, *, max_steps: int = 100, passes_per_round: int = 3, start_engaged: bool = True
) -> np.ndarray:
    from combatsim.rl import d100_reference as layout

    params = np.zeros(layout.PARAMS, dtype=np.int64)
    personas = []
    for name, persona in (("agent", agent), ("opponent", opponent)):
        persona = dict(D100_DEFAULT_PERSONA) | dict(_mapping(name, {} if persona is None else persona))
        _unknown(name, persona, D100_PERSONA_FIELDS)
        personas.append((name, persona))
    for side, (name, persona) in enumerate(personas):
        target_name, target = personas[1 - side]
        base = side * layout.SIDE_PARAMS
        if "attack_pool" in persona:
            pool = check_int(f"{name}.attack_pool", persona["attack_pool"], 0, 1000)
            ranks = persona.get("specialty_ranks", [])
            if not isinstance(ranks, list | tuple):
                raise TypeError(f"{name}.specialty_ranks must be a list of ints")
            ranks = [check_int(f"{name}.specialty_ranks[{i}]", r, 0, 100) for i, r in enumerate(ranks)]
            skill = int(pool * specialty_multiplier(ranks))  # floor: both are non-negative
        else:
            skill = check_int(f"{name}.skill", persona["skill"], -1000, 1000)
        params[base + layout.P_SKILL] = skill
        ranged = _bool(f"{name}.ranged", persona["ranged"])
        params[base + layout.P_RANGED] = ranged
        params[base + layout.P_NONLETHAL] = _bool(f"{name}.nonlethal", persona["nonlethal"])
        params[base + layout.P_DUAL_ALLOWED] = _bool(f"{name}.dual_wield_allowed", persona["dual_wield_allowed"])
        params[base + layout.P_FLEE] = check_int(f"{name}.flee_target", persona["flee_target"], -1000, 1000)
        lethality = check_int(f"{name}.weapon_lethality", persona["weapon_lethality"], 0, 100)
        severity = _fraction(f"{name}.weapon_severity", persona["weapon_severity"])
        armour = D100_ARMOUR[check_choice(f"{target_name}.armour", target["armour"], tuple(D100_ARMOUR))]
        for cover in range(2):
            for dual in range(2):
                # Multiply all applicable factors, round down once (RULINGS d100).
                factor = armour * (Fraction(1, 2) if cover and ranged else 1) * (Fraction(3, 4) if dual else 1)
                final = int(lethality * factor)
                params[base + layout.P_LETHALITY + 2 * cover + dual] = final
                params[base + layout.P_SERIOUS + 2 * cover + dual] = min(90, int(final * severity))
    params[layout.G_MAX_STEPS] = check_int("max_steps", max_steps, 1, MAX_EPISODE_STEPS)
    params[layout.G_PASSES] = check_int("passes_per_round", passes_per_round, 1, 100)
    params[layout.G_START_ENGAGED] = _bool("start_engaged", start_engaged)
    return params


# ---- TSS ----
TSS_PERSONA_FIELDS = (
    "skill", "action_check", "actions_per_round", "situation_steps", "two_weapons", "ambidexterity",
    "damage_track", "weapon_grade", "armour_die", "armour_grade", "durability",
)
TSS_GRADES = {"marginal": 0, "ordinary": 1, "good": 2, "amazing": 3}
TSS_TYPES = {"s": 1, "w": 2, "m": 3}
TSS_DEFAULT_PERSONA: dict[str, Any] = {
    "skill": "14/7/3",
    "action_check": "+14/13/6/3",
    "actions_per_round": 2,
    "situation_steps": 0,
    "two_weapons": True,
    "ambidexterity": False,
    "damage_track": "d4w/d4+2w/d4-1m",
    "weapon_grade": "good",
    "armour_die": 4,
    "armour_grade": "good",
    "durability": "10/10/5",
}


def _triple(name: str, value: object, plus: bool = False) -> tuple[int, int, int]:
    """``O/G/A`` (or ``+M/O/G/A`` for an action check), or one score S -> S / S//2 / S//4."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value, value // 2, value // 4
    if not isinstance(value, str):
        raise TypeError(f"{name} must be 'O/G/A' or one int, got {type(value).__name__}")
    parts = value.split("/")
    if plus and len(parts) == 4:
        parts = parts[1:]
    try:
        numbers = tuple(int(part) for part in parts)
    except ValueError:
        raise ValueError(f"{name} must look like '14/7/3', got {value!r}") from None
    if len(numbers) != 3:
        raise ValueError(f"{name} must have three scores O/G/A, got {value!r}")
    for number in numbers:
        check_int(name, number, -100, 100)
    return numbers  # type: ignore[return-value]


def tss_params(agent=None, opponent=None, *, max_steps: int = 200, one_step_shift: bool = False) -> np.ndarray:
    from combatsim.rl import tss_reference as layout

    params = np.zeros(layout.PARAMS, dtype=np.int64)
    personas = []
    for name, persona in (("agent", agent), ("opponent", opponent)):
        persona = dict(TSS_DEFAULT_PERSONA) | dict(_mapping(name, {} if persona is None else persona))
        _unknown(name, persona, TSS_PERSONA_FIELDS)
        personas.append((name, persona))
    for side, (name, persona) in enumerate(personas):
        base = side * layout.SIDE_PARAMS
        params[base + layout.P_SKILL : base + layout.P_SKILL + 3] = _triple(f"{name}.skill", persona["skill"])
        params[base + layout.P_ACTION_CHECK : base + layout.P_ACTION_CHECK + 3] = _triple(
            f"{name}.action_check", persona["action_check"], plus=True
        )
        params[base + layout.P_ACTIONS_PER_ROUND] = check_int(f"{name}.actions_per_round", persona["actions_per_round"], 1, 4)
        params[base + layout.P_STEPS] = check_int(f"{name}.situation_steps", persona["situation_steps"], -10, 10)
        params[base + layout.P_TWO_WEAPONS] = _bool(f"{name}.two_weapons", persona["two_weapons"])
        params[base + layout.P_AMBIDEXTERITY] = _bool(f"{name}.ambidexterity", persona["ambidexterity"])
        track = persona["damage_track"]
        if not isinstance(track, str) or len(track.split("/")) != 3:
            raise ValueError(f"{name}.damage_track must look like 'd4w/d4+2w/d4-1m', got {track!r}")
        for tier, entry in enumerate(track.split("/")):
            entry = entry.strip()
            if not entry or entry[-1].lower() not in TSS_TYPES:
                raise ValueError(f"{name}.damage_track entry {entry!r} must end in s, w or m (stun, wound, mortal)")
            dice = _dice(f"{name}.damage_track[{tier}]", entry[:-1], layout.MAX_DICE)
            params[base + layout.P_TRACK + 3 * tier : base + layout.P_TRACK + 3 * tier + 3] = (
                dice.count, dice.sides, dice.modifier
            )
            params[base + layout.P_TYPE + tier] = TSS_TYPES[entry[-1].lower()]
        grades = tuple(TSS_GRADES)
        params[base + layout.P_WEAPON_GRADE] = TSS_GRADES[check_choice(f"{name}.weapon_grade", persona["weapon_grade"], grades)]
        params[base + layout.P_ARMOUR_DIE] = check_int(f"{name}.armour_die", persona["armour_die"], 0, 1000)
        params[base + layout.P_ARMOUR_GRADE] = TSS_GRADES[check_choice(f"{name}.armour_grade", persona["armour_grade"], grades)]
        durability = persona["durability"]
        if not isinstance(durability, str) or len(durability.split("/")) != 3:
            raise ValueError(f"{name}.durability must look like 'stun/wound/mortal' e.g. '10/10/5', got {durability!r}")
        for k, part in enumerate(durability.split("/")):
            try:
                value = int(part)
            except ValueError:
                raise ValueError(f"{name}.durability must hold integers, got {durability!r}") from None
            params[base + layout.P_DURABILITY + k] = check_int(f"{name}.durability", value, 1, 1_000_000)
    params[layout.G_MAX_STEPS] = check_int("max_steps", max_steps, 1, MAX_EPISODE_STEPS)
    params[layout.G_ONE_STEP_SHIFT] = _bool("one_step_shift", one_step_shift)
    return params


# ---- the table the environments use ----
@dataclass(frozen=True)
class Ruleset:
    name: str
    layout: ModuleType
    build: Any
    action_names: tuple[str, ...]

    @property
    def n_actions(self) -> int:
        return self.layout.ACTIONS

    @property
    def obs_size(self) -> int:
        return self.layout.OBS_SIZE

    def kernels(self, backend: str) -> tuple[Any, Any, Any, str]:
        """(reset, step, rollout, resolved backend) for "auto", "python", "numba" or "cython"."""
        backend = resolve_backend(backend)
        if backend == "python":
            module = self.layout
        else:
            suffix = "nb" if backend == "numba" else "cy"
            module = importlib.import_module(f"combatsim.kernels.rl.{self.name}_{suffix}")
        return (getattr(module, f"{self.name}_reset"), getattr(module, f"{self.name}_step"),
                getattr(module, f"{self.name}_rollout"), backend)

    def stepper(self, backend: str, params: np.ndarray, buffers: Any, policies: np.ndarray, shaping: float) -> Any:
        """The step kernel bound to ``buffers``: ``.step(lo, hi)`` steps envs lo..hi-1."""
        if backend == "cython":
            module = importlib.import_module(f"combatsim.kernels.rl.{self.name}_cy")
            return module.Stepper(params, buffers.seeds, buffers.state, buffers.actions, policies, shaping,
                                  buffers.obs, buffers.reward, buffers.terminated, buffers.truncated, buffers.mask)
        return BoundStep(self.kernels(backend)[1], params, buffers, policies, shaping)


class BoundStep:
    """``Stepper`` for the Numba and Python kernels: the arguments tuple is built once."""

    def __init__(self, kernel: Any, params: np.ndarray, b: Any, policies: np.ndarray, shaping: float) -> None:
        self.kernel = kernel
        self.params, self.b, self.policies, self.shaping = params, b, policies, shaping
        self.n = b.state.shape[0]
        self.args = (params, b.seeds, b.state, b.actions, policies, shaping, b.obs, b.reward, b.terminated,
                     b.truncated, b.mask)

    def step(self, lo: int, hi: int) -> None:
        if lo == 0 and hi == self.n:
            self.kernel(*self.args)
            return
        b, s = self.b, slice(lo, hi)
        self.kernel(self.params, b.seeds[s], b.state[s], b.actions[s], self.policies, self.shaping, b.obs[s],
                    b.reward[s], b.terminated[s], b.truncated[s], b.mask[s])


def _layout(name: str) -> ModuleType:
    return importlib.import_module(f"combatsim.rl.{name}_reference")


RULESETS: dict[str, Ruleset] = {
    "exp": Ruleset("exp", _layout("exp"), exp_params, ("fire", "reload", "weapon_0", "weapon_1", "weapon_2")),
    "d100": Ruleset(
        "d100", _layout("d100"), d100_params,
        ("attack", "quick_attack", "defend", "flee", "press", "disengage", "take_cover", "toggle_dual_wield"),
    ),
    "tss": Ruleset("tss", _layout("tss"), tss_params, ("attack", "aim", "two_weapon_attack", "wait")),
}
