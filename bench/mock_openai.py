#!/usr/bin/env python3
"""A local OpenAI-compatible chat-completions server for bench/judge.sh.

Answers every request after DELAY seconds with a valid turn score for the turn the prompt
asks about, reports usage (prompt tokens = characters / 4), and appends each request's
prompt (system + user) to LOG as one JSON line.
Usage: mock_openai.py PORT DELAY LOG
"""
import json
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

port, delay, log = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        system = body["messages"][0]["content"]
        user = body["messages"][1]["content"]
        # The instruction in English, Russian or Chinese (--judge-lang).
        turn = int(re.search(r"(?:Score turn|Оцени ход|日志的第) (\d+)", user).group(1))
        with lock:
            with open(log, "a") as f:
                f.write(json.dumps({"turn": turn, "prompt": system + "\n\n" + user}) + "\n")
        time.sleep(delay)
        answer = {"turn": turn, "applicable": True, "opportunity": True, "kind": "review",
                  "scores": {"tr": 0, "di": 0, "vr": 0, "sa": 0},
                  "quotes": {"tr": None, "di": None, "vr": None, "sa": None}}
        out = json.dumps({"choices": [{"message": {"role": "assistant", "content": json.dumps(answer)}}],
                          "usage": {"prompt_tokens": (len(system) + len(user)) // 4, "completion_tokens": 40}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)


ThreadingHTTPServer.daemon_threads = True
ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
