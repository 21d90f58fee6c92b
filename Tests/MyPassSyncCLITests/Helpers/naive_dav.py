"""A file server that ignores preconditions, as some WebDAV servers and proxies do.

Usage: python3 naive_dav.py PORT DIRECTORY [PUT-STATUS]
GET, HEAD, PUT and DELETE of files in DIRECTORY on 127.0.0.1:PORT, with a strong ETag (the SHA-1 of
the content), but If-Match and If-None-Match are never checked and there are no WebDAV locks.
With PUT-STATUS every PUT is answered with that status and writes nothing (a full disk's 507, a
404 for a missing folder), which a test cannot make a real server do without root-only mounts.
"""
import hashlib
import http.server
import os
import sys

port, root = int(sys.argv[1]), sys.argv[2]
put_status = int(sys.argv[3]) if len(sys.argv) > 3 else None


class Handler(http.server.BaseHTTPRequestHandler):
    def path_on_disk(self):
        return os.path.join(root, os.path.basename(self.path))

    def send(self, status, body=b"", etag=None):
        self.send_response(status)
        if etag:
            self.send_header("ETag", '"%s"' % etag)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_GET(self):
        try:
            with open(self.path_on_disk(), "rb") as file:
                body = file.read()
        except FileNotFoundError:
            return self.send(404)
        self.send(200, body, hashlib.sha1(body).hexdigest())

    do_HEAD = do_GET

    def do_PUT(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if put_status:
            return self.send(put_status)
        existed = os.path.exists(self.path_on_disk())
        with open(self.path_on_disk(), "wb") as file:
            file.write(body)
        self.send(204 if existed else 201, etag=hashlib.sha1(body).hexdigest())

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
