"""Runs a program with no signal blocked and SIGPIPE at its default action.

Usage: python3 unblocked.py [--supervise] PROGRAM [ARG...]
The test runner's threads block most signals, and a child inherits that mask: a server started from
a test would ignore SIGTERM (and Xvfb, with its timer signals blocked, takes 10 s to come up). This
clears the mask and then becomes PROGRAM (exec: same process, so terminating it ends the program).

--supervise keeps this process as PROGRAM's parent instead (SIGTERM and SIGINT are passed on, its
exit status returned): for a daemon such as sshd that closes every inherited descriptor, which
Foundation's Process would read as the end of the process it started.
"""
import os
import signal
import sys

signal.pthread_sigmask(signal.SIG_SETMASK, [])
signal.signal(signal.SIGPIPE, signal.SIG_DFL)
arguments = sys.argv[1:]
if arguments[0] != "--supervise":
    os.execvp(arguments[0], arguments)
child = os.fork()
if child == 0:
    os.execvp(arguments[1], arguments[1:])
for number in (signal.SIGTERM, signal.SIGINT):
    signal.signal(number, lambda received, _frame: os.kill(child, received))
_, status = os.waitpid(child, 0)
sys.exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)
