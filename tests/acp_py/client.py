"""An editor nobody here wrote: the Python `agent-client-protocol` package (its pydantic
models check every message mypi sends) drives `mypi acp` through a session: initialize,
session/new, a prompt with a tool call, a prompt with an image, a cancelled prompt, then
session/load on a second connection. Exits non-zero with a clear message on any mismatch.

    python client.py MYPI_BIN CWD [MYPI_ARGS...]

The faux script mypi runs (tests/suite/acp_py.rs writes it) answers: a `write` call, text,
an echo of the image prompt, then a `bash` call that sleeps (the cancelled prompt).
"""

import asyncio
import sys
import time
from typing import Any

import acp
from acp.schema import ClientCapabilities, DeniedOutcome, Implementation, RequestPermissionResponse

# A 1x1 PNG.
PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5E"
    "rkJggg=="
)


class Mismatch(Exception):
    """What mypi did that the test did not expect."""


def check(ok: bool, what: str, seen: Any = None) -> None:
    if not ok:
        raise Mismatch(what if seen is None else f"{what}: {seen!r}")


class Editor:
    """The client side: keeps every session/update as the JSON mypi sent."""

    def __init__(self) -> None:
        self.updates: list[dict[str, Any]] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update.model_dump(mode="json", by_alias=True, exclude_none=True))

    async def request_permission(self, session_id: str, tool_call: Any, options: Any, **kwargs: Any):
        return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))

    def take(self) -> list[dict[str, Any]]:
        taken, self.updates = self.updates, []
        return taken


def text_of(updates: list[dict[str, Any]], kind: str = "agent_message_chunk") -> str:
    return "".join(
        u["content"].get("text", "") for u in updates if u["sessionUpdate"] == kind
    )


async def with_mypi(mypi: str, cwd: str, args: list[str], op) -> Any:
    """Runs `op(connection, editor)` on a fresh `mypi acp`; checks mypi exits 0 after."""
    editor = Editor()
    async with acp.spawn_agent_process(
        editor, mypi, "acp", *args, cwd=cwd, transport_kwargs={"stderr": None}
    ) as (conn, process):
        init = await conn.initialize(
            protocol_version=acp.PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(),
            client_info=Implementation(name="mypi-tests-py", version="1"),
        )
        result = await op(conn, editor, init)
    code = await asyncio.wait_for(process.wait(), 10)
    check(code == 0, "mypi acp exited with", code)
    return result


async def first_connection(conn, editor: Editor, init) -> str:
    check(init.protocol_version == 1, "protocolVersion", init.protocol_version)
    check(init.agent_info is not None and init.agent_info.name == "mypi", "agentInfo", init.agent_info)
    caps = init.agent_capabilities
    check(caps.load_session is True, "loadSession", caps)
    check(caps.prompt_capabilities.image is True, "promptCapabilities.image", caps)
    check(caps.prompt_capabilities.embedded_context is True, "embeddedContext", caps)
    cwd = sys.argv[2]
    session = (await conn.new_session(cwd=cwd, mcp_servers=[])).session_id
    editor.take()

    done = await conn.prompt(session_id=session, prompt=[acp.text_block("write the file")])
    check(done.stop_reason == "end_turn", "the first prompt's stopReason", done.stop_reason)
    updates = editor.take()
    calls = [u for u in updates if u["sessionUpdate"] == "tool_call"]
    check(len(calls) == 1 and calls[0]["kind"] == "edit", "one edit tool_call", calls)
    check(calls[0]["rawInput"].get("path") == "out.txt", "the call's rawInput", calls[0])
    finished = [
        u for u in updates
        if u["sessionUpdate"] == "tool_call_update" and u.get("status") == "completed"
    ]
    check(len(finished) == 1, "one completed tool_call_update", updates)
    check(finished[0]["toolCallId"] == calls[0]["toolCallId"], "the update's toolCallId", finished)
    diffs = [c for c in finished[0].get("content", []) if c["type"] == "diff"]
    check(len(diffs) == 1 and diffs[0]["newText"] == "hello\n", "the write's diff", finished[0])
    check(text_of(updates) == "wrote it", "the agent's text", text_of(updates))
    with open(f"{cwd}/out.txt") as f:
        check(f.read() == "hello\n", "out.txt as written")

    seen = await conn.prompt(
        session_id=session,
        prompt=[acp.text_block("what is this?"), acp.image_block(PNG, "image/png")],
    )
    check(seen.stop_reason == "end_turn", "the image prompt's stopReason", seen.stop_reason)
    echoed = text_of(editor.take())
    check(
        echoed == "seen: what is this? [image image/png, 70 bytes]",
        "the model's echo of the image prompt",
        echoed,
    )

    running = asyncio.create_task(conn.prompt(session_id=session, prompt=[acp.text_block("sleep")]))
    deadline = time.monotonic() + 20
    while not any(
        u["sessionUpdate"] == "tool_call" and u.get("rawInput", {}).get("command") == "sleep 300"
        for u in editor.updates
    ):
        check(time.monotonic() < deadline, "the sleeping call never showed", editor.updates)
        check(not running.done(), "the sleeping prompt ended early", running)
        await asyncio.sleep(0.02)
    asked = time.monotonic()
    await conn.cancel(session_id=session)
    cancelled = await asyncio.wait_for(running, 10)
    took = time.monotonic() - asked
    check(cancelled.stop_reason == "cancelled", "the cancelled prompt's stopReason", cancelled.stop_reason)
    check(took < 1.0, "the cancelled prompt answered after (seconds)", round(took, 3))
    return session


async def second_connection(session: str):
    async def load(conn, editor: Editor, init):
        await conn.load_session(cwd=sys.argv[2], session_id=session, mcp_servers=[])
        replay = editor.take()
        users = [u["content"] for u in replay if u["sessionUpdate"] == "user_message_chunk"]
        texts = [c.get("text") for c in users if c["type"] == "text"]
        check(texts[:3] == ["write the file", "what is this?", "sleep"], "the replayed prompts", texts)
        images = [c for c in users if c["type"] == "image"]
        check(
            len(images) == 1 and images[0]["data"] == PNG and images[0]["mimeType"] == "image/png",
            "the replayed image",
            images,
        )
        check("wrote it" in text_of(replay), "the replayed answer", text_of(replay))
        kinds = {u["sessionUpdate"] for u in replay}
        check({"tool_call", "tool_call_update"} <= kinds, "the replayed tool calls", kinds)

    await with_mypi(sys.argv[1], sys.argv[2], sys.argv[3:], load)


async def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        session = await with_mypi(sys.argv[1], sys.argv[2], sys.argv[3:], first_connection)
        await second_connection(session)
    except Mismatch as e:
        print(f"acp_py: mismatch: {e}", file=sys.stderr)
        return 1
    print("acp_py: ok")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
