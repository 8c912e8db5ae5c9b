"""A small LangGraph graph served over AG-UI by ag-ui-langgraph: the real AG-UI backend that
weft's suites drive as a client (weft-sdk's `dialect: "agui"`) and put behind a weft session.

Its model is the scripted LLM (tests/scripted-llm) through langchain-openai's `ChatOpenAI`, so
what it answers follows that server's rules. Two server tools: `get_time` runs at once;
`write` first stops the graph with LangGraph's `interrupt()` (an AG-UI interrupt, reason
`tool_call`, naming the call) and runs only when the resume approves it. The input's `tools`
are the page's (AG-UI frontend tools): a call of one ends the run, and the next input carries
its result as a `tool` message.

    python agent.py --llm http://127.0.0.1:PORT [--port 0] [--allow-origin ORIGIN ...]

prints `agui-langgraph listening on http://127.0.0.1:PORT` once bound; `GET /health` answers
once it serves. `--allow-origin` lets a page of that origin call it (CORS), as a browser app on
another origin than its agent needs.
"""

import argparse
import asyncio
import socket
import sys
from typing import Annotated, Any

import uvicorn
from ag_ui_langgraph import LangGraphAgent, add_langgraph_fastapi_endpoint
from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from langchain_core.messages import AIMessage
from langchain_core.tools import InjectedToolCallId, tool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.types import interrupt

# The time the scripted conversation is about: fixed, so every run answers the same.
NOW = "2026-01-01T12:00:00Z"


@tool
def get_time(timezone: str = "UTC") -> str:
    """The current time in an IANA time zone."""
    return f"{NOW} ({timezone})"


@tool
def write(path: str, content: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
    """Write text to a file (asks the user first)."""
    # Run again from the top when resumed: nothing before the interrupt has effects.
    answer = interrupt(
        {"reason": "tool_call", "toolCallId": tool_call_id, "message": f"Allow writing {path}?"}
    )
    if not approved(answer):
        return f"denied: the user did not approve writing {path}"
    return f"wrote {len(content)} bytes to {path}"


SERVER_TOOLS = {t.name: t for t in (get_time, write)}


class State(MessagesState):
    # The page's tools, as ag-ui-langgraph puts the input's `tools` into the state.
    tools: list[Any]


def frontend_tools(state: State) -> list[dict]:
    return [
        {
            "type": "function",
            "function": {
                "name": t["name"],
                "description": t.get("description", ""),
                "parameters": t.get("parameters") or {"type": "object", "properties": {}},
            },
        }
        for t in state.get("tools") or []
        if isinstance(t, dict) and t.get("name") not in SERVER_TOOLS
    ]


def build(llm_url: str):
    model = ChatOpenAI(
        base_url=f"{llm_url}/v1",
        api_key="scripted",
        model="gpt-4o",
        streaming=True,
        max_retries=0,
    )

    async def agent(state: State, config) -> dict:
        bound = model.bind_tools([*SERVER_TOOLS.values(), *frontend_tools(state)])
        reply = await bound.ainvoke(state["messages"], config)
        return {"messages": [reply]}

    def route(state: State) -> str:
        last = state["messages"][-1]
        calls = last.tool_calls if isinstance(last, AIMessage) else []
        # A call of the page's tool ends the run: the page runs it, the next input answers.
        if calls and all(c["name"] in SERVER_TOOLS for c in calls):
            return "tools"
        return END

    graph = StateGraph(State)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode(list(SERVER_TOOLS.values())))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", route, ["tools", END])
    graph.add_edge("tools", "agent")
    return graph.compile(checkpointer=InMemorySaver())


def approved(answer: Any) -> bool:
    """A resume approves unless it says otherwise: `{approved: false}`, or a cancelled entry
    (ag-ui-langgraph's sentinel)."""
    if isinstance(answer, dict):
        if answer.get("__agui_cancelled__"):
            return False
        return answer.get("approved") is not False
    return answer is not False


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--llm", required=True, help="the scripted LLM's base URL")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument(
        "--allow-origin", action="append", default=[], help="a page origin to allow (CORS)"
    )
    args = parser.parse_args()

    app = FastAPI()
    add_langgraph_fastapi_endpoint(
        app,
        LangGraphAgent(
            name="weft-test",
            graph=build(args.llm.rstrip("/")),
            # AG-UI 1.0's interrupt outcome on RUN_FINISHED, not the legacy CUSTOM event.
            emit_interrupt_outcome=True,
            enable_legacy_on_interrupt_event=False,
            # RAW copies of every LangGraph event would double the stream for nothing here.
            emit_raw_events=False,
        ),
        "/",
    )
    if args.allow_origin:
        # A run is a POST of JSON, so the browser asks first (a preflight); weft-sdk sends a
        # token as `Authorization: Bearer`.
        app.add_middleware(
            CORSMiddleware,
            allow_origins=args.allow_origin,
            allow_methods=["POST"],
            allow_headers=["content-type", "authorization"],
        )

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    port = sock.getsockname()[1]
    print(f"agui-langgraph listening on http://127.0.0.1:{port}", flush=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    asyncio.run(server.serve(sockets=[sock]))


if __name__ == "__main__":
    sys.exit(main())
