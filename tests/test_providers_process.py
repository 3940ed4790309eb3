"Black-box checks of `toolslm_like.providers` in a fresh interpreter"
import subprocess, sys

def test_importing_and_using_providers_loads_no_sdk():
    code = '''import sys, toolslm_like.providers as p
for prov in p.PROVIDERS: p.tool_schemas(p.provider_tool_name, prov, strict='auto')
calls = p.parse_tool_calls({'type': 'tool_use', 'id': 'toolu_1', 'name': 'provider_tool_name', 'input': {'name': 'a.b'}})
p.format_tool_results([{**calls[0], 'output': 'a-b', 'error': None}])
print(sorted(m for m in ('openai', 'anthropic', 'google.genai', 'mcp', 'pydantic') if m in sys.modules))'''
    r = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == '[]', r.stdout
