"""The MCP server at `/mcp` (docs/agents.md, MCP): the agent API's reads and writes as tools.

Streamable HTTP in its JSON-response mode, stateless, inside a Django view (views.py); the
JSON-RPC methods in protocol.py; the tools, which call the API's own handlers, in tools.py.
"""
