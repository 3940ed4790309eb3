"""Attacks on the sandbox's last holes, each in a fresh process of its own: disk and inode floods, a host service's Unix
socket, kernel calls a sandbox never needs, a CPU limit raised back, CPU burned between runs, and a sandbox without
bubblewrap that starts a subprocess wherever Python lives."""
import os, shutil, socket, subprocess, sys, time, warnings
import pytest
from toolslm_like.sandbox import Sandbox, _DENIED, _ARCHES

pytestmark = pytest.mark.skipif(not sys.platform.startswith('linux'), reason='the sandbox needs Linux')
sys.path.insert(0, os.path.dirname(__file__))
from test_sandbox_limits import has_bwrap, require_bwrap # one rule for tests that need bubblewrap

def sandbox(**kw):
    "A Sandbox, without the warning a machine lacking some protection gives"
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        return Sandbox(**kw)

def kernel_bounded(s):
    if s._disk_why: pytest.skip(f"the working folder is not a size-limited mount here: {s._disk_why}")

def folder_bytes(d):
    return sum(os.path.getsize(os.path.join(r, f)) for r,_,fs in os.walk(d) for f in fs)

def test_writes_past_disk_mb_fail_inside_and_never_reach_the_disk():
    with sandbox(disk_mb=4, file_mb=1) as s:
        kernel_bounded(s)
        r = s.run("for i in range(40): open(f'f{i}', 'wb').write(b'x' * 1_000_000)")
        assert 'OSError: [Errno 28] No space left on device' in r, r
        assert folder_bytes(s.workdir) <= 4 * 2**20
        assert s.run('6*7') == 42 # the worker lives on: the kernel refused, nobody had to stop it
        assert s.run("import os\nfor f in os.listdir('.'): os.remove(f)\nopen('g', 'wb').write(b'y' * 900_000)") == 900_000

def test_a_hundred_thousand_files_stop_at_max_files_everywhere_it_may_write():
    require_bwrap()
    with sandbox(tmp_mb=1, max_files=500) as s:
        kernel_bounded(s)
        for d in ('/tmp', '/var/tmp', '/dev/shm', '.'):
            r = s.run(f"n = 0\ntry:\n    for i in range(100_000): open(f'{d}/e{{i}}', 'w').close(); n += 1\n"
                      "except OSError as e: print(n, e.strerror)")
            n,why = r.split(' ', 1)
            assert why.startswith('No space left on device') and int(n) <= 500, (d, r)
        assert len(os.listdir(s.workdir)) <= 501

def test_a_host_services_unix_socket_in_an_exposed_folder_is_out_of_reach(tmp_path):
    shared = tmp_path/'shared'; shared.mkdir(); tmp_path.chmod(0o755); shared.chmod(0o755)
    path = str(shared/'service.sock')
    srv = socket.socket(socket.AF_UNIX); srv.bind(path); srv.listen(); os.chmod(path, 0o777)
    try:
        with sandbox(expose=[shared]) as s:
            r = s.run(f"import socket\nc = socket.socket(socket.AF_UNIX)\nc.connect({path!r})\n'connected'")
            assert r != 'connected' and 'PermissionError' in r, r
            r = s.run(f"import socket\nc = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\nc.sendto(b'x', {path!r})")
            assert 'PermissionError' in r, r
            assert s.run("import socket\na,b = socket.socketpair()\na.sendall(b'ok'); b.recv(2)") == "b'ok'"
        srv.settimeout(0.1)
        with pytest.raises(socket.timeout): srv.accept() # nobody came
    finally: srv.close()

def test_kernel_calls_a_sandbox_never_needs_fail():
    col = _ARCHES[os.uname().machine][0]
    names = ['io_uring_setup', 'io_uring_enter', 'unshare', 'setns', 'keyctl', 'add_key', 'request_key', 'ptrace',
             'mount', 'bpf', 'perf_event_open', 'userfaultfd', 'open_by_handle_at', 'kexec_load', 'init_module']
    calls = [(n, _DENIED[n][col]) for n in names]
    with sandbox() as s:
        assert s.isolation['kernel calls'].startswith('a seccomp filter'), s.isolation['kernel calls']
        got = s.run("import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
                    f"{{n: [libc.syscall(nr, 0, 0, 0, 0, 0), ctypes.get_errno()] for n,nr in {calls!r}}}")
        assert got == {n: [-1, 1] for n in names}, got # EPERM each
        clone = {'x86_64': 56, 'aarch64': 220}[os.uname().machine]
        for flag in (0x10000000, 0x20000000, 0x40000000, 0x00020000): # new user, pid, net, mount namespace
            r = s.run(f"import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
                      f"[libc.syscall({clone}, {flag | 17}, 0, 0, 0, 0), ctypes.get_errno()]")
            assert r == [-1, 1], (hex(flag), r)
        r = s.run("import subprocess, threading, os\nt = threading.Thread(target=lambda: None); t.start(); t.join()\n"
                  "[subprocess.run(['true']).returncode, os.fork() or os._exit(0)]")
        assert isinstance(r, list) and r[0] == 0 and r[1] > 0, r # threads, subprocesses and fork still work

def test_raising_the_cpu_limit_back_gains_nothing():
    with sandbox(cpu_s=1) as s:
        assert s.run("import resource\nlist(resource.getrlimit(resource.RLIMIT_CPU))") == [2, 3] # hard: SIGKILL a second after SIGXCPU
        r = s.run("import resource\nresource.setrlimit(resource.RLIMIT_CPU, (10**6, 10**6))")
        assert 'ValueError: not allowed to raise maximum limit' in r, r
        r = s.run("import resource, signal\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)\n"
                  "try: resource.setrlimit(resource.RLIMIT_CPU, (10**6, resource.RLIM_INFINITY))\n"
                  "except ValueError: pass\nwhile True: pass", timeout=30)
        assert 'CPU time limit' in r or 'SIGKILL' in r, r
        assert s.run('6*7') == 42

def test_a_thread_left_burning_uses_no_cpu_between_runs():
    with sandbox(cpu_s=1) as s:
        s.run("kept = 1\nimport threading\ndef burn():\n    while True: pass\n"
              "for _ in range(2): threading.Thread(target=burn, daemon=True).start()")
        def cpu():
            f = open(f'/proc/{s.pid}/stat').read().rsplit(')', 1)[1].split()
            return (int(f[11]) + int(f[12])) / os.sysconf('SC_CLK_TCK')
        before = cpu(); time.sleep(2)
        assert cpu() - before < 0.2, cpu() - before
        assert s.run('kept') == 1
        s.close()
        assert s.pid is None

def test_without_bwrap_a_subprocess_starts_wherever_python_lives(monkeypatch):
    monkeypatch.setenv('PATH', os.environ.get('PATH', '') + ':/nonexistent')
    try: s = sandbox(bwrap=None)
    except Exception as e: # the one other outcome allowed: a clear refusal at start, saying what to install
        assert 'install bubblewrap' in str(e), e
        return
    with s:
        r = s.run("import subprocess, sys\nsubprocess.run([sys.executable, '-c', 'print(6*7)'], capture_output=True,"
                  " text=True).stdout")
        assert r == '42\n', r
        assert s.run("import email.message, json; 'ok'") == 'ok' # the standard library, past what the worker imported

def test_without_bwrap_and_without_a_way_to_mount_it_refuses_at_start_in_one_sentence():
    if os.geteuid() != 0 or not shutil.which('capsh'): pytest.skip("needs root and capsh (to drop CAP_SYS_ADMIN)")
    code = ("import warnings; warnings.simplefilter('ignore')\nfrom toolslm_like.sandbox import Sandbox\n"
            "try: s = Sandbox(bwrap=None)\nexcept Exception as e: print(type(e).__name__, e)\n"
            "else: print(s.run(\"import subprocess, sys\\n"
            "subprocess.run([sys.executable, '-c', 'print(6*7)'], capture_output=True, text=True).stdout\"))")
    r = subprocess.run(['capsh', '--drop=cap_sys_admin', '--', '-c', 'exec "$0" -c "$1"', sys.executable, code],
                       capture_output=True, text=True, timeout=60)
    out = r.stdout.strip()
    # Python where its uid may read it: it runs; else one sentence saying what to install, never a PermissionError
    assert out == '42' or out.startswith('SandboxError without bubblewrap') and '\n' not in out \
        and 'install bubblewrap' in out, (out, r.stderr[-2000:])

def test_processes_a_thread_keeps_starting_use_no_cpu_between_runs():
    with sandbox(cpu_s=5, max_procs=16) as s:
        cg = s._state.get('cgroup')
        if cg is None: pytest.skip(f"no cgroup here to count the CPU time of all its processes: {s.isolation['cpu']}")
        s.run("import os, threading, time\ndef spawn():\n    while True:\n        try: pid = os.fork()\n"
              "        except OSError: time.sleep(0.001); continue\n        if pid == 0:\n            while True: pass\n"
              "threading.Thread(target=spawn, daemon=True).start()\ntime.sleep(0.05)")
        for _ in range(3): # after a run, forks go on until the worker stops: those processes are frozen with it
            before = cg.cpu_seconds(); time.sleep(1)
            assert cg.cpu_seconds() - before < 0.2, cg.cpu_seconds() - before
            r = s.run('6*7') # (once the worker gathered a second of CPU time, a fresh fork goes on without the thread)
            assert r == 42 or r.startswith('42\n[The sandbox worker went on in a fresh process'), r
