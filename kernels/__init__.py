"""Compiled hot loops: one folder per ruleset, its Numba module (``_nb.py``) and its Cython module
(``_cy.pyx``) side by side. Import kernels through :mod:`combatsim.registry`, never directly."""
