"Timings of toolslm_like.providers on typical inputs (run by hand: python bench/bench_providers.py)"
import timeit, json
from dataclasses import dataclass
from typing import Literal
from toolslm_like.providers import (PROVIDERS, tool_schemas, tool_specs, parse_tool_calls, format_tool_results,
                                    strict_schema, gemini_schema)
from openai.types.chat import ChatCompletion
@dataclass
class Address:
    "A postal address"
    street:str # Street and number
    city:str # City name
    country:str='NZ' # ISO country code
def get_weather(city:str, unit:Literal['C','F']='C', days:int=1)->dict:
    "Get the weather forecast for a city"
def send_parcel(to:Address, weight_kg:float, tags:dict[str,str]|None=None)->str:
    "Send a parcel"
def now()->str:
    "Time"
tools = [get_weather, send_parcel, now]*1
ns = {f'{f.__name__}{i}': f for i in range(10) for f in tools}
for p in PROVIDERS:
    n=200; t = timeit.timeit(lambda: tool_schemas(ns, p, strict='auto' if 'openai' in p else False), number=n)/n
    print(f"tool_schemas 30 tools {p}: {t*1e3:.2f} ms")
# 1,000 tools in every dialect and strict mode (issue 17: <= 5 ms the second time): the first time (schemas already made by
# get_schema), a changed list (one tool fewer: each tool's description is kept, the whole answer is not), and the same list again
import warnings
many = {}
with warnings.catch_warnings():
    warnings.simplefilter('ignore') # made by exec: no source, so no docments (a warning each)
    exec('\n'.join(f'def tool_{i}(a:int, b:str="x", c:list[int]|None=None): "Tool {i}"\n' for i in range(1000)), many)
    fns = [many[f'tool_{i}'] for i in range(1000)]
    tool_schemas(fns, 'json_schema')
for p in PROVIDERS:
    for strict in ((False, 'auto', True) if p in ('openai', 'openai-responses', 'anthropic') else (False,)):
        t = timeit.default_timer(); tool_schemas(fns, p, strict=strict); first = timeit.default_timer()-t
        changed = min(timeit.repeat(lambda: [tool_schemas(fns[:-1], p, strict=strict), tool_schemas(fns, p, strict=strict)], number=1, repeat=5))/2
        again = min(timeit.repeat(lambda: tool_schemas(fns, p, strict=strict), number=5, repeat=5))/5
        print(f"tool_schemas 1,000 tools {p} strict={strict}: first {first*1e3:.1f} ms, changed {changed*1e3:.2f} ms, again {again*1e3:.2f} ms")
oai = ChatCompletion.model_validate({'id': 'c1', 'object': 'chat.completion', 'created': 0, 'model': 'gpt-x', 'choices': [{'index': 0, 'finish_reason': 'tool_calls',
    'message': {'role': 'assistant', 'content': None, 'tool_calls': [
        {'id': f'call_{i}', 'type': 'function', 'function': {'name': 'get_weather', 'arguments': '{"city": "Paris", "unit": "F"}'}} for i in range(5)]}}]})
n=2000; print(f"parse_tool_calls ChatCompletion 5 calls: {timeit.timeit(lambda: parse_tool_calls(oai), number=n)/n*1e6:.1f} us")
d = oai.model_dump()
print(f"parse_tool_calls dict 5 calls: {timeit.timeit(lambda: parse_tool_calls(d), number=n)/n*1e6:.1f} us")
res = [{'id': f'call_{i}', 'name': 'get_weather', 'output': {'t': i}, 'error': None} for i in range(5)]
print(f"format_tool_results 5 results: {timeit.timeit(lambda: format_tool_results(res, 'anthropic'), number=n)/n*1e6:.1f} us")
# The rewrites are passes over toolslm_like.schemawalk's walker (one method call per node, one shared budget)
params = tool_specs(send_parcel)[0]['parameters']
n=2000
for nm,f in (('strict_schema', lambda: strict_schema(params, 'send')), ('gemini_schema', lambda: gemini_schema(params, 'send'))):
    try: print(f"{nm} send_parcel: {min(timeit.repeat(f, number=n, repeat=3))/n*1e6:.1f} us")
    except Exception as e: print(f"{nm} send_parcel: {type(e).__name__}") # strict mode cannot say its free-form tags
params = tool_specs(get_weather)[0]['parameters']
for nm,f in (('strict_schema', lambda: strict_schema(params, 'w')), ('strict_schema anthropic', lambda: strict_schema(params, 'w', 'anthropic')), ('gemini_schema', lambda: gemini_schema(params, 'w'))):
    print(f"{nm} get_weather: {min(timeit.repeat(f, number=n, repeat=3))/n*1e6:.1f} us")
