# category: cpu_oom
# stage: data_preprocessing
# ulimit_v: 400000
"""Loading a whole dataset into host RAM under a 400 MB address-space limit."""
print("loading dataset into memory ...", flush=True)
buffers = []
for shard in range(64):
    buffers.append(bytearray(64 * 1024 * 1024))
    print(f"shard {shard} loaded", flush=True)
