"""d100: the percentile combat system (docs/d100.md). ``Attack`` is a prepared attack
(combatsim.d100.prepared), imported on first use so that importing a d100 module stays light."""

from combatsim.lazy import lazy_names

__getattr__, __dir__ = lazy_names(__name__, {"prepared": ("Attack",)})
