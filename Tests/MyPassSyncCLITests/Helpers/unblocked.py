"""Runs a program with no signal blocked and SIGPIPE at its default action.

Usage: python3 unblocked.py PROGRAM [ARG...]
The test runner's threads block most signals, and a child inherits that mask: a server started from
a test would ignore SIGTERM (and Xvfb, with its timer signals blocked, takes 10 s to come up). This
clears the mask and then becomes PROGRAM (exec: same process, so terminating it ends the program).
"""
import os
import signal
import sys

signal.pthread_sigmask(signal.SIG_SETMASK, [])
signal.signal(signal.SIGPIPE, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])
