"""Real development logs by id (bench/devset/issues*/dev.jsonl), for tests that reshape them."""
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
