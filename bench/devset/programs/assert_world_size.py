# category: illegal_argument
# stage: initialization
import os

world_size = int(os.environ.get("WORLD_SIZE", "3"))
global_batch = 256
print(f"world_size={world_size} global_batch={global_batch}")
assert global_batch % world_size == 0, f"global batch {global_batch} is not divisible by world size {world_size}"
