"""Starts a program that puts itself in the background (dbus-daemon --fork, gnome-keyring-daemon)
without handing it any descriptor but its own standard streams, and prints what it printed.

Usage: python3 start_daemon.py PROGRAM [ARG...]   (standard input is passed to the program)
Its standard error goes to /dev/null (a daemon keeps it open). Exits with the program's status.
"""
import subprocess
import sys

result = subprocess.run(sys.argv[1:], input=sys.stdin.buffer.read(), stdout=subprocess.PIPE,
                        stderr=subprocess.DEVNULL, close_fds=True)
sys.stdout.buffer.write(result.stdout)
sys.exit(result.returncode)
