"""Benchmark: `get_schema` cold and warm, and `call_func` overhead, against `fastcore.funccall`, pydantic and a direct call.

Run by hand: `python bench/bench_funccall.py`. All figures come from one run on the same functions, so compare ratios.
Targets (issue 2): cold get_schema no slower than fastcore's; warm at least 100x faster than fastcore's; call_func
overhead (time minus a direct call) under a third of fastcore's call_func overhead.
Targets (issue 14): cold get_schema no slower than pydantic's `TypeAdapter(fn).json_schema()` on the same functions,
warm <= 3 us, call_func overhead <= 1.5 us.
"""
import time, types, statistics
from fastcore import funccall as fc
from toolslm_like import funccall as tl
from pydantic import TypeAdapter

def add(a:int, # First number
        b:int  # Second number
       )->int: # The sum
    "Add two numbers"
    return a+b

def search(query:str, # What to look for
           limit:int=10, # Most results to return
           tags:list[str]|None=None, # Only results with these tags
           exact:bool=False, # Match the whole phrase?
          )->list[str]: # The matching titles
    "Search the catalogue"
    return []

def fresh(f):
    "A new function object for `f` (same code), so nothing cached for `f` applies"
    g = types.FunctionType(f.__code__, f.__globals__, f.__name__, f.__defaults__, f.__closure__)
    g.__doc__,g.__annotations__ = f.__doc__,dict(f.__annotations__)
    return g

def per_call(fn, n):
    "Best of 5 runs of `n` calls: seconds per call"
    best = float('inf')
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(n): fn()
        best = min(best, (time.perf_counter()-t)/n)
    return best

def main():
    us = lambda s: f"{s*1e6:8.2f} us"
    rows = []
    for f in (add, search):
        assert tl.get_schema(f)['input_schema']['properties'].keys() == fc.get_schema(f)['input_schema']['properties'].keys()
        fresh_fns = [fresh(f) for _ in range(3000)]
        it1,it2 = iter(fresh_fns[:1500]),iter(fresh_fns[1500:])
        cold_tl = per_call(lambda: tl.get_schema(fresh(f)), 200)
        cold_fc = per_call(lambda: fc.get_schema(fresh(f)), 200)
        cold_pd = per_call(lambda: TypeAdapter(fresh(f)).json_schema(), 200)
        tl.get_schema(f)
        warm_tl = per_call(lambda: tl.get_schema(f), 20000)
        warm_fc = per_call(lambda: fc.get_schema(f), 200)
        ta = TypeAdapter(f)
        warm_pd = per_call(lambda: ta.json_schema(), 2000)
        rows.append((f.__name__, cold_tl, cold_fc, cold_pd, warm_tl, warm_fc, warm_pd))
    print("get_schema            toolslm_like   fastcore.funccall   pydantic TypeAdapter   ratio vs fastcore, vs pydantic")
    for nm,ct,cf,cp,wt,wf,wp in rows:
        print(f"  {nm:7} cold      {us(ct)}     {us(cf)}        {us(cp)}      {cf/ct:6.1f}x  {cp/ct:6.1f}x faster")
        print(f"  {nm:7} warm      {us(wt)}     {us(wf)}        {us(wp)}      {wf/wt:6.1f}x  {wp/wt:6.1f}x faster (target <= 3 us)")
    ns = {'add': add}
    inp = {'a': 1, 'b': 2}
    direct = per_call(lambda: add(**inp), 200000)
    ours = per_call(lambda: tl.call_func('add', inp, ns), 50000)
    theirs = per_call(lambda: fc.call_func('add', inp, ns), 20000)
    print(f"call_func add(a:int, b:int)")
    print(f"  direct call          {us(direct)}")
    print(f"  toolslm_like         {us(ours)}   overhead {us(ours-direct)}")
    print(f"  fastcore.funccall    {us(theirs)}   overhead {us(theirs-direct)}")
    print(f"  overhead ratio ours/fastcore: {(ours-direct)/(theirs-direct):.3f} (target < 0.333); ours {us(ours-direct)} (target <= 1.5 us)")

if __name__ == '__main__': main()
