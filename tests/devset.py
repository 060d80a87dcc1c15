"""Real development logs by id (bench/devset/issues*/dev.jsonl), for tests that reshape them; and the message templates
read in their producers' sources (tests/fixtures/*_templates/*.tsv)."""
import csv
import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]


def devset_cases(*ids: str) -> dict[str, dict]:
    """The development cases with these ids; every id must exist."""
    wanted, found = set(ids), {}
    for path in sorted((ROOT / "bench" / "devset").glob("issues*/dev.jsonl")):
        for line in path.open(encoding="utf-8"):
            record = json.loads(line)
            if record.get("id") in wanted:
                found[record["id"]] = record
    missing = wanted - set(found)
    if missing:
        raise LookupError(f"no development case {sorted(missing)}")
    return found


def template_rows(folder: str) -> list[dict]:
    """Every row of the tab-separated template tables in tests/fixtures/<folder>, each with its file's stem."""
    rows = []
    for path in sorted((ROOT / "tests" / "fixtures" / folder).glob("*.tsv")):
        with path.open(encoding="utf-8", newline="") as f:
            rows += [{**row, "file": path.stem} for row in csv.DictReader(f, delimiter="\t")]
    return rows


def raised(exception_line: str, function: str = "<module>") -> str:
    """A short log of a script that raised `exception_line` from one frame of train.py."""
    return f'Traceback (most recent call last):\n  File "train.py", line 88, in {function}\n    main()\n{exception_line}\n'
