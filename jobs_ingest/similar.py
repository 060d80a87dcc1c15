"""Moved to jobs_ingest.search.query, .similar and .logs (issue #13). Kept only until its last importers
outside the search helper's files (triage/search_views.py) switch; delete then."""
from jobs_ingest.search.logs import *  # noqa: F401,F403
from jobs_ingest.search.query import *  # noqa: F401,F403
from jobs_ingest.search.similar import *  # noqa: F401,F403
