"""Our MCP server and client together, over streamable HTTP: a tool's progress and log messages through its
`ToolContext`, a cancelled call's tool told, output schemas and structured content, images, a hand-written schema
with names Python cannot spell, and what an older protocol version gets"""
import asyncio, base64, dataclasses, json, threading, time
from pathlib import Path
import pytest

pytest.importorskip('mcp')
jsonschema = pytest.importorskip('jsonschema')
import httpx
from toolslm_like.funccall import ToolContext, get_schema, call_func
from toolslm_like.interpreter import ImagePart, ToolResult
from toolslm_like.mcp import MCPClient, MCPHTTPServer, MCPToolError, tool_function

PNG = base64.b64decode('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==')

def count(n:int, # How far to count
          ctx:ToolContext)->int:
    "Count to n, reporting progress and logging at two levels"
    for i in range(1, n + 1):
        ctx.report_progress(i, n, f"at {i}")
        ctx.log('debug', f"step {i}")
    ctx.log('warning', {'done': n})
    return n

@dataclasses.dataclass
class Weather:
    "The weather"
    temperature:float # Degrees Celsius
    conditions:str # In words

def weather(city:str # Which city
           )->Weather:
    "The weather in a city"
    return Weather(21.5, f"sunny in {city}")

def picture(caption:str # Under the picture
           )->ToolResult:
    "A one-pixel picture with a caption"
    return ToolResult([caption, PNG])

seen = {}
def wait_until_cancelled(ctx:ToolContext)->str:
    "Run until told the call was cancelled"
    deadline = time.monotonic() + 60
    while not ctx.cancelled and time.monotonic() < deadline: time.sleep(0.01)
    seen['sync'] = ctx.cancelled
    return 'ended'

async def await_forever()->str:
    "Wait for ever (until cancelled)"
    try: await asyncio.sleep(3600)
    except asyncio.CancelledError:
        seen['async'] = True
        raise
    return 'never'

def _send(name, args): return f"from {args['from']}, {args.get('max-tokens', 'any')} tokens"
search = tool_function({'name': 'search', 'description': 'Search a range', 'inputSchema': {
    '$schema': 'https://json-schema.org/draft/2020-12/schema', 'type': 'object', 'title': 'search',
    'properties': {'from': {'type': 'string'}, 'max-tokens': {'type': 'integer', 'minimum': 1}},
    'required': ['from']}}, _send)

@pytest.fixture(scope='module')
def server():
    with MCPHTTPServer([count, weather, picture, wait_until_cancelled, await_forever, search], timeout=120) as srv:
        yield srv

def until(cond, secs=30):
    "Wait for `cond()` (no timing asserted: only that it happens)"
    deadline = time.monotonic() + secs
    while not cond() and time.monotonic() < deadline: time.sleep(0.01)
    return cond()

def test_progress_and_logs_reach_the_client_at_its_level(server):
    progress,logs = [],[]
    with MCPClient(server.url, on_progress=lambda *a: progress.append(a), on_log=lambda *a: logs.append(a),
                   log_level='warning') as c:
        assert c.tools['count'](3) == 3
    assert progress == [('count', float(i), 3.0, f"at {i}") for i in (1, 2, 3)], progress
    assert until(lambda: logs) and logs == [('warning', {'done': 3})], logs # the debug ones are below its level
    with MCPClient(server.url, on_log=lambda *a: logs.append(a), log_level='debug') as c: c.tools['count'](2)
    assert until(lambda: len(logs) == 4) and logs[1:] == [('debug', 'step 1'), ('debug', 'step 2'), ('warning', {'done': 2})]

def test_no_progress_without_a_token(server):
    with MCPClient(server.url) as c: assert c.tools['count'](2) == 2 # the tool reports; nobody asked: nothing sent

@pytest.mark.parametrize('tool', ['wait_until_cancelled', 'await_forever'])
def test_a_cancelled_calls_tool_is_told(server, tool):
    "The client gives up on the call (its time limit), so the server cancels it: a sync tool sees ctx.cancelled, an async one is cancelled"
    key = 'sync' if tool == 'wait_until_cancelled' else 'async'
    seen.pop(key, None)
    with MCPClient(server.url, timeout=0.5) as c:
        with pytest.raises((TimeoutError, MCPToolError), match='timed out|did not answer'): c.tools[tool]()
    assert until(lambda: key in seen) and seen[key] is True, seen

def test_output_schema_and_structured_content(server):
    with MCPClient(server.url) as c:
        out = c.tool_defs['weather']['outputSchema']
        w = c.tools['weather']('Oslo')
        assert w == {'temperature': 21.5, 'conditions': 'sunny in Oslo'}
        jsonschema.Draft202012Validator(out).validate(w)
        assert c.tool_defs['count']['outputSchema'] == {'type': 'object', 'properties': {'result': {'type': 'integer'}},
                                                        'required': ['result']}
        assert 'outputSchema' not in c.tool_defs['await_forever'] or c.tool_defs['await_forever']['outputSchema']

def test_images_travel_as_images(server):
    with MCPClient(server.url) as c:
        r = c.tools['picture']('a red dot')
    assert r == ToolResult(['a red dot', ImagePart(PNG)]), r

def test_a_hand_written_schema_and_its_names_are_kept(server):
    with MCPClient(server.url) as c:
        f = c.tools['search']
        assert get_schema(f, 'inputSchema')['inputSchema'] == search.mcp_tool['inputSchema'] == c.tool_defs['search']['inputSchema']
        assert call_func('search', {'from': 'a', 'max-tokens': '5'}, c.tools) == 'from a, 5 tokens'
        assert f(from_='b') == 'from b, any tokens' # the Python signature's names
        bad = call_func('search', {'from': 'a', 'max-tokens': 0}, c.tools, raise_on_err=False)
        assert 'ArgumentError' in bad and 'at least 1' in bad, bad
        assert 'max-tokens' in bad and 'max_tokens' not in bad, bad # the names the model sent, in what it is told
        missing = call_func('search', {'max-tokens': 2}, c.tools, raise_on_err=False)
        assert "from: missing" in missing and 'from_' not in missing, missing

def spec_check(version:str, definition:str, value):
    "Check `value` against a definition of the spec's schema.json for `version` (kept in tests/mcp_spec)"
    spec = json.loads((Path(__file__).parent/'mcp_spec'/f'{version}.json').read_text())
    jsonschema.Draft7Validator({**spec, '$ref': f'#/definitions/{definition}'}).validate(value)

def raw_session(url, version):
    "A client that speaks protocol `version` over plain HTTP: `call(method, params)` gives the messages that came back"
    h = {'accept': 'application/json, text/event-stream', 'content-type': 'application/json'}
    http = httpx.Client(timeout=30)
    r = http.post(url, headers=h, json={'jsonrpc': '2.0', 'id': 1, 'method': 'initialize', 'params': {
        'protocolVersion': version, 'capabilities': {}, 'clientInfo': {'name': 'raw', 'version': '1'}}})
    init = r.json() if 'json' in r.headers['content-type'] else json.loads(r.text.split('data:', 1)[1].split('\n')[0])
    assert init['result']['protocolVersion'] == version
    spec_check(version, 'JSONRPCResponse', init)
    spec_check(version, 'InitializeResult', init['result'])
    h = {**h, 'mcp-session-id': r.headers['mcp-session-id'], 'mcp-protocol-version': version}
    http.post(url, headers=h, json={'jsonrpc': '2.0', 'method': 'notifications/initialized'})
    def call(method, params):
        r = http.post(url, headers=h, json={'jsonrpc': '2.0', 'id': 2, 'method': method, 'params': params})
        if 'event-stream' in r.headers['content-type']:
            msgs = [json.loads(l[5:]) for l in r.text.splitlines() if l.startswith('data:')]
        else: msgs = [r.json()]
        for m in msgs: spec_check(version, 'JSONRPCMessage', m) # every message as the version's schema has it
        spec_check(version, 'CallToolResult' if method == 'tools/call' else 'Result', msgs[-1]['result'])
        return msgs
    return call

def audio_tool():
    "A tool that returns a sound"
    import mcp_types as mt
    return [mt.TextContent(text='listen:'), mt.AudioContent(data='UklGRiYAAABXQVZF', mime_type='audio/wav')]

def test_an_older_version_gets_only_what_it_has():
    with MCPHTTPServer([audio_tool, weather]) as srv:
        old,new = raw_session(srv.url, '2024-11-05'),raw_session(srv.url, '2025-06-18')
        r = old('tools/call', {'name': 'audio_tool', 'arguments': {}})[-1]['result']
        assert [b['type'] for b in r['content']] == ['text', 'text'] and 'audio left out' in r['content'][1]['text'], r
        r = old('tools/call', {'name': 'weather', 'arguments': {'city': 'Oslo'}})[-1]['result']
        assert 'structuredContent' not in r, r
        r = new('tools/call', {'name': 'audio_tool', 'arguments': {}})[-1]['result']
        assert [b['type'] for b in r['content']] == ['text', 'audio'], r
        assert new('tools/call', {'name': 'weather', 'arguments': {'city': 'Oslo'}})[-1]['result']['structuredContent']
