"""A stand-in for the daemon run by another user: listens on a control socket and answers every
request with success, logging what it was sent.

Usage (as root): python3 impostor_daemon.py SOCKET LOG UID drop-before-bind|drop-before-listen
The log is opened first (as root); then the process becomes user UID either before it makes the
socket's folder and binds (a runtime folder the other user controls) or after binding and before
listen (the socket in a folder of the caller's, but the process answering is the other user's:
what SO_PEERCRED reports is fixed at listen). Writes `listening` to the log when it accepts, then
`request: LINE` for every request received.
"""
import os
import socket
import sys

path, log_path, uid, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
log = open(log_path, "a", buffering=1)


def become_other_user():
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)


if mode == "drop-before-bind":
    become_other_user()
os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(path)
if mode == "drop-before-listen":
    become_other_user()
server.listen(8)
log.write("listening\n")
while True:
    connection, _ = server.accept()
    connection.settimeout(5)
    received = b""
    try:
        while b"\n" not in received:
            chunk = connection.recv(65536)
            if not chunk:
                break
            received += chunk
    except OSError:
        pass
    if received:
        log.write("request: " + received.decode(errors="replace").strip() + "\n")
        try:
            connection.sendall(b'{"ok":true,"done":"done by the impostor"}\n')
        except OSError:
            pass
    connection.close()
