"""Runs one command and reports its exit status, wall time and peak memory.

Usage: python3 measure.py COMMAND [ARG...]   (standard input is passed through)
Prints JSON: {"status": exit status, "seconds": wall time, "maxRSSKB": the child's peak resident
set in KiB, "stderr": what it printed on standard error}.
"""
import json
import resource
import subprocess
import sys
import time

start = time.monotonic()
result = subprocess.run(sys.argv[1:], stdin=sys.stdin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
seconds = time.monotonic() - start
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # this helper's only child
print(json.dumps({"status": result.returncode, "seconds": seconds, "maxRSSKB": peak,
                  "stderr": result.stderr.decode("utf-8", "replace")}))
