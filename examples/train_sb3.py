"""Train an opponent with sb3-contrib's MaskablePPO on a scenario, through combatsim.rl.sb3.

    pip install torch        # your platform's build (CPU is enough)
    pip install ".[train]"   # stable-baselines3, sb3-contrib
    python examples/train_sb3.py --minutes 3
    cd examples && combatsim fight d100_duel -n 1e6 --policy "Veteran=mlp_policy:trained_sb3_veteran"

The Veteran of examples/d100_duel.toml learns against the Guard's scripted policy. All
``--envs`` fights are stepped by one engine call (``vec_env``); MaskablePPO reads the engine's
action masks. The actor's weights are saved to examples/trained/sb3_d100_veteran.npz (or
``--out``), which examples/mlp_policy.py plays with NumPy alone (``trained_sb3_veteran``); the
shipped weights in examples/policies/, which the docs measure, are written over only with
``--replace-shipped``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback

from combatsim import scenario
from combatsim.rl.sb3 import vec_env

POLICIES = Path(__file__).resolve().parent / "policies"
TRAINED = Path(__file__).resolve().parent / "trained"


class StopAfter(BaseCallback):
    """Stops training once ``seconds`` of wall time have passed."""

    def __init__(self, seconds: float) -> None:
        super().__init__()
        self.deadline = time.monotonic() + seconds

    def _on_step(self) -> bool:
        return time.monotonic() < self.deadline


def save_actor(model: MaskablePPO, path: Path, observation_names, action_names) -> None:
    """The actor (policy MLP, then the action head) as w0, b0, w1, b1, ... for mlp_policy.py."""
    policy = model.policy
    layers = [m for m in policy.mlp_extractor.policy_net if isinstance(m, torch.nn.Linear)] + [policy.action_net]
    arrays = {}
    for k, layer in enumerate(layers):
        arrays[f"w{k}"] = layer.weight.detach().cpu().numpy()
        arrays[f"b{k}"] = layer.bias.detach().cpu().numpy()
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, observation_names=np.array(observation_names), action_names=np.array(action_names), **arrays)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="d100_duel")
    parser.add_argument("--agent", default="Veteran")
    parser.add_argument("--envs", type=int, default=64)
    parser.add_argument("--minutes", type=float, default=3.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, help="default: examples/trained/sb3_<ruleset>_<agent>.npz, which "
                        "mlp_policy.py plays (trained_sb3_veteran: sb3_d100_veteran.npz)")
    parser.add_argument("--replace-shipped", action="store_true",
                        help="save over the shipped weights in examples/policies/ (the ones the docs measure)")
    args = parser.parse_args()
    if args.out is not None and args.replace_shipped:
        parser.error("--out and --replace-shipped name two places; give one")

    torch.set_num_threads(1)
    env = vec_env(args.scenario, args.agent, num_envs=args.envs)
    model = MaskablePPO("MlpPolicy", env, n_steps=128, batch_size=1024, n_epochs=4, gamma=0.99,
                        learning_rate=3e-4, ent_coef=0.01, seed=args.seed, device="cpu", verbose=0)
    start = time.monotonic()
    model.learn(total_timesteps=10**9, callback=StopAfter(args.minutes * 60))
    seconds = time.monotonic() - start
    rewards = [info["r"] for info in model.ep_info_buffer]
    print(f"trained {model.num_timesteps:,} steps in {seconds:.0f} s; mean return of the last "
          f"{len(rewards)} episodes {np.mean(rewards):+.3f}")
    ruleset = scenario.load(scenario.resolve(args.scenario)[0]).ruleset
    name = f"sb3_{ruleset}_{args.agent.lower().replace(' ', '_')}.npz"
    out = args.out or (POLICIES if args.replace_shipped else TRAINED) / name
    save_actor(model, out, env.get_attr("observation_names")[0], env.get_attr("action_names")[0])
    print(f"saved {out}")
    if ruleset == "d100":  # the rulesets combatsim solve covers
        from mlp_policy import MlpPolicy

        from combatsim.solve import best_response_share, share_report

        print(share_report(args.agent, best_response_share(args.scenario, args.agent, MlpPolicy(out))))


if __name__ == "__main__":
    main()
