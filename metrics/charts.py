"""Small SVG charts rendered on the server (the admin dashboard: no script, no CDN)."""

from __future__ import annotations

from datetime import date

from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe

WIDTH, HEIGHT, PAD = 300, 80, 4


def _number(value: float, percent: bool) -> str:
    if percent:
        return f"{value * 100:.0f}%"
    return f"{value:,.0f}" if abs(value) >= 10 or value == int(value) else f"{value:.2f}"


def line_chart(points: list[tuple[date, float | None]], *, label: str, percent: bool = False) -> SafeString:
    """A line over the days (gaps where a day has no value), its peak marked, each point's
    day and value in its tooltip; `label` is the chart's accessible name."""
    known = [value for _day, value in points if value is not None]
    top = max(known, default=0.0) or 1.0
    step = (WIDTH - 2 * PAD) / max(len(points) - 1, 1)

    def xy(i: int, value: float) -> tuple[float, float]:
        return PAD + i * step, HEIGHT - PAD - (HEIGHT - 2 * PAD) * value / top

    runs, run, dots = [], [], []
    for i, (day, value) in enumerate(points):
        if value is None:
            runs, run = runs + [run] if run else runs, []
            continue
        x, y = xy(i, value)
        run.append(f"{x:.1f},{y:.1f}")
        tip = f"{day.isoformat()}: {_number(value, percent)}"
        dots.append(
            format_html(
                '<circle cx="{}" cy="{}" r="2"><title>{}</title></circle>', f"{x:.1f}", f"{y:.1f}", tip
            )
        )
    if run:
        runs.append(run)
    lines = "".join(
        f'<polyline fill="none" stroke="currentColor" stroke-width="1.5" points="{" ".join(r)}"/>'
        for r in runs
    )
    peak = format_html(
        '<text x="{}" y="10" font-size="9" text-anchor="end">{}</text>', WIDTH - PAD, _number(top, percent)
    )
    return mark_safe(
        f'<svg class="metrics-chart" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" '
        f'role="img" aria-label="{escape(label)}">'
        f'<line x1="{PAD}" y1="{HEIGHT - PAD}" x2="{WIDTH - PAD}" y2="{HEIGHT - PAD}" stroke="#ccc"/>'
        f"{lines}{''.join(dots)}{peak}</svg>"
    )
