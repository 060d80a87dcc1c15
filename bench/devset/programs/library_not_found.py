# category: library_not_found
# stage: initialization
import os
import sys

print("python", sys.version.split()[0])
from apex import amp  # noqa: E402
