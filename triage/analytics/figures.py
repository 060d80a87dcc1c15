"""A chart as a Plotly figure, as plain dicts (JSON-ready): the page draws it, links included."""
from __future__ import annotations

from triage.analytics.charts import Chart, percent

BLUE, ORANGE, RED, GREY = "#2855d8", "#e8892b", "#d92d20", "#98a2b3"


def _fmt(value: float) -> str:
    return f"{value:,.1f}" if value < 100 else f"{value:,.0f}"


def _count_ticks(values) -> dict:
    """Whole-number ticks on a count axis (no "0.5 failures")."""
    return {"dtick": 1, "tick0": 0} if max(values, default=0) <= 8 else {"tickformat": ",d"}


def _hbar_pair(chart: Chart, left_title="Failures (count)", right_title="GPU hours wasted",
               right_colors=None) -> dict:
    labels = [r.label if len(r.label) <= 42 else r.label[:40] + "…" for r in chart.rows]
    links = [r.link or None for r in chart.rows]
    n_total, g_total = chart.total_failures or 1, chart.total_gpu_hours or 1
    data = [
        {"type": "bar", "orientation": "h", "name": left_title, "y": labels, "x": [r.failures for r in chart.rows],
         "text": [f"{r.failures:,} ({percent(r.failures, n_total):.0f}%)" for r in chart.rows],
         "textposition": "auto", "marker": {"color": ORANGE}, "customdata": links, "xaxis": "x", "yaxis": "y",
         "hovertemplate": "%{y}<br>%{x:,} " + left_title.split(" (")[0].lower() + "<extra></extra>"},
        {"type": "bar", "orientation": "h", "name": right_title, "y": labels,
         "x": [round(r.gpu_hours, 2) for r in chart.rows],
         "text": [f"{_fmt(r.gpu_hours)} h ({percent(r.gpu_hours, g_total):.0f}%)" for r in chart.rows],
         "textposition": "auto", "marker": {"color": right_colors or BLUE}, "customdata": links,
         "xaxis": "x2", "yaxis": "y", "hovertemplate": "%{y}<br>%{x:,.1f} GPU hours<extra></extra>"},
    ]
    layout = {
        "height": 90 + 26 * max(len(labels), 3), "margin": {"l": 10, "r": 20, "t": 30, "b": 30},
        "showlegend": False, "bargap": 0.25,
        "xaxis": {"domain": [0, 0.46], "title": {"text": ""}, "automargin": True, "rangemode": "tozero",
                  **_count_ticks(r.failures for r in chart.rows)},
        "xaxis2": {"domain": [0.54, 1], "anchor": "y", "automargin": True, "rangemode": "tozero"},
        "yaxis": {"autorange": "reversed", "automargin": True, "ticksuffix": " "},
        "annotations": [
            {"text": f"<b>{left_title}</b>", "xref": "paper", "yref": "paper", "x": 0.0, "y": 1.0,
             "xanchor": "left", "yanchor": "bottom", "showarrow": False},
            {"text": f"<b>{right_title}</b>", "xref": "paper", "yref": "paper", "x": 0.54, "y": 1.0,
             "xanchor": "left", "yanchor": "bottom", "showarrow": False}],
    }
    return {"data": data, "layout": layout}


def _retry(chart: Chart) -> dict:
    colors = [RED if r.extra.get("cannot_help") else GREY for r in chart.rows]
    return _hbar_pair(chart, "Retry attempts", "GPU hours on retries", colors)


def _trend(chart: Chart) -> dict:
    weeks = [r.label for r in chart.rows]
    links = [r.link for r in chart.rows]
    data = [
        {"type": "bar", "name": "Failed jobs", "x": weeks, "y": [r.failures for r in chart.rows],
         "marker": {"color": ORANGE}, "customdata": links, "xaxis": "x", "yaxis": "y",
         "hovertemplate": "%{x}<br>%{y:,} failed jobs<extra></extra>"},
        {"type": "bar", "name": "GPU hours wasted", "x": weeks,
         "y": [round(r.gpu_hours, 2) for r in chart.rows], "marker": {"color": BLUE}, "customdata": links,
         "xaxis": "x2", "yaxis": "y2", "hovertemplate": "%{x}<br>%{y:,.1f} GPU hours<extra></extra>"},
    ]
    layout = {"height": 300, "margin": {"l": 50, "r": 20, "t": 30, "b": 50}, "showlegend": False,
              "xaxis": {"domain": [0, 0.46], "type": "category"},
              "xaxis2": {"domain": [0.54, 1], "type": "category", "anchor": "y2"},
              "yaxis": {"rangemode": "tozero", **_count_ticks(r.failures for r in chart.rows)},
              "yaxis2": {"anchor": "x2", "rangemode": "tozero"},
              "annotations": [
                  {"text": "<b>Failed jobs per week</b>", "xref": "paper", "yref": "paper", "x": 0, "y": 1,
                   "xanchor": "left", "yanchor": "bottom", "showarrow": False},
                  {"text": "<b>GPU hours wasted per week</b>", "xref": "paper", "yref": "paper", "x": 0.54,
                   "y": 1, "xanchor": "left", "yanchor": "bottom", "showarrow": False}]}
    return {"data": data, "layout": layout}


def _pareto(chart: Chart) -> dict:
    ranks = [f"#{r.extra['rank']}" for r in chart.rows]
    hover = [r.label[:100] for r in chart.rows]
    links = [r.link for r in chart.rows]
    data = [
        {"type": "bar", "name": "GPU hours wasted", "x": ranks, "y": [round(r.gpu_hours, 2) for r in chart.rows],
         "marker": {"color": BLUE}, "customdata": links, "hovertext": hover, "xaxis": "x", "yaxis": "y",
         "hovertemplate": "%{x} %{hovertext}<br>%{y:,.1f} GPU hours<extra></extra>"},
        {"type": "scatter", "mode": "lines+markers", "name": "Cumulative share of GPU hours", "x": ranks,
         "y": [r.extra["cumulative_share"] for r in chart.rows], "marker": {"color": RED}, "line": {"color": RED},
         "xaxis": "x", "yaxis": "y3", "hovertemplate": "top %{x}: %{y:.0f}% of all GPU hours<extra></extra>"},
        {"type": "bar", "name": "Failures", "x": ranks, "y": [r.failures for r in chart.rows],
         "marker": {"color": ORANGE}, "customdata": links, "hovertext": hover, "xaxis": "x", "yaxis": "y2",
         "hovertemplate": "%{x} %{hovertext}<br>%{y:,} failures<extra></extra>"},
    ]
    layout = {"height": 460, "margin": {"l": 60, "r": 60, "t": 30, "b": 40}, "showlegend": True,
              "legend": {"orientation": "h", "y": -0.12},
              "xaxis": {"type": "category", "anchor": "y2"},
              "yaxis": {"domain": [0.42, 1], "title": {"text": "GPU hours"}, "rangemode": "tozero"},
              "yaxis3": {"overlaying": "y", "side": "right", "range": [0, 105], "ticksuffix": "%", "dtick": 25,
                         "title": {"text": "cumulative"}},
              "yaxis2": {"domain": [0, 0.32], "title": {"text": "Failures"}, "rangemode": "tozero",
                         **_count_ticks(r.failures for r in chart.rows)}}
    return {"data": data, "layout": layout}


def _box(chart: Chart) -> dict:
    labels = [r.label for r in chart.rows]
    links = [r.link for r in chart.rows]
    if not chart.rows[0].extra:
        return _hbar_pair(chart)
    get = lambda p: [r.extra[f"p{p}_hours"] for r in chart.rows]  # noqa: E731
    data = [
        {"type": "box", "orientation": "h", "name": "Hours until failure", "y": labels, "q1": get(25),
         "median": get(50), "q3": get(75), "lowerfence": get(10), "upperfence": get(90),
         "marker": {"color": BLUE}, "xaxis": "x", "yaxis": "y", "customdata": links},
        {"type": "bar", "orientation": "h", "name": "Failures", "y": labels, "x": [r.failures for r in chart.rows],
         "text": [f"{r.failures:,}" for r in chart.rows], "textposition": "auto", "marker": {"color": ORANGE},
         "customdata": links, "xaxis": "x2", "yaxis": "y", "hovertemplate": "%{y}<br>%{x:,} failures<extra></extra>"},
        {"type": "bar", "orientation": "h", "name": "GPU hours", "y": labels,
         "x": [round(r.gpu_hours, 2) for r in chart.rows], "text": [_fmt(r.gpu_hours) for r in chart.rows],
         "textposition": "auto", "marker": {"color": BLUE}, "customdata": links, "xaxis": "x3", "yaxis": "y",
         "hovertemplate": "%{y}<br>%{x:,.1f} GPU hours<extra></extra>"},
    ]
    layout = {"height": 90 + 30 * max(len(labels), 3), "margin": {"l": 10, "r": 20, "t": 30, "b": 30},
              "showlegend": False,
              "xaxis": {"domain": [0, 0.56], "rangemode": "tozero", "ticksuffix": " h"},
              "xaxis2": {"domain": [0.6, 0.78], "anchor": "y", "rangemode": "tozero",
                         **_count_ticks(r.failures for r in chart.rows)},
              "xaxis3": {"domain": [0.82, 1], "anchor": "y", "rangemode": "tozero"},
              "yaxis": {"autorange": "reversed", "automargin": True, "ticksuffix": " "},
              "annotations": [
                  {"text": "<b>Hours until failure</b>", "xref": "paper", "yref": "paper", "x": 0, "y": 1,
                   "xanchor": "left", "yanchor": "bottom", "showarrow": False},
                  {"text": "<b>Failures</b>", "xref": "paper", "yref": "paper", "x": 0.6, "y": 1,
                   "xanchor": "left", "yanchor": "bottom", "showarrow": False},
                  {"text": "<b>GPU hours</b>", "xref": "paper", "yref": "paper", "x": 0.82, "y": 1,
                   "xanchor": "left", "yanchor": "bottom", "showarrow": False}]}
    return {"data": data, "layout": layout}


FIGURES = {"bars": _hbar_pair, "retry": _retry, "trend": _trend, "pareto": _pareto, "box": _box}


def figure(chart: Chart) -> dict | None:
    """A Plotly figure as plain dicts (JSON-ready), or None when the chart is empty."""
    if chart.is_empty:
        return None
    if chart.kind not in FIGURES:
        raise ValueError(f"unknown chart kind {chart.kind}")
    return FIGURES[chart.kind](chart)

