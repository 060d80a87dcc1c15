# category: permission_denied
# stage: initialization
"""Creating a cache directory where the job may not write (/sys refuses new entries even to root)."""
import os

cache = "/sys/devset_cache"
os.makedirs(cache, exist_ok=True)
