"""Benchmarks of toolslm_like.toolloop, run by hand: `python bench/bench_toolloop.py`

1. `parse_text_tool_calls` on typical model replies (fenced, bare, several calls, single quotes, pythonic, DeepSeek's tokens, a mention
   in prose) and on pathological text.
2. What the loop adds per round on top of the SDK's own request: a 3-round conversation (two parallel calls, a failing
   call, an answer) against a local scripted Chat Completions server, with `tool_loop` and with a hand-written loop
   that calls `client.chat.completions.create` and the tools directly.
3. `StreamAccumulator` fed the chunks of one long streamed reply per API (arguments cut into 3-character pieces): chunks per second.
4. The same 3-round conversation streamed (`stream=True`, pieces of 3 characters), against plain replies, per API.

`--stream-only` runs part 4 alone; `--trees DIR,DIR,...` runs it for each tree's `toolslm_like` (e.g. a checkout of main
before a change, and this one), in turns, twice, so before and after are measured side by side in one run."""
import json, os, subprocess, sys, time, timeit
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent.parent/'tests'))
import openai
import anthropic
from google import genai
from scripted_servers import ChatServer, ResponsesServer, AnthropicServer, GeminiServer
from toolslm_like.toolloop import tool_loop, parse_text_tool_calls
from toolslm_like.streaming import StreamAccumulator

if '--trees' in sys.argv:
    trees = sys.argv[sys.argv.index('--trees')+1].split(',')
    for _ in range(2):
        for tree in trees:
            print(f"{tree}:", flush=True)
            subprocess.run([sys.executable, __file__, '--stream-only'], env={**os.environ, 'PYTHONPATH': tree}, check=True)
    sys.exit()
ONLY_STREAM = '--stream-only' in sys.argv

replies = {
    'fenced + prose': 'I will add.\n```json\n{"name": "add", "arguments": {"a": 2, "b": 3}}\n```\nThen report.',
    'bare, 3 calls': 'Calls: {"name": "a", "arguments": {"x": 1}} {"name": "b", "arguments": {"y": [1, 2]}} {"name": "c", "arguments": {}} done',
    'single quotes': "{'name': 'search', 'arguments': {'q': \"it's\", 'exact': True,},}",
    'no call, 2 kB prose': 'The answer is 42. ' * 110,
    'pythonic, 2 calls': "[get_weather(city='Paris'), add(a=1, b=2)]",
    'DeepSeek tokens': '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>add\n```json\n{"a": 2, "b": 3}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
    'a mention in prose': 'I used {"name": "add"} before, so now I answer: 5.',
}
if not ONLY_STREAM: print('parse_text_tool_calls')
for k,v in ({} if ONLY_STREAM else replies).items():
    n,t = timeit.Timer(lambda: parse_text_tool_calls(v)).autorange()
    print(f"  {k:24s} {t/n*1e6:8.1f} µs")
for k,v in {} if ONLY_STREAM else {'100k unbalanced {': '{' * 100_000, '50k small JSON values': '[' + '[1],' * 50_000 + '[1]]',
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
if not ONLY_STREAM: print(f"\n3-round conversation against a local Chat Completions server, mean of {N}")
for name,run in [] if ONLY_STREAM else [('hand-written loop', lambda c: hand_written(c)), ('tool_loop', lambda c: tool_loop(c, 'q', tools, model='m')),
                 ('tool_loop parallel=False', lambda c: tool_loop(c, 'q', tools, model='m', parallel=False))]:
    took = []
    for _ in range(N):
        with ChatServer(list(script)) as srv:
            client = openai.OpenAI(api_key='k', base_url=srv.base_url, max_retries=0)
            t = time.perf_counter(); run(client); took.append(time.perf_counter() - t)
            assert not srv.problems, srv.problems
    took.sort()
    print(f"  {name:26s} {sum(took)/N*1e3:7.2f} ms (median {took[N//2]*1e3:.2f} ms)")

SERVERS = {'openai': ChatServer, 'openai-responses': ResponsesServer, 'anthropic': AnthropicServer, 'gemini': GeminiServer}
if not ONLY_STREAM: print("\nStreamAccumulator, one reply with two calls of 30 kB and of 300 kB arguments each, cut into 3-character pieces")
for size in () if ONLY_STREAM else (30_000, 300_000): # ten times the size takes ten times as long: the pieces are joined once, not copied at each piece
  long_turn = [('add', {'a': 1, 'b': 2, 'note': 'x' * size}), ('multiply', {'a': 3, 'b': 4, 'note': 'y' * size})]
  for provider,cls in SERVERS.items():
    events = [d for _,d in cls([]).stream_events(long_turn, 1, {'model': 'm'}) if isinstance(d, dict)]
    t = time.perf_counter()
    acc = StreamAccumulator(provider)
    for d in events: acc.add(d)
    calls = acc.tool_calls()
    took = time.perf_counter() - t
    assert [len(c['arguments']['note']) for c in calls] == [size, size]
    print(f"  {size//1000:4d} kB {provider:18s} {len(events):7d} chunks in {took*1e3:7.1f} ms: {len(events)/took/1e3:6.0f}k chunks/s")

def client_for(provider, srv):
    if provider == 'anthropic': return anthropic.Anthropic(api_key='k', base_url=srv.base_url, max_retries=0)
    if provider == 'gemini': return genai.Client(api_key='k', http_options={'base_url': srv.base_url})
    return openai.OpenAI(api_key='k', base_url=srv.base_url, max_retries=0)

# the SDKs' own chunk types, built as their clients build them from each event's JSON
from openai._models import construct_type as openai_type
from anthropic._models import construct_type as anthropic_type
from openai.types.chat import ChatCompletionChunk
from openai.types.responses import ResponseStreamEvent
from anthropic.types import RawMessageStreamEvent
SDK_CHUNKS = {'openai': lambda d: openai_type(type_=ChatCompletionChunk, value=d),
              'openai-responses': lambda d: openai_type(type_=ResponseStreamEvent, value=d),
              'anthropic': lambda d: anthropic_type(type_=RawMessageStreamEvent, value=d)}
print("\nStreamAccumulator fed a 3-round conversation's streamed replies (3-character pieces): µs per chunk, "
      "as the SDK's objects and as dicts")
for provider,sdk_chunk in SDK_CHUNKS.items():
    srv = SERVERS[provider]([], chunk_chars=3)
    replies = [[d for _,d in srv.stream_events(turn, n, {'model': 'm'}) if isinstance(d, dict)]
               for n,turn in enumerate(script, 1)]
    row = []
    for chunks in ([[sdk_chunk(d) for d in r] for r in replies], replies):
        def feed():
            for r in chunks:
                acc = StreamAccumulator(provider)
                for c in r: acc.add(c)
                acc.tool_calls()
        n,t = timeit.Timer(feed).autorange()
        row.append(min(timeit.repeat(feed, number=n, repeat=5)) / n / sum(map(len, chunks)) * 1e6)
    print(f"  {provider:18s} objects {row[0]:6.1f} µs   dicts {row[1]:6.1f} µs   ratio {row[0]/row[1]:.2f}")

N = 15
print(f"\n3-round conversation, plain against streamed (3-character pieces): median of {N} each, run in turns; "
      "wall time and this process's CPU time (the local server's thread included)")
def one_run(provider, cls, api, stream)->tuple:
    with cls(list(script), chunk_chars=3) as srv:
        client = client_for(provider, srv)
        t,c = time.perf_counter(),time.process_time()
        run = tool_loop(client, 'q', tools, model='m', api=api, stream=stream, progress=False)
        history = run.result() if stream else run
        took = time.perf_counter() - t, time.process_time() - c
        assert not srv.problems, srv.problems
    return took
for provider,cls in SERVERS.items():
    api = {'openai': 'chat', 'openai-responses': 'responses'}.get(provider)
    took = {False: [], True: []}
    for _ in range(N):
        for stream in (False, True): took[stream].append(one_run(provider, cls, api, stream))
    med = {k: [sorted(x[i] for x in v)[N//2] for i in (0, 1)] for k,v in took.items()}
    print(f"  {provider:18s} wall: plain {med[False][0]*1e3:6.1f} ms, streamed {med[True][0]*1e3:6.1f} ms, "
          f"ratio {med[True][0]/med[False][0]:.2f}   CPU: plain {med[False][1]*1e3:6.1f} ms, "
          f"streamed {med[True][1]*1e3:6.1f} ms, ratio {med[True][1]/med[False][1]:.2f}")
