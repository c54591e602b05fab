# cython: language_level=3
"""The RL family of the kernel registry, Cython backend (thin wrappers over <ruleset>_cy)."""
from combatsim.kernels.rl import d100_cy as _d100
from combatsim.kernels.rl import exp_cy as _exp
from combatsim.kernels.rl import tss_cy as _tss


def exp_duels(seed, start, count, iparams, policies, shaping, counts, outcome_out):
    _exp.exp_duels(seed, start, count, iparams, policies, shaping, counts, outcome_out)


def d100_duels(seed, start, count, iparams, policies, shaping, counts, outcome_out):
    _d100.d100_duels(seed, start, count, iparams, policies, shaping, counts, outcome_out)


def tss_duels(seed, start, count, iparams, policies, shaping, counts, outcome_out):
    _tss.tss_duels(seed, start, count, iparams, policies, shaping, counts, outcome_out)
