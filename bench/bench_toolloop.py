"""Benchmarks of toolslm_like.toolloop, run by hand: `python bench/bench_toolloop.py`

1. `parse_text_tool_calls` on typical model replies (fenced, bare, several calls, single quotes, pythonic, DeepSeek's tokens, a mention
   in prose) and on pathological text.
2. What the loop adds per round on top of the SDK's own request: a 3-round conversation (two parallel calls, a failing
   call, an answer) against a local scripted Chat Completions server, with `tool_loop` and with a hand-written loop
   that calls `client.chat.completions.create` and the tools directly."""
import json, sys, time, timeit
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent.parent/'tests'))
import openai
from scripted_servers import ChatServer
from toolslm_like.toolloop import tool_loop, parse_text_tool_calls

replies = {
    'fenced + prose': 'I will add.\n```json\n{"name": "add", "arguments": {"a": 2, "b": 3}}\n```\nThen report.',
    'bare, 3 calls': 'Calls: {"name": "a", "arguments": {"x": 1}} {"name": "b", "arguments": {"y": [1, 2]}} {"name": "c", "arguments": {}} done',
    'single quotes': "{'name': 'search', 'arguments': {'q': \"it's\", 'exact': True,},}",
    'no call, 2 kB prose': 'The answer is 42. ' * 110,
    'pythonic, 2 calls': "[get_weather(city='Paris'), add(a=1, b=2)]",
    'DeepSeek tokens': '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>add\n```json\n{"a": 2, "b": 3}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
    'a mention in prose': 'I used {"name": "add"} before, so now I answer: 5.',
}
print('parse_text_tool_calls')
for k,v in replies.items():
    n,t = timeit.Timer(lambda: parse_text_tool_calls(v)).autorange()
    print(f"  {k:24s} {t/n*1e6:8.1f} µs")
for k,v in {'100k unbalanced {': '{' * 100_000, '50k small JSON values': '[' + '[1],' * 50_000 + '[1]]',
            '50 nested [ around code': '[' * 50 + 'f(' + 'x,' * 50_000 + ')' + ']' * 50}.items():
    t = time.perf_counter(); parse_text_tool_calls(v); print(f"  {k:24s} {(time.perf_counter()-t)*1e3:8.1f} ms")

def add(a:int, b:int)->int:
    "Add"
    return a + b
def multiply(a:int, b:int)->int:
    "Multiply"
    return a * b
def divide(a:float, b:float)->float:
    "Divide"
    return a / b
tools = {'add': add, 'multiply': multiply, 'divide': divide}
script = [[('add', {'a': 2, 'b': 3}), ('multiply', {'a': 4, 'b': 5})], [('divide', {'a': 1, 'b': 0})], 'done']
schemas = [{'type': 'function', 'function': {'name': n, 'description': f.__doc__, 'parameters': {'type': 'object',
            'properties': {'a': {'type': 'number'}, 'b': {'type': 'number'}}, 'required': ['a', 'b']}}} for n,f in tools.items()]

def hand_written(client):
    msgs = [{'role': 'user', 'content': 'q'}]
    while True:
        m = client.chat.completions.create(model='m', messages=msgs, tools=schemas).choices[0].message
        msgs.append({'role': 'assistant', 'content': m.content, **({'tool_calls': [c.model_dump() for c in m.tool_calls]} if m.tool_calls else {})})
        if not m.tool_calls: return msgs
        for c in m.tool_calls:
            try: out = str(tools[c.function.name](**json.loads(c.function.arguments)))
            except Exception as e: out = f"{type(e).__name__}: {e}"
            msgs.append({'role': 'tool', 'tool_call_id': c.id, 'content': out})

N = 30
print(f"\n3-round conversation against a local Chat Completions server, mean of {N}")
for name,run in [('hand-written loop', lambda c: hand_written(c)), ('tool_loop', lambda c: tool_loop(c, 'q', tools, model='m')),
                 ('tool_loop parallel=False', lambda c: tool_loop(c, 'q', tools, model='m', parallel=False))]:
    took = []
    for _ in range(N):
        with ChatServer(list(script)) as srv:
            client = openai.OpenAI(api_key='k', base_url=srv.base_url, max_retries=0)
            t = time.perf_counter(); run(client); took.append(time.perf_counter() - t)
            assert not srv.problems, srv.problems
    took.sort()
    print(f"  {name:26s} {sum(took)/N*1e3:7.2f} ms (median {took[N//2]*1e3:.2f} ms)")
