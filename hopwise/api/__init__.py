"""Hopwise from other tools: the REST API, the OpenAI-compatible endpoint and the MCP server
(`hopwise serve`, `hopwise mcp`), over the same `Hopwise` facade as the pages and the CLI."""
