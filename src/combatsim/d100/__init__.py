"""d100: the percentile combat system (d100-combat-math.txt). ``Attack`` is a prepared attack
(combatsim.d100.prepared), imported on first use so that importing a d100 module stays light."""


def __getattr__(name: str):
    if name == "Attack":
        from combatsim.d100.prepared import Attack

        return Attack
    raise AttributeError(f"module 'combatsim.d100' has no attribute {name!r}")
