#!/usr/bin/env python3
"""ttfl.py PATTERN CMD…: runs CMD and prints the milliseconds from its start to the first
line of its stdout that contains PATTERN (the benchmark's D), then lets it finish."""
import subprocess
import sys
import time

pattern = sys.argv[1].encode()
start = time.monotonic()
p = subprocess.Popen(sys.argv[2:], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
first = None
for line in p.stdout:
    if first is None and pattern in line:
        first = time.monotonic() - start
p.wait()
print(f"{first * 1000:.1f}" if first is not None else "nan")
