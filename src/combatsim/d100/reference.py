"""d100 reference kernels: plain loops, the executable specification (docs/d100.md).

Kernel signature (shared by the Numba and Cython twins):
``kernel(seed, start, count, *params, counts, *outputs)``. Rule arithmetic comes from
:mod:`combatsim.d100.model`; the parameters are the already-derived rule values (full skill,
final lethality, ...) or, for fights, the combatant table built by :mod:`combatsim.d100.api`.
"""

from __future__ import annotations

from combatsim.d100 import model
from combatsim.d100.layout import (
    A_FLESH,
    A_INSTANT_DEATH,
    A_LETHAL,
    A_SERIOUS,
    ACTION_ATTACK,
    ACTION_CHARGE,
    ACTION_DEFEND,
    ACTION_DISENGAGE,
    ACTION_FLEE,
    ACTION_NONE,
    ACTION_PRESS,
    ACTION_QUICK_ATTACK,
    ACTION_TAKE_COVER,
    ACTION_TOGGLE_DUAL_WIELD,
    ATTACK_SIDES,
    C_AMBUSH_ATTACK,
    C_AMBUSH_DEFEND,
    C_ARMOUR,
    C_ATTACK,
    C_DUAL_ALLOWED,
    C_FLEE_BASE,
    C_NONLETHAL,
    C_POLICY,
    C_PRESS,
    C_RANGED,
    C_SIDE,
    CONTEST_FIELDS,
    D100,
    DRAW,
    F_ATTACKS,
    F_DRAWS,
    F_ESCALATED_LETHAL,
    F_ESCALATED_SERIOUS,
    F_ESCAPES,
    F_FLESH,
    F_INSTANT_DEATH,
    F_LETHAL,
    F_ROUNDS,
    F_SERIOUS,
    F_SURPRISED,
    F_UNFINISHED,
    F_WINS,
    F_WINS_BY_FLIGHT,
    FIGHT_COUNTS,
    POLICY_ACTIONS,
    UNFINISHED,
    damage_column,
)
from combatsim.rng import ItemStream, dense_die


def _at(values, k: int) -> int:
    return int(values[k] if len(values) > 1 else values[0])


def attack(seed, start, count, full_skill, lethality, serious, nonlethal, lethality2, serious2, nonlethal2,
           weapons, counts, tier_out, wound_out, wound2_out) -> None:
    """Attacks with damage (d100-combat-math.txt, "Roll result tiers", "Damage resolution").

    Attack ``start + k`` draws one value 1..1000000 from the dense layout and splits it into the
    attack d100, the damage d100 and the second weapon's damage d100 (model.split_attack_value).
    ``counts`` gains the five tiers (0..4), then lethal (instant deaths included), serious,
    flesh and instant deaths (5..8), over every weapon that dealt damage. ``weapons`` is 2 for a
    dual-wield attack (both weapons deal damage on a success), else 1.
    """
    for k in range(count):
        roll, damage, damage2 = model.split_attack_value(dense_die(seed, start + k, ATTACK_SIDES) - 1)
        tier = model.tier(roll, _at(full_skill, k))
        counts[tier] += 1
        wounds = [model.NO_WOUND, model.NO_WOUND]
        if tier <= model.SUCCESS:
            critical = tier == model.CRITICAL_SUCCESS
            weapon_values = [
                (damage, _at(lethality, k), _at(serious, k), _at(nonlethal, k)),
                (damage2, _at(lethality2, k), _at(serious2, k), _at(nonlethal2, k)),
            ]
            for w in range(_at(weapons, k)):
                roll_w, lethal_w, serious_w, nonlethal_w = weapon_values[w]
                wounds[w] = model.wound_severity(roll_w, lethal_w, serious_w, bool(nonlethal_w), critical)
                _count_wound(counts, wounds[w])
        if len(tier_out):
            tier_out[k] = tier
        if len(wound_out):
            wound_out[k] = wounds[0]
        if len(wound2_out):
            wound2_out[k] = wounds[1]


def _count_wound(counts, wound: int) -> None:
    if wound == model.FLESH:
        counts[A_FLESH] += 1
    elif wound == model.SERIOUS:
        counts[A_SERIOUS] += 1
    elif wound >= model.LETHAL:
        counts[A_LETHAL] += 1
        if wound == model.INSTANT_DEATH:
            counts[A_INSTANT_DEATH] += 1


def _contest_tier(roll: int, bars) -> int:
    """Tier of ``roll`` against a contest target stored as (critical, hard, success, critical
    failure, capped target) bars (model.tier_bars plus the capped target)."""
    critical_bar, hard_bar, success_bar, critical_failure_bar = bars[0], bars[1], bars[2], bars[3]
    if roll <= critical_bar:
        return model.CRITICAL_SUCCESS
    if roll <= hard_bar:
        return model.HARD_SUCCESS
    if roll <= success_bar:
        return model.SUCCESS
    if roll > critical_failure_bar:
        return model.CRITICAL_FAILURE
    return model.FAILURE


def _first_wins(roll: int, bars, opposing_roll: int, opposing_bars) -> bool:
    """Quick contest (RULINGS): tier first, then margin (capped target - roll); ties to the other side."""
    own = _contest_tier(roll, bars)
    other = _contest_tier(opposing_roll, opposing_bars)
    if own != other:
        return own < other
    return bars[4] - roll > opposing_bars[4] - opposing_roll


class _Fight:
    """One fight's state: per combatant, in plain lists (the reference favours clarity)."""

    def __init__(self, table, stream: ItemStream, counts) -> None:
        self.table = table
        self.stream = stream
        self.counts = counts
        m = len(table)
        self.m = m
        self.active = [True] * m
        self.escaped = [False] * m
        self.deadly_flesh = [0] * m
        self.serious = [0] * m
        self.lethal = [0] * m
        self.in_cover = [False] * m
        self.defending = [False] * m
        self.dual_on = [False] * m
        self.failed_flee = [0] * m
        self.engaged_with = [-1] * m
        self.surprised = [False] * m
        self.targeted = [False] * m
        self.action = [ACTION_NONE] * m
        self.target = [-1] * m
        #: the combatant each one attacked this pass (-1: none)
        self.attacked = [-1] * m
        self.outcome = UNFINISHED

    def side(self, c: int) -> int:
        return int(self.table[c][C_SIDE])

    def first_active_opponent(self, c: int) -> int:
        for o in range(self.m):
            if self.active[o] and self.side(o) != self.side(c):
                return o
        return -1

    def side_in(self, side: int) -> bool:
        return any(self.active[o] and self.side(o) == side for o in range(self.m))

    def decided(self) -> bool:
        """Has a side nobody left in the fight? Then the fight is over: the other side wins (by
        flight when one of its foes escaped), or, with nobody left on either side, a draw."""
        in0, in1 = self.side_in(0), self.side_in(1)
        if in0 and in1:
            return False
        self.outcome = DRAW if not (in0 or in1) else (0 if in0 else 1)
        return True

    def release(self, c: int) -> None:
        """``c`` leaves its engagement (and its partner's points back to nobody)."""
        partner = self.engaged_with[c]
        if partner >= 0 and self.engaged_with[partner] == c:
            self.engaged_with[partner] = -1
        self.engaged_with[c] = -1

    def engage(self, a: int, t: int) -> None:
        self.release(a)
        self.release(t)
        self.engaged_with[a] = t
        self.engaged_with[t] = a

    def take_out(self, c: int) -> None:
        self.active[c] = False
        self.release(c)

    def attack(self, c: int, t: int, quick: bool) -> bool:
        """One attack roll by ``c`` on ``t``: modifiers, tier, damage, wounds, escalation. Returns
        whether ``t`` now has a lethal wound (it goes out when its batch's wounds have all landed).

        Escalation depends only on the wounds' totals (three deadly flesh make a serious wound,
        two serious a lethal one), so recording a batch's wounds one by one, in table order, leaves
        the same wounds and counts as recording them together and escalating once."""
        row = self.table[c]
        ranged = bool(row[C_RANGED])
        cover = self.in_cover[t] and ranged  # cover counts for ranged attacks only
        steps = int(quick) + int(self.dual_on[c]) + int(cover) + int(self.defending[t])  # each -20
        roll, damage, damage2 = model.split_attack_value(self.stream.die(ATTACK_SIDES) - 1)
        bars = [int(row[C_ATTACK + 4 * steps + j]) for j in range(4)]
        self.counts[F_ATTACKS] += 1
        self.attacked[c] = t
        tier = _contest_tier(roll, bars)
        if tier > model.SUCCESS:
            return False
        critical = tier == model.CRITICAL_SUCCESS
        armour = int(self.table[t][C_ARMOUR])
        for w in range(2 if self.dual_on[c] else 1):
            column = damage_column(w, int(cover), armour, int(self.dual_on[c]))
            lethal_bar, serious_bar = int(row[column]), int(row[column + 1])
            nonlethal = bool(row[C_NONLETHAL + w])
            damage_roll = damage if w == 0 else damage2
            if damage_roll <= lethal_bar:
                wound = model.INSTANT_DEATH if critical else model.LETHAL
            elif damage_roll <= serious_bar:
                wound = model.SERIOUS
            else:
                wound = model.FLESH
            if wound == model.FLESH:
                self.counts[F_FLESH] += 1
            elif wound == model.SERIOUS:
                self.counts[F_SERIOUS] += 1
            else:
                self.counts[F_LETHAL] += 1
                self.counts[F_INSTANT_DEATH] += wound == model.INSTANT_DEATH
            flesh, serious, lethal, to_serious, to_lethal = model.record_wound(
                self.deadly_flesh[t], self.serious[t], self.lethal[t], wound, nonlethal
            )
            self.deadly_flesh[t], self.serious[t], self.lethal[t] = flesh, serious, lethal
            self.counts[F_ESCALATED_SERIOUS] += to_serious
            self.counts[F_ESCALATED_LETHAL] += to_lethal
        return self.lethal[t] > 0  # a lethal wound (or death) takes a combatant out

    def declare(self, c: int, first_pass: bool) -> None:
        """The scripted policy (docs/d100.md): one policy d100, then the documented overrides."""
        if first_pass and self.surprised[c]:
            self.action[c] = ACTION_NONE  # a surprised defender skips pass 1 of round 1
            return
        row = self.table[c]
        policy_roll = self.stream.die(D100)
        choice = 0
        while policy_roll > row[C_POLICY + choice]:
            choice += 1
        action = POLICY_ACTIONS[choice]
        engaged = self.engaged_with[c] >= 0
        if row[C_DUAL_ALLOWED] and not self.dual_on[c]:
            action = ACTION_TOGGLE_DUAL_WIELD
        elif action == ACTION_FLEE and engaged:
            action = ACTION_DISENGAGE  # flee is blocked while engaged
        elif action == ACTION_DISENGAGE and not engaged:
            action = ACTION_ATTACK
        target = self.engaged_with[c] if engaged else self.first_active_opponent(c)
        self.action[c] = action
        self.target[c] = target
        if action in (ACTION_ATTACK, ACTION_QUICK_ATTACK, ACTION_CHARGE, ACTION_PRESS):
            self.targeted[target] = True
        if action == ACTION_DEFEND:
            self.defending[c] = True

    def press_spent(self, c: int) -> bool:
        """A press whose target declared a disengage from the presser blocks it instead of attacking."""
        target = self.target[c]
        return self.action[target] == ACTION_DISENGAGE and self.target[target] == c

    def attack_batch(self, quick: bool) -> None:
        """The quick attacks (quick attack, charge) or the standard ones (attack, a press not
        spent blocking) of every combatant in the fight, all rolled against the state before the
        batch: a target the batch takes out still takes the rest of the batch's attacks, and an
        attacker the batch takes out still makes its own. The batch's wounds land together."""
        struck = []
        for c in range(self.m):
            if not self.active[c]:
                continue
            action = self.action[c]
            if quick:
                if action not in (ACTION_QUICK_ATTACK, ACTION_CHARGE):
                    continue
            elif not (action == ACTION_ATTACK or (action == ACTION_PRESS and not self.press_spent(c))):
                continue
            target = self.target[c]
            if not self.active[target]:  # out in the quick attacks: the first opponent still in
                target = self.first_active_opponent(c)
                if target < 0:
                    continue
            if self.attack(c, target, quick):
                struck.append(target)
        for t in struck:
            self.take_out(t)

    def engaging_attack(self, c: int) -> int:
        """The combatant ``c`` made an engaging attack on this pass (a charge, with any weapon, or a
        melee attack); -1 for none."""
        t = self.attacked[c]
        return t if t >= 0 and (self.action[c] == ACTION_CHARGE or not self.table[c][C_RANGED]) else -1

    def engage_after_attacks(self) -> None:
        """After the attacks, an engaging attack pairs attacker and target when both are still in
        the fight (releasing any earlier pair of either), unless either of them made or took
        another engaging attack of this pass: then neither pairs anew, whatever the table order.
        A charger leaves its cover."""
        involved = [set() for _ in range(self.m)]
        for c in range(self.m):
            if self.attacked[c] >= 0 and self.action[c] == ACTION_CHARGE:
                self.in_cover[c] = False
            t = self.engaging_attack(c)
            if t >= 0:
                involved[c].add(t)
                involved[t].add(c)
        for c in range(self.m):
            t = self.engaging_attack(c)
            if (t >= 0 and self.active[c] and self.active[t] and involved[c] == {t} and involved[t] == {c}
                    and self.engaged_with[c] != t):
                self.engage(c, t)

    def move(self, c: int) -> None:
        """``c``'s action after the attacks: take cover, toggle dual wield, disengage or flee."""
        action = self.action[c]
        row = self.table[c]
        if action == ACTION_TAKE_COVER:
            self.in_cover[c] = True
        elif action == ACTION_TOGGLE_DUAL_WIELD:
            self.dual_on[c] = True
        elif action == ACTION_DISENGAGE:
            partner = self.engaged_with[c]
            if partner < 0:
                return  # no longer engaged
            if self.action[partner] == ACTION_PRESS and self.target[partner] == c:
                # Press versus Disengage: both roll full attack target, no action modifiers;
                # ties favour the blocker.
                disengage_roll = self.stream.die(D100)
                press_roll = self.stream.die(D100)
                press_bars = row[C_PRESS : C_PRESS + CONTEST_FIELDS]
                blocker_bars = self.table[partner][C_PRESS : C_PRESS + CONTEST_FIELDS]
                if _first_wins(disengage_roll, press_bars, press_roll, blocker_bars):
                    self.release(c)
            else:
                self.release(c)
        elif action == ACTION_FLEE:
            if self.engaged_with[c] >= 0:
                return  # engaged by an attack this pass: blocked
            if self.targeted[c]:
                flee_target = min(model.TARGET_CAP, int(row[C_FLEE_BASE]) + model.FLEE_STEP * self.failed_flee[c])
                if self.stream.die(D100) > flee_target:
                    self.failed_flee[c] += 1
                    self.in_cover[c] = True  # failure: in cover at the current position
                    return
            self.counts[F_ESCAPES + self.side(c)] += 1
            self.escaped[c] = True
            self.take_out(c)

    def play_pass(self, first_pass: bool) -> bool:
        """One pass (docs/d100.md, "Order inside a pass"); True when the fight ended in it."""
        m = self.m
        self.defending = [False] * m  # Defend lasts one pass
        self.action = [ACTION_NONE] * m
        self.attacked = [-1] * m
        for c in range(m):
            if self.active[c]:
                self.declare(c, first_pass)
        self.attack_batch(quick=True)
        self.attack_batch(quick=False)
        if self.decided():
            return True
        self.engage_after_attacks()
        for c in range(m):
            if self.active[c]:
                self.move(c)
        return self.decided()

    def record(self) -> None:
        """Adds the fight's outcome to the counts."""
        if self.outcome >= 0:
            self.counts[F_WINS + self.outcome] += 1
            foes = [o for o in range(self.m) if self.side(o) != self.outcome]
            self.counts[F_WINS_BY_FLIGHT + self.outcome] += any(self.escaped[o] for o in foes)
        else:
            self.counts[F_DRAWS if self.outcome == DRAW else F_UNFINISHED] += 1


def fight(seed, start, count, table, passes, max_rounds, ambush_side, counts, winner_out, rounds_out) -> None:
    """Fights between side 0 and side 1 (docs/d100.md, "A fight").

    ``table`` has one row per combatant (columns: combatsim.d100.layout). Fight ``start + k``
    uses item stream ``start + k`` for all its dice. ``counts`` gains the layout's F_* fields;
    ``winner_out[k]`` gets the outcome (0 or 1, the winning side; layout.DRAW; layout.UNFINISHED
    at the round limit), ``rounds_out[k]`` the rounds.
    """
    m = len(table)
    for k in range(count):
        state = _Fight(table, ItemStream(seed, start + k), counts)
        if ambush_side >= 0:
            ambushers = [c for c in range(m) if state.side(c) == ambush_side]
            rank = 0
            for d in range(m):
                if state.side(d) == ambush_side:
                    continue
                a = ambushers[rank % len(ambushers)]
                rank += 1
                attacker_roll = state.stream.die(D100)
                defender_roll = state.stream.die(D100)
                if _first_wins(attacker_roll, table[a][C_AMBUSH_ATTACK : C_AMBUSH_ATTACK + CONTEST_FIELDS],
                               defender_roll, table[d][C_AMBUSH_DEFEND : C_AMBUSH_DEFEND + CONTEST_FIELDS]):
                    state.surprised[d] = True
                    counts[F_SURPRISED] += 1
        rounds = 0
        ended = False
        for round_number in range(1, max_rounds + 1):
            rounds = round_number
            state.targeted = [False] * m
            for pass_number in range(1, passes + 1):
                if state.play_pass(round_number == 1 and pass_number == 1):
                    ended = True
                    break
            if ended:
                break
        counts[F_ROUNDS] += rounds
        counts[FIGHT_COUNTS + rounds] += 1  # the rounds histogram follows the fixed counts
        state.record()
        if len(winner_out):
            winner_out[k] = state.outcome
        if len(rounds_out):
            rounds_out[k] = rounds
