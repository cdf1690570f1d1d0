#!/usr/bin/env python3
"""A loopback OpenAI-compatible model server for the editor tests (the feedback simulator).

POST /v1/chat/completions (or /v1/completions) answers with a fixed feedback text that
names the kind the prompt asks for, so a test can tell novice from expert feedback; every
request is appended, as JSON, to the file given by --log. Prints "PORT <n>" once listening
on 127.0.0.1 (port 0: any free port).
"""
import argparse
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def answer(prompt: str) -> str:
    """A DSPy-style completion: a rationale, then the `User Feedback:` field the server reads."""
    # The expert simulator sees the ground truth code; the novice one does not.
    who = "Expert" if "Ground Truth Code" in prompt else "Novice"
    return ("Reasoning: Let's think step by step in order to produce the user_feedback. "
            "One test case fails.\n\n"
            f"User Feedback: {who} feedback from the loopback simulator: check the failing test case.")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--log", required=True, help="file the requests are appended to")
    a = ap.parse_args()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # quiet: the test prints what matters
            pass

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0") or 0))
            try:
                req = json.loads(body or b"{}")
            except json.JSONDecodeError:
                self.send_error(400, "not JSON")
                return
            if self.path.endswith("/chat/completions"):
                prompt = "".join(m.get("content", "") for m in req.get("messages", []))
                text = answer(prompt)
                out = {"id": "t", "object": "chat.completion",
                       "choices": [{"index": 0, "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": text}}]}
            elif self.path.endswith("/completions"):
                prompt = req.get("prompt", "")
                text = answer(prompt)
                out = {"id": "t", "object": "text_completion",
                       "choices": [{"index": 0, "text": text, "finish_reason": "stop"}]}
            else:
                self.send_error(404, "unknown path")
                return
            with open(a.log, "a", encoding="utf-8") as f:
                f.write(json.dumps({"path": self.path, "prompt": prompt, "answer": text,
                                    "auth": self.headers.get("Authorization")}) + "\n")
            data = json.dumps(out).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    srv = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    print(f"PORT {srv.server_address[1]}", flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
