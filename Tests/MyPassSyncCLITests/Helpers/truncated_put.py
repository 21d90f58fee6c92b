"""Sends a PUT whose body stops half-way, then resets the connection: what the server sees when a
client (a sync killed mid-upload, a dropped laptop link) dies during an upload.

Usage: python3 truncated_put.py PORT PATH USER PASSWORD ETAG
Announces 4,000,000 bytes with If-Match: ETAG, sends 200,000, and closes with a reset. Prints nothing.
"""
import base64
import socket
import struct
import sys
import time

port, path, user, password, etag = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
credentials = base64.b64encode(("%s:%s" % (user, password)).encode()).decode()
connection = socket.create_connection(("127.0.0.1", port), timeout=10)
head = ("PUT %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAuthorization: Basic %s\r\nIf-Match: %s\r\n"
        "Content-Type: application/octet-stream\r\nContent-Length: 4000000\r\n\r\n" % (path, port, credentials, etag))
connection.sendall(head.encode())
connection.sendall(b"\x03\xd9\xa2\x9a" + b"x" * 199_996)
time.sleep(0.3)  # Apache gives no sign of having read the partial body: it is given a moment to, before the reset
connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
connection.close()
