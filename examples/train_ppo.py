"""Train one member of a scenario with PPO, then compare it with random play.

Uses ``combatsim/Fight-v0``'s vector environment (one engine call steps every fight): the named
member is the agent, every other member plays its scripted policy. To stay dependency-free the
learner is a small numpy actor-critic trained with PPO's clipped objective: a one-hidden-layer
tanh MLP over the observation, illegal actions masked out of the softmax. With sb3-contrib
installed you can swap in ``MaskablePPO`` on ``gymnasium.make("combatsim/Fight-v0",
scenario=..., agent=...)`` (the env has ``action_masks()``).

    python examples/train_ppo.py --scenario d100_duel --agent Veteran --seconds 120

The scenario is an example's name or a scenario file; the agent defaults to the first member of
the first side. Prints the win and loss rates of the trained policy and of uniform random legal
play, over the same evaluation fights.
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym
import numpy as np

import combatsim.rl  # noqa: F401  (registers combatsim/Fight-v0)
from combatsim.game import scenario_game


class Policy:
    """Masked-softmax MLP actor with a linear-on-hidden critic; Adam by hand."""

    def __init__(self, obs_size: int, n_actions: int, hidden: int, rng: np.random.Generator) -> None:
        self.params = {
            "w1": rng.normal(0, 1 / np.sqrt(obs_size), (obs_size, hidden)),
            "b1": np.zeros(hidden),
            "w2": rng.normal(0, 0.01, (hidden, n_actions)),
            "b2": np.zeros(n_actions),
            "wv": np.zeros(hidden),
            "bv": np.zeros(1),
        }
        self.moments = {k: (np.zeros_like(v), np.zeros_like(v)) for k, v in self.params.items()}
        self.steps = 0

    def forward(self, obs: np.ndarray, mask: np.ndarray):
        p = self.params
        hidden = np.tanh(obs @ p["w1"] + p["b1"])
        logits = hidden @ p["w2"] + p["b2"]
        logits = np.where(mask, logits, -1e9)
        logits -= logits.max(axis=1, keepdims=True)
        probs = np.exp(logits)
        probs /= probs.sum(axis=1, keepdims=True)
        value = hidden @ p["wv"] + p["bv"][0]
        return hidden, probs, value

    def act(self, obs, mask, rng):
        _, probs, value = self.forward(obs, mask)
        cumulative = probs.cumsum(axis=1)
        actions = (rng.random((obs.shape[0], 1)) > cumulative).sum(axis=1)
        actions = np.minimum(actions, probs.shape[1] - 1)
        return actions, probs[np.arange(len(actions)), actions], value

    def update(self, obs, mask, actions, old_prob, advantages, returns, lr=3e-3, clip=0.2, value_coef=0.5, entropy=0.01):
        p = self.params
        hidden, probs, value = self.forward(obs, mask)
        n = obs.shape[0]
        index = np.arange(n)
        ratio = probs[index, actions] / old_prob
        # d(-clipped objective)/d ratio: only where the unclipped term is the minimum.
        unclipped = ratio * advantages
        clipped = np.clip(ratio, 1 - clip, 1 + clip) * advantages
        active = (unclipped <= clipped).astype(float)
        d_logp = -(active * ratio * advantages) / n
        # d log p(a) / d logits = onehot(a) - probs; entropy gradient on logits.
        d_logits = -probs * d_logp[:, None]
        d_logits[index, actions] += d_logp
        log_probs = np.log(np.maximum(probs, 1e-12))
        ent_grad = probs * (log_probs + (probs * log_probs).sum(axis=1, keepdims=True) * -1)  # d(-H)/dlogits
        d_logits += entropy * ent_grad / n * np.where(mask, 1.0, 0.0)
        d_value = value_coef * 2 * (value - returns) / n
        grads = {
            "w2": hidden.T @ d_logits,
            "b2": d_logits.sum(axis=0),
            "wv": hidden.T @ d_value,
            "bv": np.array([d_value.sum()]),
        }
        d_hidden = (d_logits @ p["w2"].T + np.outer(d_value, p["wv"])) * (1 - hidden**2)
        grads["w1"] = obs.T @ d_hidden
        grads["b1"] = d_hidden.sum(axis=0)
        self.steps += 1
        for key, grad in grads.items():
            m, v = self.moments[key]
            m[...] = 0.9 * m + 0.1 * grad
            v[...] = 0.999 * v + 0.001 * grad**2
            m_hat = m / (1 - 0.9**self.steps)
            v_hat = v / (1 - 0.999**self.steps)
            p[key] -= lr * m_hat / (np.sqrt(v_hat) + 1e-8)


def evaluate(make, choose, episodes: int, seed: int) -> tuple[float, float]:
    """(win rate, loss rate) of ``choose`` over the first fight of ``episodes`` envs."""
    env = make(episodes)
    obs, info = env.reset(seed=seed)
    done = np.zeros(episodes, dtype=bool)
    wins = np.zeros(episodes, dtype=bool)
    losses = np.zeros(episodes, dtype=bool)
    while not done.all():
        actions = choose(obs, info["action_mask"].astype(bool))
        obs, reward, terminated, truncated, info = env.step(actions)
        new = ~done & (terminated | truncated)
        wins |= new & (reward > 0.5)
        losses |= new & (reward < -0.5)
        done |= new
    return wins.mean(), losses.mean()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scenario", default="d100_duel", help="an example's name or a scenario file")
    parser.add_argument("--agent", help="the member to train (default: the first member of the first side)")
    parser.add_argument("--seconds", type=float, default=120.0, help="training time budget")
    parser.add_argument("--envs", type=int, default=128)
    parser.add_argument("--horizon", type=int, default=64)
    parser.add_argument("--eval-episodes", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    game = scenario_game(args.scenario)
    agent = args.agent if args.agent is not None else game.member_names[0]

    def make(num_envs: int):
        # SAME_STEP autoreset: every step plays a move, so a rollout holds no reset steps to skip
        return gym.make_vec("combatsim/Fight-v0", num_envs=num_envs, vectorization_mode="vector_entry_point",
                            scenario=game, agent=agent, autoreset_mode=gym.vector.AutoresetMode.SAME_STEP)

    rng = np.random.default_rng(args.seed)
    env = make(args.envs)
    policy = Policy(env.single_observation_space.shape[0], env.single_action_space.n, 64, rng)
    obs, info = env.reset(seed=args.seed)
    mask = info["action_mask"].astype(bool)
    gamma, lam = 0.99, 0.95
    start = time.perf_counter()
    updates = 0
    steps = 0
    while time.perf_counter() - start < args.seconds:
        batch = {k: [] for k in ("obs", "mask", "actions", "prob", "value", "reward", "done")}
        for _ in range(args.horizon):
            actions, prob, value = policy.act(obs, mask, rng)
            batch["obs"].append(obs)
            batch["mask"].append(mask)
            batch["actions"].append(actions)
            batch["prob"].append(prob)
            batch["value"].append(value)
            # a step that ends a fight returns the next fight's first observation (SAME_STEP autoreset)
            obs, reward, terminated, truncated, info = env.step(actions)
            mask = info["action_mask"].astype(bool)
            batch["reward"].append(reward)
            batch["done"].append(terminated | truncated)
            steps += args.envs
        _, _, next_value = policy.forward(obs, mask)
        rewards = np.array(batch["reward"])
        dones = np.array(batch["done"])
        values = np.array(batch["value"])
        advantages = np.zeros_like(rewards)
        running = np.zeros(args.envs)
        for t in range(args.horizon - 1, -1, -1):
            delta = rewards[t] + gamma * next_value * (1 - dones[t]) - values[t]
            running = delta + gamma * lam * (1 - dones[t]) * running
            advantages[t] = running
            next_value = values[t]
        returns = advantages + values
        flat = {
            "obs": np.array(batch["obs"]).reshape(-1, obs.shape[1]),
            "mask": np.array(batch["mask"]).reshape(-1, mask.shape[1]),
            "actions": np.array(batch["actions"]).reshape(-1),
            "prob": np.array(batch["prob"]).reshape(-1),
            "adv": advantages.reshape(-1),
            "ret": returns.reshape(-1),
        }
        flat["adv"] = (flat["adv"] - flat["adv"].mean()) / (flat["adv"].std() + 1e-8)
        for _ in range(4):
            order = rng.permutation(len(flat["actions"]))
            for chunk in np.array_split(order, 4):
                policy.update(flat["obs"][chunk], flat["mask"][chunk], flat["actions"][chunk], flat["prob"][chunk],
                              flat["adv"][chunk], flat["ret"][chunk])
        updates += 1
    elapsed = time.perf_counter() - start
    print(f"{args.scenario}, agent {agent}: trained {elapsed:.0f} s, {steps:,} env steps, {updates} PPO updates")

    def greedy(obs, mask):
        _, probs, _ = policy.forward(obs, mask)
        return probs.argmax(axis=1)

    eval_rng = np.random.default_rng(12345)

    def uniform(obs, mask):
        scores = np.where(mask, eval_rng.random(mask.shape), -1.0)
        return scores.argmax(axis=1)

    for name, choose in (("trained policy", greedy), ("random play", uniform)):
        win, loss = evaluate(make, choose, args.eval_episodes, seed=10**6)
        print(f"  {name:15s} win {win:6.1%}  loss {loss:6.1%}  ({args.eval_episodes} fights)")


if __name__ == "__main__":
    main()
