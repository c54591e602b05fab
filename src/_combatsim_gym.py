"""combatsim's Gymnasium ids, registered in every process that imports Gymnasium.

Gymnasium 1.x has no plugin mechanism: an id is known only in a process that ran its ``register``
call. A process started with ``spawn`` (SubprocVecEnv, AsyncVectorEnv, the default start method on
macOS and Windows) imports the script's top level and what unpickling its env functions needs,
``gymnasium``, but not ``combatsim.rl`` when the script imported that late. So combatsim installs
``_combatsim_gym.pth``, whose one line runs ``install()`` at interpreter startup: it puts a finder
at the front of ``sys.meta_path`` that finds nothing itself. When ``gymnasium.envs.registration``
is first imported, the finder lets the other finders locate it and registers the ids right after
the module has run, with entry points as strings, so nothing of combatsim is imported until an
env is made. A process that never imports Gymnasium pays one string comparison per import.

It runs in every interpreter of the environment: it imports nothing at startup but ``sys``.
"""

import sys

#: Any scenario, one member the agent (combatsim.rl.fight_env); see docs/rl.md.
FIGHT_ENV_ID = "combatsim/Fight-v0"
#: ruleset -> (env id, example scenario, its agent: the first member of side 0). Each id is
#: Fight-v0 with these defaults; ``agent=``, ``backend=`` and ``render_mode=`` still apply.
EXAMPLE_ENVS = {
    "exp": ("combatsim/ExpDuel-v0", "exp_bob_too", "Bob Too"),
    "d100": ("combatsim/D100Duel-v0", "d100_duel", "Veteran"),
    "tss": ("combatsim/TssDuel-v0", "tss_alex_vs_thug", "Alex"),
}
ENTRY_POINTS = {"entry_point": "combatsim.rl.fight_env:FightEnv",
                "vector_entry_point": "combatsim.rl.fight_vector:FightVectorEnv"}

_REGISTRATION = "gymnasium.envs.registration"


def register_ids(registration) -> None:
    """Register the ids not yet in ``registration.registry`` (``registration``: Gymnasium's
    ``gymnasium.envs.registration`` module, or ``gymnasium`` itself)."""
    specs = [(FIGHT_ENV_ID, {})] + [(env_id, {"scenario": example, "agent": agent})
                                    for env_id, example, agent in EXAMPLE_ENVS.values()]
    for env_id, kwargs in specs:
        if env_id not in registration.registry:
            registration.register(id=env_id, kwargs=kwargs, **ENTRY_POINTS)


class _RegisteringLoader:
    """Runs the wrapped loader's module, then registers the ids in it; the module keeps the
    original loader (``__loader__``, ``__spec__.loader``), so nothing else sees this one."""

    def __init__(self, loader) -> None:
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module) -> None:
        module.__loader__ = self.loader
        module.__spec__.loader = self.loader
        self.loader.exec_module(module)
        try:
            register_ids(module)
        except Exception as problem:  # a Gymnasium this module does not know must still import
            import warnings

            warnings.warn(f"combatsim could not register its Gymnasium ids ({type(problem).__name__}: {problem}); "
                          "import combatsim.rl to register them", RuntimeWarning, stacklevel=2)


class RegisterOnGymnasiumImport:
    """The ``sys.meta_path`` finder that ``install()`` adds (see the module's docstring)."""

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name != _REGISTRATION:
            return None
        for finder in sys.meta_path:
            if finder is cls or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _RegisteringLoader(spec.loader)
                return spec
        return None


def install() -> None:
    """Register the ids once Gymnasium is imported in this process (now, if it already is)."""
    if _REGISTRATION in sys.modules:
        register_ids(sys.modules[_REGISTRATION])
    elif RegisterOnGymnasiumImport not in sys.meta_path:
        sys.meta_path.insert(0, RegisterOnGymnasiumImport)
