import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest


@pytest.fixture
def embedding_server():
    """A local OpenAI-compatible `/v1/embeddings` server.

    Yields `(base_url, requests)`; each vector is `[len(text), 1, "invoice" in text, 0]`,
    and the reply lists them in reverse order (clients must sort by `index`).
    """
    requests: list = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            requests.append((self.path, self.headers.get("Authorization"), body))
            data = [
                {
                    "object": "embedding",
                    "index": i,
                    "embedding": [float(len(t)), 1.0, float("invoice" in t), 0.0],
                }
                for i, t in enumerate(body["input"])
            ]
            payload = json.dumps({"object": "list", "data": data[::-1], "model": body["model"]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/v1", requests
    server.shutdown()
