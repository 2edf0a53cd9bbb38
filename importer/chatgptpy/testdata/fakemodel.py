# A fake model: the Chat Completions API on 127.0.0.1:PORT, answering
# each request with the next reply and its usage.
import json, sys
from http.server import BaseHTTPRequestHandler, HTTPServer

REPLIES = [("notes.txt is not something I can open, but a to-do file usually holds one task a line.", 41, 19),
           ("Then it has two tasks.", 75, 6)]


class H(BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        text, pt, ct = REPLIES.pop(0)
        out = {"id": "chatcmpl-%d" % len(REPLIES), "object": "chat.completion", "created": 1795790000, "model": body["model"],
               "choices": [{"index": 0, "message": {"role": "assistant", "content": text, "refusal": None}, "finish_reason": "stop"}],
               "usage": {"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct}}
        data = json.dumps(out).encode()
        self.send_response(200); self.send_header("Content-Type", "application/json"); self.send_header("Content-Length", str(len(data))); self.end_headers()
        self.wfile.write(data)

    def log_message(self, *a):
        pass


HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
