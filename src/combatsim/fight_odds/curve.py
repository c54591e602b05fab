"""Balance curves: a fight's odds over the values of one scenario field (``curve fight --vary``).

The field is named by the path ``--set`` takes (combatsim.scenario.apply_override). Every value is
applied and the whole scenario validated before any odds are computed, so a bad path, step or
value is one error and no work. Each point is exact where ``fight_odds`` can compute it and
simulated otherwise; the point says which.
"""

from __future__ import annotations

import copy
import re
import textwrap

from combatsim.fight_odds import DEFAULT_MAX_STATES, TooManyStates, check_scenario, fight_odds
from combatsim.scenario import Scenario, ScenarioError, apply_override, parse_path, parse_value, schema, validate
from combatsim.validation import brief, parse_number

MAX_POINTS = 1000
#: Fights simulated for a point too large for exact odds.
DEFAULT_FIGHTS = 100_000


def parse_vary(text: str) -> tuple[str, list[object]]:
    """``PATH=start:stop:step`` (stop included; integers or decimals) or ``PATH=v1,v2,...`` ->
    (path, values); at most ``MAX_POINTS`` values."""
    if not isinstance(text, str):
        raise TypeError(f"vary must be a string PATH=start:stop:step or PATH=v1,v2,... such as "
                        f"sides[0].members[0].armour_rating=500:700:10, got {type(text).__name__}")
    path, equals, spec = text.partition("=")
    path = path.strip()
    if not equals or not path or not spec.strip():
        raise ValueError(f"--vary: expected PATH=start:stop:step or PATH=v1,v2,... such as "
                         f"sides[0].members[0].armour_rating=500:700:10, got {brief(text)}")
    parse_path(path, "--vary")
    numbers = [parse_number(part) for part in spec.split(":")] if spec.count(":") == 2 else [None]
    if None in numbers:
        if ":" in spec and "," not in spec:
            raise ValueError(f"--vary {path}: a range is start:stop:step with three numbers, got {brief(spec)}")
        parts = spec.split(",")
        if len(parts) > MAX_POINTS:
            raise ValueError(f"--vary {path}: at most {MAX_POINTS} values, got {len(parts):,}")
        if any(part.strip() == "" for part in parts):
            raise ValueError(f"--vary {path}: an empty value in {brief(spec)}")
        return path, [parse_value(part.strip(), "--vary") for part in parts]
    start, stop, step = numbers
    if step == 0 or (stop - start) * step < 0:
        raise ValueError(f"--vary {path}: the step must be nonzero and go from start towards stop "
                         f"({'positive' if stop >= start else 'negative'} here), got {brief(spec)}")
    points = int((stop - start) / step) + 1
    if points > MAX_POINTS:
        raise ValueError(f"--vary {path}: at most {MAX_POINTS} points, got {points:,} from {brief(spec)}")
    integral = all(value == value.to_integral_value() for value in (start, step))
    values = [start + k * step for k in range(points)]
    return path, [int(v) if integral else float(v) for v in values]


def variants(scenario: Scenario, path: str, values: list[object]) -> list[Scenario]:
    """The scenario with ``path`` set to each value, each validated (errors name the path)."""
    out = []
    for value in values:
        document = copy.deepcopy(scenario.document)
        apply_override(document, f"{path}={_toml(value)}", scenario.file, flag="--vary")
        try:
            out.append(validate(document, scenario.file, default_name=scenario.name))
        except ScenarioError as error:
            raise ScenarioError(f"--vary {path}={_toml(value)}: {error}") from None
    return out


def _toml(value: object) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, float) else str(value)


def field_help(ruleset: str, path: str) -> str:
    """The field's description from the ruleset's field table (``sides[0].members[1].x`` ->
    ``sides[S].members[M].x``), for the chart's axis; the path itself when none is found."""
    from combatsim.scenario_fields import walk

    pattern = re.sub(r"^sides\[\d+\]", "sides[S]", path)
    pattern = re.sub(r"\[\d+\]", "[M]", pattern)
    for name, f in walk(schema(ruleset)):
        if name == pattern:
            return f"{path} ({f.help})"
    return path


def fight_curve(scenario: Scenario, vary: str, *, max_states: int = DEFAULT_MAX_STATES, n: int = DEFAULT_FIGHTS,
                seed: int = 0, backend: str = "auto", threads: int | None = None) -> dict:
    """The fight's outcome probabilities at each value of ``vary`` (``PATH=SPEC``).

    Ctrl-C returns the points finished so far with ``partial`` true (a simulated point cut short
    is kept, marked ``partial`` itself, when some of its fights ran)."""
    from combatsim.validation import check_int, check_seed

    check_scenario(scenario)
    check_int("max_states", max_states, 1, 10**12)
    check_int("n", n, 1, 10**9)  # a point too large for exact odds simulates n fights: none is no answer
    check_seed(seed)
    path, values = parse_vary(vary)
    scenarios = variants(scenario, path, values)
    points: list[dict] = []
    try:
        _curve_points(values, scenarios, points, max_states, n, seed, backend, threads)
        partial = False
    except KeyboardInterrupt:
        partial = True
    partial = partial or any(point.get("partial") for point in points)
    return {"scenario": scenario.name, "ruleset": scenario.ruleset, "path": path,
            "axis": field_help(scenario.ruleset, path), "points": points, "points_asked": len(values),
            "partial": partial}


def _curve_points(values: list, scenarios: list[Scenario], points: list[dict], max_states: int, n: int, seed: int,
                  backend: str, threads: int | None) -> None:
    """Append each value's point to ``points``, as it is finished."""
    from combatsim.scenario import ruleset_module

    for value, variant in zip(values, scenarios, strict=True):
        try:
            odds = fight_odds(variant, max_states=max_states)
        except TooManyStates:
            odds = None
        if odds is not None:
            shown = odds.as_dict()
            point = {"value": value, **{key: shown[key] for key in
                                        ("method", "error_bound", "sides", "draws", "unfinished", "escapes")}}
        else:
            summary = ruleset_module(variant.ruleset).run(variant.spec, n=n, seed=seed, backend=backend,
                                                          threads=threads)
            if summary.partial and not summary.fights:  # Ctrl-C before any of its fights finished
                raise KeyboardInterrupt
            fights = summary.fights or 1
            point = {"value": value, "method": "simulated", "fights": summary.fights,
                     "sides": [{"name": name, "wins": {"float": wins / fights}}
                               for name, wins in zip(variant.side_names, summary.wins, strict=True)],
                     "draws": {"float": summary.draws / fights}}
            if summary.partial:  # Ctrl-C: the fights finished make the point; none after it
                point["partial"] = True
                points.append(point)
                return
        points.append(point)


def plot_fight_curve(curve: dict, path: str) -> None:
    """One line per outcome (each side's wins, draws) over the varied values."""
    from combatsim.plotting import _pyplot

    plt = _pyplot()
    values = [point["value"] for point in curve["points"]]
    numeric = all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)
    xs = values if numeric else list(range(len(values)))
    figure, axes = plt.subplots(figsize=(7, 4))
    names = [side["name"] for side in curve["points"][0]["sides"]]
    for index, name in enumerate(names):
        axes.plot(xs, [point["sides"][index]["wins"]["float"] for point in curve["points"]], marker="o",
                  label=f"{name} wins")
    axes.plot(xs, [point["draws"]["float"] for point in curve["points"]], marker="o", label="draws")
    for key, label in (("unfinished", "unfinished at the limit"), ("escapes", "escapes")):
        if any(point.get(key, {}).get("float") for point in curve["points"]):
            axes.plot(xs, [point.get(key, {}).get("float", 0.0) for point in curve["points"]], marker="o",
                      label=label)
    if not numeric:
        axes.set_xticks(xs, [str(v) for v in values])
    methods = sorted({point["method"] for point in curve["points"]})
    axes.set_title(f"{curve['scenario']}: outcome probabilities ({', '.join(methods)})")
    axes.set_xlabel(textwrap.fill(curve["axis"], 80))
    axes.set_ylabel("probability (0 to 1)")
    axes.set_ylim(-0.02, 1.02)
    axes.grid(alpha=0.3)
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=120, format=path.rsplit(".", 1)[-1].lower())
    plt.close(figure)
