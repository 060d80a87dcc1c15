"""Cost-weighted analytics: every aggregation runs in PostgreSQL; no failure row is loaded into Python.

- filters.py: ChartFilters, the filters every chart shares, kept in the URL.
- sources.py: where the numbers come from. ROLLUPS reads the indexed daily rollups of triage/rollups.py
  (tens of thousands of narrow rows instead of a million jobs: the default whenever the time range is
  whole UTC days, as every URL-made range is); RAW groups the failure and job tables directly (a range
  with a time of day, and the baseline of bench/bench_charts.py). Both give the same numbers.
- charts.py: each chart as a `Chart` (rows of numbers, a caption, links to the matching failures) that
  the page renders and the CSV export writes; CHARTS names them all.
- figures.py: a chart as a plotly.graph_objects Figure (JSON for the page, PNG for the weekly email).

Counts and GPU hours always come together: the study's lesson is that counts mislead (initialization
failures are 30.8% of failures but 0.9% of the wasted GPU time).

The category everywhere is the *effective* one (triage/effective.py): a per-job override, else the
signature's confirmed category, else the automatic tag. Two LEFT JOINs (override, signature triage) on
primary keys.
"""
