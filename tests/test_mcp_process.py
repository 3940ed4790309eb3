"""Black-box checks of `toolslm_like.mcp` across processes: our server driven by the SDK's own client (stdio, HTTP),
and our client against servers written with the SDK's `MCPServer` (FastMCP), all started and stopped by the tests"""
import asyncio, importlib.util, json, os, socket, subprocess, sys, textwrap, threading, time, warnings
from pathlib import Path
import pytest

mcp = pytest.importorskip('mcp')
from mcp import Client, StdioServerParameters
from toolslm_like.funccall import get_schema, call_func, call_func_async
from toolslm_like.mcp import MCPClient, MCPHTTPServer, MCPToolError, mcp_tools

OUR_SERVER = '''
from toolslm_like.mcp import serve_mcp

def add(a:int, # The first number
        b:int=0 # The second number
       )->int: # The sum
    "Add two numbers"
    return a+b

def boom(x:int # Anything
        ):
    "Always fails"
    raise ValueError(f"bad x: {x}")

def shout(text:str, # What to shout
          times:int=1 # How often
         )->str:
    "Shout some text (and print to stdout, which must not reach the protocol stream)"
    print("this goes to stderr while serving")
    return (text.upper() + '! ') * times

def config(opts:dict[str, int] # Settings
          )->dict:
    "Echo settings back as an object"
    return {'got': opts}

if __name__ == '__main__': serve_mcp([add, boom, shout, config], name='ours')
'''

FAST_SERVER = '''
import sys
from typing import Literal
from pydantic import BaseModel, Field
from mcp.server.mcpserver import MCPServer

mcp = MCPServer('fast')

class Point(BaseModel):
    x: int
    y: int = 0

@mcp.tool()
def mul(a: int, b: int = 2) -> int:
    "Multiply two numbers"
    return a * b

@mcp.tool()
def describe(name: str = Field(description="Who"), style: Literal['hi', 'hello'] = 'hi',
             at: list[Point] | None = None, times: int = Field(default=1, ge=1)) -> str:
    "Describe someone"
    return f"{style} {name} at {[(p.x, p.y) for p in at or []]} x{times}"

@mcp.tool(name='get-info')
def get_info() -> dict:
    "Info about the server"
    return {'name': 'fast', 'tools': 3}

@mcp.tool()
def oops(x: int) -> int:
    "Always fails"
    raise ValueError('no good')

if __name__ == '__main__':
    if len(sys.argv) > 1: mcp.run('streamable-http', host='127.0.0.1', port=int(sys.argv[1]))
    else: mcp.run()
'''

@pytest.fixture(scope='module')
def scripts(tmp_path_factory):
    d = tmp_path_factory.mktemp('servers')
    (d/'ours.py').write_text(OUR_SERVER)
    (d/'fast.py').write_text(FAST_SERVER)
    return d

def load(path):
    spec = importlib.util.spec_from_file_location(path.stem + '_for_schemas', path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m

def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]

class PortTaken(Exception): "The port picked was taken by another process before the server could bind it"

def wait_for_port(port, proc, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            err = proc.stderr.read()
            raise (PortTaken if 'address already in use' in err.lower() else RuntimeError)(f"server exited: {err}")
        try:
            with socket.create_connection(('127.0.0.1', port), timeout=0.2): return
        except OSError: time.sleep(0.05)
    raise TimeoutError(f"nothing listens on port {port}")

def start_server(command_for_port, tries=5, **popen_kw):
    "(process, port): a server started on a free port, listening; if another process takes the port first, another is tried"
    for _ in range(tries):
        port = free_port()
        proc = subprocess.Popen(command_for_port(port), stderr=subprocess.PIPE, text=True, **popen_kw)
        try:
            wait_for_port(port, proc)
            return proc, port
        except PortTaken: proc.wait()
        except BaseException: stop(proc); raise
    raise RuntimeError(f"{tries} free ports in a row were taken before the server could bind them")

def stop(proc):
    proc.terminate()
    try: proc.wait(10)
    except subprocess.TimeoutExpired: proc.kill(); proc.wait()

# --- our server, driven by the SDK's own client

async def drive_our_server(client_target, mode, ours):
    async with Client(client_target, mode=mode) as c:
        listed = {t.name: t for t in (await c.list_tools()).tools}
        assert list(listed) == ['add', 'boom', 'shout', 'config']
        for nm in listed: assert listed[nm].input_schema == get_schema(getattr(ours, nm), 'inputSchema')['inputSchema']
        assert listed['add'].description == get_schema(ours.add)['description']
        r = await c.call_tool('add', {'a': 1, 'b': '2'})
        assert (r.is_error, r.content[0].text) == (False, '3')
        r = await c.call_tool('shout', {'text': 'hi', 'times': 2})
        assert (r.is_error, r.content[0].text) == (False, 'HI! HI! ')
        r = await c.call_tool('config', {'opts': {'a': '1'}})
        assert r.structured_content == {'got': {'a': 1}} and not r.is_error
        bad = await c.call_tool('add', {'a': 'one'})
        assert bad.is_error and bad.content[0].text == "ArgumentError: Invalid arguments for tool 'add':\n- a: expected an integer, got 'one' (a string)"
        boom = await c.call_tool('boom', {'x': 3})
        assert boom.is_error and boom.content[0].text.endswith('ValueError: bad x: 3') and 'raise ValueError' in boom.content[0].text
        assert 'asyncio' not in boom.content[0].text, boom.content[0].text # the tool's frames, not those of the thread it ran in
        missing = await c.call_tool('nope', {})
        assert missing.is_error and missing.content[0].text.startswith("ToolNotFoundError: There is no tool named 'nope'")
        return c.protocol_version

@pytest.mark.parametrize('mode', ['auto', 'legacy'])
def test_our_server_over_stdio(scripts, mode):
    params = StdioServerParameters(command=sys.executable, args=[str(scripts/'ours.py')], cwd=str(scripts))
    version = asyncio.run(drive_our_server(params, mode, load(scripts/'ours.py')))
    assert version

def test_what_tools_print_never_reaches_the_protocol_stream(scripts, tmp_path):
    "A tool's print, still buffered when the client goes away, goes to the server's stderr, not into the protocol stream"
    from mcp.client.stdio import stdio_client
    params = StdioServerParameters(command=sys.executable, args=[str(scripts/'ours.py')], cwd=str(scripts))
    async def main(errlog):
        async with Client(stdio_client(params, errlog=errlog)) as c:
            return await c.call_tool('shout', {'text': 'hi'})
    with open(tmp_path/'stderr.txt', 'w') as errlog: r = asyncio.run(main(errlog))
    assert r.content[0].text == 'HI! '
    assert 'this goes to stderr while serving' in (tmp_path/'stderr.txt').read_text() # flushed at exit, it would be on stdout

def test_our_server_over_http(scripts):
    ours = load(scripts/'ours.py')
    with MCPHTTPServer([ours.add, ours.boom, ours.shout, ours.config], port=0) as srv:
        assert srv.url.startswith('http://127.0.0.1:') and srv.url.endswith('/mcp')
        for mode in ('auto', 'legacy'): asyncio.run(drive_our_server(srv.url, mode, ours))
    with socket.socket() as s: # stopped: the port is free again
        s.bind(('127.0.0.1', int(srv.url.split(':')[2].split('/')[0])))

def test_serve_mcp_http_in_a_subprocess(scripts):
    code = "import runpy; m = runpy.run_path({!r}); from toolslm_like.mcp import serve_mcp; serve_mcp([m['add']], transport='http', port={})"
    proc,port = start_server(lambda port: [sys.executable, '-c', code.format(str(scripts/'ours.py'), port)])
    try:
        with MCPClient(f'http://127.0.0.1:{port}/mcp') as c: assert c.tools['add'](2, 3) == 5 # typed: its outputSchema
    finally: stop(proc)

# --- our client, against a server written with the SDK's MCPServer (FastMCP)

def check_fast_tools(c):
    ns = c.tools
    assert sorted(ns) == ['describe', 'get-info', 'mul', 'oops']
    for nm,f in ns.items(): # get_schema gives the schema the server published, exactly
        assert get_schema(f, 'inputSchema')['inputSchema'] == c.tool_defs[nm]['inputSchema'], nm
        assert get_schema(f)['description'] == c.tool_defs[nm]['description']
    assert ns['mul'](3) == 6 and ns['mul'](a=3, b=5) == 15
    assert call_func('mul', {'a': '4'}, ns) == 8
    assert call_func('describe', {'name': 'Ann', 'at': [{'x': '1'}], 'times': 2}, ns) == "hi Ann at [(1, 0)] x2"
    info = call_func('get-info', {}, ns) # no output schema for a bare `dict`, so the text comes back
    assert json.loads(info) == {'name': 'fast', 'tools': 3}, info
    out = call_func('describe', {'name': 'Ann', 'times': 0}, ns, raise_on_err=False) # refused here, before sending
    assert out.startswith("ArgumentError: Invalid arguments for tool 'describe'") and 'times: expected a number at least 1' in out, out
    out = call_func('oops', {'x': 1}, ns, raise_on_err=False)
    assert 'MCPToolError' in out and 'Error executing tool oops' in out, out
    with pytest.raises(MCPToolError, match='oops'): ns['oops'](1)
    with pytest.raises(TypeError, match="missing a required argument: 'a'"): ns['mul']()

def test_our_client_against_fastmcp_over_stdio(scripts):
    with MCPClient([sys.executable, str(scripts/'fast.py')], cwd=str(scripts)) as c:
        check_fast_tools(c)
        assert get_schema(c.tools['get-info'])['input_schema'] == c.tool_defs['get-info']['inputSchema']
        assert repr(c).startswith("MCPClient(") and '4 tools' in repr(c)
    with pytest.raises(ConnectionError, match='not connected'): c.tools['mul'](1)

def test_our_client_against_fastmcp_over_http(scripts):
    proc,port = start_server(lambda port: [sys.executable, str(scripts/'fast.py'), str(port)])
    try:
        with MCPClient(f'http://127.0.0.1:{port}/mcp', headers={'X-Test': '1'}) as c: check_fast_tools(c)
        with MCPClient(f'http://127.0.0.1:{port}/mcp') as c: assert c.tools['mul'](2) == 4
    finally: stop(proc)

def test_sync_use_inside_a_running_event_loop(scripts):
    "As in Jupyter: a loop already runs on this thread, and the sync functions still work"
    async def main():
        ns = mcp_tools(f"{sys.executable} {scripts/'fast.py'}", cwd=str(scripts))
        try:
            sync = ns['mul'](7)
            threaded = await call_func_async('mul', {'a': 8}, ns) # sync tool run in a worker thread
            return sync,threaded
        finally: ns['mul'].mcp_client.close()
    assert asyncio.run(main()) == (14, 16)

def test_async_use(scripts):
    async def main():
        async with MCPClient([sys.executable, str(scripts/'fast.py')], cwd=str(scripts), prefix='fast_') as c:
            ns = c.async_tools
            assert sorted(ns) == ['fast_describe', 'fast_get-info', 'fast_mul', 'fast_oops']
            many = await asyncio.gather(*[call_func_async('fast_mul', {'a': i}, ns) for i in range(5)])
            direct = await ns['fast_mul'](a=3, b=3)
            with pytest.raises(MCPToolError): await ns['fast_oops'](x=1)
            return many,direct
    assert asyncio.run(main()) == ([0, 2, 4, 6, 8], 9)

def test_our_client_against_our_server(scripts):
    "Both ways at once, over stdio: the schemas come back exactly as `get_schema` made them"
    ours = load(scripts/'ours.py')
    with MCPClient([sys.executable, str(scripts/'ours.py')]) as c:
        for nm in ('add', 'boom', 'shout', 'config'): assert get_schema(c.tools[nm]) == get_schema(getattr(ours, nm))
        assert c.tools['shout']('a', times=3) == 'A! A! A! '
        assert c.tools['config']({'k': 2}) == {'got': {'k': 2}}
        with pytest.raises(MCPToolError, match='ValueError: bad x: 1'): c.tools['boom'](1)

def test_connection_errors(scripts, tmp_path):
    with pytest.raises(ConnectionError, match='Could not connect to the MCP server'):
        MCPClient([sys.executable, '-c', 'import sys; sys.exit(3)'], connect_timeout=30).connect()
    with socket.socket() as closed: # bound but not listening: connections are refused, and no other process can take the port meanwhile
        closed.bind(('127.0.0.1', 0))
        with pytest.raises(ConnectionError, match='Could not connect'):
            MCPClient(f'http://127.0.0.1:{closed.getsockname()[1]}/mcp', connect_timeout=30).connect()
    hang = tmp_path/'hang.py'
    hang.write_text('import time; time.sleep(60)')
    with pytest.raises(TimeoutError, match='did not start and list its tools within 1s'):
        MCPClient([sys.executable, str(hang)], connect_timeout=1).connect()

def test_sync_use_in_a_real_jupyter_kernel(scripts, monkeypatch):
    "In Jupyter the kernel's event loop is running while a cell runs; sync tools, `call_func` and `await` all work there"
    nbformat,nbclient = pytest.importorskip('nbformat'),pytest.importorskip('nbclient')
    import os
    monkeypatch.setenv('PATH', str(Path(sys.executable).parent) + os.pathsep + os.environ.get('PATH', '')) # the kernel is this Python
    cells = [f"import asyncio, sys\nfrom toolslm_like.mcp import mcp_tools\nfrom toolslm_like.funccall import call_func\n"
             f"ns = mcp_tools([sys.executable, {str(scripts/'fast.py')!r}])\nprint(asyncio.get_event_loop().is_running())",
             "print(ns['mul'](3), call_func('mul', {'a': '5'}, ns))",
             "print(await ns['mul'].mcp_client.async_tools['mul'](a=2, b=21))",
             "ns['mul'].mcp_client.close()"]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nbclient.NotebookClient(nb, timeout=120, kernel_name='python3').execute()
    outs = [''.join(o.get('text', '') for o in c.outputs) for c in nb.cells]
    assert outs[:3] == ['True\n', '6 10\n', '42\n'], outs

# --- hostile results, slow tools and greedy clients

ODD_SERVER = '''
from toolslm_like.mcp import serve_mcp

def file_name(n:int # Anything
             )->str:
    "A file name that is not UTF-8, as os.listdir gives it"
    return b'caf\\xe9.txt'.decode('utf-8', 'surrogateescape')

def listing(n:int # Anything
           )->dict:
    "A listing holding such a name"
    return {'files': [b'\\xff.bin'.decode('utf-8', 'surrogateescape')]}

def fails(n:int # Anything
         ):
    "Fails with such a name in its message"
    raise FileNotFoundError(b'/tmp/\\xe9'.decode('utf-8', 'surrogateescape'))

def add(a:int, b:int=0)->int:
    "Add"
    return a+b

if __name__ == '__main__': serve_mcp([file_name, listing, fails, add], name='odd')
'''

def test_lone_surrogates_in_results_and_errors_keep_the_server_serving(tmp_path):
    (tmp_path/'odd.py').write_text(ODD_SERVER)
    params = StdioServerParameters(command=sys.executable, args=[str(tmp_path/'odd.py')], cwd=str(tmp_path))
    async def main():
        async with Client(params) as c:
            r = await c.call_tool('file_name', {'n': 1})
            assert (r.is_error, r.content[0].text) == (False, 'caf\ufffd.txt')
            r = await c.call_tool('listing', {'n': 1})
            assert r.structured_content == {'files': ['\ufffd.bin']} and not r.is_error
            r = await c.call_tool('fails', {'n': 1})
            assert r.is_error and r.content[0].text.endswith('FileNotFoundError: /tmp/\ufffd')
            r = await c.call_tool('add', {'a': 1, 'b': 2}) # still serving
            assert r.content[0].text == '3'
    asyncio.run(asyncio.wait_for(main(), 60))

held,started = threading.Event(),threading.Semaphore(0) # what the tools below wait on, and say they reached

def stuck(n:int # Anything
         )->str:
    "A tool that waits until the test lets it go (never before its call's time limit)"
    started.release()
    held.wait(60) # a generous limit, which only a hung test reaches
    return 'done'

def quick(x:int # Anything
         )->int:
    "A fast tool"
    return x

def test_http_calls_have_a_time_limit():
    "Six calls of a tool that does not end by itself, two at a time: each is stopped at the server's time limit"
    held.clear()
    try:
        with MCPHTTPServer([stuck], port=0, timeout=1, max_calls_per_client=2) as srv:
            async def main():
                async with Client(srv.url) as c: return await asyncio.gather(*(c.call_tool('stuck', {'n': i}) for i in range(6)))
            slow = asyncio.run(asyncio.wait_for(main(), 120)) # only a server that never stops a call reaches this limit
    finally: held.set()
    assert all(r.is_error and r.content[0].text.startswith('TimeoutError') and ' 1 seconds' in r.content[0].text for r in slow), slow[0].content

def test_one_client_cannot_starve_another():
    """A greedy client's six calls hold its two slots; another client's call is served meanwhile, and the greedy one's finish
    later. Both hold HTTP sessions (`legacy`): stateless (2026-07-28) clients at one address share one bound, on purpose"""
    held.clear()
    while started.acquire(blocking=False): pass
    try:
        with MCPHTTPServer([stuck, quick], port=0, timeout=120, max_calls_per_client=2) as srv:
            async def greedy():
                async with Client(srv.url, mode='legacy') as c:
                    return await asyncio.gather(*(c.call_tool('stuck', {'n': i}) for i in range(6)))
            async def polite():
                for _ in range(2): assert await asyncio.to_thread(started.acquire, timeout=60), "the greedy calls did not start"
                async with Client(srv.url, mode='legacy') as c: r = await c.call_tool('quick', {'x': 7})
                more = started.acquire(blocking=False) # a third greedy call running: its bound did not hold
                held.set() # now the greedy calls may end
                return r,more
            async def main(): return await asyncio.gather(greedy(), polite())
            slow,(fast,more) = asyncio.run(asyncio.wait_for(main(), 120))
    finally: held.set()
    assert fast.content[0].text == '7' and not fast.is_error, fast # served while the greedy client's calls held their slots
    assert not more # two of its calls ran, the rest waited their turn
    assert [r.content[0].text for r in slow] == ['done'] * 6, slow


# --- the TypeScript SDK's client (npm `@modelcontextprotocol/sdk`) against our server

TS_CLIENT = r'''// Drives a toolslm_like MCP server with the TypeScript SDK's own client: list the tools, compile each inputSchema
// with Ajv (draft 2020-12, as the SDK validates), and call tools. Prints one JSON line with what it saw.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import Ajv2020 from 'ajv/dist/2020.js';
const [how, target, ...rest] = process.argv.slice(2);
const transport = how === 'http' ? new StreamableHTTPClientTransport(new URL(target)) : new StdioClientTransport({ command: target, args: rest, env: { ...process.env } });
const client = new Client({ name: 'ts-check', version: '1.0.0' });
await client.connect(transport);
const { tools } = await client.listTools();
const ajv = new Ajv2020({ strict: false });
const out = { tools: {}, calls: {} };
for (const t of tools) {
  const validate = ajv.compile(t.inputSchema);
  out.tools[t.name] = { compiled: true, accepts_empty: validate({}) };
}
out.calls.add = await client.callTool({ name: 'add', arguments: { a: 1, b: 2 } });
out.calls.bad = await client.callTool({ name: 'add', arguments: { a: 'one' } });
out.valid_ship = ajv.compile(tools.find(t => t.name === 'ship').inputSchema)({ to: { street: '1 Main', city: 'Town' }, via: [] });
out.invalid_ship = ajv.compile(tools.find(t => t.name === 'ship').inputSchema)({ to: { street: '1 Main' } });
out.calls.ship = await client.callTool({ name: 'ship', arguments: { to: { street: '1 Main', city: 'Town' } } });
console.log(JSON.stringify(out));
await client.close();
'''

TS_SERVER = '''from dataclasses import dataclass
from toolslm_like.mcp import serve_mcp
@dataclass
class Address:
    "A postal address"
    street:str # Street and number
    city:str # City
    country:str='NZ' # ISO country code
def add(a:int, # The first number
        b:int=0 # The second number
       )->int:
    "Add two numbers"
    return a+b
def ship(to:Address, # Where to
         via:list[Address]|None=None # Stops
        )->str:
    "Ship a parcel"
    return f"to {to.city} via {len(via or [])} stops"
if __name__ == '__main__': serve_mcp([add, ship], name='ts')
'''

def ts_sdk_dir():
    "A folder whose node_modules holds `@modelcontextprotocol/sdk` (`TOOLSLM_MCP_TS_SDK`), or skip"
    import os, shutil
    d = os.environ.get('TOOLSLM_MCP_TS_SDK')
    if not d or not shutil.which('node') or not (Path(d)/'node_modules/@modelcontextprotocol/sdk').is_dir():
        pytest.skip("set TOOLSLM_MCP_TS_SDK to a folder where `npm install @modelcontextprotocol/sdk` was run")
    return Path(d)

@pytest.mark.parametrize('how', ['stdio', 'http'])
def test_the_typescript_sdk_uses_our_server_and_schemas(tmp_path, how):
    "Its client lists our tools, its Ajv compiles each inputSchema and agrees with our checks, and calls come back as they should"
    sdk = ts_sdk_dir()
    script = sdk/f'toolslm_check_{os.getpid()}_{how}.mjs'
    script.write_text(TS_CLIENT)
    (tmp_path/'ts_server.py').write_text(TS_SERVER)
    try:
        if how == 'stdio': r = subprocess.run(['node', str(script), 'stdio', sys.executable, str(tmp_path/'ts_server.py')], capture_output=True, text=True, timeout=120)
        else:
            srv = load(tmp_path/'ts_server.py')
            with MCPHTTPServer([srv.add, srv.ship], port=0) as http: r = subprocess.run(['node', str(script), 'http', http.url], capture_output=True, text=True, timeout=120)
    finally: script.unlink()
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out['tools'] == {'add': {'compiled': True, 'accepts_empty': False}, 'ship': {'compiled': True, 'accepts_empty': False}}
    assert (out['valid_ship'], out['invalid_ship']) == (True, False)
    # its outputSchema (an integer, in FastMCP's wrapper) checked by the TS client: the structured result fits it
    assert out['calls']['add'] == {'content': [{'type': 'text', 'text': '3'}], 'structuredContent': {'result': 3}, 'isError': False}
    assert out['calls']['bad']['isError'] and 'expected an integer' in out['calls']['bad']['content'][0]['text']
    assert out['calls']['ship']['content'][0]['text'] == 'to Town via 0 stops'
