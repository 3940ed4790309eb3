"""Benchmark: one MCP `tools/call` over stdio, our server against the MCP SDK's own (`MCPServer`, once `FastMCP`) serving
the same sync function, both driven by the SDK's client in this process.

Run by hand: `python bench/bench_mcp.py [--before DIR]`. Target (issue 34): our server no slower than the SDK's.
`--before DIR` also serves the same function with the toolslm_like package found in DIR (main before a change, e.g.
`git archive main toolslm_like | tar -x -C DIR`), so before and after are measured in one run.

All servers run at once, each its own process; the calls are made one to each server in turn, so load on a shared machine
hits all alike, and the median (and the fastest tenth) of each server's calls is compared. The time is per call: the
client's request, the server's run of the tool, the answer read back. The server's CPU time (all its threads, from
/proc) is per call too.
"""
import argparse, asyncio, os, statistics, sys, tempfile, time
from contextlib import AsyncExitStack
from pathlib import Path
from mcp import Client, StdioServerParameters

TOOLS = '''
def add(a:int, # The first number
        b:int=0 # The second number
       )->int: # The sum
    "Add two numbers"
    return a+b
'''

SDK_SERVER = TOOLS + '''
from mcp.server.mcpserver import MCPServer
mcp = MCPServer('sdk')
mcp.tool()(add)
if __name__ == '__main__': mcp.run()
'''

OUR_SERVER = TOOLS + '''
from toolslm_like.mcp import serve_mcp
if __name__ == '__main__': serve_mcp([add], name='ours') # what `toolslm-like serve our_server:add` runs
'''

SDK = 'MCP SDK MCPServer'

def params(script:Path, pythonpath:str|None=None)->StdioServerParameters:
    "A stdio server: `script` run by this Python, with `pythonpath` first on its path (None: as this process has it)"
    env = {**os.environ}
    if pythonpath is not None: env['PYTHONPATH'] = pythonpath
    return StdioServerParameters(command=sys.executable, args=[str(script)], env=env, cwd=str(script.parent))

async def one_call(c:Client, i:int)->float:
    "Seconds one call of `add` takes, its answer read back"
    t = time.perf_counter()
    r = await c.call_tool('add', {'a': i, 'b': 1})
    took = time.perf_counter() - t
    assert not r.is_error and r.content[0].text == str(i + 1), r
    return took

def children()->set:
    "The ids of this process's child processes"
    kids = set()
    for t in Path('/proc/self/task').iterdir(): kids |= set(map(int, (t/'children').read_text().split()))
    return kids

def cpu(pid:int)->float:
    "Seconds of CPU process `pid` has used (user and system, all its threads)"
    fields = Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')

async def main(before:str|None, calls:int):
    d = Path(tempfile.mkdtemp())
    (d/'sdk_server.py').write_text(SDK_SERVER)
    (d/'our_server.py').write_text(OUR_SERVER)
    here = str(Path(__file__).resolve().parents[1])
    servers = {SDK: params(d/'sdk_server.py'), 'toolslm_like (this tree)': params(d/'our_server.py', here)}
    if before: servers['toolslm_like (--before)'] = params(d/'our_server.py', str(Path(before).resolve()))
    async with AsyncExitStack() as stack:
        clients,pids = {},{}
        for k,p in servers.items():
            had = children()
            clients[k] = await stack.enter_async_context(Client(p))
            pids[k], = children() - had
        for c in clients.values():
            for i in range(50): await one_call(c, i) # warm up: imports, first-call caches
        took,used = {k: [] for k in clients},{k: -cpu(pid) for k,pid in pids.items()}
        for i in range(calls): # one call to each in turn
            for k,c in clients.items(): took[k].append(await one_call(c, i))
        for k,pid in pids.items(): used[k] = (used[k] + cpu(pid)) / calls
    mid = {k: statistics.median(ts) for k,ts in took.items()}
    low = {k: statistics.quantiles(ts, n=10)[0] for k,ts in took.items()}
    print(f"One `tools/call` of a sync tool over stdio, the SDK's client: {calls} calls to each server, one to each in turn")
    print(f"  {'':26}{'median':>8}{'':17}{'fastest tenth':>13}{'':13}{'server CPU per call':>20}")
    for k in took:
        print(f"  {k:26}{mid[k]*1e6:6.0f} us {mid[k]/mid[SDK]:5.2f}x SDK's {low[k]*1e6:6.0f} us {low[k]/low[SDK]:5.2f}x SDK's"
              f" {used[k]*1e6:6.0f} us {used[k]/used[SDK]:5.2f}x SDK's")

if __name__ == '__main__':
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--before', help="a folder holding the toolslm_like package to compare with (e.g. main's)")
    p.add_argument('--calls', type=int, default=2000, help="calls to each server")
    a = p.parse_args()
    asyncio.run(main(a.before, a.calls))
