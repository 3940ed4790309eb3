"""What comes back from tools, through `tool_loop` and the real `openai`, `anthropic` and `google-genai` clients against the
local scripted servers (`scripted_servers.py`): images in each API's place, long results cut, the server's own checks
passing"""
import base64, io, sys
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
