"The worker of an index: timeouts, crashes, noisy tools, the environment allow-list, concurrency, what crosses and what not"
import asyncio, os, select, signal, sys, threading, time
from datetime import date
from pathlib import Path
import pytest
from toolslm_like.funccall import ArgumentError, get_schema, call_func, call_func_async
from toolslm_like.indexes import ToolIndex, ToolIndexError, ToolTimeoutError, WorkerError, RemoteToolError
from index_builders import write_files

TOOLS = '''
    import asyncio, os, subprocess, sys, time
    from dataclasses import dataclass
    from typing import Literal

    def add(a:int, # First
            b:int=2 # Second
           )->int: # The sum
        "Add two integers"
        return a + b

    def hang(with_child:bool=False): # Also start a child process that holds the pipes?
        "Never returns"
        if with_child: subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])
        while True: pass

    def die(how:Literal['exit', 'abort', 'kill']='exit'): # How to end the process
        "Ends the worker process"
        print('about to die', file=sys.stderr, flush=True)
        if how == 'exit': os._exit(9)
        if how == 'abort': os.abort()
        os.kill(os.getpid(), 9)

    def env_names()->list[str]:
        "The names of the worker's environment variables"
        return sorted(os.environ)

    def shout(n:int): # Bytes
        "Prints a lot to stdout and stderr, from Python and from a child process"
        print('y' * n)
        sys.stderr.write('z' * n)
        subprocess.run([sys.executable, '-c', f'import sys; sys.stdout.write("w" * {n}); sys.stderr.write("v" * {n})'])
        return 'done'

    def stdin_reader()->str:
        "Tries to read the worker's stdin"
        return sys.stdin.read()

    @dataclass
    class Report: text:str; score:float

    def report(text:str)->Report:
        "Returns a dataclass"
        return Report(text, 0.5)

    def unjsonable():
        "Returns something with no JSON form"
        return object()

    def sleepy(seconds:float): # How long
        "Sleeps, then says when"
        time.sleep(seconds); return seconds

    async def asleep(seconds:float): # How long
        "Sleeps asynchronously"
        await asyncio.sleep(seconds); return seconds

    def div(a:int, b:int)->float:
        "Divide a by b"
        return a / b

    def say(text:str): # What to print
        "Prints a line, then a line it does not end"
        print(text); sys.stderr.write('partial ' + text); return text

    def total(first:int, *more:int, scale:int=1): # First, more numbers, and a factor
        "Sums numbers, times scale"
        return (first + sum(more)) * scale

    def keys(**kw:int):
        "Takes any integers by name"
        return kw

    def weird(text:str): # Text to echo, with a lone surrogate added
        "Echoes text that no UTF-8 can hold, prints it, and names a file so"
        print('printed \\udcff', file=sys.stderr)
        return {'echo': text + ' \\udcff', 'name': os.fsdecode(b'caf\\xe9')}

    def pid()->int:
        "The worker's process id"
        return os.getpid()
'''
NAMES = ['add', 'hang', 'die', 'env_names', 'shout', 'stdin_reader', 'report', 'unjsonable', 'sleepy', 'asleep', 'keys', 'div', 'say', 'total', 'weird', 'pid']

@pytest.fixture(scope='module')
def idx(tmp_path_factory):
    tmp = tmp_path_factory.mktemp('idx')
    folder = write_files(tmp/'index', {'tools.toml': '[index]\ntools = [' + ', '.join(f'"box.{n}"' for n in NAMES) + ']\n', 'box.py': TOOLS})
    os.environ['TOOLSLM_TEST_SECRET'] = 'hunter2'
    try:
        with ToolIndex(folder, env={'API_KEY': 'k', 'HOME': '/nonexistent'}, cache_dir=tmp/'cache', timeout=20) as idx: yield idx
    finally: del os.environ['TOOLSLM_TEST_SECRET']

def test_a_hanging_tool_times_out_on_time_and_the_worker_restarts(idx):
    for with_child in (False, True):
        with pytest.raises(ToolTimeoutError, match=r"Tool 'box.hang' of index .* did not finish within 1 s; its worker was stopped"):
            idx.call('box.hang', {'with_child': with_child}, timeout=1)
        assert idx.ns['box.add'](1) == 3

def test_a_dying_worker_gives_a_clear_error_and_is_restarted(idx):
    with pytest.raises(WorkerError, match=r"(?s)exited with status 9.*about to die.*next call starts a fresh worker"): idx.ns['box.die']('exit')
    assert idx.ns['box.add'](1, 1) == 2
    with pytest.raises(WorkerError, match='killed by SIGABRT'): idx.ns['box.die']('abort')
    with pytest.raises(WorkerError, match='killed by SIGKILL'): idx.ns['box.die']('kill')
    assert call_func('box.add', {'a': 40}, idx.ns) == 42

def test_the_environment_is_an_allow_list(idx):
    names = set(idx.ns['box.env_names']())
    assert 'TOOLSLM_TEST_SECRET' not in names and 'API_KEY' in names
    assert names <= {'PATH', 'VIRTUAL_ENV', 'API_KEY', 'HOME', 'USER', 'LOGNAME', 'LANG', 'LANGUAGE', 'LC_ALL', 'LC_CTYPE', 'TZ', 'TMPDIR',
                     'TEMP', 'TMP', 'SYSTEMROOT', 'WINDIR', 'COMSPEC', 'LC_CTYPE', 'PWD', '__CF_USER_TEXT_ENCODING'}, names
    with pytest.raises(ValueError, match="not set in this process"): ToolIndex(idx.source, env=['NOT_SET_ANYWHERE_123'], cache_dir=idx.checkout.parent.parent)

def test_output_floods_neither_block_nor_corrupt_answers(idx):
    assert idx.call('box.shout', {'n': 3_000_000}) == 'done'
    assert idx.ns['box.add'](2, 2) == 4
    assert idx.ns['box.stdin_reader']() == ''

def test_stderr_holds_all_that_the_answered_calls_wrote(idx):
    for i in range(50): # the drain thread is never behind what `stderr` shows, even right after the answer
        assert idx.ns['box.say'](f'line {i}') == f'line {i}'
        assert idx.stderr.splitlines()[-2:] == [f'line {i}', f'partial line {i}'], idx.stderr

def test_results_come_back_as_json(idx):
    assert idx.ns['box.report']('hi') == {'text': 'hi', 'score': 0.5}
    with pytest.raises(TypeError, match='the tool returned a object, which has no JSON form'): idx.ns['box.unjsonable']()
    assert idx.ns['box.keys'](x=1, y=2) == {'x': 1, 'y': 2}
    assert idx.ns['box.total'](1, 2, 3, scale=2) == 12 and idx.ns['box.total'](4) == 4 # *args: the parameters before it go by position too

def test_argument_errors(idx):
    with pytest.raises(ArgumentError, match='a: expected an integer'): idx.call('box.add', {'a': 'many'})
    with pytest.raises(TypeError, match="missing a required argument: 'a'"): idx.ns['box.add']()
    assert call_func('box.add', {'a': 'x'}, idx.ns, raise_on_err=False).startswith("ArgumentError: Invalid arguments for tool 'add'")

def test_remote_errors_keep_builtin_types_and_the_tools_traceback(idx):
    with pytest.raises(ZeroDivisionError) as e: idx.ns['box.div'](1, 0)
    assert isinstance(e.value, RemoteToolError) and e.value.type_name == 'ZeroDivisionError' and "return a / b" in str(e.value)
    out = call_func('box.div', {'a': 1, 'b': 0}, idx.ns, raise_on_err=False)
    assert out.startswith('toolslm_like.indexes.RemoteZeroDivisionError: Traceback') and 'box.py' in out, out
    assert out.rstrip().endswith('ZeroDivisionError: division by zero') and 'toolslm_like/indexes.py' not in out, out
    with pytest.raises(ArgumentError, match='b: expected an integer, got null'): idx.ns['box.add'](1, None) # converted as a model's call would be
    out = call_func(idx.ns['box.add'], {'a': 1}, raise_on_err=False)
    assert out == 3

def test_calls_from_threads_and_tasks_are_all_answered(idx):
    out = [None] * 8
    def run(i): out[i] = idx.ns['box.add'](i, i)
    ts = [threading.Thread(target=run, args=(i,)) for i in range(8)]
    for t in ts: t.start()
    for t in ts: t.join()
    assert out == [2*i for i in range(8)]
    async def many(): return await asyncio.gather(*[call_func_async('box.asleep', {'seconds': 0.01}, idx.ns) for _ in range(5)])
    assert asyncio.run(many()) == [0.01] * 5

def test_the_protocol_never_unpickles_or_compiles_names():
    src = (Path(__file__).parent.parent/'toolslm_like'/'indexes.py').read_text()
    assert 'pickle' not in src and 'marshal' not in src and 'eval(' not in src and 'exec(' not in src

def test_refused_types_name_the_tool_and_parameter(tmp_path):
    folder = write_files(tmp_path/'index', {'tools.toml': '[index]\ntools = ["geo.plan", "geo.ok"]\n', 'geo.py': '''
        from dataclasses import dataclass
        @dataclass
        class Point:
            x: float
            y: float
        def plan(start:Point, stops:list[Point]=[]):
            "Plan a route"
        def ok(start:str)->Point:
            "Returns a point"
    '''})
    with pytest.raises(TypeError) as e: ToolIndex(folder, cache_dir=tmp_path/'cache') # as get_schema refuses a type: a TypeError (and a ToolIndexError)
    assert isinstance(e.value, ToolIndexError)
    msg = str(e.value)
    assert "geo.plan: parameter 'start' has type geo.Point, which cannot cross" in msg
    assert "geo.plan: parameter 'stops' has type geo.Point" in msg and 'geo.ok' not in msg, msg

def test_a_worker_that_cannot_start_is_a_load_error(tmp_path):
    folder = write_files(tmp_path/'index', {'tools.toml': '[index]\ntools = ["bad.f"]\n',
                                            'bad.py': 'import os, sys\nprint("broken at import", file=sys.stderr, flush=True)\nos._exit(4)\n'})
    with pytest.raises(ToolIndexError, match=r'(?s)could not start: the worker exited with status 4.*broken at import'): ToolIndex(folder, cache_dir=tmp_path/'cache')

def test_text_that_is_not_utf8_comes_back_as_text(idx):
    assert idx.ns['box.weird']('a \ud800') == {'echo': 'a \ufffd \ufffd', 'name': 'caf\ufffd'}
    assert 'printed \\udcff' in idx.stderr
    assert idx.ns['box.add'](1, 1) == 2

def test_a_worker_that_died_between_calls_is_replaced_and_says_so(idx):
    from toolslm_like.indexes import WorkerRestarted
    pid = idx.ns['box.pid'](); pidfd = os.pidfd_open(pid)
    os.kill(pid, signal.SIGKILL)
    select.select([pidfd], [], [], 30); os.close(pidfd) # once it ended (a deadline only a hung test reaches)
    with pytest.warns(WorkerRestarted, match='had stopped since the last call; a fresh one runs'): assert idx.ns['box.add'](2, 2) == 4
    pid = idx.ns["box.pid"]()
    os.kill(pid, signal.SIGSTOP) # stopped: also replaced, not waited for (that would end in the call's 20 s timeout)
    deadline = time.monotonic() + 30
    while open(f'/proc/{pid}/stat').read().rsplit(')', 1)[1].split()[0] not in 'Tt' and time.monotonic() < deadline:
        time.sleep(0.005)
    with pytest.warns(WorkerRestarted): assert idx.ns['box.add'](3, 3) == 6

def test_a_detached_grandchild_that_outlives_its_worker_is_killed_with_it(tmp_path):
    "A process the tool detached (setsid) outlives the worker, out of its tree, but holding its pipes: `kill` finds it by them"
    from toolslm_like.worker import Worker, worker_env
    child = ("import os, time\nfrom toolslm_like.worker import serve\n"
             "def handle(m):\n"
             "    if os.fork() == 0:\n"
             "        os.setsid(); open(m['file'], 'w').write(str(os.getpid())); time.sleep(600)\n"
             "    time.sleep(0.2); os._exit(0)\n"
             "serve(handle)\n")
    w = Worker([sys.executable, '-c', child], env=worker_env())
    try:
        with pytest.raises(WorkerError, match='exited with status 0'): w.request({'file': str(tmp_path/'pid')}, 10)
        pid = int((tmp_path/'pid').read_text())
        pidfd = os.pidfd_open(pid) # to stop it below if the test fails, never a process that reused its pid
    finally: w.kill()
    try:
        deadline = time.monotonic() + 30 # only a hung test reaches it
        while os.path.exists(f'/proc/{pid}') and Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()[0] not in 'ZX':
            assert time.monotonic() < deadline, "the detached grandchild is still running"
            time.sleep(0.01)
    finally:
        try: signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        except ProcessLookupError: pass
        os.close(pidfd)
