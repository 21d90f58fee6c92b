"""Runs a command on a pseudo-terminal, types a line at its prompt, and reports what the terminal showed.

Usage: python3 type_at_prompt.py LINE COMMAND [ARG...]
LINE "^C" types Ctrl-C instead (the interrupt key) and no newline.
Prints JSON: {"status": exit status, "screen": everything the terminal displayed,
"echo": whether the terminal echoes input after the command ended}.
"""
import json
import os
import pty
import select
import sys
import termios
import time

line, command = sys.argv[1], sys.argv[2:]
pid, fd = pty.fork()
if pid == 0:
    os.execvp(command[0], command)

screen = b""
typed = False
deadline = time.time() + 15
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
        os.write(fd, b"\x03" if line == "^C" else line.encode() + b"\n")
        typed = True
# Waits for the command's end (its pidfd becomes readable), at most 5 s.
pidfd = os.pidfd_open(pid)
ended, _, _ = select.select([pidfd], [], [], 5)
os.close(pidfd)
if not ended:  # Still running after the deadline: stop it and report the hang.
    os.kill(pid, 9)
_, status = os.waitpid(pid, 0)
echo = bool(termios.tcgetattr(fd)[3] & termios.ECHO)
print(json.dumps({"status": os.waitstatus_to_exitcode(status), "screen": screen.decode("utf-8", "replace"), "echo": echo}))
