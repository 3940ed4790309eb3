"""Benchmark: a warm `Sandbox.run("1+1")` round trip, against in-process `python("1+1")` and a new interpreter per call.

Run by hand: `python bench/bench_sandbox.py`; `python bench/bench_sandbox.py --compare /path/to/other/checkout` measures a
fresh sandbox, its first run and the warm run of both checkouts in turns, beside a bare `python -c pass` (issue 34: before
and after, in one run). Targets (issue 13): a warm round trip median <= 0.3 ms, a fresh sandbox <= 150 ms;
(issue 28) a fresh, never used sandbox and its first run at most 1.5x a bare interpreter start: from a `SandboxPool`.
Also shown: a fresh sandbox and its first run (the worker imports what runs need before its seccomp filter), the
narrow tool through `call_func`, what protects the sandbox here (bwrap, cgroups), and (issue 28) a connect to the code's own
Unix socket made by the socket supervisor (network off) against a plain one (network on). Compare ratios within one run: the
machine's load moves every figure.
"""
import json, os, statistics, subprocess, sys, time

def timings(fn, n):
    "Seconds per call of `n` calls, after 20 warm-up calls: (median, 95th percentile)"
    for _ in range(20): fn()
    ts = []
    for _ in range(n):
        t = time.perf_counter(); fn(); ts.append(time.perf_counter() - t)
    ts.sort()
    return statistics.median(ts), ts[int(len(ts)*0.95)]

def ms(s): return f"{s*1000:8.3f} ms"

# with the network off, a connect (and a send with an address) is made by the socket supervisor, outside the sandbox
_UNIX = """import socket, time
srv = socket.socket(socket.AF_UNIX); srv.bind('bench.sock'); srv.listen(128)
def one():
    c = socket.socket(socket.AF_UNIX); t = time.perf_counter(); c.connect('bench.sock'); t = time.perf_counter() - t
    c.close(); srv.accept()[0].close(); return t
ts = sorted(one() for _ in range({n}))
[ts[len(ts) // 2], ts[int(len(ts) * 0.95)]]"""

def unix_connect(network, n=2000):
    "A connect to the code's own Unix socket, timed inside the sandbox: (median, 95th percentile) seconds"
    with Sandbox(network=network) as sb: return tuple(sb.run(_UNIX.format(n=n)))

def bare_start(n=1):
    "Seconds of each of `n` bare interpreter starts, `python -c pass` (site and all, as a user runs it)"
    ts = []
    for _ in range(n):
        t = time.perf_counter(); subprocess.run([sys.executable, '-c', 'pass']); ts.append(time.perf_counter() - t)
    return ts

def fresh(n, warm_n=300):
    "[(seconds to start a fresh Sandbox, to start it and have its first run answered)] of `n` sandboxes; the warm run's median"
    from toolslm_like.sandbox import Sandbox
    out = []
    for _ in range(n):
        t = time.perf_counter(); s = Sandbox(); a = time.perf_counter() - t
        s.run('1+1'); out.append((a, time.perf_counter() - t)); s.close()
    with Sandbox() as sb:
        for _ in range(50): sb.run('1+1')
        ts = []
        for _ in range(warm_n):
            t = time.perf_counter(); sb.run('1+1'); ts.append(time.perf_counter() - t)
    return out, statistics.median(ts)

def compare(other:str, rounds:int=8):
    ("This checkout and `other`, in turns (one fresh-sandbox child each per round, their order alternating), beside "
     "`python -c pass` timed in the same round: the ratios are taken per round, so the machine's load moves both sides")
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    trees = {f'before ({other})': other, 'after (this checkout)': here}
    got = {k: {'start': [], 'first': [], 'ratio': [], 'warm': []} for k in trees}
    bare_all = []
    for i in range(rounds):
        bare = bare_start(3)
        for name in (list(trees) if i % 2 == 0 else list(trees)[::-1]):
            env = {**os.environ, 'PYTHONPATH': trees[name]}
            r = subprocess.run([sys.executable, os.path.abspath(__file__), '--fresh', '3'], env=env, capture_output=True,
                               text=True, cwd=trees[name])
            if r.returncode: sys.exit(r.stderr)
            starts,warm = json.loads(r.stdout.splitlines()[-1])
            g = got[name]
            g['start'] += [a for a,_ in starts]; g['first'] += [f for _,f in starts]; g['warm'].append(warm)
            g['ratio'].append(statistics.median(f for _,f in starts))
        bare += bare_start(3)
        b = statistics.median(bare); bare_all += bare
        for g in got.values(): g['ratio'][-1] /= b
    print(f"python -c pass: {ms(statistics.median(bare_all))} (median of {len(bare_all)}, {rounds} rounds)")
    print(f"{'':28} {'fresh Sandbox()':>16} {'+ first run':>12} {'to python -c pass':>18} {'warm run':>11}")
    for name,g in got.items():
        med = statistics.median
        print(f"{name[:28]:28} {ms(med(g['start'])):>16} {ms(med(g['first'])):>12} {med(g['ratio']):17.2f}x "
              f"{ms(med(g['warm'])):>11}")
    print("(the ratio: the median over rounds of each round's fresh sandbox and first run over its python -c pass)")

def main():
    from toolslm_like.funccall import python, call_func
    from toolslm_like.sandbox import Sandbox, SandboxPool
    glb = {}
    with Sandbox() as sb:
        assert sb.run('1+1') == 2 and python('1+1', glb) == 2
        tool = sb.tool()
        rows = [("in-process python('1+1')", timings(lambda: python('1+1', glb), 5000)),
                ("warm Sandbox.run('1+1')", timings(lambda: sb.run('1+1'), 2000)),
                ("call_func(sandbox tool, '1+1')", timings(lambda: call_func('python', {'code': '1+1'}, [tool]), 2000)),
                ("new interpreter per call", timings(lambda: subprocess.run([sys.executable, '-c', 'print(1+1)'], capture_output=True), 30)),
                ("python -c pass", timings(lambda: subprocess.run([sys.executable, '-c', 'pass']), 30))]
        print(f"protections off here: {sb.unprotected or 'none'}")
    rows += [("Unix connect, supervised (net off)", unix_connect(False)),
             ("Unix connect, plain (network on)", unix_connect(True))]
    starts,firsts = [],[]
    for _ in range(10):
        t = time.perf_counter(); s = Sandbox(); starts.append(time.perf_counter() - t)
        s.run('1+1'); firsts.append(time.perf_counter() - t); s.close()
    rows.append(("start a fresh Sandbox", (statistics.median(starts), max(starts))))
    rows.append(("fresh Sandbox and its first run", (statistics.median(firsts), max(firsts))))
    pooled = []
    with SandboxPool(size=2) as pool:
        for _ in range(10):
            time.sleep(0.5) # as between two tasks: the pool starts the next one meanwhile
            t = time.perf_counter(); s = pool.get(); s.run('1+1'); pooled.append(time.perf_counter() - t); s.close()
    rows.append(("SandboxPool.get() and its first run", (statistics.median(pooled), max(pooled))))
    print(f"{'':34} {'median':>11} {'p95/max':>11}")
    for name,(med,p95) in rows: print(f"{name:34} {ms(med)} {ms(p95)}")
    named = dict(rows)
    warm = named["warm Sandbox.run('1+1')"][0]
    print(f"targets: warm round trip <= 0.3 ms -> {'met' if warm <= 0.0003 else 'NOT met'}; "
          f"fresh sandbox <= 150 ms -> {'met' if named['start a fresh Sandbox'][0] <= 0.150 else 'NOT met'}")
    bare = named['python -c pass'][0]
    for name in ('fresh Sandbox and its first run', 'SandboxPool.get() and its first run'):
        print(f"{name}: {named[name][0] / bare:.2f}x `python -c pass` (target <= 1.5x)")

if __name__ == '__main__':
    if sys.argv[1:2] == ['--fresh']: print(json.dumps(fresh(int(sys.argv[2]))))
    elif sys.argv[1:2] == ['--compare']: compare(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 8)
    else: main()
