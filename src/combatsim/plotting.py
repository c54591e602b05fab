"""Plots (optional extra ``plot``: matplotlib)."""

from __future__ import annotations


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        from combatsim.extras import install_hint

        raise ValueError(f"plots need the plot extra (matplotlib): {install_hint('plot')}") from None
    return plt


def plot_curve(curve: dict, path: str, title: str) -> None:
    plt = _pyplot()
    parameter = curve["parameter"]
    xs = [point[parameter] for point in curve["points"]]
    ys = [point["hit_probability_float"] for point in curve["points"]]
    figure, axes = plt.subplots(figsize=(7, 4))
    axes.step(xs, ys, where="mid")
    axes.set_xlabel(parameter.replace("_", " "))
    axes.set_ylabel("hit probability")
    fixed = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in curve["fixed"].items())
    axes.set_title(f"{title} ({fixed})")
    axes.set_ylim(-0.02, 1.02)
    axes.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


def plot_stacked_bars(xs: list[int], stacks: list[tuple[str, list[int]]], path: str, title: str, xlabel: str,
                      ylabel: str, file_format: str = "png") -> None:
    """Bars at integer ``xs``, each stacked from ``stacks`` (label, heights) bottom up, with integer ticks."""
    plt = _pyplot()
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    figure, axes = plt.subplots(figsize=(7, 4))
    bottom = [0] * len(xs)
    for name, heights in stacks:
        axes.bar(xs, heights, bottom=bottom, label=name, width=0.9)
        bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.yaxis.set_major_locator(MaxNLocator(integer=True))
    axes.yaxis.set_major_formatter(FuncFormatter(lambda value, _position: f"{value:,.0f}"))
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)
    axes.set_title(title)
    if len(stacks) > 1:
        axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=120, format=file_format)
    plt.close(figure)
