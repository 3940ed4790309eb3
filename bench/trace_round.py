"""How many of the library's functions one plain round of `tool_loop` runs, run by hand: `python bench/trace_round.py`

A round here is what happens between a model's reply arriving in `tool_loop` (it asked for one tool call) and the next
request leaving: the reply read, the call parsed, run by the toolbox, its result written back, the next request made.
The client is a fake whose `create` returns the real SDK types (`ChatCompletion`, `Response`, `Message`,
`GenerateContentResponse`), built from what the scripted test servers send, so no network and no SDK client code is
timed or traced. Counted: calls into functions whose code lives in `toolslm_like/` (`sys.setprofile`'s 'call' events;
a generator resumed counts as a call too), while the round runs. Comprehensions (`<listcomp>`, `<genexpr>`, ...) are
frames of their own before Python 3.12 (3.12 inlines list, dict and set comprehensions): they are counted apart.
The loop runs once before it is traced, so caches are warm as in a conversation's later rounds.
`--list` prints each function with its count."""
import collections, os, sys, types
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent.parent/'tests'))
import openai.types.chat, openai.types.responses, anthropic.types, functools
from openai._models import construct_type as openai_type # how the SDKs' clients build a reply from its JSON
from anthropic._models import construct_type as anthropic_type
from google.genai import types as gtypes
from scripted_servers import ChatServer, ResponsesServer, AnthropicServer, GeminiServer
import toolslm_like
from toolslm_like.toolloop import tool_loop

PACKAGE = os.path.dirname(toolslm_like.__file__) + os.sep

def add(a:int, # first number
        b:int # second number
       )->int:
    "Add two integers"
    return a + b

SCRIPT = [[('add', {'a': 2, 'b': 3})], 'The sum is 5.'] # one plain call, then the answer

APIS = { # api -> (scripted server whose replies we reuse, SDK type of a reply, the fake client's path to `create`)
    'chat': (ChatServer, functools.partial(openai_type, type_=openai.types.chat.ChatCompletion),
             ('chat', 'completions', 'create')),
    'responses': (ResponsesServer, functools.partial(openai_type, type_=openai.types.responses.Response),
                  ('responses', 'create')),
    'anthropic': (AnthropicServer, functools.partial(anthropic_type, type_=anthropic.types.Message),
                  ('messages', 'create')),
    'gemini': (GeminiServer, lambda value: gtypes.GenerateContentResponse.model_validate(value),
               ('models', 'generate_content')),
}

class Counter:
    "Counts calls into the library's functions while `on` (a profile function for `sys.setprofile`)"
    def __init__(self): self.on,self.calls = False,collections.Counter()
    def __call__(self, frame, event, arg):
        if event == 'call' and self.on and frame.f_code.co_filename.startswith(PACKAGE):
            c = frame.f_code
            self.calls[(os.path.basename(c.co_filename)[:-3], c.co_qualname, c.co_firstlineno)] += 1

def fake_client(api, counter:Counter):
    "A client whose `create` gives the scripted replies as SDK objects; `counter` runs from a reply to the next request"
    server,sdk_type,path = APIS[api]
    srv,n = server(list(SCRIPT)),[0]
    def create(**body):
        counter.on = False # the next request leaves
        n[0] += 1
        reply = sdk_type(value=srv.reply(srv.turns.pop(0), n[0], body)) # as the SDK makes it from the JSON
        counter.on = n[0] == 1 # the first reply arrives: the round starts
        return reply
    obj = create
    for p in reversed(path): # (Gemini's provider also asks for the client's streaming method)
        more = {'generate_content_stream': None} if p == 'generate_content' else {}
        obj = types.SimpleNamespace(**{p: obj}, **more)
    return obj

def trace(api)->collections.Counter:
    "The library's calls in one round of a loop over `api`"
    tool_loop(fake_client(api, Counter()), 'What is 2+3?', [add], model='m', api=api, progress=False) # caches warm
    counter = Counter()
    client = fake_client(api, counter)
    sys.setprofile(counter)
    try: history = tool_loop(client, 'What is 2+3?', [add], model='m', api=api, progress=False)
    finally: sys.setprofile(None)
    assert history.answer == 'The sum is 5.' and history.steps[0].results[0]['output'] == 5, history
    return counter.calls

if __name__ == '__main__':
    print("One plain round of tool_loop (reply in -> next request out): the library's functions run")
    for api in APIS:
        calls = trace(api)
        comps = {k: n for k,n in calls.items() if k[1].endswith('>') and k[1].rsplit('.', 1)[-1].startswith('<')}
        funcs = {k: n for k,n in calls.items() if k not in comps}
        per = collections.Counter()
        for (mod,_,_),k in funcs.items(): per[mod] += k
        where = ', '.join(f"{m} {k}" for m,k in per.most_common())
        print(f"  {api:10s} {len(funcs):3d} distinct functions, {sum(funcs.values()):3d} calls ({where}); "
              f"comprehensions: {len(comps)} distinct, {sum(comps.values())} calls")
        if '--list' in sys.argv:
            for (mod,name,line),k in sorted(calls.items()): print(f"      {k:3d}  {mod}.{name}:{line}")
