"""Train both members of a short d100 duel with OpenSpiel's CFR, measure the result with
OpenSpiel's exploitability and combatsim solve, and play it in combatsim's fights.

    pip install -e ".[openspiel]"
    python examples/openspiel_cfr.py [--iterations 200] [--out DIR]

The duel is d100_duel cut to one round of one pass (``options.passes=1``,
``options.max_rounds=1``): OpenSpiel's CFR walks every history of the game tree, which grows with
each pass's dice, so tabular CFR suits fights of a pass or two (docs/openspiel.md).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import pyspiel
from open_spiel.python.algorithms import cfr, expected_game_score, exploitability

from combatsim import openspiel as fight_spiel
from combatsim.game import scenario_game
from combatsim.policies import play_fights
from combatsim.scenario import load, resolve
from combatsim.solve import equilibrium

OVERRIDES = ["options.passes=1", "options.max_rounds=1"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=200, help="CFR iterations (default 200)")
    parser.add_argument("--fights", type=int, default=200_000, help="fights to play the result in (default 200,000)")
    parser.add_argument("--out", type=Path, default=None, help="directory for the saved policies (default: a temporary one)")
    args = parser.parse_args()
    started = time.perf_counter()

    game = fight_spiel.load_game("d100_duel", ["Veteran", "Guard"], overrides=OVERRIDES)
    turn_based = pyspiel.convert_to_turn_based(game)
    print(f"game: {game}")

    solver = cfr.CFRSolver(turn_based)
    for iteration in range(1, args.iterations + 1):
        solver.evaluate_and_update_policy()
        if iteration in (1, 10, args.iterations):
            conv = exploitability.nash_conv(turn_based, solver.average_policy())
            print(f"CFR iteration {iteration:4d}: NashConv {conv:.6f}")
    average = solver.average_policy()
    cfr_value = expected_game_score.policy_value(turn_based.new_initial_state(), [average, average])[0]

    scenario = load(resolve("d100_duel")[0], OVERRIDES)
    exact = equilibrium(scenario, ["Veteran", "Guard"])
    print(f"value to the Veteran: CFR's average policy {cfr_value:+.6f}, combatsim solve's equilibrium "
          f"{exact.value:+.6f}")

    # CFR's average policy as combatsim tables: fights draw the mixed actions from the policy die;
    # the pure tables keep each state's most likely action
    out = args.out or Path(tempfile.mkdtemp(prefix="openspiel_cfr_"))
    out.mkdir(parents=True, exist_ok=True)
    for pure in (False, True):
        tables = {name: fight_spiel.table_policy(game, average, name, pure=pure, label=f"CFR {args.iterations}")
                  for name in ("Veteran", "Guard")}
        kind = "pure" if pure else "mixed"
        for name, table in tables.items():
            table.save(out / f"{name}-{kind}.npz")
        profile = fight_spiel.openspiel_policy(turn_based, tables)
        value = expected_game_score.policy_value(turn_based.new_initial_state(), [profile, profile])[0]
        results = play_fights(scenario_game(scenario), args.fights, 0, tables)
        reward = (results.wins[0] - results.wins[1]) / args.fights
        spread = np.sqrt((results.wins[0] + results.wins[1]) / args.fights - reward**2) / np.sqrt(args.fights)
        print(f"{kind} tables: value {value:+.6f} in OpenSpiel, exploitability "
              f"{exploitability.exploitability(turn_based, profile):.6f}; {args.fights:,} fights: "
              f"{reward:+.6f} +- {spread:.6f} ({(reward - value) / spread:+.1f} sigma)")
    print("the same in the command line:")
    print(f"  combatsim fight d100_duel --set {OVERRIDES[0]} --set {OVERRIDES[1]} "
          f"--policy Veteran=file:{out / 'Veteran-mixed.npz'} --policy Guard=file:{out / 'Guard-mixed.npz'}")
    print(f"{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
