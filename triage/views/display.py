"""What a failure's log excerpt, traceback and fix diff look like to the templates."""
from jobs_ingest.models import Failure
from triage.diffs import DiffError, parse_diff


def excerpt(failure: Failure) -> list[tuple[int, str, bool]]:
    return [(failure.excerpt_start_line + i, text, failure.excerpt_start_line + i == failure.failure_line_number)
            for i, text in enumerate(failure.excerpt.split("\n"))]


def traceback(failure: Failure) -> list[tuple[str, bool]]:
    """Traceback lines, with the innermost frame of user code marked."""
    lines = failure.traceback.split("\n") if failure.traceback else []
    marker = ""
    if failure.user_frame and ":" in failure.user_frame:
        path, _, rest = failure.user_frame.rpartition(":")
        number = rest.split(" ", 1)[0]
        marker = f'{path.split("/")[-1]}", line {number}'
    hit = max((i for i, line in enumerate(lines) if marker and marker in line), default=None)
    return [(line, i == hit) for i, line in enumerate(lines)]


def diff(text: str):
    try:
        return parse_diff(text)
    except DiffError:
        return None
