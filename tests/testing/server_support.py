"""Helpers of the fake server tests."""

from __future__ import annotations

from typing import Any

MODEL = "claude-sonnet-5-5"
KEY = "sk-ant-api03-" + "Zx9" * 10
ENV_CREDENTIALS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE", "ANTHROPIC_CUSTOM_HEADERS",
                   "ANTHROPIC_IDENTITY_TOKEN", "ANTHROPIC_IDENTITY_TOKEN_FILE", "ANTHROPIC_FEDERATION_RULE_ID",
                   "ANTHROPIC_ORGANIZATION_ID", "ANTHROPIC_CONFIG_DIR")


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def body(messages: list[dict[str, Any]] | None = None, **kw: Any) -> dict[str, Any]:
    return {"model": MODEL, "max_tokens": 256, "messages": messages or [user("hi")], **kw}
