"""A chart as a Plotly figure, built with plotly.graph_objects (which validates every property); the page
draws its JSON with the plotly.js bundled in the same package, and the weekly email embeds it as a PNG."""
from __future__ import annotations

import plotly.graph_objects as go

from triage.analytics.charts import Chart, percent

BLUE, ORANGE, RED, GREY = "#2855d8", "#e8892b", "#d92d20", "#98a2b3"


def _fmt(value: float) -> str:
    return f"{value:,.1f}" if value < 100 else f"{value:,.0f}"


def _count_ticks(values) -> dict:
    """Whole-number ticks on a count axis (no "0.5 failures")."""
    return {"dtick": 1, "tick0": 0} if max(values, default=0) <= 8 else {"tickformat": ",d"}


def _title(text: str, x: float) -> dict:
    return dict(text=f"<b>{text}</b>", xref="paper", yref="paper", x=x, y=1, xanchor="left", yanchor="bottom",
                showarrow=False)


def _figure(data: list, **layout) -> go.Figure:
    # template "none": plotly.js's own defaults, as before, instead of ~8 KB of theme in every figure.
    return go.Figure(data=data, layout=go.Layout(template="none", **layout))


def _hbar_pair(chart: Chart, left_title="Failures (count)", right_title="GPU hours wasted",
               right_colors=None) -> go.Figure:
    labels = [r.label if len(r.label) <= 42 else r.label[:40] + "…" for r in chart.rows]
    links = [r.link or None for r in chart.rows]
    n_total, g_total = chart.total_failures or 1, chart.total_gpu_hours or 1
    data = [
        go.Bar(orientation="h", name=left_title, y=labels, x=[r.failures for r in chart.rows],
               text=[f"{r.failures:,} ({percent(r.failures, n_total):.0f}%)" for r in chart.rows],
               textposition="auto", marker_color=ORANGE, customdata=links, xaxis="x", yaxis="y",
               hovertemplate="%{y}<br>%{x:,} " + left_title.split(" (")[0].lower() + "<extra></extra>"),
        go.Bar(orientation="h", name=right_title, y=labels, x=[round(r.gpu_hours, 2) for r in chart.rows],
               text=[f"{_fmt(r.gpu_hours)} h ({percent(r.gpu_hours, g_total):.0f}%)" for r in chart.rows],
               textposition="auto", marker_color=right_colors or BLUE, customdata=links, xaxis="x2", yaxis="y",
               hovertemplate="%{y}<br>%{x:,.1f} GPU hours<extra></extra>"),
    ]
    return _figure(
        data, height=90 + 26 * max(len(labels), 3), margin=dict(l=10, r=20, t=30, b=30), showlegend=False,
        bargap=0.25,
        xaxis=dict(domain=[0, 0.46], automargin=True, rangemode="tozero",
                   **_count_ticks(r.failures for r in chart.rows)),
        xaxis2=dict(domain=[0.54, 1], anchor="y", automargin=True, rangemode="tozero"),
        yaxis=dict(autorange="reversed", automargin=True, ticksuffix=" "),
        annotations=[_title(left_title, 0.0), _title(right_title, 0.54)])


def _retry(chart: Chart) -> go.Figure:
    colors = [RED if r.extra.get("cannot_help") else GREY for r in chart.rows]
    return _hbar_pair(chart, "Retry attempts", "GPU hours on retries", colors)


def _trend(chart: Chart) -> go.Figure:
    weeks = [r.label for r in chart.rows]
    links = [r.link for r in chart.rows]
    data = [
        go.Bar(name="Failed jobs", x=weeks, y=[r.failures for r in chart.rows], marker_color=ORANGE,
               customdata=links, xaxis="x", yaxis="y", hovertemplate="%{x}<br>%{y:,} failed jobs<extra></extra>"),
        go.Bar(name="GPU hours wasted", x=weeks, y=[round(r.gpu_hours, 2) for r in chart.rows], marker_color=BLUE,
               customdata=links, xaxis="x2", yaxis="y2", hovertemplate="%{x}<br>%{y:,.1f} GPU hours<extra></extra>"),
    ]
    return _figure(
        data, height=300, margin=dict(l=50, r=20, t=30, b=50), showlegend=False,
        xaxis=dict(domain=[0, 0.46], type="category"),
        xaxis2=dict(domain=[0.54, 1], type="category", anchor="y2"),
        yaxis=dict(rangemode="tozero", **_count_ticks(r.failures for r in chart.rows)),
        yaxis2=dict(anchor="x2", rangemode="tozero"),
        annotations=[_title("Failed jobs per week", 0), _title("GPU hours wasted per week", 0.54)])


def _pareto(chart: Chart) -> go.Figure:
    ranks = [f"#{r.extra['rank']}" for r in chart.rows]
    hover = [r.label[:100] for r in chart.rows]
    links = [r.link for r in chart.rows]
    data = [
        go.Bar(name="GPU hours wasted", x=ranks, y=[round(r.gpu_hours, 2) for r in chart.rows], marker_color=BLUE,
               customdata=links, hovertext=hover, xaxis="x", yaxis="y",
               hovertemplate="%{x} %{hovertext}<br>%{y:,.1f} GPU hours<extra></extra>"),
        go.Scatter(mode="lines+markers", name="Cumulative share of GPU hours", x=ranks,
                   y=[r.extra["cumulative_share"] for r in chart.rows], marker_color=RED, line_color=RED,
                   xaxis="x", yaxis="y3", hovertemplate="top %{x}: %{y:.0f}% of all GPU hours<extra></extra>"),
        go.Bar(name="Failures", x=ranks, y=[r.failures for r in chart.rows], marker_color=ORANGE, customdata=links,
               hovertext=hover, xaxis="x", yaxis="y2", hovertemplate="%{x} %{hovertext}<br>%{y:,} failures<extra></extra>"),
    ]
    return _figure(
        data, height=460, margin=dict(l=60, r=60, t=30, b=40), showlegend=True, legend=dict(orientation="h", y=-0.12),
        xaxis=dict(type="category", anchor="y2"),
        yaxis=dict(domain=[0.42, 1], title_text="GPU hours", rangemode="tozero"),
        yaxis3=dict(overlaying="y", side="right", range=[0, 105], ticksuffix="%", dtick=25, title_text="cumulative"),
        yaxis2=dict(domain=[0, 0.32], title_text="Failures", rangemode="tozero",
                    **_count_ticks(r.failures for r in chart.rows)))


def _box(chart: Chart) -> go.Figure:
    labels = [r.label for r in chart.rows]
    links = [r.link for r in chart.rows]
    if not chart.rows[0].extra:
        return _hbar_pair(chart)
    get = lambda p: [r.extra[f"p{p}_hours"] for r in chart.rows]  # noqa: E731
    data = [
        go.Box(orientation="h", name="Hours until failure", y=labels, q1=get(25), median=get(50), q3=get(75),
               lowerfence=get(10), upperfence=get(90), marker_color=BLUE, xaxis="x", yaxis="y", customdata=links),
        go.Bar(orientation="h", name="Failures", y=labels, x=[r.failures for r in chart.rows],
               text=[f"{r.failures:,}" for r in chart.rows], textposition="auto", marker_color=ORANGE,
               customdata=links, xaxis="x2", yaxis="y", hovertemplate="%{y}<br>%{x:,} failures<extra></extra>"),
        go.Bar(orientation="h", name="GPU hours", y=labels, x=[round(r.gpu_hours, 2) for r in chart.rows],
               text=[_fmt(r.gpu_hours) for r in chart.rows], textposition="auto", marker_color=BLUE,
               customdata=links, xaxis="x3", yaxis="y", hovertemplate="%{y}<br>%{x:,.1f} GPU hours<extra></extra>"),
    ]
    return _figure(
        data, height=90 + 30 * max(len(labels), 3), margin=dict(l=10, r=20, t=30, b=30), showlegend=False,
        xaxis=dict(domain=[0, 0.56], rangemode="tozero", ticksuffix=" h"),
        xaxis2=dict(domain=[0.6, 0.78], anchor="y", rangemode="tozero", **_count_ticks(r.failures for r in chart.rows)),
        xaxis3=dict(domain=[0.82, 1], anchor="y", rangemode="tozero"),
        yaxis=dict(autorange="reversed", automargin=True, ticksuffix=" "),
        annotations=[_title("Hours until failure", 0), _title("Failures", 0.6), _title("GPU hours", 0.82)])


FIGURES = {"bars": _hbar_pair, "retry": _retry, "trend": _trend, "pareto": _pareto, "box": _box}


def plotly_figure(chart: Chart) -> go.Figure | None:
    """The chart's plotly.graph_objects Figure, or None when the chart is empty."""
    if chart.is_empty:
        return None
    if chart.kind not in FIGURES:
        raise ValueError(f"unknown chart kind {chart.kind}")
    return FIGURES[chart.kind](chart)


def figure(chart: Chart) -> dict | None:
    """The figure as JSON-ready dicts for the page (Django's json_script), or None when the chart is empty."""
    fig = plotly_figure(chart)
    return fig.to_plotly_json() if fig is not None else None
