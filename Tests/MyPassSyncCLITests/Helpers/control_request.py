"""Sends raw bytes to the daemon's control socket and prints what it answered (or the error met).

Usage: python3 control_request.py SOCKET MODE
MODE: `malformed` (not JSON), `oversized` (100 KiB without a newline), `slow` (half a request, then
nothing), or a JSON request sent as one line. Prints the answer's line, or `error: ...`.
"""
import socket
import sys

path, mode = sys.argv[1], sys.argv[2]
payload = {
    "malformed": b"this is not json\n",
    "oversized": b"{\"request\": \"" + b"x" * (100 * 1024),
    "slow": b"{\"request\": ",
}.get(mode, mode.encode() + b"\n")
try:
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.settimeout(20)
    connection.connect(path)
    try:
        connection.sendall(payload)
    except (BrokenPipeError, ConnectionResetError):
        pass
    answer = b""
    while True:
        chunk = connection.recv(65536)
        if not chunk:
            break
        answer += chunk
    print(answer.decode(errors="replace").strip())
except OSError as error:
    print(f"error: {error}")
