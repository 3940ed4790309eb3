"""What comes back from tools, through `tool_loop` and the real `openai`, `anthropic` and `google-genai` clients against the
local scripted servers (`scripted_servers.py`): images in each API's place, long results cut, the server's own checks
passing"""
import base64, io, json, sys
from pathlib import Path
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_toolloop_servers import SERVERS, run_loop, conversation
from toolslm_like.limits import MAX_RESULT_CHARS

PIL = pytest.importorskip('PIL.Image')

def png_bytes()->bytes:
    buf = io.BytesIO()
    PIL.new('RGB', (3, 2), 'teal').save(buf, 'PNG')
    return buf.getvalue()

PNG = png_bytes()
B64 = base64.b64encode(PNG).decode()

def snapshot(page:str # The page's name
            ):
    "A picture of a page"
    return [f"The page {page}:", PNG]

def dump()->str:
    "The whole log"
    return 'x' * 2_000_000

def images_sent(api, req)->list:
    "The base64 images in the last turn of request `req`, where that API takes them in tool results"
    conv = conversation(api, req)
    if api == 'anthropic':
        return [b['source']['data'] for r in conv[-1]['content'] if r['type'] == 'tool_result'
                for b in (r['content'] if isinstance(r['content'], list) else []) if b['type'] == 'image']
    if api == 'responses':
        return [b['image_url'].split(',', 1)[1] for it in conv if it.get('type') == 'function_call_output'
                for b in (it['output'] if isinstance(it['output'], list) else []) if b['type'] == 'input_image']
    if api == 'chat':
        assert conv[-1]['role'] == 'user' and conv[-2]['role'] == 'tool' # the images after the turn's tool messages
        return [b['image_url']['url'].split(',', 1)[1] for b in conv[-1]['content'] if b['type'] == 'image_url']
    return [(p.get('inlineData') or p['inline_data'])['data'] for part in conv[-1]['parts'] if 'functionResponse' in part
            for p in part['functionResponse'].get('parts', [])]

@pytest.mark.parametrize('api', list(SERVERS))
def test_image_results_reach_each_api(api):
    with SERVERS[api]([[('snapshot', {'page': 'home'})], 'A teal page.']) as srv:
        history = run_loop(api, srv, tools=[snapshot])
    assert srv.problems == []
    assert images_sent(api, srv.requests[1]) == [B64]
    assert history.steps[0].results[0]['output'] == ['The page home:', PNG] # the program keeps the value itself

@pytest.mark.parametrize('how', ['tool_loop', 'Toolbox'])
@pytest.mark.parametrize('api', list(SERVERS))
def test_text_only_model_gets_notes(api, how):
    "`images=False` (on the loop, or on the Toolbox it is given): no image is sent, a short note names each one"
    from toolslm_like.toolbox import Toolbox
    kw = {'tools': [snapshot], 'images': False} if how == 'tool_loop' else {'tools': Toolbox([snapshot], images=False)}
    with SERVERS[api]([[('snapshot', {'page': 'home'})], 'A page.']) as srv: history = run_loop(api, srv, **kw)
    assert srv.problems == []
    sent = json.dumps(conversation(api, srv.requests[1]))
    assert B64 not in sent and f'An image (image/png, {len(PNG):,} bytes) is left out: this model takes no images' in sent
    assert history.steps[0].results[0]['output'] == ['The page home:', PNG] # the program keeps the value itself

@pytest.mark.parametrize('api', list(SERVERS))
def test_long_results_are_cut(api):
    with SERVERS[api]([[('dump', {})], 'Done.']) as srv: history = run_loop(api, srv, tools=[dump])
    assert srv.problems == []
    sent = str(conversation(api, srv.requests[1])[-1])
    assert len(sent) < MAX_RESULT_CHARS + 2_000 and '2,000,000 characters' in sent
    assert len(history.steps[0].results[0]['output']) == 2_000_000

def test_python_returns_plots():
    from toolslm_like.interpreter import python, ToolResult
    r = python('import matplotlib\nmatplotlib.use("Agg")\nimport matplotlib.pyplot as plt\nplt.plot([1, 2])\nprint("drawn")\nplt.show()', glb={})
    assert type(r) is ToolResult and r.text == 'drawn' and [i.mime_type for i in r.images] == ['image/png']

def test_sandbox_returns_plots():
    from toolslm_like.sandbox import Sandbox
    from toolslm_like.interpreter import ToolResult
    with Sandbox() as sb:
        r = sb.run('import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nprint("drawn")\nplt.show()')
        assert type(r) is ToolResult and r[0].startswith('drawn') and len(r.images) == 1
        r = sb.run('fig = plt.figure()\nfig.gca().plot([1])\nfig') # a figure as the last expression: once
        assert type(r) is ToolResult and len(r) == 1 and len(r.images) == 1
        assert sb.run('1 + 1') == 2

def countdown(n:int # From where
             ):
    "Counts down"
    for i in range(n, 0, -1): yield f"{i}... "
    yield 'liftoff'

async def acountdown(n:int # From where
                    ):
    "Counts down, async"
    for i in range(n, 0, -1): yield f"{i}... "
    yield 'liftoff'

@pytest.mark.parametrize('is_async', [False, True], ids=['sync', 'async'])
@pytest.mark.parametrize('api', list(SERVERS))
def test_generator_tools(api, is_async):
    "Plain loop: the pieces joined into the result; streamed loop: each piece an event as it comes, then the same result"
    from toolslm_like.toolloop import ToolPiece, LoopStep, tool_loop, atool_loop
    from test_toolloop_servers import client_for
    import asyncio
    script = [[('countdown', {'n': 2}), ('acountdown', {'n': 1})], 'Launched.']
    with SERVERS[api](script) as srv: h = run_loop(api, srv, is_async, tools=[countdown, acountdown])
    assert srv.problems == [] and [r['output'] for r in h.steps[0].results] == ['2... 1... liftoff', '1... liftoff']
    with SERVERS[api](script) as srv:
        client = client_for(api, srv, is_async)
        stream = (atool_loop if is_async else tool_loop)(client, 'Go', [countdown, acountdown], model='m', api=api, stream=True)
        async def collect(): return [e async for e in stream]
        events = asyncio.run(collect()) if is_async else list(stream)
    assert srv.problems == []
    pieces = [(e.name, e.piece) for e in events if isinstance(e, ToolPiece)]
    assert [p for n,p in pieces if n == 'countdown'] == ['2... ', '1... ', 'liftoff']
    assert [p for n,p in pieces if n == 'acountdown'] == ['1... ', 'liftoff']
    step = next(e for e in events if isinstance(e, LoopStep))
    assert events.index(step) > max(i for i,e in enumerate(events) if isinstance(e, ToolPiece)) # pieces before the step
    assert [r['output'] for r in step.results] == ['2... 1... liftoff', '1... liftoff']

def lines_of(n:int # How many
            ):
    "No generator function: returns a generator expression"
    return (f"line {i}; " for i in range(n))

@pytest.mark.parametrize('is_async', [False, True], ids=['sync', 'async'])
@pytest.mark.parametrize('api', ['chat', 'anthropic'])
def test_tools_returning_generators_stream(api, is_async):
    "A tool that returns a generator (no generator function): its pieces are events in a streamed loop, then joined"
    from toolslm_like.toolloop import ToolPiece, LoopStep, tool_loop, atool_loop
    from test_toolloop_servers import client_for
    import asyncio
    with SERVERS[api]([[('lines_of', {'n': 2})], 'Read.']) as srv:
        stream = (atool_loop if is_async else tool_loop)(client_for(api, srv, is_async), 'Go', [lines_of], model='m', api=api,
                                                         stream=True)
        async def collect(): return [e async for e in stream]
        events = asyncio.run(collect()) if is_async else list(stream)
    assert srv.problems == []
    assert [e.piece for e in events if isinstance(e, ToolPiece)] == ['line 0; ', 'line 1; ']
    assert [r['output'] for r in next(e for e in events if isinstance(e, LoopStep)).results] == ['line 0; line 1; ']

import dataclasses, json, typing
@dataclasses.dataclass
class Weather:
    "The weather in a city"
    city: str # The city
    celsius: float # The temperature

def temperature(city:str # The city
               )->float:
    "The temperature in a city, in Celsius"
    return 3.5

def answer_request(api, req):
    "Where each API's request asks for the answer's shape"
    if api == 'chat': return req['response_format']['json_schema']['schema']
    if api == 'responses': return req['text']['format']['schema']
    if api == 'anthropic': return req['output_config']['format']['schema']
    return req['generationConfig']['responseJsonSchema']

@pytest.mark.parametrize('is_async', [False, True], ids=['sync', 'async'])
@pytest.mark.parametrize('api', list(SERVERS))
def test_typed_answer(api, is_async):
    "The model answers wrongly twice (not JSON, then a field missing): each time it is told what was wrong; then a Weather"
    script = [[('temperature', {'city': 'Oslo'})], 'not json at all', '{"city": "Oslo"}', '{"city": "Oslo", "celsius": 3.5}']
    with SERVERS[api](script) as srv: w = run_loop(api, srv, is_async, tools=[temperature], output_type=Weather)
    assert srv.problems == []
    assert w == Weather('Oslo', 3.5)
    for req in srv.requests: assert set(answer_request(api, req)['properties']) == {'city', 'celsius'}
    notes = [json.dumps(conversation(api, r)[-1]) for r in srv.requests[2:]]
    assert 'not JSON' in notes[0] and "missing required field 'celsius'" in notes[1]

@pytest.mark.parametrize('api', ['chat', 'anthropic'])
def test_typed_answer_gives_up(api):
    from toolslm_like.errors import AnswerError
    from toolslm_like.limits import MAX_ANSWER_RETRIES
    with SERVERS[api](['nope'] * (MAX_ANSWER_RETRIES + 1)) as srv:
        with pytest.raises(AnswerError, match='not a Weather') as e: run_loop(api, srv, tools=[temperature], output_type=Weather)
    assert len(srv.requests) == MAX_ANSWER_RETRIES + 1 and e.value.answer == 'nope' and e.value.tool_history.steps

def test_typed_plain_types():
    from test_toolloop_servers import client_for
    from scripted_servers import ChatServer
    with ChatServer(['{"answer": [1, 2, 3]}']) as srv: got = run_loop('chat', srv, tools=[temperature], output_type=list[int])
    assert got == [1, 2, 3] and srv.requests[0]['response_format']['json_schema']['schema']['required'] == ['answer']
