"""Benchmark: a warm call to a tool of an index (through its proxy, to the worker in the index's venv and back) against a
direct call of the same function in this process, and against starting a new interpreter in the venv for every call.

Run by hand: `python bench/bench_indexes.py`. Target (issue 13): a warm proxy call <= 0.1 ms (issue 6: under 5 ms).
Also shown: the first load of an index (copy, venv, worker start) and a second load that reuses the cache.
"""
import importlib.util, json, shutil, statistics, subprocess, sys, tempfile, textwrap, time
from pathlib import Path
from toolslm_like.funccall import call_func
from toolslm_like.indexes import ToolIndex

TOOL = '''
def add(a:int, # First number
        b:int  # Second number
       )->int: # The sum
    "Add two numbers"
    return a + b
'''

def per_call(f, n):
    "Median seconds per call of `f()` over 5 rounds of `n` calls"
    rounds = []
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(n): f()
        rounds.append((time.perf_counter() - t) / n)
    return statistics.median(rounds)

def fmt(s): return f"{s*1e6:10.1f} µs" if s < 1e-3 else f"{s*1e3:10.2f} ms"

def main():
    root = Path(tempfile.mkdtemp())
    try:
        src = root/'index'; src.mkdir()
        (src/'tools.toml').write_text('[index]\ntools = ["calc.add"]\n')
        (src/'calc.py').write_text(textwrap.dedent(TOOL))
        t = time.perf_counter(); idx = ToolIndex(src, cache_dir=root/'cache'); first_load = time.perf_counter() - t
        idx.close()
        t = time.perf_counter(); idx = ToolIndex(src, cache_dir=root/'cache'); second_load = time.perf_counter() - t
        assert idx.actions == []
        spec = importlib.util.spec_from_file_location('calc', src/'calc.py'); calc = importlib.util.module_from_spec(spec); spec.loader.exec_module(calc)
        proxy = idx.ns['calc.add']
        proxy(1, 2) # warm
        direct = per_call(lambda: calc.add(1, 2), 200_000)
        via_call_func_direct = per_call(lambda: call_func('add', {'a': 1, 'b': 2}, [calc.add]), 50_000)
        warm = per_call(lambda: proxy(1, 2), 2_000)
        warm_call_func = per_call(lambda: call_func('calc.add', {'a': 1, 'b': 2}, idx.ns), 2_000)
        # the floor: one JSON line to another Python process and one back, with nothing else (no worker module, no tool)
        echo = subprocess.Popen([sys.executable, '-c', 'import sys\nfor l in sys.stdin.buffer: sys.stdout.buffer.write(l); sys.stdout.buffer.flush()'],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        def ping():
            echo.stdin.write(json.dumps({'op': 'call', 'tool': 'calc.add', 'arguments': {'a': 1, 'b': 2}}).encode() + b'\n')
            json.loads(echo.stdout.readline())
        floor = per_call(ping, 2_000)
        echo.stdin.close(); echo.wait()
        cmd = [str(idx.python), '-I', '-c', 'import sys; sys.path.insert(0, sys.argv[1]); import calc; print(calc.add(1, 2))', str(idx.checkout)]
        new_interp = per_call(lambda: subprocess.run(cmd, capture_output=True, check=True), 10)
        idx.close()
    finally: shutil.rmtree(root, ignore_errors=True)
    print(f"Python {sys.version.split()[0]} on {sys.platform}")
    print(f"first load (copy, venv, worker start)   {fmt(first_load)}")
    print(f"second load (cache reused, worker start) {fmt(second_load)}")
    print(f"direct call                              {fmt(direct)}")
    print(f"call_func, direct                        {fmt(via_call_func_direct)}")
    print(f"warm proxy call                          {fmt(warm)}   (target <= 0.1 ms: {'met' if warm <= 1e-4 else 'NOT met'})")
    print(f"call_func through the proxy              {fmt(warm_call_func)}")
    print(f"bare JSON line to a process and back     {fmt(floor)}   (the floor this machine gives any worker)")
    print(f"new interpreter per call                 {fmt(new_interp)}   ({new_interp/warm:.0f}x the warm proxy call)")

if __name__ == '__main__': main()
