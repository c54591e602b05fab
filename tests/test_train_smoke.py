"""Training smoke tests with the libraries people use: Stable-Baselines3 and sb3-contrib.

Skipped where they are not installed; ``tox -e train`` installs them (``pip install
".[train]"`` in the clone, plus torch) and runs this file.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")
sb3_contrib = pytest.importorskip("sb3_contrib")

from sb3_contrib.common.maskable.utils import get_action_masks  # noqa: E402
from stable_baselines3.common.env_checker import check_env  # noqa: E402
from stable_baselines3.common.env_util import make_vec_env  # noqa: E402
from stable_baselines3.common.vec_env import SubprocVecEnv, VecEnv, VecMonitor  # noqa: E402

import combatsim.rl  # noqa: E402, F401  (registers combatsim/Fight-v0)
from combatsim.rl.fight_env import FightEnv  # noqa: E402
from combatsim.rl.sb3 import vec_env  # noqa: E402

SCENARIO, AGENT = "d100_duel", "Guard"


def test_maskable_ppo_trains_on_the_kernel_vec_env():
    env = vec_env(SCENARIO, AGENT, num_envs=16, backend="python")
    assert isinstance(env, VecEnv)
    model = sb3_contrib.MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=128, n_epochs=1, seed=3, device="cpu")
    model.learn(total_timesteps=1024)
    assert model.num_timesteps >= 1024
    # episodes reached SB3's statistics through info["episode"]
    assert len(model.ep_info_buffer) > 0 and {"r", "l"} <= model.ep_info_buffer[0].keys()
    assert all(info["r"] in (-1.0, 0.0, 1.0) for info in model.ep_info_buffer)
    obs = env.reset()
    masks = get_action_masks(env)
    assert masks.shape == (16, len(env.get_attr("action_names")[0])) and masks.dtype == np.bool_
    actions, _ = model.predict(obs, action_masks=masks, deterministic=True)
    assert masks[np.arange(16), actions].all()  # masked predictions are legal


def test_vec_monitor_over_the_adapter_counts_the_same_episodes():
    env = VecMonitor(vec_env(SCENARIO, AGENT, num_envs=8, backend="python"))
    env.seed(5)
    env.reset()
    episodes = 0
    for _ in range(40):
        _, rewards, dones, infos = env.step(np.ones(8, dtype=np.int64))
        for e in np.flatnonzero(dones):
            episodes += 1
            assert infos[e]["episode"]["r"] == rewards[e] and infos[e]["episode"]["l"] == infos[e]["outcome"]["steps"]
    assert episodes > 0


def test_make_vec_env_and_check_env():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env = make_vec_env("combatsim/Fight-v0", n_envs=2, seed=1,
                           env_kwargs={"scenario": SCENARIO, "agent": AGENT, "backend": "python"})
    assert any("render_mode 'rgb_array' is not supported" in str(w.message) for w in caught)
    obs = env.reset()
    assert obs.shape == (2, len(env.get_attr("observation_names")[0]))
    assert get_action_masks(env).shape == (2, len(env.get_attr("action_names")[0]))
    check_env(FightEnv(SCENARIO, AGENT, backend="python"))


@pytest.mark.parametrize(("env_id", "start_method"), [("combatsim/Fight-v0", None), ("combatsim/Fight-v0", "spawn"),
                                                     ("combatsim.rl:combatsim/Fight-v0", None)])
def test_subproc_vec_env_runs_the_single_envs(env_id, start_method):
    # the plain id, in processes that never import combatsim.rl themselves (spawn: fresh
    # interpreters): the installed .pth registers the ids where gymnasium is imported;
    # "combatsim.rl:..." imports the module in each new process first
    env = make_vec_env(env_id, n_envs=2, vec_env_cls=SubprocVecEnv, vec_env_kwargs={"start_method": start_method},
                       env_kwargs={"scenario": SCENARIO, "agent": AGENT, "backend": "python"})
    try:
        env.seed(7)
        obs = env.reset()
        single = FightEnv(SCENARIO, AGENT, backend="python")
        for e in range(2):
            np.testing.assert_array_equal(obs[e], single.reset(seed=7 + e)[0])
        masks = np.stack(env.env_method("action_masks"))
        assert masks.shape == (2, len(single.action_names))
    finally:
        env.close()


def documented_snippet(path: str) -> str:
    """The MaskablePPO snippet of a document (the python block that calls MaskablePPO)."""
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / path).read_text()
    blocks = [b for b in re.findall(r"```python\n(.*?)```", text, flags=re.S) if "MaskablePPO(" in b]
    assert len(blocks) == 1, f"{path}: {len(blocks)} MaskablePPO snippets"
    return blocks[0]


def test_the_documented_maskable_ppo_snippet_runs_with_train_sb3s_settings():
    from pathlib import Path

    snippet = documented_snippet("docs/training.md")
    assert documented_snippet("README.md") == snippet
    settings = "n_steps=128, batch_size=1024, n_epochs=4, gamma=0.99"
    example = (Path(__file__).resolve().parent.parent / "examples" / "train_sb3.py").read_text()
    assert settings in snippet and settings in example  # the settings the quoted results were trained with
    assert "total_timesteps=1_000_000" in snippet
    namespace: dict = {}
    exec(compile(snippet.replace("total_timesteps=1_000_000", "total_timesteps=2_048"), "snippet", "exec"),
         namespace)
    assert namespace["model"].num_timesteps >= 2_048 and len(namespace["model"].ep_info_buffer) > 0


def test_the_training_examples_save_new_weights_beside_the_shipped_ones(tmp_path):
    import hashlib
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    examples = Path(__file__).resolve().parent.parent / "examples"
    copy = tmp_path / "examples"
    shutil.copytree(examples, copy, ignore=shutil.ignore_patterns("trained", "__pycache__"))
    shipped = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in (copy / "policies").glob("*.npz")}
    for script, args in (("train_sb3.py", ["--minutes", "0.02", "--envs", "8"]),
                         ("selfplay.py", ["--minutes", "0.02", "--envs", "16", "--steps", "4"])):
        done = subprocess.run([sys.executable, str(copy / script), *args], capture_output=True, text=True,
                              timeout=300, cwd=copy)
        assert done.returncode == 0, done.stderr[-2000:]
    assert sorted(p.name for p in (copy / "trained").glob("*.npz")) == ["sb3_d100_veteran.npz", "selfplay_d100.npz"]
    assert {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in (copy / "policies").glob("*.npz")} == shipped
    sys.path.insert(0, str(copy))
    shipped_module = sys.modules.pop("mlp_policy", None)  # another test's import of examples/mlp_policy.py
    try:
        import importlib

        mlp_policy = importlib.import_module("mlp_policy")
        import combatsim.rl

        env = combatsim.rl.FightVectorEnv(4, scenario="d100_duel", agent="Veteran")
        obs, info = env.reset(seed=0)
        actions = mlp_policy.trained_sb3_veteran(obs, info["action_mask"])
        assert info["action_mask"][np.arange(4), actions].all()
    finally:
        sys.path.remove(str(copy))
        sys.modules.pop("mlp_policy", None)
        if shipped_module is not None:
            sys.modules["mlp_policy"] = shipped_module
