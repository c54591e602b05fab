"""Step kernels of the reinforcement-learning duels (one module per ruleset and backend)."""
