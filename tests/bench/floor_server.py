"""The bare SDK floor: a minimal low-level mcp server (one resource, one tool)
that the benchmark runs beside robot-md-mcp, so the report can say what our
own code adds on top of the SDK. Kept in the repo only for that.

`python -m floor_server` (tests/bench on the path), or through a pyz with
SHIV_ENTRY_POINT=floor_server:run, so both servers start the same way."""

import os
from typing import Any

import anyio
import mcp.types as types
from mcp.server import NotificationOptions, Server, ServerRequestContext
from mcp.server.stdio import stdio_server

# The resource's text: "r", or the contents of FLOOR_TEXT_FILE (the benchmark serves
# robot-md-mcp's own answer through the floor, to price the answer's size alone).
TEXT = "r"
if os.environ.get("FLOOR_TEXT_FILE"):
    with open(os.environ["FLOOR_TEXT_FILE"], encoding="utf-8") as f:
        TEXT = f.read()

Request = ServerRequestContext[Any, Any]  # no lifespan state, any request


async def list_resources(
    ctx: Request, params: types.PaginatedRequestParams | None
) -> types.ListResourcesResult:
    return types.ListResourcesResult(
        resources=[types.Resource(uri="floor://r", name="r", mime_type="text/plain")]
    )


async def read_resource(ctx: Request, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
    return types.ReadResourceResult(contents=[types.TextResourceContents(uri=params.uri, text=TEXT)])


async def list_tools(ctx: Request, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[types.Tool(name="t", input_schema={"type": "object"})])


async def call_tool(ctx: Request, params: types.CallToolRequestParams) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text="{}")], structured_content={})


server = Server(
    "floor",
    version="0",
    on_list_resources=list_resources,
    on_read_resource=read_resource,
    on_list_tools=list_tools,
    on_call_tool=call_tool,
)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options(NotificationOptions()))


def run() -> None:
    anyio.run(main)


if __name__ == "__main__":
    run()
