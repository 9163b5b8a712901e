"""MCP-like tools without a server: named ``mcp__SERVER__TOOL`` with a rule group, a plain
JSON schema and a read-only call, so the deferral rule treats them as an MCP server's."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from jupyter_toolagent import Tool

VERBS = ["get", "list", "search", "create", "update", "delete", "export", "sync", "count", "describe",
         "archive", "restore", "tag", "move", "copy", "share", "lock", "unlock", "rename", "audit"]
SERVERS = ["github", "jira", "slack", "drive", "postgres"]


class FreeInput(BaseModel):
    model_config = ConfigDict(extra="allow")


class FakeMcpTool(Tool):
    input_model = FreeInput

    def __init__(self, server: str, verb: str, *, defer: bool | None = None) -> None:
        self.name = f"mcp__{server}__{verb}_item"
        self.rule_group = f"mcp__{server}"
        self.description = (f"{verb.capitalize()} an item in {server}. " + "Long vendor documentation. " * 12)
        self.calls: list[dict[str, Any]] = []
        if defer is not None:
            self.defer = defer

    def input_schema(self) -> dict[str, Any]:
        return {"type": "object", "properties": {
            "item_id": {"type": "string", "description": "The item's id in the remote system, as shown by list."},
            "fields": {"type": "array", "items": {"type": "string"}, "description": "Fields to return."},
            "options": {"type": "object", "description": "Extra options of the vendor's API."}},
            "required": ["item_id"]}

    def parse_input(self, raw: Any) -> BaseModel:
        if not isinstance(raw, dict) or not isinstance(raw.get("item_id"), str):
            raise ValueError("item_id (a string) is required")
        return FreeInput.model_validate(raw)

    def is_read_only(self, input: BaseModel) -> bool:
        return True

    def is_concurrency_safe(self, input: BaseModel) -> bool:
        return True

    async def call(self, input: BaseModel, ctx: Any, progress: Any) -> str:
        self.calls.append(input.model_dump())
        return f"{self.name} ran on {input.model_dump().get('item_id')}"


def hundred_tools() -> list[FakeMcpTool]:
    """100 tools from 5 servers."""
    return [FakeMcpTool(s, v) for s in SERVERS for v in VERBS]
