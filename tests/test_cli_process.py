"""The installed `toolslm-like` command, run as a subprocess: what it prints, its exit codes and its messages"""
import asyncio, json, runpy, shutil, socket, subprocess, sys, textwrap, time
from pathlib import Path
import pytest
from toolslm_like import __version__
from toolslm_like.funccall import get_schema, python

def command():
    "The `toolslm-like` console script beside this Python, or the same entry point through `-c`"
    exe = shutil.which('toolslm-like', path=str(Path(sys.executable).parent))
    return [exe] if exe else [sys.executable, '-c', 'import sys; from toolslm_like.cli import main; sys.exit(main())']

def cli(*args, cwd=None, stdin=None, timeout=120):
    return subprocess.run(command() + list(args), capture_output=True, text=True, cwd=cwd, input=stdin, timeout=timeout)

CALC = '''
def add(a:int, # The first number
        b:int=0 # The second number
       )->int: # The sum
    "Add two numbers"
    return a+b

def div(a:float, # Dividend
        b:float # Divisor
       )->float:
    "Divide a by b"
    return a/b

def undocumented(x): return x

async def later(s:str # Some text
               )->list:
    "An async tool"
    return [s, s]

class Shop:
    @staticmethod
    def price(item:str # What to price
             )->float:
        "The price of an item"
        return {'tea': 2.5}[item]
'''

@pytest.fixture
def folder(tmp_path):
    (tmp_path/'calc.py').write_text(CALC)
    return tmp_path

def test_schema_prints_get_schema():
    r = cli('schema', 'toolslm_like.funccall:python')
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == get_schema(python)
    assert '"name": "python"' in r.stdout and '"input_schema"' in r.stdout

def test_schema_of_a_module_from_the_current_folder(folder):
    r = cli('schema', 'calc', cwd=folder)
    assert r.returncode == 0, r.stderr
    assert [s['name'] for s in json.loads(r.stdout)] == ['add', 'div', 'later']
    assert 'leaving out undocumented' in r.stderr
    r = cli('schema', 'calc:add,Shop.price', cwd=folder)
    assert [s['name'] for s in json.loads(r.stdout)] == ['add', 'Shop.price']
    r = cli('schema', str(folder/'calc.py') + ':add')
    assert json.loads(r.stdout)['input_schema']['properties']['a'] == {'type': 'integer', 'description': 'The first number'}

def test_schema_in_a_providers_dialect(folder):
    r = cli('schema', 'calc:add,Shop.price', '--provider', 'openai', '--strict', cwd=folder)
    assert r.returncode == 0, r.stderr
    tools = json.loads(r.stdout)
    assert [t['type'] for t in tools] == ['function', 'function']
    assert [t['function']['name'] for t in tools] == ['add', 'Shop-price'] # the name mapping of toolslm_like.providers
    assert all(t['function']['strict'] is True for t in tools)
    assert tools[0]['function']['parameters']['additionalProperties'] is False
    r = cli('schema', 'toolslm_like.funccall:python', '--provider', 'gemini')
    assert r.returncode == 0 and json.loads(r.stdout)['name'] == 'python', r.stderr

@pytest.mark.parametrize('args,message', [
    (('schema', 'calc:add', '--provider', 'nope'), "Unknown provider 'nope'"),
    (('schema', 'calc:add', '--provider', 'gemini', '--strict'), "Cannot make gemini schemas"),
    (('schema', 'no_such_module_xyz:f'), "Cannot find module 'no_such_module_xyz'"),
    (('schema', 'calc:ad'), "calc has no function 'ad'. Did you mean 'add'?"),
    (('schema', 'calc:undocumented'), "undocumented cannot be a tool: 'undocumented' has no docstring"),
    (('schema', 'missing.py:f'), "There is no file 'missing.py'"),
    (('schema', 'calc:add', '--strict'), "--strict goes with --provider"),
    (('call', 'calc:add', '{"a": 1'), "The arguments are not valid JSON"),
    (('call', 'calc:add', '[1]'), "must be a JSON object"),
    (('call', 'calc', '{}'), "call runs one function"),
    (('serve', 'calc:nope'), "calc has no function 'nope'"),
])
def test_clear_messages_and_exit_code_2(folder, args, message):
    r = cli(*args, cwd=folder)
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert message in r.stderr, r.stderr
    assert r.stdout == '' and 'Traceback' not in r.stderr

def test_a_module_that_fails_to_import(folder):
    (folder/'broken.py').write_text('import no_such_dependency_xyz\n')
    r = cli('schema', 'broken:f', cwd=folder)
    assert r.returncode == 2 and "Module 'broken' was found, but importing it failed: ModuleNotFoundError: No module named 'no_such_dependency_xyz'" in r.stderr, r.stderr

def test_serve_without_the_mcp_sdk(folder):
    "Without the optional extra, serve says how to install it"
    code = "import sys; sys.modules['mcp'] = None; from toolslm_like.cli import main; sys.exit(main(['serve', 'calc:add']))"
    r = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, cwd=folder, timeout=120)
    assert r.returncode == 2 and "needs the MCP SDK: pip install 'toolslm_like[mcp]'" in r.stderr and 'Traceback' not in r.stderr, r.stderr

def test_no_command_prints_help():
    r = cli()
    assert r.returncode == 2 and 'usage: toolslm-like' in r.stderr

def test_version():
    r = cli('--version')
    assert (r.returncode, r.stdout, r.stderr) == (0, f'toolslm-like {__version__}\n', '')

def python_m(*args, cwd=None):
    return subprocess.run([sys.executable, '-m', 'toolslm_like', *args], capture_output=True, text=True, cwd=cwd, timeout=120)

def test_python_m_is_the_same_command(folder):
    "`python -m toolslm_like` (this venv's python) runs the `toolslm-like` command: the same usage, version and commands"
    r = python_m(cwd=folder)
    assert (r.returncode, r.stdout) == (2, '') and r.stderr.startswith('usage: toolslm-like') and r.stderr == cli(cwd=folder).stderr, r.stderr
    r = python_m('--version')
    assert (r.returncode, r.stdout) == (0, f'toolslm-like {__version__}\n'), r
    r = python_m('call', 'calc:add', '{"a": 1, "b": "2"}', cwd=folder)
    assert (r.returncode, r.stdout, r.stderr) == (0, '3\n', '')
    r = python_m('schema', 'calc:ad', cwd=folder)
    assert r.returncode == 2 and "calc has no function 'ad'" in r.stderr and 'Traceback' not in r.stderr, r.stderr

def test_call_runs_one_call_as_a_model_would(folder):
    r = cli('call', 'calc:add', '{"a": 1, "b": "2"}', cwd=folder)
    assert (r.returncode, r.stdout, r.stderr) == (0, '3\n', '')
    r = cli('call', 'calc:add', '-', cwd=folder, stdin='{"a": 5}')
    assert (r.returncode, r.stdout) == (0, '5\n')
    r = cli('call', 'calc:later', '{"s": "hi"}', cwd=folder)
    assert (r.returncode, json.loads(r.stdout)) == (0, ['hi', 'hi']), r.stderr
    r = cli('call', 'calc:Shop.price', '{"item": "tea"}', cwd=folder)
    assert (r.returncode, r.stdout) == (0, '2.5\n')
    r = cli('call', 'calc:add', '{"a": "one"}', cwd=folder)
    assert r.returncode == 1 and r.stderr == "ArgumentError: Invalid arguments for tool 'add':\n- a: expected an integer, got 'one' (a string)\n"
    r = cli('call', 'calc:div', '{"a": 1, "b": 0}', cwd=folder)
    assert r.returncode == 1 and r.stderr.rstrip().endswith('ZeroDivisionError: float division by zero') and 'return a/b' in r.stderr
    r = cli('call', 'toolslm_like.funccall:python', '{"code": "sum(range(5))"}')
    assert (r.returncode, r.stdout) == (0, '10\n')

def test_call_prints_only_the_result_on_stdout(folder):
    "What the function prints goes to stderr, so the result can be piped into another program"
    (folder/'chatty.py').write_text('def chatty(n:int # A number\n          )->dict:\n    "Talk, then return"\n    print("working on", n)\n    return {"n": n}\n')
    r = cli('call', 'chatty:chatty', '{"n": 3}', cwd=folder)
    assert r.returncode == 0 and json.loads(r.stdout) == {'n': 3}, (r.stdout, r.stderr)
    assert r.stderr == 'working on 3\n'

def test_call_timeout(folder):
    "A call past its time limit is stopped: the command ends (well before the hour the call would spin) with a TimeoutError"
    (folder/'slow.py').write_text('import time\ndef spin(secs:float # How long\n        ):\n    "Busy"\n    end = time.monotonic()+secs\n    while time.monotonic() < end: pass\n')
    r = cli('call', 'slow:spin', '{"secs": 3600}', '--timeout', '0.5', cwd=folder) # if the call were not stopped, `cli` would time out
    assert r.returncode == 1 and 'TimeoutError: spin ran for longer than 0.5 seconds' in r.stderr, r.stderr

def test_serve_over_stdio(folder):
    mcp = pytest.importorskip('mcp')
    from mcp import Client, StdioServerParameters
    async def main():
        cmd = command()
        params = StdioServerParameters(command=cmd[0], args=cmd[1:] + ['serve', 'calc:add,Shop.price'], cwd=str(folder))
        async with Client(params) as c:
            assert c.server_info.name == 'calc' # named after the module
            tools = (await c.list_tools()).tools
            r = await c.call_tool('add', {'a': 2, 'b': 40})
            p = await c.call_tool('Shop.price', {'item': 'tea'})
            bad = await c.call_tool('add', {})
            return tools,r,p,bad
    tools,r,p,bad = asyncio.run(main())
    assert [t.name for t in tools] == ['add', 'Shop.price']
    assert tools[0].input_schema == get_schema(runpy.run_path(str(folder/'calc.py'))['add'])['input_schema']
    assert r.content[0].text == '42' and p.content[0].text == '2.5'
    assert bad.is_error and 'a: missing required argument' in bad.content[0].text

def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]

def serve_http(folder, tries=5):
    "(process, port): `toolslm-like serve calc --http` on a free port, listening; if another process takes the port first, another is tried"
    for _ in range(tries):
        port = free_port()
        proc = subprocess.Popen(command() + ['serve', 'calc', '--http', '--port', str(port)], cwd=folder, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60 # only a guard against a hang: a working server listens within a second or two
        while proc.poll() is None and time.monotonic() < deadline:
            try:
                with socket.create_connection(('127.0.0.1', port), timeout=0.2): return proc, port
            except OSError: time.sleep(0.05)
        if proc.poll() is None: proc.kill(); proc.wait(); pytest.fail('the server did not start')
        err = proc.stderr.read()
        if 'address already in use' not in err.lower(): pytest.fail(f"the server exited: {err}")
    pytest.fail(f"{tries} free ports in a row were taken before the server could bind them")

def test_serve_over_http(folder):
    pytest.importorskip('mcp')
    from toolslm_like.mcp import MCPClient
    proc,port = serve_http(folder)
    try:
        with MCPClient(f'http://127.0.0.1:{port}/mcp') as c:
            assert sorted(c.tools) == ['add', 'div', 'later']
            assert c.tools['later']('x') == ['x', 'x'] # typed, as their outputSchemas say
            assert c.tools['div'](a=1, b=4) == 0.25
    finally:
        proc.terminate(); proc.wait(10)

ODD = '''
print('importing odd')
def name_of(n:int # Anything
           )->str:
    "A file name that is not UTF-8, as os.listdir gives it"
    return b'caf\\xe9.txt'.decode('utf-8', 'surrogateescape')

def add(a:int, # A number
        b:int=0 # Another
       )->int:
    "Add"
    return a+b
'''

@pytest.mark.parametrize('args', [
    ('call', 'odd:add', '{"a": 1}', '--timeout', 'nan'), ('call', 'odd:add', '{"a": 1}', '--timeout', 'inf'),
    ('call', 'odd:add', '{"a": 1}', '--timeout', '1e300'), ('call', 'odd:add', '{"a": 1}', '--timeout', '-1'),
    ('call', 'odd:add', '{"a": 1'), ('call', 'odd:add', '[' * 100_000), ('call', 'odd:add', '{"a": ' + '9' * 10_000 + '}'),
    ('call', 'odd:add', '{"a": ' + '[' * 5000 + ']' * 5000 + '}')])
def test_hostile_input_one_line_and_a_nonzero_exit(tmp_path, args):
    (tmp_path/'odd.py').write_text(ODD)
    r = cli(*args, cwd=tmp_path)
    assert r.returncode != 0 and r.stdout == '', (r.returncode, r.stdout)
    lines = [l for l in r.stderr.splitlines() if l != 'importing odd']
    assert len(lines) == 1 and 'Traceback' not in r.stderr, r.stderr

def test_a_result_with_a_lone_surrogate(tmp_path):
    (tmp_path/'odd.py').write_text(ODD)
    r = cli('call', 'odd:name_of', '{"n": 1}', cwd=tmp_path)
    assert r.returncode == 1 and r.stdout == 'caf\\udce9.txt\n', r
    assert r.stderr.startswith('importing odd\n') and r.stderr.count('\n') == 2 and 'Traceback' not in r.stderr, r.stderr

def test_prints_while_importing_go_to_stderr(tmp_path):
    (tmp_path/'odd.py').write_text(ODD)
    r = cli('call', 'odd:add', '{"a": 2, "b": 3}', cwd=tmp_path)
    assert (r.returncode, r.stdout, r.stderr) == (0, '5\n', 'importing odd\n')
    r = cli('schema', 'odd:add', cwd=tmp_path)
    assert json.loads(r.stdout)['name'] == 'add' and r.stderr == 'importing odd\n'
