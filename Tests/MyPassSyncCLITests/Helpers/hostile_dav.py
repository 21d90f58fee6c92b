"""A WebDAV-ish file server that behaves, except for the vault's GET or PUT, which it makes hostile.

Usage: python3 hostile_dav.py PORT DIRECTORY MODE
GET, HEAD, PUT and DELETE of files in DIRECTORY on 127.0.0.1:PORT with strong ETags (the SHA-1 of the
content) and If-Match / If-None-Match honoured, so that mypass-sync's server check passes. MODE says
what happens to requests for /vault.kdbx:
  chunked    GET: an endless chunked body of zeros (up to 3 GiB), no size announced
  announced  GET: Content-Length of 3 GiB, then zeros
  drip       GET: 200, Content-Length 1000, then one byte every 5 seconds
  forgetful  PUT: answered 204 with a new ETag, but nothing is stored
  normal     nothing hostile (a bomb is then just the file served)
Each request is logged as one line to requests.log beside DIRECTORY.
"""
import hashlib
import http.server
import os
import sys
import time

port, root, mode = int(sys.argv[1]), sys.argv[2], sys.argv[3]
HUGE = 3 << 30
# Every request, one "METHOD /path" line each, beside the served folder (what a dry run must not send).
log_path = os.path.join(os.path.dirname(os.path.abspath(root)), "requests.log")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def parse_request(self):
        parsed = super().parse_request()
        if parsed:
            with open(log_path, "a") as log:
                log.write("%s %s\n" % (self.command, self.path))
        return parsed

    def path_on_disk(self):
        return os.path.join(root, os.path.basename(self.path))

    def is_vault(self):
        return os.path.basename(self.path) == "vault.kdbx"

    def current(self):
        try:
            with open(self.path_on_disk(), "rb") as file:
                return file.read()
        except FileNotFoundError:
            return None

    def send(self, status, body=b"", etag=None):
        self.send_response(status)
        if etag:
            self.send_header("ETag", '"%s"' % etag)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def stream(self, announced):
        self.send_response(200)
        if announced:
            self.send_header("Content-Length", str(HUGE))
        else:
            self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        chunk = b"\0" * (1 << 20)
        try:
            for _ in range(HUGE // len(chunk)):
                if announced:
                    self.wfile.write(chunk)
                else:
                    self.wfile.write(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
        except (BrokenPipeError, ConnectionResetError):
            return

    def do_GET(self):
        if self.is_vault() and self.command == "GET":
            if mode in ("chunked", "announced"):
                return self.stream(mode == "announced")
            if mode == "drip":
                self.send_response(200)
                self.send_header("Content-Length", "1000")
                self.end_headers()
                try:
                    for _ in range(1000):
                        self.wfile.write(b"\0")
                        self.wfile.flush()
                        time.sleep(5)  # the hostile behaviour itself: one byte every 5 s (not a wait)
                except (BrokenPipeError, ConnectionResetError):
                    pass
                return
        body = self.current()
        if body is None:
            return self.send(404)
        tag = hashlib.sha1(body).hexdigest()
        if self.headers.get("If-None-Match") == '"%s"' % tag:
            return self.send(304, etag=tag)
        self.send(200, body, tag)

    do_HEAD = do_GET

    def do_PUT(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        existing = self.current()
        match, none_match = self.headers.get("If-Match"), self.headers.get("If-None-Match")
        if none_match == "*" and existing is not None:
            return self.send(412)
        if match is not None and (existing is None or match != '"%s"' % hashlib.sha1(existing).hexdigest()):
            return self.send(412)
        if self.is_vault() and mode == "forgetful":
            return self.send(204, etag=hashlib.sha1(body).hexdigest())
        with open(self.path_on_disk(), "wb") as file:
            file.write(body)
        self.send(204 if existing is not None else 201, etag=hashlib.sha1(body).hexdigest())

    def do_DELETE(self):
        try:
            os.remove(self.path_on_disk())
        except FileNotFoundError:
            return self.send(404)
        self.send(204)

    def do_OPTIONS(self):
        self.send(200)

    def log_message(self, *arguments):
        pass


http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
