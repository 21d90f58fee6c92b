"""Writes a list of leaked-password hashes in HIBP's downloaded form ("ordered by hash").

Usage: python3 hibp_list.py OUT FILLER_LINES [PASSWORD:COUNT ...]
The real entries are the SHA-1 of each PASSWORD (UTF-8) with its COUNT; FILLER_LINES evenly spaced
made-up hashes surround them. Upper-case hex, CRLF line ends, sorted by hash, as HIBP publishes it.
"""
import hashlib
import heapq
import sys

out, filler = sys.argv[1], int(sys.argv[2])
real = sorted((hashlib.sha1(item.rsplit(":", 1)[0].encode("utf-8")).hexdigest().upper(), int(item.rsplit(":", 1)[1]))
              for item in sys.argv[3:])
step = (1 << 160) // (filler + 1)
made_up = ((format((i + 1) * step + 7, "040X"), 1 + i % 97) for i in range(filler))
with open(out, "w", newline="") as file:
    for digest, count in heapq.merge(real, made_up):
        file.write(f"{digest}:{count}\r\n")
