"""Benchmark: one MCP `tools/call` over stdio, our server against the MCP SDK's own (`MCPServer`, once `FastMCP`)
serving the same sync function, both driven by the SDK's client in this process.

Run by hand: `python bench/bench_mcp.py [--before DIR]`. Target (issue 34): our server no slower than the SDK's.
`--before DIR` also serves the same function with the toolslm_like package found in DIR (main before a change, e.g.
`git archive main toolslm_like | tar -x -C DIR`), so before and after are measured in one run.

All servers run at once, each its own process; the calls are made one to each server in turn, so load on a shared
machine hits all alike, and the median (and the fastest tenth) of each server's calls is compared. The time is per
call: the client's request, the server's run of the tool, the answer read back. The server's CPU time (all its
threads, from /proc) is per call too. Then the same calls in one process (the SDK's memory transport), which leaves out
the pipes and the other processes' wake-ups: the servers' own work, less at the mercy of a loaded machine.
"""
import argparse, asyncio, inspect, json, os, statistics, subprocess, sys, tempfile, time
from contextlib import AsyncExitStack
from pathlib import Path
from mcp import Client, StdioServerParameters

def add(a:int, # The first number
        b:int=0 # The second number
       )->int: # The sum
    "Add two numbers"
    return a+b

TOOLS = inspect.getsource(add) # the servers' scripts define it too

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

async def in_process(calls:int):
    """Print `{server: median seconds per call}` for the SDK's server and ours, both in this process (the SDK's memory
    transport: no pipes, no other process), one call to each in turn: the servers' own work per call"""
    from mcp.server.mcpserver import MCPServer
    from toolslm_like.mcp import mcp_server
    sdk = MCPServer('sdk')
    sdk.tool()(add)
    async with Client(sdk) as a, Client(mcp_server([add])) as b:
        clients = {'sdk': a, 'ours': b}
        for c in clients.values():
            for i in range(50): await one_call(c, i)
        took = {k: [] for k in clients}
        for i in range(calls):
            for k,c in clients.items(): took[k].append(await one_call(c, i))
    print(json.dumps({k: statistics.median(ts) for k,ts in took.items()}))

def in_process_in(pythonpath:str, calls:int)->dict:
    "`in_process`, run in a new process with `pythonpath` first on its path"
    out = subprocess.run([sys.executable, __file__, '--in-process', '--calls', str(calls)], capture_output=True,
                         text=True, env={**os.environ, 'PYTHONPATH': pythonpath}, check=True).stdout
    return json.loads(out.splitlines()[-1])

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
    print(f"One `tools/call` of a sync tool over stdio, the SDK's client: {calls} calls to each server, one to each in "
          "turn")
    print(f"  {'':26}{'median':>8}{'':17}{'fastest tenth':>13}{'':13}{'server CPU per call':>20}")
    x = lambda v,of: f"{v*1e6:6.0f} us {v/of:5.2f}x SDK's"
    for k in took: print(f"  {k:26}{x(mid[k], mid[SDK])} {x(low[k], low[SDK])} {x(used[k], used[SDK])}")
    print(f"\nThe same calls with both servers in one process (no pipes): the servers' own work, median of {calls}")
    trees = {'toolslm_like (this tree)': here}
    if before: trees['toolslm_like (--before)'] = str(Path(before).resolve())
    for k,path in trees.items():
        m = in_process_in(path, calls)
        print(f"  {k:26}{m['ours']*1e6:6.0f} us against the SDK's {m['sdk']*1e6:6.0f} us: {m['ours']/m['sdk']:5.2f}x")

if __name__ == '__main__':
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--before', help="a folder holding the toolslm_like package to compare with (e.g. main's)")
    p.add_argument('--calls', type=int, default=2000, help="calls to each server")
    p.add_argument('--in-process', action='store_true', help="the in-process part alone, as JSON")
    a = p.parse_args()
    asyncio.run(in_process(a.calls) if a.in_process else main(a.before, a.calls))
