# category: corrupt_data
# stage: data_preprocessing
import json

with open("train.jsonl", "w") as f:
    f.write('{"text": "hello", "label": 1}\n{"text": "world", "label": 0}\n{"text": "broken line, "label": 1}\n')
samples = []
with open("train.jsonl") as f:
    for line in f:
        samples.append(json.loads(line))
print(len(samples))
