"Black-box tests of `toolslm_like.sandbox` limits that burn CPU or fork: each tries to break a limit, then checks that the parent is unharmed, the error is clear and the next run works"
import os, resource, time, warnings
import pytest
from toolslm_like.sandbox import Sandbox, SandboxWarning, kill_user_processes

_limit_names = ('RLIMIT_AS', 'RLIMIT_CPU', 'RLIMIT_FSIZE', 'RLIMIT_NOFILE', 'RLIMIT_NPROC')
root = os.geteuid() == 0

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
    if uid is not None: assert user_tasks(uid, alive_only=True) == 0 # nothing the sandbox started outlives it (init reaps the dead ones in its own time)

@pytest.mark.skipif(not root, reason='the process limit is per user: as root the worker gets a user of its own')
def test_fork_bomb_is_contained(sb):
    r = sb.run("import os\nwhile True: os.fork()")
    assert 'BlockingIOError: [Errno 11] Resource temporarily unavailable' in r and r.endswith('[Sandbox limit: the sandbox allows 6 processes and threads in all.]'), r
    assert user_tasks(sb._uid) == 1 # the worker alone: the forked processes were killed and reaped after the run
    assert sb.run('6*7') == 42
    assert sb.run("import subprocess; subprocess.run(['true']).returncode") == 0 # forking works again

@pytest.mark.skipif(not root, reason='needs a dedicated sandbox user')
def test_fork_bomb_that_ignores_errors_is_stopped(sb):
    t = time.monotonic()
    r = sb.run("import os\nwhile True:\n    try: os.fork()\n    except OSError: pass", timeout=2)
    assert r.startswith('TimeoutError: the code ran for longer than 2 seconds') and 'state' in r, r
    assert time.monotonic() - t < 60 # it was stopped (the fork bomb itself never ends); the bound leaves room for a busy machine
    assert user_tasks(sb._uid, alive_only=True) == 0
    assert sb.run('6*7') == 42

@pytest.mark.skipif(not root, reason='needs a dedicated sandbox user')
def test_processes_that_leave_the_session_die_with_the_run(sb):
    r = sb.run("import os, time\nif os.fork() == 0:\n    os.setsid()\n    while True: time.sleep(1)\ntime.sleep(0.1)\n'started'")
    assert r == 'started'
    assert user_tasks(sb._uid) == 1
    assert sb.run('6*7') == 42

def test_cpu_time_per_run(sb):
    r = sb.run("while True: pass", timeout=30)
    assert r.startswith('SandboxCrashed: the sandbox worker used up its CPU time limit (1 s per run)') and 'state' in r, r # not the 30 s timeout
    assert sb.run('6*7') == 42
    for _ in range(3): # the limit is per run: several runs of 0.5 s each are fine
        assert sb.run("import time\nt = time.process_time()\nwhile time.process_time() - t < 0.5: pass\n'done'") == 'done'

def test_cpu_limit_holds_when_the_code_raises_it(sb):
    r = sb.run("import resource\nresource.setrlimit(resource.RLIMIT_CPU, (10**6, resource.RLIM_INFINITY))\nwhile True: pass", timeout=30)
    assert r.startswith('SandboxCrashed: the sandbox worker used up its CPU time limit'), r
    assert sb.run('6*7') == 42

def test_garbage_on_the_reply_pipe_is_never_evaluated(sb):
    r = sb.run("import os, sys, json\nos.write(json.loads(sys.argv[1])['rep_fd'], b'__import__(\"os\").system(\"touch /tmp/pwned\")\\n')")
    assert r.startswith('SandboxError: the worker sent not JSON'), r
    assert not os.path.exists('/tmp/pwned')
    assert sb.run('6*7') == 42

@pytest.mark.skipif(not root, reason='only root can stay root')
def test_staying_root_is_said_plainly():
    with pytest.warns(SandboxWarning, match='ignores the process limit'):
        with Sandbox(user=None) as s:
            assert s.isolation['processes'].startswith('NOT limited')
            assert s.run('import os; os.getuid()') == 0

def test_kill_user_processes_refuses_root():
    with pytest.raises(ValueError, match='root'): kill_user_processes(0)

_as_nobody = '''
import os, warnings
from toolslm_like.sandbox import Sandbox, _is_zombie
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter('always')
    with Sandbox(timeout=5, cpu_s=2, max_procs=6) as sb:
        print(sb.run("x = 21") == '', sb.run("x * 2") == 42, sb.run("import os; os.getuid()") == os.getuid())
        print('BlockingIOError' in sb.run("import os\\nwhile True: os.fork()"), sb.run("6*7") == 42)
        r = sb.run("import subprocess, time\\np = subprocess.Popen(['sleep', '600'], start_new_session=True)\\n"
                   "open('pid', 'w').write(str(p.pid))\\ntime.sleep(30)", timeout=3)
        pid = int(open(os.path.join(sb.workdir, 'pid')).read())
        net = sb.isolation['network']
        print(r.startswith('TimeoutError') and (_is_zombie(pid) or not net.startswith('off'))) # it left the worker's session, yet died with the worker
        if not _is_zombie(pid): os.kill(pid, 9)
        print(net.startswith('off') or any('network could not be turned off' in str(w.message) for w in caught))
'''

def test_an_unprivileged_parent(tmp_path):
    "Run by a user that is not root: no user of its own, but the same limits, and network off through a user namespace"
    import shutil, subprocess, sys, sysconfig
    from toolslm_like.sandbox import blocking_dir, _package_root
    py,site = '/usr/bin/python3',sysconfig.get_paths()['purelib']
    if not (root and shutil.which('setpriv') and os.path.exists(py)): pytest.skip('needs root, setpriv and /usr/bin/python3')
    ver = subprocess.run([py, '-c', 'import sys; print(sys.version_info[:2])'], capture_output=True, text=True).stdout.strip()
    if ver != str(sys.version_info[:2]): pytest.skip(f'/usr/bin/python3 is {ver}, not this Python')
    if any(blocking_dir(p + '/x', 65534, 65534) for p in (_package_root(), site)): pytest.skip('nobody cannot read this checkout')
    r = subprocess.run(['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', py, '-c', _as_nobody], cwd=tmp_path,
                       env={'PATH': '/usr/bin:/bin', 'PYTHONPATH': f'{_package_root()}:{site}'}, capture_output=True, text=True, timeout=120)
    assert r.stdout.split() == ['True']*7, r.stdout + r.stderr

def test_a_fake_reply_on_the_pipe_is_not_taken_for_the_answer(sb):
    r = sb.run("import os, sys, json\nos.write(json.loads(sys.argv[1])['rep_fd'], b'{\"value\": \"fake\", \"id\": 0}\\n')\n'real'")
    assert r == 'real', r
    assert sb.run('6*7') == 42
