#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""origin-server.py PORT DIR [ADDRESS]: the tests' origin for AllowedDomains'
proxy, on ADDRESS (default 127.0.0.1), port PORT. It serves DIR's files (a simple package index, an npm
registry's documents and tarballs are files), and /git/... through
`git http-backend` (its repositories under DIR/git), as a web server runs
that CGI program. One line per request on stdout: METHOD PATH."""
import http.server
import os
import subprocess
import sys

PORT, ROOT = int(sys.argv[1]), sys.argv[2]
ADDRESS = sys.argv[3] if len(sys.argv) > 3 else "127.0.0.1"


class Handler(http.server.SimpleHTTPRequestHandler):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, directory=ROOT, **kwargs)

    def log_message(self, *args):
        pass

    def log_request(self, code="-", size="-"):
        print(self.command, self.path, flush=True)

    def git(self):
        path, _, query = self.path[len("/git"):].partition("?")
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        env = dict(os.environ, GIT_PROJECT_ROOT=os.path.join(ROOT, "git"), GIT_HTTP_EXPORT_ALL="1",
                   PATH_INFO=path, QUERY_STRING=query, REQUEST_METHOD=self.command,
                   CONTENT_TYPE=self.headers.get("Content-Type", ""), CONTENT_LENGTH=str(length),
                   REMOTE_ADDR="127.0.0.1")
        out = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True).stdout
        head, _, payload = out.partition(b"\r\n\r\n")
        status = 200
        fields = []
        for line in head.split(b"\r\n"):
            name, _, value = line.decode().partition(":")
            if name.lower() == "status":
                status = int(value.split()[0])
            elif name:
                fields.append((name, value.strip()))
        self.send_response(status)
        for name, value in fields:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def do_GET(self):
        if self.path.startswith("/git/"):
            return self.git()
        return super().do_GET()

    def do_POST(self):
        if self.path.startswith("/git/"):
            return self.git()
        self.send_error(405)


http.server.ThreadingHTTPServer((ADDRESS, PORT), Handler).serve_forever()
