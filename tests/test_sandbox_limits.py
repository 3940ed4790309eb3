"""Black-box tests of `toolslm_like.sandbox` as an attacker would try it: limits that burn CPU or fork, processes that
hide, pipes flooded or half written, what the code can see of the machine, and the sandbox run by an ordinary user.
Each checks that the parent is unharmed, the error is clear, and the next run works."""
import os, resource, shutil, signal, socket, subprocess, sys, tempfile, time, warnings
from pathlib import Path
import pytest
from toolslm_like.sandbox import Sandbox, SandboxError, SandboxWarning, kill_user_processes

_limit_names = ('RLIMIT_AS', 'RLIMIT_CPU', 'RLIMIT_FSIZE', 'RLIMIT_NOFILE', 'RLIMIT_NPROC')
root = os.geteuid() == 0
has_bwrap = shutil.which('bwrap') is not None

def require_bwrap():
    "Skip, saying why, where bubblewrap is missing; CI (TOOLSLM_LIKE_REQUIRE_BWRAP set) fails instead"
    if has_bwrap: return
    msg = "bubblewrap is not installed (apt-get install -y bubblewrap)"
    if os.environ.get('TOOLSLM_LIKE_REQUIRE_BWRAP'): pytest.fail(f"{msg}: the isolation tests need it")
    pytest.skip(f"{msg}; CI installs it and runs this test")

def parent_state():
    env = {k: v for k,v in os.environ.items() if k != 'PYTEST_CURRENT_TEST'}
    return {n: resource.getrlimit(getattr(resource, n)) for n in _limit_names}, os.getcwd(), env

def user_tasks(uid, alive_only=False):
    "Processes that `uid` runs now (zombies too, unless `alive_only`)"
    n = 0
    for p in os.scandir('/proc'):
        if p.name.isdigit():
            try: n += p.stat().st_uid == uid and not (alive_only and open(f'/proc/{p.name}/stat').read().rsplit(')', 1)[1].split()[0] == 'Z')
            except OSError: pass
    return n

@pytest.fixture
def sb():
    before = parent_state()
    s = Sandbox(timeout=10, cpu_s=1, memory_mb=256, max_procs=6) # a roomy timeout: a busy machine must not turn a slow run into a timeout
    yield s
    uid,workdir = s._uid,s.workdir
    s.close()
    assert parent_state() == before # the parent is unharmed
    assert not os.path.exists(workdir)
    if uid is not None: assert user_tasks(uid, alive_only=True) == 0 # nothing the sandbox started outlives it

def isolated(s): return not s.unprotected

def wait_for(cond, deadline:float=30): # a deadline that only a hung test reaches
    "Wait until `cond()` is true, checking every few ms; its last value"
    end = time.monotonic() + deadline
    while not (v := cond()) and time.monotonic() < end: time.sleep(0.005)
    return v

def _frozen(s)->bool|None:
    "Does the kernel say the sandbox's cgroup is frozen? None where it has no cgroup freezer"
    cg = s._state.get('cgroup')
    if cg is None or cg.version == 1 and 'freezer' not in cg.dirs: return None
    if cg.version == 2: return 'frozen 1' in (cg.dirs['pids']/'cgroup.events').read_text().splitlines()
    return (cg.dirs['freezer']/'freezer.state').read_text().strip() == 'FROZEN'

def _thread_states(s)->set:
    "The states of the threads of the sandbox's worker (T: stopped)"
    out = set()
    for t in os.listdir(f'/proc/{s.pid}/task'):
        try: out.add(open(f'/proc/{s.pid}/task/{t}/stat').read().rsplit(')', 1)[1].split()[0])
        except OSError: pass
    return out

def _held(s)->bool:
    "Can nothing of sandbox `s` run: its cgroup frozen (the kernel says so), or, without a freezer, each thread stopped?"
    frozen = _frozen(s)
    return frozen if frozen is not None else _thread_states(s) <= {'T', 't'} # (frozen threads show D under cgroup v1)

def assert_held(s):
    "Between runs: the sandbox's cgroup is frozen wherever it has a freezer, else each thread of its worker stopped"
    assert wait_for(lambda: _held(s)), {'threads': _thread_states(s), 'frozen': _frozen(s)}

def test_fork_bomb_is_contained(sb):
    r = sb.run("import os\nwhile True: os.fork()")
    assert 'BlockingIOError: [Errno 11] Resource temporarily unavailable' in r and r.endswith('[Sandbox limit: the sandbox allows 6 processes and threads in all.]'), r
    if sb._uid is not None: assert user_tasks(sb._uid) == 1 # the worker alone: the forked processes were killed and reaped after the run
    assert sb.run('6*7') == 42
    assert sb.run("import subprocess; subprocess.run(['true']).returncode") == 0 # forking works again

def test_fork_bomb_that_ignores_errors_is_stopped_on_time(sb):
    r = sb.run("import os\nwhile True:\n    try: os.fork()\n    except OSError: pass", timeout=2)
    assert r.startswith(('TimeoutError: the code ran for longer than 2 seconds', 'SandboxCrashed')) and 'state' in r, r
    if sb._uid is not None: assert user_tasks(sb._uid, alive_only=True) == 0
    assert sb.run('6*7') == 42

def test_processes_that_leave_the_session_die_with_the_run(sb):
    r = sb.run("import os, time\nif os.fork() == 0:\n    os.setsid()\n    while True: time.sleep(1)\ntime.sleep(0.1)\n'started'")
    assert r == 'started'
    if sb._uid is not None: assert user_tasks(sb._uid) == 1
    if isolated(sb): assert sb.run("import os; sorted('me' if p == str(os.getpid()) else p for p in os.listdir('/proc') if p.isdigit())") == ['1', 'me']
    assert sb.run('6*7') == 42

@pytest.mark.timing # a hang here is a wait for the grandchild's 600 s: only a clock tells it from a slow machine
def test_a_detached_grandchild_holding_the_pipes_neither_hangs_a_timeout_nor_close():
    s = Sandbox(timeout=10)
    code = ("import os, subprocess, sys, time\n"
            "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'], start_new_session=True, close_fds=False)\n"
            "time.sleep(600)")
    t = time.monotonic()
    assert s.run(code, timeout=1).startswith('TimeoutError')
    assert time.monotonic() - t < 1 + 30 # wide: a loaded machine; the wrong answer waits 600 s
    assert s.run(code.rsplit('\n', 1)[0] + "\n'left'") == 'left' # and one left running between runs
    t = time.monotonic(); s.close()
    assert time.monotonic() - t < 30 # wide, as above
    if s._uid is not None: assert user_tasks(s._uid, alive_only=True) == 0

def test_cpu_time_per_run(sb):
    r = sb.run("while True: pass", timeout=30)
    assert r.startswith('SandboxCrashed') and 'used up its CPU time limit (1 s per run)' in r and 'state' in r, r # not the 30 s timeout
    assert sb.run('6*7') == 42
    for _ in range(3): # the limit is per run: several runs of 0.5 s each are fine
        assert sb.run("import time\nt = time.process_time()\nwhile time.process_time() - t < 0.5: pass\n'done'") == 'done'

_set_by_us = ('RLIMIT_CPU', 'RLIMIT_AS', 'RLIMIT_FSIZE', 'RLIMIT_NOFILE', 'RLIMIT_CORE', 'RLIMIT_NPROC')

def test_every_limit_the_sandbox_sets_is_hard(sb):
    "The code cannot raise any limit we set: each is set hard (the kernel refuses to raise a hard limit without CAP_SYS_RESOURCE)"
    lims = sb.run(f"import resource\n{{n: list(resource.getrlimit(getattr(resource, n))) for n in {_set_by_us}}}")
    # SIGXCPU 1 s from the run's start (rounded up to whole seconds, as the kernel counts), SIGKILL a second later at most
    assert lims['RLIMIT_CPU'] == [2, 3] and lims['RLIMIT_CORE'] == [0, 0] and lims['RLIMIT_NOFILE'] == [64, 64], lims
    for n,(soft,hard) in lims.items():
        assert hard == -1 and soft == -1 or hard in (soft, soft + 1), (n, soft, hard) # not ours, or hard
        r = sb.run(f"import resource\nresource.setrlimit(resource.{n}, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))")
        assert hard == -1 or 'ValueError: not allowed to raise maximum limit' in r, (n, r)

def test_a_worker_that_used_its_cpu_slack_goes_on_in_a_fresh_fork(sb):
    "Past a second of CPU time over its runs, the worker hands its state to a fresh fork: same limits, its count at zero"
    pid = sb.pid
    assert sb.run("import time, resource\nkept = 1\nwhile time.process_time() < 1.2: pass\nlist(resource.getrlimit(resource.RLIMIT_CPU))") == [2, 3]
    assert sb.pid != pid, pid
    assert sb.run("import time, resource\n[kept, time.process_time() < 0.5, list(resource.getrlimit(resource.RLIMIT_CPU))]") == [1, True, [2, 3]]
    r = sb.run("import threading, time\nthreading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n"
               "t = time.process_time()\nwhile time.process_time() - t < 1.2: pass\n'burnt'")
    assert r.startswith('burnt\n[The sandbox worker went on in a fresh process') and 'the 1 thread(s)' in r, r # it says so
    assert sb.run("import threading; [kept, threading.active_count()]") == [1, 1]
    r = sb.run("while True: pass", timeout=30) # the fresh fork's budget is the run's
    assert 'used up its CPU time limit (1 s per run)' in r, r

def test_cpu_limit_holds_when_the_code_raises_it(sb):
    r = sb.run("import resource, signal\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)\n"
               f"for n in {_set_by_us}:\n    try: resource.setrlimit(getattr(resource, n), (resource.RLIM_INFINITY,) * 2)\n"
               "    except ValueError: pass\n"
               "try: resource.setrlimit(resource.RLIMIT_CPU, (10**6, resource.RLIM_INFINITY))\nexcept ValueError: pass\n"
               "while True: pass", timeout=30)
    assert 'used up its CPU time limit (1 s per run)' in r or 'SIGKILL' in r, r # not the 30 s timeout: no TimeoutError
    assert sb.run('6*7') == 42

def test_nothing_runs_between_runs(sb):
    sb.run("kept = 1\nimport threading\ndef burn():\n    while True: pass\nthreading.Thread(target=burn, daemon=True).start()")
    assert_held(sb) # stopped (and frozen) until the next run
    assert sb.run('kept') == 1 # the same worker, its state kept
    r = sb.run("import time\ntime.sleep(20)", timeout=30) # thawed, the thread burns the run's CPU time
    assert 'used up its CPU time limit (1 s per run)' in r, r

def test_cpu_of_child_processes_counts_when_there_is_a_cgroup(sb):
    if sb.isolation['cpu'].startswith('NOT'): pytest.skip(f"no cgroup here: {sb.isolation['cpu']}")
    r = sb.run("import subprocess, sys\nsubprocess.run([sys.executable, '-c', 'while True: pass'])", timeout=30)
    assert 'used up its CPU time limit (1 s per run)' in r, r

def test_garbage_on_the_reply_pipe_is_never_evaluated(sb):
    r = sb.run("import os\nfor fd in (int(f) for f in os.listdir('/proc/self/fd') if int(f) > 2):\n"
               "    try: os.write(fd, b'__import__(\"os\").system(\"touch /tmp/pwned\")\\n')\n    except OSError: pass")
    assert r.startswith('SandboxError: the worker sent something that is not JSON'), r
    assert not os.path.exists('/tmp/pwned')
    assert sb.run('6*7') == 42

def test_floods_and_half_lines_return_on_time(sb):
    writes = "import os\nfds = [int(f) for f in os.listdir('/proc/self/fd') if int(f) > 2]\n"
    r = sb.run(writes + "for fd in fds:\n    try: os.write(fd, b'{\"half\": ')\n    except OSError: pass\nimport time; time.sleep(60)", timeout=1)
    assert r.startswith('TimeoutError'), r
    r = sb.run(writes + "while True:\n    for fd in fds:\n        try: os.write(fd, b'{\"id\": 0}\\n')\n        except OSError: pass", timeout=5)
    assert 'nobody asked for' in r, r
    r = sb.run("import os\nwhile True: os.write(1, b'x' * 65536)", timeout=1) # a flood of raw output: read and dropped, never kept
    assert r.startswith('TimeoutError'), r
    r = sb.run("import os\nfor _ in range(100): os.write(2, b'y' * 65536)\nNone")
    assert r.startswith('yyyy') and r.endswith('[output cut: 6,553,600 bytes in all]'), r[-100:]
    assert sb.run('6*7') == 42

def test_a_fake_reply_on_the_pipe_is_not_taken_for_the_answer(sb):
    r = sb.run("import os\nfor fd in (int(f) for f in os.listdir('/proc/self/fd') if int(f) > 2):\n"
               "    try: os.write(fd, b'{\"value\": \"fake\", \"id\": 0}\\n')\n    except OSError: pass\n'real'")
    assert r == 'real', r
    assert sb.run('6*7') == 42

def test_what_a_sandbox_leaves_does_not_survive_close_nor_reach_the_next():
    require_bwrap()
    with Sandbox() as a:
        a.run("open('/tmp/mine', 'w').write('a'); open('/dev/shm/seg', 'w').write('a')\n"
              "import socket; s = socket.socket(socket.AF_UNIX); s.bind('\\0toolslm-abstract'); s.listen(); kept = s")
        assert not os.path.exists('/dev/shm/seg') and not os.path.exists('/tmp/mine')
        with Sandbox() as b:
            assert b.run("import os; os.path.exists('/tmp/mine') or os.path.exists('/dev/shm/seg')") is False
            r = b.run("import socket; s = socket.socket(socket.AF_UNIX); s.connect('\\0toolslm-abstract')")
            assert 'ConnectionRefusedError' in r or 'PermissionError' in r, r # its own netns; no Unix socket at all
        uid = a.run('import os; os.getuid()')
    with Sandbox() as c:
        if root: assert c.run('import os; os.getuid()') != uid # a later sandbox gets a uid of its own
        assert c.run("import os; os.path.exists('/tmp/mine')") is False

def test_host_sockets_and_processes_are_out_of_reach(tmp_path):
    require_bwrap()
    path = f'/tmp/toolslm-test-{os.getpid()}.sock'
    srv = socket.socket(socket.AF_UNIX); srv.bind(path); srv.listen()
    try:
        with Sandbox() as s:
            r = s.run(f"import socket; c = socket.socket(socket.AF_UNIX); c.connect({path!r})")
            assert r.rstrip().splitlines()[-1].startswith(('FileNotFoundError', 'PermissionError')), r
            assert s.run(f"import os; os.path.exists('/proc/{os.getpid()}/environ')") is False
            assert s.run("b'worker_main' in open('/proc/1/cmdline', 'rb').read()") is True # its init is its own holder
    finally: srv.close(); os.remove(path)

def test_staying_root_is_said_plainly():
    if not root: pytest.skip('only root can stay root')
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', SandboxWarning)
        with Sandbox(user=None) as s:
            assert s.run('import os; os.getuid()') == 0
            assert s.isolation['process count'].endswith('(cgroup)') or s.isolation['process count'].startswith('NOT')

def test_kill_user_processes_refuses_root():
    with pytest.raises(ValueError, match='root'): kill_user_processes(0)

def test_missing_bwrap_is_said_plainly_and_require_isolation_refuses(monkeypatch):
    monkeypatch.setenv('PATH', '/nonexistent') # as if bwrap were not installed
    with pytest.warns(SandboxWarning, match='these protections are off here: filesystem, processes'):
        with Sandbox(timeout=5) as s:
            assert s.isolation['filesystem'].startswith('NOT isolated (bwrap is not installed')
            assert s.run('6*7') == 42
    with pytest.raises(SandboxError, match='require_isolation=True'): Sandbox(require_isolation=True)

def test_missing_cgroups_are_said_plainly():
    with pytest.warns(SandboxWarning, match='memory'):
        with Sandbox(cgroups=False) as s:
            assert s.isolation['memory'].startswith('NOT for the sandbox as a whole (cgroups=False)')
            assert s.run('6*7') == 42

_as_user = '''
import os, sys, warnings
from toolslm_like.sandbox import Sandbox, SandboxError
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter('always')
    with Sandbox(timeout=5, cpu_s=2, max_procs=6) as sb:
        print('runs', sb.run("x = 21") == '' and sb.run("x * 2") == 42)
        print('uid', sb.run("import os; os.getuid()") == os.getuid())
        print('isolated', sb.isolation['filesystem'].startswith('its') and sb.isolation['processes'].startswith('a pid'))
        print('private', sb.run("import os; sorted('me' if p == str(os.getpid()) else p for p in os.listdir('/proc') if p.isdigit())") == ['1', 'me'])
        print('forkbomb', 'BlockingIOError' in sb.run("import os\\nwhile True: os.fork()") and sb.run("6*7") == 42)
        print('timeout', sb.run("import time; time.sleep(30)", timeout=1).startswith('TimeoutError') and sb.run("6*7") == 42)
        print('said', all(k in sb.isolation for k in sb.unprotected) and (not sb.unprotected or any('protections are off' in str(w.message) for w in caught)))
        print('cpuhard', sb.run("import resource\\ntry: resource.setrlimit(resource.RLIMIT_CPU, (10**6, resource.RLIM_INFINITY))\\nexcept ValueError as e: print(e)") == 'not allowed to raise maximum limit')
    with Sandbox(timeout=30, disk_mb=4, file_mb=1, max_files=200, tmp_mb=1) as small: # bounded by the kernel, not by polling
        r = small.run("for i in range(40): open(f'f{i}', 'wb').write(b'x' * 1_000_000)")
        on_disk = sum(os.path.getsize(os.path.join(small.workdir, f)) for f in os.listdir(small.workdir))
        print('diskfull', 'No space left on device' in r and "working folder holds 4 MB" in r and 3_000_000 < on_disk <= 4 * 2**20)
        print('kerneldisk', small.isolation['disk'].count('a tmpfs of that size') == 1 and small._folders.why is None)
        print('hostempty', os.listdir(small._path) == [] and small.workdir != small._path)
        r = small.run("import os\\nn = 0\\ntry:\\n    while n < 100_000: open(f'/tmp/e{n}', 'w').close(); n += 1\\nexcept OSError as e: print(e.strerror, n)")
        print('tmpfiles', r.startswith('No space left on device') and int(r.split()[-1]) < 200)
        small.restart()
        print('kept', small.run("import os; len([f for f in os.listdir() if f.startswith('f')])") == len([f for f in os.listdir(small.workdir) if f.startswith('f')]) >= 4 and small.run("import os; [f for f in os.listdir('/tmp') if f.startswith('e')]") == []) # /tmp afresh
        os.remove(os.path.join(small.workdir, 'f0')); open(os.path.join(small.workdir, 'from_caller.txt'), 'w').write('hi')
        print('callerwrites', small.run("open('from_caller.txt').read()") == 'hi')
try: Sandbox(require_isolation=True).close(); print('refused', True) # fully isolated: nothing to refuse
except SandboxError as e: print('refused', 'require_isolation=True' in str(e))
'''

def as_ordinary_user(code:str)->subprocess.CompletedProcess:
    "Run Python `code` as a throwaway user that is not root, with this checkout's library; skip where that cannot be"
    if not root or not shutil.which('useradd') or not shutil.which('setpriv'): pytest.skip('needs root, useradd and setpriv to make an ordinary user')
    py = '/usr/bin/python3'
    ver = subprocess.run([py, '-c', 'import sys; print(sys.version_info[:2])'], capture_output=True, text=True).stdout.strip() if os.path.exists(py) else None
    if ver != str(sys.version_info[:2]): pytest.skip(f'/usr/bin/python3 is {ver}, not this Python: the library cannot be shared with it')
    import toolslm_like, fastcore
    lib = Path(tempfile.mkdtemp(prefix='toolslm-lib-')) # a copy the user can read: the checkout may sit in a private folder
    for m in (toolslm_like, fastcore): shutil.copytree(Path(m.__file__).parent, lib/m.__name__)
    os.chmod(lib, 0o755)
    name = f'tlsbx{os.getpid() % 100000}'
    subprocess.run(['useradd', '--no-create-home', '--shell', '/usr/sbin/nologin', name], check=True, capture_output=True)
    try:
        home = tempfile.mkdtemp(); os.chown(home, *[int(x) for x in subprocess.run(['id', '-u', name], capture_output=True, text=True).stdout.split()] * 2)
        return subprocess.run(['setpriv', f'--reuid={name}', f'--regid={name}', '--init-groups', py, '-c', code], cwd=home,
                              env={'PATH': '/usr/bin:/bin', 'PYTHONPATH': str(lib), 'HOME': home, 'TMPDIR': home}, capture_output=True, text=True, timeout=180)
    finally:
        uid = int(subprocess.run(['id', '-u', name], capture_output=True, text=True).stdout or 0)
        if uid: kill_user_processes(uid)
        subprocess.run(['userdel', name], capture_output=True)
        shutil.rmtree(lib, ignore_errors=True); shutil.rmtree(home, ignore_errors=True)

def test_an_ordinary_user():
    "Run by a throwaway user that is not root: bwrap in a user namespace of its own; what it cannot have (cgroups) is said"
    require_bwrap() # what it checks (isolated, a private /tmp and its files, kept across a restart) is bwrap's
    r = as_ordinary_user(_as_user)
    got = dict(l.split() for l in r.stdout.splitlines() if len(l.split()) == 2)
    assert got == {k: 'True' for k in ('runs', 'uid', 'isolated', 'private', 'forkbomb', 'timeout', 'said', 'cpuhard', 'diskfull',
                                       'kerneldisk', 'hostempty', 'tmpfiles', 'kept', 'callerwrites', 'refused')}, r.stdout + r.stderr
