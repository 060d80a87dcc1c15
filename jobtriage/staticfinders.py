"""Serve the plotly.js that ships inside the `plotly` Python package, as static/plotly/plotly.min.js.

The page's figures are built by that package (triage/analytics/figures.py), so the browser draws them with
the very plotly.js version they were built for; nothing is vendored and nothing comes from a CDN. Only that
one file is exposed (the package's data folder also holds datasets and widget bundles)."""
from pathlib import Path

import plotly
from django.contrib.staticfiles.finders import BaseFinder
from django.core.files.storage import FileSystemStorage

PACKAGE_DATA = Path(plotly.__file__).resolve().parent / "package_data"
FILES = {"plotly/plotly.min.js": "plotly.min.js"}


class PlotlyFinder(BaseFinder):
    storage = FileSystemStorage(location=str(PACKAGE_DATA))
    storage.prefix = "plotly"  # collectstatic copies it to STATIC_ROOT/plotly/

    def check(self, **kwargs):
        return []

    def find(self, path, find_all=False, **kwargs):
        if path in FILES:
            match = str(PACKAGE_DATA / FILES[path])
            return [match] if find_all else match
        return [] if find_all else None

    def list(self, ignore_patterns):
        for name in FILES.values():
            yield name, self.storage
