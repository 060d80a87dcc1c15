"""Moved to jobs_ingest.search.index (issue #13). Kept only until its last importers outside the search
helper's files (jobtriage/ops.py, tests/conftest.py, tests/integration/conftest.py, triage) switch; delete then."""
from jobs_ingest.search.index import *  # noqa: F401,F403
