"""Self-play PPO in one file (PyTorch, CleanRL style) on combatsim.rl.vector_parallel_env.

    pip install torch ".[rl]"
    python examples/selfplay.py --minutes 3
    cd examples && combatsim fight d100_duel -n 1e6 --policy "Guard=mlp_policy:trained_selfplay"

One policy learns both members of examples/d100_duel.toml (the Veteran and the Guard) by playing
snapshots of itself: in half of the ``--envs`` fights it is the Veteran, in the other half the
Guard, and the other member is played by a snapshot drawn from a pool (the newest half the time).
Every fight of every env is stepped by one engine call. The actor's weights are saved to
examples/trained/selfplay_d100.npz (or ``--out``), which examples/mlp_policy.py plays with NumPy
alone (``trained_selfplay``); the shipped weights in examples/policies/, which the docs measure,
are written over only with ``--replace-shipped``.
"""

from __future__ import annotations

import argparse
import copy
import random
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

from combatsim.rl import vector_parallel_env

OUT = Path(__file__).resolve().parent / "trained" / "selfplay_d100.npz"
SHIPPED = Path(__file__).resolve().parent / "policies" / "selfplay_d100.npz"


def mlp(inputs: int, outputs: int, hidden: int = 64, last_std: float = 0.01) -> nn.Sequential:
    layers = [nn.Linear(inputs, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(), nn.Linear(hidden, outputs)]
    for layer in layers[::2]:
        nn.init.orthogonal_(layer.weight, np.sqrt(2) if layer is not layers[-1] else last_std)
        nn.init.zeros_(layer.bias)
    return nn.Sequential(*layers)


class Agent(nn.Module):
    def __init__(self, observations: int, actions: int) -> None:
        super().__init__()
        self.actor = mlp(observations, actions)
        self.critic = mlp(observations, 1, last_std=1.0)

    def distribution(self, obs: torch.Tensor, masks: torch.Tensor) -> torch.distributions.Categorical:
        logits = self.actor(obs).masked_fill(~masks, -1e8)  # masked actions are never drawn
        return torch.distributions.Categorical(logits=logits)

    def act(self, obs: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
        return self.distribution(obs, masks).sample()


def save_actor(agent: Agent, path: Path, observation_names, action_names) -> None:
    """w0, b0, w1, b1, ... of the actor, for mlp_policy.py."""
    linear = [m for m in agent.actor if isinstance(m, nn.Linear)]
    arrays = {}
    for k, layer in enumerate(linear):
        arrays[f"w{k}"] = layer.weight.detach().numpy()
        arrays[f"b{k}"] = layer.bias.detach().numpy()
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, observation_names=np.array(observation_names), action_names=np.array(action_names), **arrays)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="d100_duel")
    parser.add_argument("--envs", type=int, default=512)
    parser.add_argument("--steps", type=int, default=32, help="steps per env per rollout")
    parser.add_argument("--minutes", type=float, default=3.0)
    parser.add_argument("--snapshot-every", type=int, default=10, help="rollouts between snapshots")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None, help="default: examples/trained/selfplay_d100.npz, "
                        "which mlp_policy.py plays as trained_selfplay")
    parser.add_argument("--replace-shipped", action="store_true",
                        help="save over the shipped weights in examples/policies/ (the ones the docs measure)")
    args = parser.parse_args()
    if args.out is not None and args.replace_shipped:
        parser.error("--out and --replace-shipped name two places; give one")
    args.out = args.out or (SHIPPED if args.replace_shipped else OUT)

    random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    env = vector_parallel_env(args.scenario, num_envs=args.envs)
    assert len(env.possible_agents) == 2, "this example plays 1-against-1 scenarios"
    n, d, a = args.envs, len(env.observation_names), len(env.action_names)
    agent = Agent(d, a)
    optimizer = torch.optim.Adam(agent.parameters(), lr=2.5e-4, eps=1e-5)
    pool = [copy.deepcopy(agent.actor)]
    rows = torch.arange(n)
    learner = torch.arange(n) % 2  # the agent slot the learner plays in each env
    gamma, lam, clip, epochs, minibatches = 0.99, 0.95, 0.2, 4, 4

    shape = (args.steps, n)
    obs_buf = torch.zeros((*shape, d))
    mask_buf = torch.zeros((*shape, a), dtype=torch.bool)
    action_buf = torch.zeros(shape, dtype=torch.long)
    logprob_buf, reward_buf, done_buf, value_buf = (torch.zeros(shape) for _ in range(4))

    obs, infos = env.reset(seed=args.seed)
    obs, masks = torch.from_numpy(obs), torch.from_numpy(infos["action_mask"] > 0)
    done = torch.zeros(n)
    start, rollouts, agent_steps, returns = time.monotonic(), 0, 0, []
    while time.monotonic() - start < args.minutes * 60:
        opponent = pool[-1] if random.random() < 0.5 else random.choice(pool)
        for t in range(args.steps):
            own_obs, own_masks = obs[rows, learner], masks[rows, learner]
            foe_obs, foe_masks = obs[rows, 1 - learner], masks[rows, 1 - learner]
            with torch.no_grad():
                dist = agent.distribution(own_obs, own_masks)
                action = dist.sample()
                value_buf[t] = agent.critic(own_obs).squeeze(1)
                foe_action = torch.distributions.Categorical(
                    logits=opponent(foe_obs).masked_fill(~foe_masks, -1e8)).sample()
            obs_buf[t], mask_buf[t], action_buf[t], done_buf[t] = own_obs, own_masks, action, done
            logprob_buf[t] = dist.log_prob(action)
            actions = torch.zeros((n, 2), dtype=torch.long)
            actions[rows, learner], actions[rows, 1 - learner] = action, foe_action
            obs, rewards, terminated, truncated, infos = env.step(actions.numpy())
            ended = terminated | truncated
            reward_buf[t] = torch.from_numpy(rewards[np.arange(n), learner.numpy()]).float()
            done = torch.from_numpy(ended).float()
            obs, masks = torch.from_numpy(obs), torch.from_numpy(infos["action_mask"] > 0)
            returns.extend(reward_buf[t][done > 0].tolist())
        agent_steps += 2 * n * args.steps

        # generalised advantage estimation (an ended fight's next observation starts a new one)
        with torch.no_grad():
            next_value = agent.critic(obs[rows, learner]).squeeze(1)
        advantages = torch.zeros(shape)
        last = torch.zeros(n)
        for t in reversed(range(args.steps)):
            next_nonterminal = 1.0 - (done if t == args.steps - 1 else done_buf[t + 1])
            following = next_value if t == args.steps - 1 else value_buf[t + 1]
            delta = reward_buf[t] + gamma * following * next_nonterminal - value_buf[t]
            last = delta + gamma * lam * next_nonterminal * last
            advantages[t] = last
        targets = advantages + value_buf

        # the clipped PPO objective, a few epochs over shuffled minibatches
        b_obs, b_masks, b_actions = obs_buf.reshape(-1, d), mask_buf.reshape(-1, a), action_buf.reshape(-1)
        b_logprobs, b_adv, b_targets = logprob_buf.reshape(-1), advantages.reshape(-1), targets.reshape(-1)
        size = len(b_obs) // minibatches
        for _ in range(epochs):
            for batch in torch.randperm(len(b_obs)).split(size):
                dist = agent.distribution(b_obs[batch], b_masks[batch])
                ratio = (dist.log_prob(b_actions[batch]) - b_logprobs[batch]).exp()
                adv = (b_adv[batch] - b_adv[batch].mean()) / (b_adv[batch].std() + 1e-8)
                policy_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - clip, 1 + clip)).mean()
                value_loss = 0.5 * ((agent.critic(b_obs[batch]).squeeze(1) - b_targets[batch]) ** 2).mean()
                loss = policy_loss + 0.5 * value_loss - 0.01 * dist.entropy().mean()
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
                optimizer.step()
        rollouts += 1
        if rollouts % args.snapshot_every == 0:
            pool.append(copy.deepcopy(agent.actor))
            recent = returns[-2000:]
            print(f"{time.monotonic() - start:6.0f} s  {agent_steps:,} agent-steps  snapshots {len(pool)}  "
                  f"learner's mean return {np.mean(recent) if recent else 0:+.3f}", flush=True)

    print(f"trained {agent_steps:,} agent-steps in {time.monotonic() - start:.0f} s")
    save_actor(agent, args.out, env.observation_names, env.action_names)
    print(f"saved {args.out}")
    from mlp_policy import MlpPolicy

    from combatsim.solve import best_response_share, share_report

    for member in env.agents:
        print(share_report(member, best_response_share(args.scenario, member, MlpPolicy(args.out))))


if __name__ == "__main__":
    main()
