"""The tool flows of claudette, cosette and lisette (installed from PyPI), run against scripted model servers on
127.0.0.1, with the funccall module they import either their own (`original`) or toolslm_like's put in its place
(`ours`), the way README says. Run by tests/test_chatlibs.py in a venv of its own (those libraries need older SDKs):

    .venv-chat/bin/python tests/chatlib_flows.py original|ours|names

prints one JSON object: for each flow, every tool result sent back to the model (`results`), what the flow returned
(`value`), the exception that ended it (`crash`), what the server found wrong in the requests (`problems`) and the
tool schemas it was sent (`schemas`). `names` prints what fastcore.funccall and toolslm.funccall export that ours
lacks, and the parameters of theirs that ours does not take."""
import asyncio, base64, dataclasses, inspect, json, os, signal, sys, threading, traceback
os.environ.setdefault('LITELLM_LOCAL_MODEL_COST_MAP', 'True') # litellm: no download of its price list
mode = sys.argv[1] if len(sys.argv) > 1 else 'ours'
if mode == 'ours': # what README tells a claudette, cosette or lisette user to write, before importing the library
    import toolslm_like.funccall
    sys.modules['fastcore.funccall'] = sys.modules['toolslm.funccall'] = toolslm_like.funccall

from scripted_servers import AnthropicServer, ResponsesServer, ChatServer

PNG = base64.b64encode(bytes.fromhex('89504e470d0a1a0a0000000d4948445200000001000000010806000000'
                                     '1f15c4890000000d49444154789c6360000002000100e221bc330000000049454e44ae426082')).decode()

# the tools
def add(a:int, # First number
        b:int=0): # Second number
    "Add two numbers"
    return a+b

def mul(a:int, # First factor
        b:int): # Second factor
    "Multiply two numbers"
    return a*b

def boom(x:int): # The divisor
    "Divide one by x"
    return 1/x

async def aadd(a:int, # First number
               b:int): # Second number
    "Add two numbers, asynchronously"
    await asyncio.sleep(0)
    return a+b

def tag(h:dict, # Settings
        xs:list[int]): # Numbers
    "Describe settings and numbers"
    return f"{sorted(h.items())} {xs}"

def total(xs:list[int]): # Numbers
    "Sum numbers"
    return sum(xs)

def nums():
    "Some numbers, as text"
    return "[1, 2, 3]"

def settings():
    "Some settings, as text"
    return "{'k': 1}"

def where():
    "Which thread runs the tool"
    return 'main' if threading.current_thread() is threading.main_thread() else 'another thread'

def alarm():
    "Set an alarm signal handler (only the main thread may)"
    signal.signal(signal.SIGALRM, signal.getsignal(signal.SIGALRM))
    return 'ok'

@dataclasses.dataclass
class Point:
    "A point"
    x: int # Across
    y: int # Up

def dist(p:Point, # Where from
         q:Point): # Where to
    "Manhattan distance between two points"
    return abs(p.x-q.x) + abs(p.y-q.y)

# flows: each returns (server, value)
def drain(o):
    "Consume a generator (and any generators it yields), so a streamed flow runs to its end"
    if inspect.isgenerator(o) or hasattr(o, '__next__') or type(o).__name__ == '_save_iter':
        for x in o: drain(x)
    return o

async def adrain(o):
    if inspect.isawaitable(o): o = await o
    if hasattr(o, '__aiter__'):
        async for x in o: await adrain(x)
    else: drain(o)
    return o

ERRS = [[('add', {'a': 'x'}), ('nope', {}), ('add', {'a': 1, 'c': 5})], 'done']
REPAIRS = [[('tag', {'h': "{'k': 1}", 'xs': {}}), ('tag', {'h': {}, 'xs': '[1, 2]'}), ('tag', {'h': '{"a": 2}', 'xs': "5"}),
            ('tag', {'h': {}, 'xs': "['a']"})], 'done']
CALLS = [[('add', {'a': 1, 'b': 2}), ('mul', {'a': 3, 'b': 4})], [('boom', {'x': 0}), ('boom', {'x': 4})], 'done']
THREADS = [[('where', {}), ('alarm', {})], 'done']
POINTS = [[('dist', {'p': {'x': 1, 'y': 2}, 'q': {'x': 4, 'y': 6}}), ('dist', {'p': {'x': 1}, 'q': {'x': 0, 'y': 0}})], 'done']
ALL = [add, mul, boom, tag, where, alarm]

def claudette_flows():
    from anthropic import Anthropic, AsyncAnthropic
    from claudette import Chat, Client, AsyncChat, AsyncClient, search_conf, ToolResult
    from claudette.text_editor import text_editor_conf
    model = 'claude-sonnet-4-5'
    def shot():
        "Take a screenshot"
        return ToolResult('image/png', PNG)
    def chat(srv, tools, cls=Chat, client=Client, sdk=Anthropic):
        return cls(cli=client(model, cli=sdk(base_url=srv.base_url, api_key='k', max_retries=0)), tools=tools)
    def loop(turns, tools=ALL, **kw):
        srv = AnthropicServer(turns).start()
        try: return srv, drain(chat(srv, tools).toolloop('go', **kw))
        finally: srv.stop()
    def aloop(turns, tools=ALL, **kw):
        srv = AnthropicServer(turns).start()
        async def run(): return await adrain(chat(srv, tools, AsyncChat, AsyncClient, AsyncAnthropic).toolloop('go', **kw))
        try: return srv, asyncio.run(run())
        finally: srv.stop()
    def structured(turns):
        srv = AnthropicServer(turns).start()
        try: return srv, Client(model, cli=Anthropic(base_url=srv.base_url, api_key='k')).structured('a point', tools=[Point])
        finally: srv.stop()
    return {
        'calls': lambda: loop(CALLS),
        'calls, streamed': lambda: loop(CALLS, stream=True),
        'bad calls': lambda: loop(ERRS),
        'repairs': lambda: loop(REPAIRS),
        'threads and signals': lambda: loop(THREADS),
        'server tools': lambda: loop([[('add', {'a': 1})], 'done'], [add, search_conf(), text_editor_conf['sonnet']]),
        'image result': lambda: loop([[('shot', {})], 'done'], [shot]),
        'dataclass arguments': lambda: loop(POINTS, [dist]),
        'forced tool choice': lambda: loop([[('add', {'a': 2, 'b': 2})], 'done'], tool_choice='add'),
        'async image result': lambda: aloop([[('shot', {})], 'done'], [shot]),
        'async calls': lambda: aloop(CALLS),
        'async calls, streamed': lambda: aloop(CALLS, stream=True),
        'async tool': lambda: aloop([[('aadd', {'a': 1, 'b': 2}), ('add', {'a': 5})], 'done'], [aadd, add]),
        'async bad calls': lambda: aloop(ERRS),
        'async threads and signals': lambda: aloop(THREADS),
        'async server tools': lambda: aloop([[('aadd', {'a': 1, 'b': 1})], 'done'], [aadd, search_conf(), text_editor_conf['sonnet']]),
        'structured': lambda: structured([[('Point', {'x': 1, 'y': 2})]]),
    }

def cosette_flows():
    from openai import OpenAI
    from cosette import Chat, Client
    model = 'gpt-4.1-mini'
    def client(srv): return Client(model, cli=OpenAI(base_url=srv.base_url, api_key='k', max_retries=0))
    def loop(turns, tools=ALL, **kw):
        srv = ResponsesServer(turns).start()
        try: return srv, drain(Chat(cli=client(srv), tools=tools).toolloop('go', **kw))
        finally: srv.stop()
    def structured(turns):
        srv = ResponsesServer(turns).start()
        try: return srv, client(srv).structured('a point', tools=[Point])
        finally: srv.stop()
    return {
        'calls': lambda: loop(CALLS),
        'calls, streamed': lambda: loop(CALLS, stream=True),
        'bad calls': lambda: loop(ERRS),
        'bad calls, streamed': lambda: loop(ERRS, stream=True),
        'repairs': lambda: loop(REPAIRS),
        'dataclass arguments': lambda: loop(POINTS, [dist]),
        'threads and signals': lambda: loop(THREADS),
        'structured': lambda: structured([[('Point', {'x': 1, 'y': 2})]]),
    }

def lisette_flows():
    from lisette import Chat, AsyncChat, structured as lstructured
    import lisette.core
    # lisette 0.1.37's async chat adds the `L` fastcore 2.2's `parallel_async` returns to its history list, which turns
    # the history into an `L` that litellm cannot send (with either funccall module): it gets a plain list here
    async def parallel_async(*args, _orig=lisette.core.parallel_async, **kw): return list(await _orig(*args, **kw))
    lisette.core.parallel_async = parallel_async
    model = 'openai/gpt-4.1-mini'
    def chat(srv, tools, cls=Chat, **kw): return cls(model, tools=tools, api_base=srv.base_url, api_key='k', **kw)
    def loop(turns, tools=ALL, ckw=None, **kw):
        srv = ChatServer(turns).start()
        try: return srv, drain(chat(srv, tools, **(ckw or {}))('go', max_steps=5, **kw))
        finally: srv.stop()
    def aloop(turns, tools=ALL, **kw):
        srv = ChatServer(turns).start()
        async def run(): return await adrain(await chat(srv, tools, AsyncChat)('go', max_steps=5, **kw))
        try: return srv, asyncio.run(run())
        finally: srv.stop()
    def structured(turns):
        srv = ChatServer(turns).start()
        try: return srv, lstructured(model, [{'role': 'user', 'content': 'a point'}], Point, api_base=srv.base_url, api_key='k')
        finally: srv.stop()
    refs = [[('nums', {}), ('settings', {})], [('total', {'xs': '$`call_1_0`'}), ('tag', {'h': '$`call_1_1`', 'xs': [1]})], 'done']
    return {
        'calls': lambda: loop(CALLS),
        'calls, streamed': lambda: loop(CALLS, stream=True),
        'bad calls': lambda: loop(ERRS),
        'repairs': lambda: loop(REPAIRS),
        'threads and signals': lambda: loop(THREADS),
        'dataclass arguments': lambda: loop(POINTS, [dist]),
        'tc_refs': lambda: loop(refs, [nums, settings, total, tag], ckw={'tc_refs': True}),
        'tc_refs, evaluated': lambda: loop(refs, [nums, settings, total, tag], ckw={'tc_refs': True, 'tc_res_eval': True}),
        'async calls': lambda: aloop(CALLS),
        'async calls, streamed': lambda: aloop(CALLS, stream=True),
        'async tool': lambda: aloop([[('aadd', {'a': 1, 'b': 2}), ('add', {'a': 5})], 'done'], [aadd, add]),
        'async bad calls': lambda: aloop(ERRS),
        'async threads and signals': lambda: aloop(THREADS),
        'structured': lambda: structured([[('Point', {'x': 1, 'y': 2})]]),
    }

# what the model was sent back
def _text(c): return c if isinstance(c, str) else json.dumps(c)

def tool_results(srv)->list:
    "Every tool result in the last request the server received, in order"
    if not srv.requests: return []
    body,out = srv.requests[-1],[]
    if isinstance(srv, AnthropicServer):
        for m in body['messages']:
            if isinstance(m.get('content'), list):
                out += [_text(b.get('content', '')) for b in m['content'] if b.get('type') == 'tool_result']
    elif isinstance(srv, ResponsesServer):
        out = [_text(it['output']) for it in body.get('input') or [] if isinstance(it, dict) and it.get('type') == 'function_call_output']
    else: out = [_text(m.get('content')) for m in body['messages'] if m.get('role') == 'tool']
    return out

def schemas(srv)->list: return srv.requests[0].get('tools') if srv.requests else None

def run_all()->dict:
    res = {}
    for lib,flows in [('claudette', claudette_flows), ('cosette', cosette_flows), ('lisette', lisette_flows)]:
        for name,flow in flows().items():
            srv,crash,value = None,None,None
            try: srv,value = flow()
            except BaseException as e:
                crash = f"{type(e).__name__}: {e}"
                srv = next((f.f_locals['srv'] for f,_ in traceback.walk_tb(e.__traceback__) if 'srv' in f.f_locals), None)
            res[f"{lib}: {name}"] = dict(results=tool_results(srv) if srv else [], crash=crash,
                value=repr(value) if name == 'structured' else None,
                problems=srv.problems if srv else [], schemas=schemas(srv) if srv else None)
    return res

def missing_names()->dict:
    "What fastcore.funccall and toolslm.funccall export that toolslm_like.funccall lacks, or takes fewer parameters of"
    import importlib, toolslm_like.funccall as ours
    out = {}
    for modname in ('fastcore.funccall', 'toolslm.funccall'):
        theirs = importlib.import_module(modname)
        for nm in theirs.__all__:
            if nm not in ours.__all__: out[f"{modname}.{nm}"] = 'missing'; continue
            a,b = getattr(theirs, nm),getattr(ours, nm)
            if callable(a) and not isinstance(a, type):
                lacking = [p for p in inspect.signature(a).parameters if p not in inspect.signature(b).parameters]
                if lacking: out[f"{modname}.{nm}"] = f"takes no {', '.join(lacking)}"
    return out

if __name__ == '__main__':
    print(json.dumps(missing_names() if mode == 'names' else run_all(), indent=1))
