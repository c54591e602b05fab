"""The two-member zero-sum fight: a matrix game in each state, solved backward.

Where the rules make two members' choices simultaneous (d100 declarations), each (step, state)
is a zero-sum matrix game: A's reward for each pair of legal actions is the step's expected
reward plus the value of where it leads. Each game is first reduced (one-action sides; rows and
columns weakly dominated by another, which keeps the value and an equilibrium); a game with a
saddle point is solved in pure actions; the rest by linear programming (scipy's linprog, HiGHS).

Every value carries a certified interval: with A's mix x and B's mix y, A gets at least
min_b (x M)_b and at most max_a (M y)_a, and computing M from the next step's lower (upper)
values bounds those in turn, so the interval holds whatever the LP's tolerance; its width, plus
the float64 rounding bound, is the error bound reported.
"""

from __future__ import annotations

import numpy as np

from combatsim.solve.induction import Progress, Walk, group_starts

#: A game up to this tolerance of a saddle point is solved in pure actions.
SADDLE = 1e-13


def _linprog():
    try:
        from scipy.optimize import linprog
    except ImportError:
        from combatsim.extras import install_hint

        raise ValueError(f"agents: solving the game between two members needs the solve extra (scipy): "
                         f"{install_hint('solve')}") from None
    return linprog


def reduce_game(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows and columns left after removing, again and again, a row weakly dominated by
    another (A maximises) or a column weakly dominating another (B minimises)."""
    rows = np.arange(matrix.shape[0])
    cols = np.arange(matrix.shape[1])
    changed = True
    while changed and (len(rows) > 1 or len(cols) > 1):
        changed = False
        sub = matrix[np.ix_(rows, cols)]
        for i in range(len(rows)):
            others = np.delete(np.arange(len(rows)), i)
            if len(others) and (sub[others] >= sub[i]).all(axis=1).any():
                rows = np.delete(rows, i)
                changed = True
                break
        if changed:
            continue
        for j in range(len(cols)):
            others = np.delete(np.arange(len(cols)), j)
            if len(others) and (sub[:, others] <= sub[:, [j]]).all(axis=0).any():
                cols = np.delete(cols, j)
                changed = True
                break
    return rows, cols


def solve_game(matrix: np.ndarray, counter: dict) -> tuple[float, np.ndarray, np.ndarray]:
    """(value, A's mix, B's mix) of the zero-sum game ``matrix`` (A, the rows, maximises). A game
    with a one-action side always has a saddle point, solved in pure actions."""
    x = np.zeros(matrix.shape[0])
    y = np.zeros(matrix.shape[1])
    rows, cols = reduce_game(matrix)
    sub = matrix[np.ix_(rows, cols)]
    row_worst = sub.min(axis=1)
    col_best = sub.max(axis=0)
    i, j = int(np.argmax(row_worst)), int(np.argmin(col_best))
    if col_best[j] - row_worst[i] <= SADDLE:
        x[rows[i]] = y[cols[j]] = 1.0
        counter["one-sided" if min(matrix.shape) == 1 else "pure"] += 1
        return float(sub[i, j]), x, y
    counter["linear program"] += 1
    k, n_cols = sub.shape
    # maximise v subject to (x sub)_b >= v for every b, sum x = 1, x >= 0
    result = _linprog()(
        c=np.r_[np.zeros(k), -1.0], A_ub=np.c_[-sub.T, np.ones(n_cols)], b_ub=np.zeros(n_cols),
        A_eq=np.r_[np.ones(k), 0.0][None, :], b_eq=[1.0], bounds=[(0, None)] * k + [(None, None)], method="highs")
    if result.status != 0:
        raise RuntimeError(f"linprog failed on a {k}x{n_cols} matrix game: {result.message}")
    mix = np.clip(result.x[:k], 0, None)
    duals = np.clip(-np.asarray(result.ineqlin.marginals), 0, None)
    x[rows] = mix / mix.sum()
    y[cols] = duals / duals.sum() if duals.sum() > 0 else 1.0 / n_cols
    return float(-result.fun), x, y


def equilibrium_values(walk: Walk, first: int, progress: Progress) -> tuple[list[np.ndarray], list, np.ndarray,
                                                                              np.ndarray, np.ndarray, dict]:
    """Backward over the matrix games of ``walk`` (deciders: ``first``, then its opponent):
    per step, the joint options' probabilities and each state's mixes ({state: (A's actions,
    A's mix, B's actions, B's mix)}); the values before the first step, and their lower and
    upper bounds; how many games each method solved."""
    chain = walk.chain
    side = chain.game.member_sides[first]
    rows = walk.rows
    ended_value = rows.ended_value(side)
    size = walk.states
    values, low, high = np.zeros(size), np.zeros(size), np.zeros(size)
    weights: list[np.ndarray] = [np.zeros(0)] * chain.horizon
    mixes: list = [None] * chain.horizon
    counter = {"one-sided": 0, "pure": 0, "linear program": 0}
    for t in reversed(range(chain.horizon)):
        progress(f"the games before step {t + 1}")
        options = walk.options[t]
        q = (ended_value + rows.expected(values))[options.row]
        q_low = (ended_value + rows.expected(low))[options.row]
        q_high = (ended_value + rows.expected(high))[options.row]
        starts = group_starts(options.state)
        counts = np.diff(np.r_[starts, len(q)])
        a_counts = np.array([len(np.unique(options.actions[start:start + count, 0]))
                             for start, count in zip(starts.tolist(), counts.tolist(), strict=True)], dtype=np.int64)
        w = np.zeros(len(q))
        new_values, new_low, new_high = np.zeros(size), np.zeros(size), np.zeros(size)
        step_mixes = {}
        # the games of one shape at once: a saddle point (maximin = minimax) is the pure solution
        for la, count in sorted({(int(a), int(c)) for a, c in zip(a_counts, counts, strict=True)}):
            lb = count // la
            groups = np.flatnonzero((a_counts == la) & (counts == count))
            index = starts[groups][:, None] + np.arange(count)
            games = q[index].reshape(len(groups), la, lb)
            row_worst = games.min(axis=2)
            col_best = games.max(axis=1)
            i = row_worst.argmax(axis=1)
            j = col_best.argmin(axis=1)
            g = np.arange(len(groups))
            saddle = col_best[g, j] - row_worst[g, i] <= SADDLE
            counter["one-sided" if la == 1 or lb == 1 else "pure"] += int(saddle.sum())
            states = options.state[starts[groups]]
            new_values[states[saddle]] = games[g, i, j][saddle]
            new_low[states[saddle]] = q_low[index].reshape(games.shape)[g, i, :].min(axis=1)[saddle]
            new_high[states[saddle]] = q_high[index].reshape(games.shape)[g, :, j].max(axis=1)[saddle]
            w[starts[groups][saddle] + i[saddle] * lb + j[saddle]] = 1.0
            for k in range(len(groups)):
                start, state = int(starts[groups[k]]), int(states[k])
                if saddle[k]:
                    x, y = np.eye(la)[i[k]], np.eye(lb)[j[k]]
                else:
                    value, x, y = solve_game(games[k], counter)
                    new_values[state] = value
                    new_low[state] = (x @ q_low[start:start + count].reshape(la, lb)).min()
                    new_high[state] = (q_high[start:start + count].reshape(la, lb) @ y).max()
                    w[start:start + count] = np.outer(x, y).ravel()
                step_mixes[state] = (options.actions[start:start + count:lb, 0], x, options.actions[start:start + lb, 1], y)
        values, low, high = new_values, new_low, new_high
        weights[t] = w
        mixes[t] = step_mixes
    return weights, mixes, values, low, high, counter
