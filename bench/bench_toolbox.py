"""Benchmark: `Toolbox.execute` per-call overhead against baretools (PyPI `baretools-ai`) and a bare loop; and 20 calls
of a tool that sleeps 0.1 s, serial and parallel, sync and async tools, for both libraries.

Run by hand: `python bench/bench_toolbox.py`. Targets (issue 4): per-call overhead no more than baretools' on the same
calls; 20 x 0.1 s in parallel within 0.15 s of wall time. Issue 26: one call per execute with a `timeout` costs at most
10 us more than the same call without one.

Also: what an approval hook costs (`approve=` a hook that allows every call), next to the same calls without one; and
parallel batches of quick calls (issue 17): `execute(parallel=True)` per call against baretools' parallel `execute` and a
bare `ThreadPoolExecutor.map` over the same calls (target: within 2x of the bare pool), without and with a `timeout`.

Overhead is time per call minus a bare loop that calls the tool directly with the same arguments (the three measured in
turns, best of 40 rounds, so load on a shared machine hits all alike), two ways:
one call per `execute` (an agent turn with a single tool call) and a batch of 100 calls per `execute`.
"""
import asyncio, concurrent.futures, inspect, time
from baretools import ToolRegistry
from toolslm_like.toolbox import Toolbox

def add(a:int, # First number
        b:int  # Second number
       )->int: # The sum
    "Add two numbers"
    return a + b

def nap(seconds:float # How long to sleep
       )->str: # 'slept'
    "Sleep, then say so"
    time.sleep(seconds)
    return 'slept'

async def anap(seconds:float # How long to sleep
              )->str: # 'slept'
    "Sleep without blocking the loop, then say so"
    await asyncio.sleep(seconds)
    return 'slept'

def per_call(fns:dict, n_calls:int, rounds:int=40)->dict:
    "Seconds per call of each of `fns` (one run of a fn makes `n_calls` calls): the best of `rounds`, taken in turns so load changes hit all alike"
    runs = max(1, 2000 // n_calls)
    best = {k: float('inf') for k in fns}
    for _ in range(rounds):
        for k,fn in fns.items():
            t = time.perf_counter()
            for _ in range(runs): fn()
            best[k] = min(best[k], (time.perf_counter()-t) / (runs*n_calls))
    return best

def wall(fn, repeat=3):
    "Best wall time of `fn()` in seconds"
    best = float('inf')
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter()-t)
    return best

def main():
    us = lambda s: f"{s*1e6:7.2f} us"
    tb = Toolbox([add, nap, anap], max_calls=100) # the batch below has 100 calls; the default limit is 64
    reg = ToolRegistry()
    for f in (add, nap, anap): reg.register(f)
    one = [{'id': 'c0', 'name': 'add', 'arguments': {'a': 1, 'b': 2}}]
    batch = [{'id': f'c{i}', 'name': 'add', 'arguments': {'a': i, 'b': 2}} for i in range(100)]
    assert tb.execute(one)[0]['output'] == reg.execute(one)[0]['output'] == 3

    def bare_loop(calls): return [add(**c['arguments']) for c in calls]
    def allow(call): return True
    approving = 'approve' in inspect.signature(Toolbox.execute).parameters # this bench also runs against older versions
    print("Per-call time of a trivial tool (add), best of 40 rounds taken in turns; overhead = per call minus the bare loop")
    print(f"{'':28}{'per call':>10}{'overhead':>12}   overhead / baretools'")
    for label,calls in (('1 call per execute', one), ('100 calls per execute', batch)):
        fns = {'bare': lambda: bare_loop(calls), 'ours': lambda: tb.execute(calls), 'theirs': lambda: reg.execute(calls)}
        if approving: fns['approved'] = lambda: tb.execute(calls, approve=allow)
        fns['timed'] = lambda: tb.execute(calls, timeout=5)
        t = per_call(fns, len(calls))
        bare,ours,theirs = t['bare'],t['ours'],t['theirs']
        print(f"  {label}")
        print(f"    {'bare loop':24}{us(bare)}")
        print(f"    {'toolslm_like Toolbox':24}{us(ours)}   {us(ours-bare)}   {(ours-bare)/(theirs-bare):6.2f}")
        if approving: print(f"    {'  with approve=':24}{us(t['approved'])}   {us(t['approved']-bare)}   {(t['approved']-bare)/(theirs-bare):6.2f}")
        print(f"    {'  with timeout=5':24}{us(t['timed'])}   {us(t['timed']-bare)}   {(t['timed']-bare)/(theirs-bare):6.2f}")
        print(f"    {'  timeout=5 adds':24}{us(t['timed']-ours)} per call to the same calls without one (issue 26: within 10 us for one call)")
        print(f"    {'baretools ToolRegistry':24}{us(theirs)}   {us(theirs-bare)}")

    print("\nParallel batches of quick calls (add), per call, best of 20 rounds taken in turns")
    with concurrent.futures.ThreadPoolExecutor(32) as pool:
        for n in (100, 1000):
            calls = [{'id': f'c{i}', 'name': 'add', 'arguments': {'a': i, 'b': 2}} for i in range(n)]
            ptb = Toolbox([add], max_calls=n)
            t = per_call({'pool': lambda: list(pool.map(lambda c: add(**c['arguments']), calls)),
                          'ours': lambda: ptb.execute(calls, parallel=True),
                          'timed': lambda: ptb.execute(calls, parallel=True, timeout=5),
                          'theirs': lambda: reg.execute(calls, parallel=True, max_workers=32)}, n, rounds=20)
            print(f"  {n:5} calls: ThreadPoolExecutor.map {us(t['pool'])}   toolslm_like {us(t['ours'])} ({t['ours']/t['pool']:.2f}x the pool)"
                  f", with timeout=5 {us(t['timed'])} ({t['timed']/t['pool']:.2f}x)   baretools {us(t['theirs'])} ({t['theirs']/t['pool']:.2f}x)")
            ptb.close()

    print("\n20 calls of a tool that sleeps 0.1 s (wall time, best of 3)")
    for tool in ('nap', 'anap'):
        calls = [{'id': f'c{i}', 'name': tool, 'arguments': {'seconds': 0.1}} for i in range(20)]
        kind = 'sync ' if tool == 'nap' else 'async'
        for par in (False, True):
            mode = 'parallel' if par else 'serial  '
            ours = wall(lambda: tb.execute(calls, parallel=par), 3 if par else 1)
            theirs = wall(lambda: reg.execute(calls, parallel=par, max_workers=32 if par else None), 3 if par else 1)
            print(f"  {kind} {mode} execute    toolslm_like {ours:6.3f} s   baretools {theirs:6.3f} s")
        ours = wall(lambda: asyncio.run(tb.aexecute(calls, parallel=True)))
        theirs = wall(lambda: asyncio.run(reg.execute_async(calls, parallel=True)))
        print(f"  {kind} parallel aexecute   toolslm_like {ours:6.3f} s   baretools {theirs:6.3f} s (execute_async)")
    tb.close()

if __name__ == '__main__': main()
