"""Benchmark: a warm `Sandbox.run("1+1")` round trip, against in-process `python("1+1")` and a new interpreter per call.

Run by hand: `python bench/bench_sandbox.py`. Target (issue 9): a warm round trip under 2 ms.
Also shown: starting a fresh sandbox worker (what a restart after a timeout or crash costs), and the narrow tool through `call_func`.
"""
import statistics, subprocess, sys, time
from toolslm_like.funccall import python, call_func
from toolslm_like.sandbox import Sandbox

def timings(fn, n):
    "Seconds per call of `n` calls, after 20 warm-up calls: (median, 95th percentile)"
    for _ in range(20): fn()
    ts = []
    for _ in range(n):
        t = time.perf_counter(); fn(); ts.append(time.perf_counter() - t)
    ts.sort()
    return statistics.median(ts), ts[int(len(ts)*0.95)]

def ms(s): return f"{s*1000:8.3f} ms"

def main():
    glb = {}
    with Sandbox() as sb:
        assert sb.run('1+1') == 2 and python('1+1', glb) == 2
        tool = sb.tool()
        rows = [("in-process python('1+1')", timings(lambda: python('1+1', glb), 5000)),
                ("warm Sandbox.run('1+1')", timings(lambda: sb.run('1+1'), 2000)),
                ("call_func(sandbox tool, '1+1')", timings(lambda: call_func('python', {'code': '1+1'}, [tool]), 2000)),
                ("new interpreter per call", timings(lambda: subprocess.run([sys.executable, '-c', 'print(1+1)'], capture_output=True), 30))]
        print(f"sandbox isolation: {sb.isolation}")
    starts = []
    for _ in range(10):
        t = time.perf_counter(); s = Sandbox(); starts.append(time.perf_counter() - t); s.close()
    rows.append(("start a fresh Sandbox", (statistics.median(starts), max(starts))))
    print(f"{'':34} {'median':>11} {'p95/max':>11}")
    for name,(med,p95) in rows: print(f"{name:34} {ms(med)} {ms(p95)}")
    print(f"target: warm round trip < 2 ms -> {'met' if rows[1][1][0] < 0.002 else 'NOT met'}")

if __name__ == '__main__': main()
