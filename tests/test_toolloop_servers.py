"""`tool_loop` driven with the real `openai`, `anthropic` and `google-genai` clients against local servers that speak each
API's wire format (plain replies and server-sent event streams), play back a scripted conversation and check every
request (see `scripted_servers.py`)"""
import asyncio, json, re, sys, threading
from pathlib import Path
import pytest, openai, anthropic

sys.path.insert(0, str(Path(__file__).parent))
from google import genai
from scripted_servers import ChatServer, ResponsesServer, AnthropicServer, GeminiServer
from toolslm_like.toolloop import tool_loop, atool_loop, LoopStep

def add(a:int, # first number
        b:int # second number
       )->int:
    "Add two integers"
    return a + b

def multiply(a:int, b:int)->int:
    "Multiply two integers"
    return a * b

def divide(a:float, b:float)->float:
    "Divide a by b"
    return a / b

TOOLS = [add, multiply, divide]
QUESTION = 'What are 2+3, 4*5 and 1/0?'
ANSWER = '2+3 is 5, 4*5 is 20, and 1/0 has no value.'
SCRIPT = [[('add', {'a': 2, 'b': 3}), ('multiply', {'a': 4, 'b': 5})], [('divide', {'a': 1, 'b': 0})], ANSWER]

SERVERS = {'chat': ChatServer, 'responses': ResponsesServer, 'anthropic': AnthropicServer, 'gemini': GeminiServer}

def client_for(api, srv, is_async=False):
    "The real SDK client for `api`, pointed at the local server `srv`"
    if api == 'gemini':
        client = genai.Client(api_key='dummy-key', http_options={'base_url': srv.base_url, 'retry_options': {'attempts': 1}})
        return client.aio if is_async else client
    if api == 'anthropic': cls = anthropic.AsyncAnthropic if is_async else anthropic.Anthropic
    else: cls = openai.AsyncOpenAI if is_async else openai.OpenAI
    return cls(api_key='dummy-key', base_url=srv.base_url, max_retries=0)

def run_loop(api, srv, is_async=False, **kw):
    client = client_for(api, srv, is_async)
    kw.setdefault('api', api)
    res = tool_loop(client, kw.pop('messages', QUESTION), kw.pop('tools', TOOLS), model=kw.pop('model', 'test-model'), **kw)
    return asyncio.run(res) if is_async else res

# what each API's requests look like, for the assertions below
def tool_names_sent(api, req):
    if api == 'chat': return [t['function']['name'] for t in req.get('tools', [])]
    if api == 'gemini': return [f['name'] for t in req.get('tools', []) for f in t['functionDeclarations']]
    return [t['name'] for t in req.get('tools', [])]

def conversation(api, req): return req[{'responses': 'input', 'gemini': 'contents'}.get(api, 'messages')]

def user_msg(api, text): return {'role': 'user', 'parts': [{'text': text}]} if api == 'gemini' else {'role': 'user', 'content': text}

def text_of(api, msg): return msg['parts'][0]['text'] if api == 'gemini' else msg['content']

def camel(o):
    "`o` with snake_case keys as Gemini's wire format spells them (`function_call` -> `functionCall`)"
    if isinstance(o, list): return [camel(x) for x in o]
    if not isinstance(o, dict): return o
    return {re.sub(r'_([a-z])', lambda m: m[1].upper(), k): v if k in ('args', 'response') else camel(v) for k,v in o.items()}

def results_in(api, req):
    "(id, content, is_error) of the tool results in the last turn of request `req`"
    conv = conversation(api, req)
    if api == 'chat':
        out = []
        for m in reversed(conv):
            if m['role'] != 'tool': break
            out.insert(0, (m['tool_call_id'], m['content'], None))
        return out
    if api == 'gemini':
        last = conv[-1]
        assert last['role'] == 'user'
        return [(r.get('id'), r['response'].get('output', r['response'].get('error')), 'error' in r['response'])
                for r in (p['functionResponse'] for p in last['parts'] if 'functionResponse' in p)]
    if api == 'responses':
        out = []
        for it in reversed(conv):
            if it.get('type') != 'function_call_output': break
            out.insert(0, (it['call_id'], it['output'], None))
        return out
    last = conv[-1]
    assert last['role'] == 'user'
    return [(b['tool_use_id'], b['content'], b.get('is_error')) for b in last['content'] if b['type'] == 'tool_result']

def calls_in(api, req):
    "(id, name) of the calls of the last assistant turn of request `req`"
    conv = conversation(api, req)
    if api == 'chat':
        m = [m for m in conv if m['role'] == 'assistant'][-1]
        return [(c['id'], c['function']['name']) for c in m['tool_calls']]
    if api == 'gemini':
        m = [m for m in conv if m['role'] == 'model'][-1]
        return [(p['functionCall'].get('id'), p['functionCall']['name']) for p in m['parts'] if 'functionCall' in p]
    if api == 'responses':
        last_out = max(i for i,it in enumerate(conv) if it.get('type') == 'function_call_output')
        first = last_out
        while conv[first-1].get('type') != 'function_call': first -= 1
        start = first
        while start > 0 and conv[start-1].get('type') == 'function_call': start -= 1
        return [(it['call_id'], it['name']) for it in conv[start:first]]
    m = [m for m in conv if m['role'] == 'assistant'][-1]
    return [(b['id'], b['name']) for b in m['content'] if b['type'] == 'tool_use']

@pytest.mark.parametrize('is_async', [False, True], ids=['sync', 'async'])
@pytest.mark.parametrize('api', list(SERVERS))
def test_scripted_conversation(api, is_async):
    "Two calls in parallel, a failing tool, then the answer: every request is what the API requires"
    steps = []
    with SERVERS[api](SCRIPT) as srv: history = run_loop(api, srv, is_async, on_step=steps.append)
    assert srv.problems == []
    assert len(srv.requests) == 3
    for req in srv.requests: assert tool_names_sent(api, req) == ['add', 'multiply', 'divide']
    # request 2 answers both parallel calls, by id, in the order of the calls
    r2 = results_in(api, srv.requests[1])
    assert [i for i,_,_ in r2] == [i for i,_ in calls_in(api, srv.requests[1])] and len(r2) == 2
    assert [json.loads(c) for _,c,_ in r2] == [5, 20]
    # request 3 carries the failing tool's error as its result, marked as an error where the API has a place for it
    (cid,content,is_error), = results_in(api, srv.requests[2])
    assert cid == calls_in(api, srv.requests[2])[0][0]
    text = content if isinstance(content, str) else json.dumps(content)
    assert 'ZeroDivisionError' in text
    if api == 'anthropic': assert is_error is True
    # the history: everything sent, plus the answer
    assert history.answer == ANSWER and not history.budget_exhausted
    assert (camel(list(history[:-1])) if api == 'gemini' else list(history[:-1])) == conversation(api, srv.requests[2])
    assert [(s.iteration, len(s.calls), len(s.results), s.final) for s in steps] == [(1, 2, 2, False), (2, 1, 1, False), (3, 0, 0, True)]
    assert all(isinstance(s, LoopStep) for s in steps) and steps == history.steps

def test_anthropic_results_first_in_one_user_message():
    with AnthropicServer(SCRIPT) as srv: history = run_loop('anthropic', srv)
    assert srv.problems == []
    msgs = srv.requests[1]['messages']
    assert [m['role'] for m in msgs] == ['user', 'assistant', 'user']
    assert [b['type'] for b in msgs[1]['content']] == ['text', 'tool_use', 'tool_use']
    assert [b['type'] for b in msgs[2]['content']] == ['tool_result', 'tool_result']
    assert [b['tool_use_id'] for b in msgs[2]['content']] == [b['id'] for b in msgs[1]['content'][1:]]
    assert srv.requests[0]['max_tokens'] > 0

@pytest.mark.parametrize('api', list(SERVERS))
def test_parallel_calls_run_at_the_same_time(api):
    "Both calls of a turn must be in flight together to get past the barrier (no timing involved)"
    barrier = threading.Barrier(2, timeout=60) # a guard against a hang only: run in parallel, both arrive at once
    def wait_a(x:int)->int:
        "Wait for the other call, then return x"
        barrier.wait(); return x
    def wait_b(x:int)->int:
        "Wait for the other call, then return x"
        barrier.wait(); return x
    with SERVERS[api]([[('wait_a', {'x': 1}), ('wait_b', {'x': 2})], 'done']) as srv:
        history = run_loop(api, srv, tools=[wait_a, wait_b])
    assert srv.problems == []
    assert [json.loads(c) for _,c,_ in results_in(api, srv.requests[1])] == [1, 2]
    assert not barrier.broken

@pytest.mark.parametrize('is_async', [False, True], ids=['sync', 'async'])
@pytest.mark.parametrize('api', list(SERVERS))
def test_budget_runs_out(api, is_async):
    "After max_iters rounds: a note in the history, then a final request where no tool can be called"
    turns = [[('add', {'a': i, 'b': 1})] for i in range(3)] + ['I stopped: 2+1 is 3.']
    with SERVERS[api](turns) as srv: history = run_loop(api, srv, is_async, max_iters=3)
    assert srv.problems == []
    assert len(srv.requests) == 4 and history.budget_exhausted and history.answer == 'I stopped: 2+1 is 3.'
    final = srv.requests[-1]
    if api == 'anthropic': assert final['tool_choice'] == {'type': 'none'} and final['tools'] # Anthropic refuses tool blocks without tools
    elif api == 'gemini': assert final['toolConfig'] == {'functionCallingConfig': {'mode': 'NONE'}} and final['tools']
    else: assert 'tools' not in final and 'tool_choice' not in final
    assert all(tool_names_sent(api, r) for r in srv.requests[:-1])
    sent = json.dumps(conversation(api, final))
    assert 'all 3 rounds of tool calls' in sent
    assert 'all 3 rounds of tool calls' in json.dumps(list(history))
    assert history.steps[-1].budget_exhausted and history.steps[-1].final

@pytest.mark.parametrize('api', list(SERVERS))
def test_budget_runs_out_while_the_model_still_calls_tools(api):
    "The calls of the final request are answered as not run, and the history, with a new question, continues"
    turns = [[('add', {'a': 1, 'b': 2})], [('add', {'a': 5, 'b': 5}), ('multiply', {'a': 2, 'b': 2})], 'Then: 10 and 4.']
    with SERVERS[api](turns) as srv:
        history = run_loop(api, srv, max_iters=1)
        assert history.budget_exhausted and [len(s.results) for s in history.steps] == [1, 2]
        assert all(r['error'].startswith('Not run') for r in history.steps[-1].results)
        more = run_loop(api, srv, messages=list(history) + [user_msg(api, 'Now run them.')])
    assert srv.problems == [] # every request valid: each call answered, roles as the API wants them
    assert more.answer == 'Then: 10 and 4.'
    assert 'Not run' in json.dumps(conversation(api, srv.requests[-1]))

@pytest.mark.parametrize('api', list(SERVERS))
def test_history_can_be_continued(api):
    "The returned history, with a new user message, is a valid conversation for another loop"
    with SERVERS[api](SCRIPT + [[('add', {'a': 5, 'b': 5})], 'And 5+5 is 10.']) as srv:
        history = run_loop(api, srv)
        history2 = run_loop(api, srv, messages=list(history) + [user_msg(api, 'And 5+5?')])
    assert srv.problems == []
    assert history2.answer == 'And 5+5 is 10.' and list(history2[:len(history)]) == list(history)
    assert json.loads(json.dumps(list(history2))) == list(history2) # plain JSON all the way

@pytest.mark.parametrize('api', list(SERVERS))
def test_unknown_tool_and_bad_arguments_go_back_as_results(api):
    with SERVERS[api]([[('nope', {}), ('add', {'a': 'two', 'b': 1})], 'Sorry.']) as srv: history = run_loop(api, srv)
    assert srv.problems == []
    (_,c1,_),(_,c2,_) = results_in(api, srv.requests[1])
    assert 'nope' in str(c1) and 'add' in str(c1) # says what is available
    assert "'a'" in str(c2) or 'a:' in str(c2) or '"a"' in str(c2)
    assert history.answer == 'Sorry.'

def test_async_tools_and_async_callback_with_async_client():
    seen = []
    async def slow_add(a:int, b:int)->int:
        "Add, asynchronously"
        await asyncio.sleep(0.01); return a + b
    async def on_step(step): await asyncio.sleep(0); seen.append(step.iteration)
    with ChatServer([[('slow_add', {'a': 1, 'b': 2})], 'It is 3.']) as srv:
        history = asyncio.run(atool_loop(client_for('chat', srv, True), 'Add 1 and 2', [slow_add], model='m', on_step=on_step))
    assert srv.problems == [] and seen == [1, 2] and history.answer == 'It is 3.'
    assert results_in('chat', srv.requests[1])[0][1] == '3'

def test_atool_loop_with_a_sync_client():
    with AnthropicServer(SCRIPT) as srv: history = asyncio.run(atool_loop(client_for('anthropic', srv), QUESTION, TOOLS, model='m'))
    assert srv.problems == [] and history.answer == ANSWER

def test_atool_loop_takes_tool_loops_arguments():
    "model and max_iters by position, tool_loop's options by name, anything else goes to every request"
    with ChatServer([[('add', {'a': 1, 'b': 1})], 'Two.']) as srv:
        history = asyncio.run(atool_loop(client_for('chat', srv), QUESTION, TOOLS, 'm', 1, system='Be brief.', temperature=0))
    assert srv.problems == [] and history.answer == 'Two.' and history.budget_exhausted
    assert [(r['model'], r['temperature'], r['messages'][0]) for r in srv.requests] == [('m', 0, {'role': 'system', 'content': 'Be brief.'})] * 2
    with pytest.raises(TypeError): atool_loop(client_for('chat', srv), QUESTION, TOOLS, 'm', 1, 'extra')

@pytest.mark.parametrize('api', list(SERVERS))
def test_prompt_only_mode(api):
    "native=False: no tools in the request, the tools in the system prompt, calls read from text, results as a user message"
    turns = ['Let me compute.\n```json\n{"name": "add", "arguments": {"a": 2, "b": 3}}\n```\nand\n'
             "{'name': 'multiply', 'arguments': {'a': 4, 'b': 5,},}\nThen I will answer.",
             '<tool_call>{"name": "divide", "arguments": {"a": 1, "b": 0}}</tool_call>', ANSWER]
    with SERVERS[api](turns) as srv: history = run_loop(api, srv, native=False, system='Be brief.')
    assert srv.problems == []
    for req in srv.requests:
        assert 'tools' not in req
        system = {'chat': lambda r: r['messages'][0]['content'], 'responses': lambda r: r['instructions'],
                  'anthropic': lambda r: r['system'], 'gemini': lambda r: r['systemInstruction']['parts'][0]['text']}[api](req)
        assert '## add' in system and '## divide' in system and '"arguments"' in system and system.endswith('Be brief.')
    conv = conversation(api, srv.requests[1])
    res = conv[-1]
    assert res['role'] == 'user'
    lines = [json.loads(l) for l in text_of(api, res).splitlines()[1:]]
    assert lines == [{'id': 'call_1_1', 'name': 'add', 'output': 5}, {'id': 'call_1_2', 'name': 'multiply', 'output': 20}]
    assert 'ZeroDivisionError' in text_of(api, conversation(api, srv.requests[2])[-1])
    assert history.answer == ANSWER

@pytest.mark.parametrize('api,is_async', [('chat', False), ('anthropic', True), ('gemini', False)])
def test_prompt_only_pythonic_format(api, is_async):
    "native=False, text_format='pythonic': the prompt shows Python-list calls, the model writes them so, and the loop runs them"
    turns = ['[add(a=2, b=3), multiply(a=4, b=5)]', 'Now the last one.\n[divide(a=1, b=0)]', ANSWER]
    with SERVERS[api](turns) as srv: history = run_loop(api, srv, is_async, native=False, text_format='pythonic')
    assert srv.problems == [] and history.answer == ANSWER
    system = {'chat': lambda r: r['messages'][0]['content'], 'anthropic': lambda r: r['system'],
              'gemini': lambda r: r['systemInstruction']['parts'][0]['text']}[api](srv.requests[0])
    assert 'a Python list of calls' in system and re.search(r'^\[add\(a=\d+, b=\d+\)\]$', system, re.M) and '"arguments"' not in system
    lines = [json.loads(l) for l in text_of(api, conversation(api, srv.requests[1])[-1]).splitlines()[1:]]
    assert lines == [{'id': 'call_1_1', 'name': 'add', 'output': 5}, {'id': 'call_1_2', 'name': 'multiply', 'output': 20}]
    assert 'ZeroDivisionError' in text_of(api, conversation(api, srv.requests[2])[-1])

def test_unknown_text_format_is_refused():
    with pytest.raises(ValueError, match="Unknown text_format 'yaml'"): tool_loop(openai.OpenAI(api_key='k', base_url='http://127.0.0.1:9'), 'hi', TOOLS, model='m', native=False, text_format='yaml')

def test_prompt_only_budget_note_joins_the_results():
    with AnthropicServer(['{"name": "add", "arguments": {"a": 1, "b": 1}}', 'Two.']) as srv:
        history = run_loop('anthropic', srv, native=False, max_iters=1)
    assert srv.problems == [] and history.budget_exhausted
    last = srv.requests[-1]['messages'][-1]
    assert last['role'] == 'user' and last['content'].startswith('Results of your tool calls') and 'all 1 rounds' in last['content']

@pytest.mark.parametrize('api', list(SERVERS))
def test_servers_refuse_broken_conversations(api):
    "The checks the servers make can fail: a call left without its result is refused, as the real APIs do"
    with SERVERS[api](['never']) as srv:
        client = client_for(api, srv)
        err = {'anthropic': anthropic.BadRequestError, 'gemini': genai.errors.ClientError}.get(api, openai.BadRequestError)
        with pytest.raises(err):
            if api == 'gemini':
                client.models.generate_content(model='m', contents=[{'role': 'user', 'parts': [{'text': 'hi'}]},
                    {'role': 'model', 'parts': [{'function_call': {'name': 'add', 'args': {}}}]}, {'role': 'user', 'parts': [{'text': 'and?'}]}])
            elif api == 'chat':
                client.chat.completions.create(model='m', messages=[{'role': 'user', 'content': 'hi'},
                    {'role': 'assistant', 'content': None, 'tool_calls': [{'id': 'c1', 'type': 'function', 'function': {'name': 'add', 'arguments': '{}'}}]},
                    {'role': 'user', 'content': 'and?'}])
            elif api == 'responses':
                client.responses.create(model='m', input=[{'role': 'user', 'content': 'hi'},
                    {'type': 'function_call', 'call_id': 'c1', 'name': 'add', 'arguments': '{}'},
                    {'type': 'function_call_output', 'call_id': 'c2', 'output': '1'}])
            else:
                client.messages.create(model='m', max_tokens=10, tools=[{'name': 'add', 'input_schema': {'type': 'object'}}], messages=[
                    {'role': 'user', 'content': 'hi'}, {'role': 'assistant', 'content': [{'type': 'tool_use', 'id': 't1', 'name': 'add', 'input': {}}]},
                    {'role': 'user', 'content': [{'type': 'text', 'text': 'first'}, {'type': 'tool_result', 'tool_use_id': 't1', 'content': '1'}]}])
    assert srv.problems, 'the server let a broken conversation through'

@pytest.mark.parametrize('is_async', [False, True], ids=['sync', 'async'])
def test_a_failed_request_keeps_the_history(is_async):
    "The server refuses the second request (its script is over): the error carries the history so far"
    with ChatServer([SCRIPT[0]]) as srv:
        with pytest.raises(openai.BadRequestError) as info: run_loop('chat', srv, is_async)
    assert srv.problems == ['request 2: the script has no turn left']
    h = info.value.tool_history
    assert [m['role'] for m in h] == ['user', 'assistant', 'tool', 'tool'] and len(h.steps) == 1

@pytest.mark.parametrize('api', list(SERVERS))
def test_tool_names_the_provider_cannot_take_are_mapped_and_back(api):
    "A namespace name with a dot or non-ASCII letters reaches the provider as a valid name, and its calls run the right tool"
    from toolslm_like.providers import provider_tool_name
    ns = {'math.add': add, 'añadir': add}
    sent = [provider_tool_name(n) for n in ns]
    assert sent[0] != 'math.add' and sent[1] != 'añadir'
    with SERVERS[api]([[(sent[0], {'a': 1, 'b': 2}), (sent[1], {'a': 3, 'b': 4})], 'Done.']) as srv: history = run_loop(api, srv, tools=ns)
    assert srv.problems == [] # the server checks names against ^[a-zA-Z0-9_-]{1,64}$
    assert tool_names_sent(api, srv.requests[0]) == sent
    assert [json.loads(c) for _,c,_ in results_in(api, srv.requests[1])] == [3, 7]
    assert [c['name'] for c in history.steps[0].calls] == ['math.add', 'añadir']

@pytest.mark.parametrize('api', ['chat', 'responses'])
def test_unreadable_arguments_go_back_as_an_error(api):
    "Arguments that are not JSON: that call gets an error result the model can act on, the other call runs, the loop goes on"
    with SERVERS[api]([[('add', '{"a": 1, "b": '), ('add', {'a': 1, 'b': 2})], 'Fixed.']) as srv: history = run_loop(api, srv)
    assert srv.problems == []
    (_,c1,_),(_,c2,_) = results_in(api, srv.requests[1])
    assert 'JSON' in c1 and c2 == '3'
    assert history.answer == 'Fixed.'

def test_a_toolbox_passed_in_is_used_with_execute_options_and_left_open():
    "A tool past its time limit gets a timeout result at the limit; the caller's Toolbox stays usable"
    import time
    from toolslm_like.toolbox import Toolbox
    stop = threading.Event()
    def slow(x:int)->int:
        "Wait (until told to stop), then return x"
        stop.wait(120); return x # set when the test ends: the limit, not this wait, ends the call
    tb = Toolbox([slow, add])
    try:
        with AnthropicServer([[('slow', {'x': 1}), ('add', {'a': 1, 'b': 1})], 'One was too slow.']) as srv:
            history = run_loop('anthropic', srv, tools=tb, execute_options={'timeout': 2}) # ample for `add` on a loaded machine
        assert srv.problems == []
        (_,c1,e1),(_,c2,e2) = results_in('anthropic', srv.requests[1])
        assert e1 is True and 'Timeout' in c1 and (c2, e2) == ('2', None)
        assert tb.execute([{'id': 'x', 'name': 'add', 'arguments': {'a': 2, 'b': 2}}])[0]['output'] == 4
    finally: stop.set(); tb.close()

@pytest.mark.parametrize('stream', [False, True], ids=['plain', 'streamed'])
def test_calls_without_ids_get_ids(stream):
    "Some OpenAI-compatible servers send tool calls without ids: the loop gives them ids, in the history too, and the results match"
    with ChatServer(SCRIPT, call_ids=False) as srv: history = stream_loop('chat', srv)[1] if stream else run_loop('chat', srv)
    assert srv.problems == [] # the server checks every assistant call has an id answered by a tool message
    assert [i for i,_ in calls_in('chat', srv.requests[1])] == ['call_1_0', 'call_1_1']
    assert [i for i,_,_ in results_in('chat', srv.requests[1])] == ['call_1_0', 'call_1_1']
    assert history.answer == ANSWER


# Streaming: the same conversations as server-sent events (text and arguments cut into pieces, parallel calls interleaved)
from toolslm_like.toolloop import TextDelta, ToolCalls, ToolStream
from toolslm_like.streaming import StreamError

def stream_loop(api, srv, is_async=False, **kw):
    "The events and the history of a streamed tool loop against `srv`"
    stream = run_loop(api, srv, is_async, stream=True, **kw) if not is_async else None
    if not is_async: return list(stream), stream.history
    async def go():
        s = tool_loop(client_for(api, srv, True), kw.pop('messages', QUESTION), kw.pop('tools', TOOLS), model='test-model', api=api, stream=True, **kw)
        return [e async for e in s], s.history
    return asyncio.run(go())

def asked_to_stream(api, srv, n):
    return ':streamGenerateContent' in srv.paths[n] if api == 'gemini' else srv.requests[n].get('stream') is True

@pytest.mark.parametrize('is_async', [False, True], ids=['sync', 'async'])
@pytest.mark.parametrize('api', list(SERVERS))
def test_streamed_history_is_the_same(api, is_async):
    "Streamed: text as it comes, calls put together from their pieces, run and answered; the history as without streaming"
    with SERVERS[api](SCRIPT) as srv: plain = run_loop(api, srv, is_async)
    with SERVERS[api](SCRIPT, chunk_chars=3) as srv: events,streamed = stream_loop(api, srv, is_async)
    assert srv.problems == [] and all(asked_to_stream(api, srv, n) for n in range(3))
    assert list(streamed) == list(plain) and streamed.answer == plain.answer == ANSWER
    assert [(s.iteration, s.text, s.calls, [(r['id'], r['output'], r['error']) for r in s.results], s.final) for s in streamed.steps] == \
           [(s.iteration, s.text, s.calls, [(r['id'], r['output'], r['error']) for r in s.results], s.final) for s in plain.steps]
    # the events: text pieces as they came, the calls whole before they run, each step as it ends
    deltas = [e for e in events if isinstance(e, TextDelta)]
    assert len(deltas) > 10 and ''.join(e.text for e in deltas if e.iteration == 3) == ANSWER
    kinds = [(type(e).__name__, e.iteration) for e in events if not isinstance(e, TextDelta)]
    assert kinds == [('ToolCalls', 1), ('LoopStep', 1), ('ToolCalls', 2), ('LoopStep', 2), ('LoopStep', 3)]
    assert [e.calls for e in events if isinstance(e, ToolCalls)] == [s.calls for s in streamed.steps[:2]]
    assert [e for e in events if isinstance(e, LoopStep)] == streamed.steps

@pytest.mark.parametrize('api', list(SERVERS))
def test_a_call_split_across_many_chunks(api):
    "Arguments sent a character at a time (quotes, escapes, non-ASCII cut anywhere) arrive whole"
    text = 'Ünïcode "quoted" \\ back\\slash {braces} ' * 4
    def echo(text:str)->str:
        "Return the text"
        return text
    with SERVERS[api]([[('echo', {'text': text})], 'Echoed.'], chunk_chars=1) as srv:
        events,history = stream_loop(api, srv, tools=[echo])
    assert srv.problems == []
    assert history.steps[0].calls[0]['arguments'] == {'text': text} and history.steps[0].results[0]['output'] == text
    assert [c for _,c,_ in results_in(api, srv.requests[1])] == [text]
    assert ''.join(e.text for e in events if isinstance(e, TextDelta)).endswith('Echoed.')

def test_a_gemini_step_pairs_calls_without_ids_with_their_results():
    "The Gemini API sends calls without ids: each result still goes with its own call, in the history and in a step's summary"
    with GeminiServer(SCRIPT) as srv: history = run_loop('gemini', srv)
    assert srv.problems == []
    assert [c['id'] for c in history.steps[0].calls] == [None, None]
    assert str(history.steps[0]) == 'step 1: add(a=2, b=3) -> 5 | multiply(a=4, b=5) -> 20'

@pytest.mark.parametrize('api', ['chat', 'responses', 'anthropic']) # Gemini sends each call whole
def test_two_parallel_calls_interleaved(api):
    "The pieces of two calls come alternately (the server checks it sent them so); each call gets its own arguments"
    with SERVERS[api]([[('add', {'a': 12345, 'b': 1}), ('multiply', {'a': 6789, 'b': 2})], 'Done.'], chunk_chars=2) as srv:
        sent = srv.stream_events(srv.turns[0], 1, {'model': 'm'})
        events,history = stream_loop(api, srv)
    def owner(data): # which call a piece of arguments belongs to
        if api == 'chat': return [tc['index'] for c in data.get('choices', []) for tc in c['delta'].get('tool_calls', [])]
        if api == 'responses': return [data['output_index']] if data.get('type') == 'response.function_call_arguments.delta' else []
        return [data['index']] if data.get('delta', {}).get('type') == 'input_json_delta' else []
    order = [k for _,d in sent if isinstance(d, dict) for k in owner(d)]
    assert len(order) > 8 and order[:4] == [order[0], order[1]] * 2 and order[0] != order[1] # interleaved
    assert srv.problems == []
    assert [c['arguments'] for c in history.steps[0].calls] == [{'a': 12345, 'b': 1}, {'a': 6789, 'b': 2}]
    assert [json.loads(c) for _,c,_ in results_in(api, srv.requests[1])] == [12346, 13578]

@pytest.mark.parametrize('is_async', [False, True], ids=['sync', 'async'])
@pytest.mark.parametrize('api', list(SERVERS))
def test_a_stream_cut_off_mid_call(api, is_async):
    "The connection closes in the middle of the second round's calls: a clear error carrying the history of round 1; nothing of the cut reply runs"
    ran = []
    def add(a:int, b:int)->int:
        "Add two integers"
        ran.append((a, b)); return a + b
    turns = [[('add', {'a': 1, 'b': 2})], [('add', {'a': 30, 'b': 40}), ('add', {'a': 50, 'b': 60})], 'never sent']
    with SERVERS[api](turns) as srv:
        k = len(srv.stream_events(turns[1], 2, {'model': 'm'})) // 2 # half way through the calls
        srv.faults = {2: ('cut', k)}
        with pytest.raises(StreamError) as info: stream_loop(api, srv, is_async, tools=[add])
    assert srv.problems == []
    assert 'cut off' in str(info.value) and 'never came' in str(info.value)
    assert ran == [(1, 2)] # the calls of the cut reply never ran
    h = info.value.tool_history
    assert len(h.steps) == 1 and len(h) == 3 and h.answer is None # the question, round 1's calls and their results

@pytest.mark.parametrize('is_async', [False, True], ids=['sync', 'async'])
@pytest.mark.parametrize('api', list(SERVERS))
def test_an_error_event_in_the_stream(api, is_async):
    "The server sends its error event mid-reply: the error says what the server said and carries the history so far"
    with SERVERS[api](SCRIPT, faults={1: ('error', 4)}) as srv:
        with pytest.raises(Exception) as info: stream_loop(api, srv, is_async)
    assert srv.problems == []
    assert 'overloaded' in str(info.value).lower()
    assert isinstance(info.value, {'chat': openai.APIError, 'responses': StreamError, 'anthropic': anthropic.APIStatusError,
                                   'gemini': (StreamError, genai.errors.APIError)}[api])
    assert list(info.value.tool_history) == [user_msg(api, QUESTION)] and info.value.tool_history.steps == []

def test_a_tool_stream_runs_once_and_stops_when_the_reader_stops():
    "Iterating again is refused; a reader that stops early closes the stream and leaves the history as far as it got"
    with ChatServer(SCRIPT) as srv:
        stream = run_loop('chat', srv, stream=True)
        assert 'not started' in repr(stream)
        for e in stream:
            if isinstance(e, ToolCalls): break
        with pytest.raises(RuntimeError, match='already run'): list(stream)
    assert srv.problems == [] and len(srv.requests) == 1 and not stream.finished
    assert len(stream.history) == 2 and stream.history.steps == [] # the question and the reply whose calls did not run
    with AnthropicServer(SCRIPT) as srv: history = run_loop('anthropic', srv, stream=True).result()
    assert srv.problems == [] and history.answer == ANSWER

def test_an_async_tool_stream_is_awaited_or_iterated():
    "With an async client: `await` gives the history, as without streaming; `for` is refused with what to do instead"
    with AnthropicServer(SCRIPT) as srv:
        async def awaited(): return await atool_loop(client_for('anthropic', srv, True), QUESTION, TOOLS, model='m', stream=True)
        history = asyncio.run(awaited())
        assert history.answer == ANSWER
        with pytest.raises(TypeError, match='async for'): list(tool_loop(client_for('anthropic', srv, True), QUESTION, TOOLS, model='m', stream=True))
    assert srv.problems == []
    with GeminiServer(SCRIPT) as srv: # a sync client in `atool_loop`: its stream is read in a worker thread
        async def go(): return [e async for e in atool_loop(client_for('gemini', srv), QUESTION, TOOLS, model='m', stream=True)]
        events = asyncio.run(go())
    assert srv.problems == [] and events[-1].final and events[-1].text == ANSWER

@pytest.mark.parametrize('is_async', [False, True], ids=['sync', 'async'])
def test_approve_reaches_the_toolbox(is_async):
    "`approve=` is passed to `Toolbox.execute`/`aexecute` with every batch (the Toolbox decides what it means)"
    from toolslm_like.toolbox import Toolbox
    seen = []
    class Recording(Toolbox):
        def execute(self, calls, approve=None, **kw): seen.append(approve); return super().execute(calls, **kw)
        async def aexecute(self, calls, approve=None, **kw): seen.append(approve); return await super().aexecute(calls, **kw)
    def approve(call): return True
    tb = Recording(TOOLS)
    try:
        with ChatServer(SCRIPT) as srv: history = run_loop('chat', srv, is_async, tools=tb, approve=approve)
    finally: tb.close()
    assert srv.problems == [] and history.answer == ANSWER and seen == [approve, approve]
    with pytest.raises(TypeError, match='approve must be callable'): tool_loop(client_for('chat', srv), 'hi', TOOLS, model='m', approve='yes')

def test_a_notebook_shows_each_round_as_it_happens(monkeypatch):
    "In a Jupyter kernel, with no code from the user: the reply's text as it streams, then each step, one display per round"
    import IPython.display, toolslm_like.toolloop as tl
    shown = []
    class Handle:
        def update(self, o): shown.append(('update', o))
    monkeypatch.setattr(IPython.display, 'display', lambda o, display_id=False: shown.append(('display', o)) or Handle())
    monkeypatch.setattr(tl, '_in_notebook', lambda: True)
    with ChatServer(SCRIPT) as srv: history = run_loop('chat', srv, stream=True).result()
    assert srv.problems == []
    steps = [o for k,o in shown if isinstance(o, LoopStep)]
    assert steps == history.steps # every step shown, in its round's display
    texts = [o.data for k,o in shown if isinstance(o, IPython.display.Markdown)]
    first = texts[0].split('\n')[1] # shown as text in a fenced block, never rendered
    assert texts[0].startswith('```') and first and ANSWER.startswith(first) and first != ANSWER # the first piece, before the reply was whole
    shown.clear()
    with ChatServer(SCRIPT) as srv: run_loop('chat', srv) # not streamed: each step shown as it ends
    assert [type(o).__name__ for k,o in shown] == ['LoopStep'] * 3
    shown.clear()
    with ChatServer(SCRIPT) as srv: run_loop('chat', srv, progress=False)
    assert shown == []

@pytest.mark.parametrize('api', list(SERVERS))
def test_parse_tool_calls_refuses_a_real_stream_and_its_pieces(api):
    "The SDK's own stream object, and each chunk or event it yields, are refused with what to pass instead; the accumulator reads them"
    from toolslm_like.providers import parse_tool_calls
    from toolslm_like.streaming import StreamAccumulator
    with SERVERS[api](SCRIPT[:1]) as srv:
        client = client_for(api, srv)
        if api == 'chat': stream = client.chat.completions.create(model='m', messages=[{'role': 'user', 'content': 'q'}], stream=True)
        elif api == 'responses': stream = client.responses.create(model='m', input='q', stream=True)
        elif api == 'anthropic': stream = client.messages.create(model='m', max_tokens=100, messages=[{'role': 'user', 'content': 'q'}], stream=True)
        else: stream = client.models.generate_content_stream(model='m', contents='q')
        with pytest.raises(TypeError, match='got a stream .*StreamAccumulator'): parse_tool_calls(stream)
        acc = StreamAccumulator()
        for piece in stream:
            if api != 'gemini' and getattr(piece, 'type', None) != 'response.completed': # Gemini's pieces are partial replies, each call whole
                with pytest.raises(ValueError, match='StreamAccumulator'): parse_tool_calls(piece)
            acc.add(piece)
    assert srv.problems == []
    assert [(c['name'], c['arguments']) for c in acc.tool_calls()] == [('add', {'a': 2, 'b': 3}), ('multiply', {'a': 4, 'b': 5})]

@pytest.mark.parametrize('api', ['chat', 'gemini'])
def test_prompt_only_mode_streamed(api):
    "native=False streams too: the calls are read from the text once it is whole"
    turns = ['I will add.\n```json\n{"name": "add", "arguments": {"a": 2, "b": 3}}\n```', 'It is 5.']
    with SERVERS[api](turns) as srv: plain = run_loop(api, srv, native=False)
    with SERVERS[api](turns, chunk_chars=2) as srv: events,streamed = stream_loop(api, srv, native=False)
    assert srv.problems == [] and list(streamed) == list(plain) and streamed.answer == 'It is 5.'
    assert ''.join(e.text for e in events if isinstance(e, TextDelta) and e.iteration == 1) == turns[0]

@pytest.mark.parametrize('stream', [False, True], ids=['plain', 'streamed'])
@pytest.mark.parametrize('is_async', [False, True], ids=['sync', 'async'])
@pytest.mark.parametrize('api', list(SERVERS))
def test_approve_through_the_loop(api, is_async, stream):
    "`tool_loop(approve=...)`: a call allowed, one run with edited arguments, one refused with a reason the model reads; the loop goes on"
    asked = []
    async def async_hook(call): return hook(call)
    def hook(call):
        asked.append((call['name'], call['arguments']))
        if call['name'] == 'divide': return 'Division is not allowed here.'
        if call['name'] == 'multiply': return {'a': 10, 'b': 10}
        return True
    with SERVERS[api](SCRIPT) as srv:
        kw = dict(approve=async_hook if is_async else hook)
        history = stream_loop(api, srv, is_async, **kw)[1] if stream else run_loop(api, srv, is_async, **kw)
    assert srv.problems == [] and history.answer == ANSWER
    assert asked == [('add', {'a': 2, 'b': 3}), ('multiply', {'a': 4, 'b': 5}), ('divide', {'a': 1, 'b': 0})]
    assert [json.loads(c) for _,c,_ in results_in(api, srv.requests[1])] == [5, 100]
    (_,refusal,_), = results_in(api, srv.requests[2])
    assert 'Division is not allowed here.' in refusal and 'ZeroDivisionError' not in refusal


# --- StreamAccumulator reads the SDKs' chunk objects as it reads their dicts

@pytest.mark.parametrize('api', ['chat', 'responses', 'anthropic'])
def test_stream_objects_read_as_their_dicts(api):
    "The same stream fed as the SDK's objects (read attribute by attribute) and as dicts gives the same reply and calls"
    from openai._models import construct_type as openai_type
    from anthropic._models import construct_type as anthropic_type
    from openai.types.chat import ChatCompletionChunk
    from openai.types.responses import ResponseStreamEvent
    from anthropic.types import RawMessageStreamEvent
    from toolslm_like.streaming import StreamAccumulator
    sdk_type = {'chat': lambda d: openai_type(type_=ChatCompletionChunk, value=d),
                'responses': lambda d: openai_type(type_=ResponseStreamEvent, value=d),
                'anthropic': lambda d: anthropic_type(type_=RawMessageStreamEvent, value=d)}[api]
    provider = {'chat': 'openai', 'responses': 'openai-responses'}.get(api, api)
    turns = [[('add', {'a': 2, 'b': 3}), ('multiply', {'a': 4, 'b': 5, 'note': 'x' * 50})], 'The answer: ' + 'y' * 40]
    for turn in turns:
        events = [d for _,d in SERVERS[api]([], chunk_chars=3).stream_events(turn, 1, {'model': 'm'}) if isinstance(d, dict)]
        as_dicts,as_objects = StreamAccumulator(provider),StreamAccumulator(provider)
        texts = [as_dicts.add(json.loads(json.dumps(d))) for d in events]
        objects = [sdk_type(d) for d in events]
        assert not any(isinstance(o, dict) for o in objects), objects[:2]
        assert [as_objects.add(o) for o in objects] == texts
        assert as_objects.response() == as_dicts.response()
        assert as_objects.tool_calls() == as_dicts.tool_calls()
    assert as_dicts.text == turns[-1]
