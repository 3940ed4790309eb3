"""The per-client limit on concurrent calls of our MCP server over streamable HTTP, counted (not timed): how many
calls of one session, of several sessions, and of stateless (2026-07-28) requests run at once. The calls wait for each
other, not for a time; only a call past the limit, which never comes while the limit holds, is watched for a second."""
import asyncio, threading, time
import pytest

mcp = pytest.importorskip('mcp')
from mcp import Client
from toolslm_like.mcp import MCPHTTPServer

class Meter:
    """A tool that counts the calls running at once: each waits until `want` calls have run together (a generous
    deadline, which only a hung test reaches), then stays `linger` s more, in which a call beyond the limit would show"""
    def __init__(self, want:int, linger:float=1):
        self.lock,self.now,self.most,self.want,self.linger = threading.Lock(),0,0,want,linger
    def tool(self):
        async def hold(tag:str # Which call this is
                      )->str:
            "Wait for other calls"
            with self.lock: self.now += 1; self.most = max(self.most, self.now)
            deadline = time.monotonic() + 60
            while self.most < self.want and time.monotonic() < deadline: await asyncio.sleep(0.01)
            # a negative check: no call past the limit joins in this while (it cannot fail when the limit holds)
            deadline = time.monotonic() + self.linger
            while self.now <= self.want and time.monotonic() < deadline: await asyncio.sleep(0.01)
            with self.lock: self.now -= 1
            return 'ok'
        return hold

async def calls(url, n, mode='legacy'):
    "`n` calls at once from one client (`mode='legacy'`: an HTTP session; '2026-07-28': stateless requests)"
    async with Client(url, mode=mode) as c:
        rs = await asyncio.gather(*(c.call_tool('hold', {'tag': str(i)}) for i in range(n)))
    return [r.content[0].text for r in rs]

@pytest.mark.parametrize('mode', ['legacy', '2026-07-28'])
def test_one_client_runs_at_most_its_limit_at_once(mode):
    "Six calls of one client with the limit at 2: 2 run at once (they wait for each other), never 3"
    m = Meter(want=2)
    with MCPHTTPServer([m.tool()], timeout=60, max_calls_per_client=2) as srv:
        got = asyncio.run(asyncio.wait_for(calls(srv.url, 6, mode), 120))
    assert got == ['ok'] * 6 and m.most == 2, (got, m.most)

def test_sessions_each_get_their_own_slots():
    "Three sessions with the limit at 1: one call of each runs at once (they wait for each other), never two of one"
    m = Meter(want=3)
    with MCPHTTPServer([m.tool()], timeout=60, max_calls_per_client=1) as srv:
        async def main(): return await asyncio.gather(*(calls(srv.url, 3) for _ in range(3)))
        got = asyncio.run(asyncio.wait_for(main(), 120))
    assert got == [['ok'] * 3] * 3 and m.most == 3, (got, m.most)
