"""The per-client limit on concurrent calls of our MCP server over streamable HTTP, counted (not timed): how many
calls of one session, and of several sessions, run at once"""
import asyncio, threading
import pytest

mcp = pytest.importorskip('mcp')
from mcp import Client
from toolslm_like.mcp import MCPHTTPServer

class Meter:
    "Counts the calls running now, the most ever at once, and lets `pair` calls meet before they finish"
    def __init__(self, meet:int):
        self.lock,self.now,self.most,self.meet = threading.Lock(),0,0,threading.Barrier(meet, timeout=30)
    def tool(self):
        def hold(tag:str # Which call this is
                )->str:
            "Wait until enough other calls run at once, then return"
            with self.lock: self.now += 1; self.most = max(self.most, self.now)
            try: self.meet.wait()
            except threading.BrokenBarrierError: return 'alone'
            finally:
                with self.lock: self.now -= 1
            return 'met'
        return hold

async def calls(url, n):
    async with Client(url) as c:
        rs = await asyncio.gather(*(c.call_tool('hold', {'tag': str(i)}) for i in range(n)))
    return [r.content[0].text for r in rs]

def test_one_session_runs_at_most_its_limit_at_once():
    "Eight calls of one session with the limit at 2: never more than 2 run at once, and they go through in pairs"
    m = Meter(2)
    with MCPHTTPServer([m.tool()], timeout=60, max_calls_per_client=2) as srv:
        got = asyncio.run(asyncio.wait_for(calls(srv.url, 8), 120))
    assert got == ['met'] * 8 and m.most == 2, (got, m.most)

def test_sessions_each_get_their_own_slots():
    "Three sessions with the limit at 1: one call of each runs at once (3 meet), never two of one session"
    m = Meter(3)
    with MCPHTTPServer([m.tool()], timeout=60, max_calls_per_client=1) as srv:
        async def main(): return await asyncio.gather(*(calls(srv.url, 3) for _ in range(3)))
        got = asyncio.run(asyncio.wait_for(main(), 120))
    assert got == [['met'] * 3] * 3 and m.most == 3, (got, m.most)
