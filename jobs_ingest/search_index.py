"""Moved to jobs_ingest.search.index (issue #13). Kept only until its last importers, tests/conftest.py and
tests/integration/conftest.py, switch; delete then."""
from jobs_ingest.search.index import *  # noqa: F401,F403
