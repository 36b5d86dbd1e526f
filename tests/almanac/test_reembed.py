import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from io import StringIO

import pytest
from django.core.management import call_command

from almanac.management.commands.reembed import current_dimension
from memories.models import Memory
from memories.selectors import memory_search
from memories.services.memories import memory_create

pytestmark = pytest.mark.django_db


class FourDims(BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        data = [
            {"index": i, "embedding": [1.0, float("invoice" in t), 0.5, 0.0]}
            for i, t in enumerate(body["input"])
        ]
        payload = json.dumps({"data": data}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


def test_reembed_same_dimension_keeps_search_working(alice):
    memory, _ = memory_create(owner=alice, content="Invoices for Vercel go out on the 5th")
    call_command("reembed", stdout=StringIO())
    assert current_dimension(Memory._meta.db_table) == 512
    assert memory_search(user=alice, query="when do Vercel invoices go out")[0].memory.pk == memory.pk


def test_reembed_changes_the_dimension(settings, alice):
    memory_create(owner=alice, content="Invoices for Vercel go out on the 5th")
    server = HTTPServer(("127.0.0.1", 0), FourDims)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        settings.EMBEDDING_BACKEND = "openai"
        settings.EMBEDDING_URL = f"http://127.0.0.1:{server.server_port}/v1"
        settings.EMBEDDING_MODEL = "tiny"
        settings.EMBEDDING_DIM = 4
        out = StringIO()
        call_command("reembed", stdout=out)
    finally:
        server.shutdown()
    assert "memories.Memory: 1 rows embedded at 4 dimensions" in out.getvalue()
    assert current_dimension(Memory._meta.db_table) == 4
    assert len(Memory.objects.get().embedding) == 4
