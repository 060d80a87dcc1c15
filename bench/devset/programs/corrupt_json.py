# category: corrupt_data
# stage: data_preprocessing
"""A truncated annotation file (the writer was killed mid-way)."""
import json

with open("annotations.json", "w") as f:
    f.write('{"images": [{"id": 1, "file": "a.jpg"}, {"id": 2, "file": "b.j')
with open("annotations.json") as f:
    ann = json.load(f)
