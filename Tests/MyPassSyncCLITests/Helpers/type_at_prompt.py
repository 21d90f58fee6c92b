"""Runs a command on a pseudo-terminal, types a line at its prompt, and reports what the terminal showed.

Usage: python3 type_at_prompt.py LINE COMMAND [ARG...]
Prints JSON: {"status": exit status, "screen": everything the terminal displayed}.
"""
import json
import os
import pty
import select
import sys
import time

line, command = sys.argv[1], sys.argv[2:]
pid, fd = pty.fork()
if pid == 0:
    os.execvp(command[0], command)

screen = b""
typed = False
deadline = time.time() + 30
while time.time() < deadline:
    ready, _, _ = select.select([fd], [], [], 0.1)
    if ready:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        screen += chunk
    if not typed and b"Password" in screen:
        os.write(fd, line.encode() + b"\n")
        typed = True
_, status = os.waitpid(pid, 0)
print(json.dumps({"status": os.waitstatus_to_exitcode(status), "screen": screen.decode("utf-8", "replace")}))
