"""Benchmark: cost as the work grows (issue 17): schemas of long class chains, a corpus of everyday tools cold and warm
against pydantic, `tool_schemas` of 1,000 tools again, parallel batches against a bare thread pool, import time, and
the in-process `python` tool.

Run by hand: `python bench/bench_scale.py` (add `--quick` for fewer repeats). Compare ratios within one run.
Targets: 100-class chain <= 30 ms and any depth handled or refused past a named limit with a short message; cold
get_schema <= 250 us a function and ahead of pydantic; warm <= 2 us; tool_schemas of 1,000 tools again <= 5 ms;
parallel execute within 2x of ThreadPoolExecutor.map per call, serial ~2 us a call; `import toolslm_like.funccall`
<= 30 ms; in-process python('1+1') <= 15 us.
The import is timed twice: compiled from source (a copy of the package without `__pycache__`, as in an environment with
PYTHONDONTWRITEBYTECODE=1) and from .pyc files (as installed). Chains after one that took over 2 s are not run.
"""
import concurrent.futures, importlib, os, subprocess, sys, tempfile, textwrap, time, types, statistics
from pathlib import Path

QUICK = '--quick' in sys.argv

def best_of(fn, n:int, runs:int=5)->float:
    "Best of `runs` runs of `n` calls: seconds per call"
    best = float('inf')
    for _ in range(runs):
        t = time.perf_counter()
        for _ in range(n): fn()
        best = min(best, (time.perf_counter()-t)/n)
    return best

def chain_module(n:int, folder:Path)->types.ModuleType:
    "A module file with a chain of `n` dataclasses of 6 documented fields each, the last field pointing at the next class"
    lines = ['from __future__ import annotations', 'from dataclasses import dataclass', '']
    for i in range(n):
        nxt = f'C{i+1}|None' if i < n-1 else 'int'
        lines += ['@dataclass', f'class C{i}:', f'    "Class {i} of the chain"']
        lines += [f'    f{j}: int = 0 # field {j} of class {i}' for j in range(5)]
        lines += [f'    link: {nxt} = None # the next class', '']
    lines += ['def tool(x: C0): # the head of the chain', '    "A tool taking the chain"', '    return x']
    name = f'chain_{n}_{time.monotonic_ns()}'
    (folder/f'{name}.py').write_text('\n'.join(lines))
    sys.path.insert(0, str(folder))
    try: return importlib.import_module(name)
    finally: sys.path.remove(str(folder))

def chains():
    from toolslm_like.funccall import get_schema
    try: from pydantic import TypeAdapter
    except ImportError: TypeAdapter = None
    import ast
    print("get_schema of a chain of dataclasses (6 fields each, one module), cold (best of 3 fresh modules), and times the module was parsed")
    print("  classes   toolslm_like              pydantic TypeAdapter")
    parse,parses = ast.parse,[0]
    def counting_parse(*a, **kw): parses[0] += 1; return parse(*a, **kw)
    with tempfile.TemporaryDirectory() as d:
        slow = False
        for n in (10, 25, 50, 100, 120, 300, 1000):
            if slow: print(f"  {n:7}   (not run: the chain before took over 2 s)"); continue
            best,err,theirs = float('inf'),None,'n/a'
            for _ in range(1 if n >= 300 or QUICK else 3):
                m = chain_module(n, Path(d))
                ast.parse,parses[0] = counting_parse,0
                t = time.perf_counter()
                try: get_schema(m.tool); best = min(best, time.perf_counter()-t)
                except Exception as e: err = f"{type(e).__name__} ({len(str(e))} chars) after {(time.perf_counter()-t)*1e3:.0f} ms"
                finally: ast.parse = parse
            ours = err or f"{best*1e3:9.1f} ms, {parses[0]} parse{'s'[:parses[0]!=1]}"
            slow = err is not None or best > 2
            if TypeAdapter and n <= 120:
                t = time.perf_counter()
                try: TypeAdapter(m.tool).json_schema(); theirs = f"{(time.perf_counter()-t)*1e3:9.1f} ms"
                except Exception as e: theirs = type(e).__name__
            print(f"  {n:7}   {ours:24}  {theirs}")

def corpus_module(folder:Path)->types.ModuleType:
    src = textwrap.dedent('''
        from dataclasses import dataclass
        from typing import Literal, Optional
        from typing_extensions import TypedDict # pydantic asks for this one before 3.12
        @dataclass
        class Point:
            "A point"
            x: float # across
            y: float # up
        class Movie(TypedDict):
            title: str # its title
            year: int # when it came out
        def add(a:int, # first
                b:int=0 # second
               )->int: # the sum
            "Add two numbers"
            return a+b
        def search(query:str, # what to look for
                   limit:int=10, # most results
                   tags:Optional[list[str]]=None, # only these tags
                   mode:Literal['any','all']='any', # how tags combine
                  )->list[str]: # titles
            "Search the catalogue"
            return []
        def move(p:Point, # where from
                 dx:float=0, # how far across
                ): # the new point
            "Move a point"
            return p
        def rate(m:Movie, # the movie
                 stars:int, # 1 to 5
                )->dict[str,int]: # counts
            "Rate a movie"
            return {}
        def tally(rows:list[dict[str,int]], # the rows
                  key:Optional[str]=None, # which key
                 )->int: # the total
            "Add up rows"
            return 0
        TOOLS = [add, search, move, rate, tally]
    ''')
    name = f'corpus_{time.monotonic_ns()}'
    (folder/f'{name}.py').write_text(src)
    sys.path.insert(0, str(folder))
    try: return importlib.import_module(name)
    finally: sys.path.remove(str(folder))

def fresh(f):
    "A new function object for `f` (same code), so nothing cached for `f` applies"
    g = types.FunctionType(f.__code__, f.__globals__, f.__name__, f.__defaults__, f.__closure__)
    g.__doc__,g.__annotations__,g.__module__ = f.__doc__,dict(f.__annotations__),f.__module__
    return g

def corpus():
    from toolslm_like.funccall import get_schema
    from pydantic import TypeAdapter
    with tempfile.TemporaryDirectory() as d:
        m = corpus_module(Path(d))
        n = 50 if QUICK else 200
        cold = sum(best_of(lambda: get_schema(fresh(f)), n) for f in m.TOOLS)/len(m.TOOLS)
        pyd = sum(best_of(lambda: TypeAdapter(fresh(f)).json_schema(), n//4) for f in m.TOOLS)/len(m.TOOLS)
        for f in m.TOOLS: get_schema(f)
        warm = sum(best_of(lambda: get_schema(f), 20000) for f in m.TOOLS)/len(m.TOOLS)
    print(f"everyday corpus ({len(m.TOOLS)} tools), per function")
    print(f"  cold get_schema {cold*1e6:8.1f} us   pydantic TypeAdapter(fn).json_schema() {pyd*1e6:8.1f} us   ratio {pyd/cold:.1f}x")
    print(f"  warm get_schema {warm*1e6:8.2f} us")

def many_tools():
    from toolslm_like.providers import tool_schemas
    src = '\n'.join(f'def tool_{i}(a:int, # first\n b:str="x" # second\n): "Tool {i}"\n' for i in range(1000))
    ns = {}; exec(src, ns)
    fns = [ns[f'tool_{i}'] for i in range(1000)]
    import warnings
    warnings.filterwarnings('ignore', message=".*its source could not be read") # made by `exec` on purpose: one warning per tool
    for prov in ('anthropic', 'openai'):
        t = time.perf_counter(); tool_schemas(fns, prov); first = time.perf_counter()-t
        again = best_of(lambda: tool_schemas(fns, prov), 5 if QUICK else 20, runs=3)
        print(f"tool_schemas of 1,000 tools ({prov}): first {first*1e3:7.1f} ms, again {again*1e3:7.2f} ms")

def batches():
    from toolslm_like.toolbox import Toolbox
    def inc(x:int): # a number
        "Add one"
        return x+1
    sizes = (1000, 10000) if QUICK else (1000, 10000, 30000)
    tb = Toolbox([inc], max_calls=max(sizes)) # every call runs (the default max_calls, 64, would refuse all but the first 64)
    for n in sizes:
        calls = [{'id': f'c{i}', 'name': 'inc', 'arguments': {'x': i}} for i in range(n)]
        with concurrent.futures.ThreadPoolExecutor(32) as ex:
            t = time.perf_counter(); list(ex.map(lambda c: inc(**c['arguments']), calls)); bare = time.perf_counter()-t
        t = time.perf_counter(); tb.execute(calls, parallel=True); par = time.perf_counter()-t
        t = time.perf_counter(); tb.execute(calls, parallel=False); ser = time.perf_counter()-t
        print(f"Toolbox.execute {n:6} quick calls: parallel {par/n*1e6:7.1f} us/call   bare ThreadPoolExecutor.map "
              f"{bare/n*1e6:7.1f} us/call (ratio {par/bare:.2f})   serial {ser/n*1e6:6.2f} us/call")

def _import_ms(pyc:bool)->float:
    "`import toolslm_like.funccall` in a fresh interpreter, as `-X importtime` gives it (cumulative, ms)"
    import shutil, toolslm_like
    env = dict(os.environ)
    if pyc: env.pop('PYTHONDONTWRITEBYTECODE', None); env['PYTHONPYCACHEPREFIX'] = os.path.join(tempfile.gettempdir(), 'bench_scale_pyc')
    else: # the package's sources alone, copied where no `__pycache__` is (a test may have written one): compiled on import
        env['PYTHONDONTWRITEBYTECODE'] = '1'; env.pop('PYTHONPYCACHEPREFIX', None)
        d = tempfile.mkdtemp()
        shutil.copytree(os.path.dirname(toolslm_like.__file__), os.path.join(d, 'toolslm_like'), ignore=shutil.ignore_patterns('__pycache__'))
        env['PYTHONPATH'] = d
    r = subprocess.run([sys.executable, '-X', 'importtime', '-c', 'import toolslm_like.funccall'], capture_output=True, text=True, env=env)
    last = [l for l in r.stderr.splitlines() if l.rstrip().endswith('toolslm_like.funccall')][-1]
    return int(last.split('|')[1])/1e3

def imports():
    # without .pyc files (compiled from source each time, as here where PYTHONDONTWRITEBYTECODE=1), and with them (as installed)
    for pyc in (False, True):
        if pyc: _import_ms(True) # writes the .pyc files (under a temporary PYTHONPYCACHEPREFIX, not into the package)
        ts = [_import_ms(pyc) for _ in range(3 if QUICK else 9)]
        print(f"import toolslm_like.funccall ({'with .pyc' if pyc else 'no .pyc  '}): median {statistics.median(ts):.1f} ms, min {min(ts):.1f} ms "
              "(cumulative, -X importtime)")
    mods = ['funccall', 'typekinds', 'limits', 'providers', 'toolbox', 'sandbox', 'toolloop', 'indexes', 'mcp', 'cli']
    heavy = ("openai","anthropic","google.genai","mcp","pydantic","asyncio","concurrent.futures","ctypes")
    for m in mods:
        got = subprocess.run([sys.executable, '-c', f'import sys, toolslm_like.{m}; print(sorted(x for x in {heavy!r} if x in sys.modules))'],
                             capture_output=True, text=True).stdout.strip()
        print(f"  import toolslm_like.{m:10} loads: {got}")

def python_tool():
    from toolslm_like.funccall import python
    python('1+1')
    n = 2000 if QUICK else 10000
    t = best_of(lambda: python('1+1'), n)
    codes = iter([f'{i}+1' for i in range(n*5)] + ['x = 3']*(n*5) + [f'x = {i}' for i in range(n*5)])
    print(f"in-process python('1+1'): {t*1e6:.1f} us;  python(f'{{i}}+1'), new text each call: {best_of(lambda: python(next(codes)), n)*1e6:.1f} us;"
          f"  python('x = 3'): {best_of(lambda: python(next(codes)), n)*1e6:.1f} us;  python(f'x = {{i}}'): {best_of(lambda: python(next(codes)), n)*1e6:.1f} us")

if __name__ == '__main__':
    for part in (chains, corpus, many_tools, batches, imports, python_tool):
        try: part()
        except Exception as e: print(f"{part.__name__}: {type(e).__name__}: {str(e)[:300]}")
