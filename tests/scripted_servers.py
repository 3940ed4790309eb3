"""Small local HTTP servers that speak the wire formats of OpenAI Chat Completions, the OpenAI Responses API and
Anthropic Messages, play back a scripted conversation, and check every request they receive the way the real APIs do
(ids matched, roles, block order). Used by the toolloop notebook and by `tests/test_toolloop_servers.py`.

A script is a list of turns; each turn is either a string (the model answers in plain text) or a list of
`(name, arguments)` pairs (the model asks for those tool calls, in parallel).

A request that asks for a stream (`"stream": true`, or Gemini's `:streamGenerateContent`) gets the same turn as real
server-sent events: text and each call's arguments cut into pieces of `chunk_chars` characters, the pieces of parallel
calls interleaved (`interleave=True`), as the APIs may send them. `faults={n: ('cut', k)}` closes the connection of the
n-th request's stream after k events (no final event); `('error', k)` sends the API's error event there instead."""
import itertools, json, re, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOOL_NAME = re.compile(r'^[a-zA-Z0-9_-]{1,64}$')

class Events(list):
    "A reply sent as server-sent events: `(event name or None, data)` pairs"

class ScriptedServer:
    "A scripted model on 127.0.0.1: answers each POST to `path` with the next turn, and records what it received"
    path = None # the endpoint the SDK posts to
    base_path = '' # what goes after the server's address in the SDK's `base_url`

    def __init__(self, turns, chunk_chars=3, interleave=True, faults=None):
        self.turns,self.requests,self.problems,self.headers,self.paths = list(turns),[],[],[],[]
        self.chunk_chars,self.interleave,self.faults = chunk_chars,interleave,dict(faults or {})
        self._lock = threading.Lock()

    # life cycle
    def __enter__(self): return self.start()
    def __exit__(self, *exc): self.stop()
    def start(self):
        srv = self
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a): pass
            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get('content-length') or 0))
                status,reply = srv.handle(self.path, {k.lower(): v for k,v in self.headers.items()}, raw)
                if isinstance(reply, Events): return self.send_events(reply)
                data = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header('content-type', 'application/json')
                self.send_header('content-length', str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            def send_events(self, events):
                "Server-sent events, flushed one by one; the connection closes after the last (HTTP/1.0, no length)"
                self.send_response(200)
                self.send_header('content-type', 'text/event-stream')
                self.send_header('cache-control', 'no-cache')
                self.end_headers()
                for name,data in events:
                    text = data if isinstance(data, str) else json.dumps(data)
                    self.wfile.write(((f"event: {name}\n" if name else '') + f"data: {text}\n\n").encode())
                    self.wfile.flush()
        self.httpd = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        return self
    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)

    @property
    def url(self): return f"http://127.0.0.1:{self.httpd.server_address[1]}"
    @property
    def base_url(self): return self.url + self.base_path

    # one request
    def handle(self, path, headers, raw):
        with self._lock:
            try: body = json.loads(raw)
            except ValueError: return 400, self.error(f"the request body is not JSON: {raw[:100]!r}")
            self.requests.append(body); self.headers.append(headers); self.paths.append(path)
            n = len(self.requests)
            problems = [f"request {n}: {p}" for p in self.check_headers(headers) + self.check(body)]
            if not self.path_ok(path): problems.append(f"request {n}: posted to {path}, expected {self.path}")
            if not self.turns: problems.append(f"request {n}: the script has no turn left")
            if problems:
                self.problems += problems
                return 400, self.error('; '.join(problems))
            turn = self.turns.pop(0)
            if not self.streams(path, body): return 200, self.reply(turn, n, body)
            events = self.stream_events(turn, n, body)
            kind,k = self.faults.get(n, (None, None))
            if kind == 'cut': return 200, Events(events[:k])
            if kind == 'error': return 200, Events(events[:k] + [self.error_event()])
            return 200, Events(events)

    def path_ok(self, path): return path.split('?')[0] == self.path
    def streams(self, path, body): return body.get('stream') is True
    def stream_events(self, turn, n, body)->list: raise NotImplementedError # [(event name or None, data)]
    def error_event(self): raise NotImplementedError
    def pieces(self, s:str)->list:
        "`s` cut into pieces of `chunk_chars` characters (at least one piece, maybe empty)"
        return [s[i:i+self.chunk_chars] for i in range(0, len(s), self.chunk_chars)] or ['']
    def mixed(self, lists:list)->list:
        "The items of `lists`, taken in turn from each (interleaved) or one list after the other"
        if not self.interleave: return [x for l in lists for x in l]
        return [x for group in itertools.zip_longest(*lists) for x in group if x is not None]

    def check_headers(self, headers): return []
    def check(self, body)->list: raise NotImplementedError
    def reply(self, turn, n, body)->dict: raise NotImplementedError
    def error(self, msg): return {'error': {'message': msg, 'type': 'invalid_request_error'}}


def _arguments_text(args):
    "A call's arguments as the OpenAI APIs send them: JSON text (a str in the script is sent as it is, e.g. broken JSON)"
    return args if isinstance(args, str) else json.dumps(args)

def _text_content(c, where, problems, types=('text',)):
    if isinstance(c, str): return
    if not isinstance(c, list) or not all(isinstance(p, dict) and p.get('type') in types for p in c):
        problems.append(f"{where}: content must be a string or a list of {'/'.join(types)} parts, got {json.dumps(c)[:120]}")


class ChatServer(ScriptedServer):
    "OpenAI Chat Completions (`POST /v1/chat/completions`), as vLLM, Ollama and llama.cpp serve it too"
    path,base_path = '/v1/chat/completions','/v1'

    def __init__(self, turns, call_ids=True, **kw): # call_ids=False: calls come without ids, as some compatible servers send them
        super().__init__(turns, **kw)
        self.call_ids = call_ids

    def check_headers(self, headers):
        return [] if headers.get('authorization', '').startswith('Bearer ') else ['no `Authorization: Bearer` header']

    def check(self, body):
        p = []
        if not isinstance(body.get('model'), str): p.append('`model` is missing')
        msgs = body.get('messages')
        if not isinstance(msgs, list) or not msgs: return p + ['`messages` must be a non-empty list']
        for t in body.get('tools') or []:
            f = t.get('function') if isinstance(t, dict) else None
            if t.get('type') != 'function' or not isinstance(f, dict): p.append(f"tool {json.dumps(t)[:80]} is not {{'type': 'function', 'function': {{...}}}}"); continue
            if not TOOL_NAME.match(str(f.get('name'))): p.append(f"tool name {f.get('name')!r} does not match {TOOL_NAME.pattern}")
            if (f.get('parameters') or {}).get('type') != 'object': p.append(f"tool {f.get('name')!r}: `parameters` must be an object schema")
        if 'tool_choice' in body and not body.get('tools'): p.append('`tool_choice` is only allowed when `tools` are given')
        pending = [] # ids of the last assistant message's calls still waiting for a `tool` message
        for i,m in enumerate(msgs):
            role = m.get('role') if isinstance(m, dict) else None
            if role not in ('system', 'developer', 'user', 'assistant', 'tool'): p.append(f"messages[{i}]: unknown role {role!r}"); continue
            if pending and role != 'tool':
                p.append(f"messages[{i}]: an assistant message with `tool_calls` must be followed by `tool` messages answering each `tool_call_id`; missing: {', '.join(pending)}")
                pending = []
            if role == 'tool':
                tid = m.get('tool_call_id')
                if not pending or tid != pending[0]:
                    p.append(f"messages[{i}]: `tool` message with tool_call_id {tid!r} does not answer the next pending call ({pending[0] if pending else 'none pending'})")
                else: pending.pop(0)
                _text_content(m.get('content'), f"messages[{i}]", p)
            elif role == 'assistant':
                calls = m.get('tool_calls') or []
                if m.get('content') is None and not calls: p.append(f"messages[{i}]: an assistant message needs `content` or `tool_calls`")
                for j,c in enumerate(calls):
                    if not isinstance(c.get('id'), str) or c.get('type') != 'function': p.append(f"messages[{i}].tool_calls[{j}]: needs an `id` and `type: function`"); continue
                    f = c.get('function') or {}
                    if not isinstance(f.get('name'), str): p.append(f"messages[{i}].tool_calls[{j}]: function name missing")
                    if not isinstance(f.get('arguments'), str): p.append(f"messages[{i}].tool_calls[{j}].function.arguments must be a string")
                pending = [c.get('id') for c in calls]
            else: _text_content(m.get('content'), f"messages[{i}]", p)
        if pending: p.append(f"the last assistant message's tool calls have no `tool` messages: {', '.join(pending)}")
        return p

    def reply(self, turn, n, body):
        msg = {'role': 'assistant', 'content': None, 'refusal': None}
        if isinstance(turn, str): msg['content'],finish = turn,'stop'
        else:
            msg['tool_calls'] = [{**({'id': f"call_{n}_{k}"} if self.call_ids else {}), 'type': 'function',
                                  'function': {'name': nm, 'arguments': _arguments_text(args)}} for k,(nm,args) in enumerate(turn)]
            finish = 'tool_calls'
        return {'id': f"chatcmpl-{n}", 'object': 'chat.completion', 'created': int(time.time()), 'model': body.get('model'),
                'choices': [{'index': 0, 'message': msg, 'finish_reason': finish, 'logprobs': None}],
                'usage': {'prompt_tokens': 10, 'completion_tokens': 5, 'total_tokens': 15}}


    def stream_events(self, turn, n, body):
        head = {'id': f"chatcmpl-{n}", 'object': 'chat.completion.chunk', 'created': int(time.time()), 'model': body.get('model')}
        chunk = lambda delta, finish=None: (None, {**head, 'choices': [{'index': 0, 'delta': delta, 'finish_reason': finish, 'logprobs': None}]})
        if isinstance(turn, str):
            out = [chunk({'role': 'assistant', 'content': ''})] + [chunk({'content': p}) for p in self.pieces(turn)] + [chunk({}, 'stop')]
        else:
            calls = []
            for k,(nm,args) in enumerate(turn):
                first = {'index': k, **({'id': f"call_{n}_{k}"} if self.call_ids else {}), 'type': 'function', 'function': {'name': nm, 'arguments': ''}}
                calls.append([chunk({'tool_calls': [first]})] + [chunk({'tool_calls': [{'index': k, 'function': {'arguments': p}}]})
                                                                for p in self.pieces(_arguments_text(args))])
            out = [chunk({'role': 'assistant', 'content': None})] + self.mixed(calls) + [chunk({}, 'tool_calls')]
        return out + [(None, '[DONE]')]

    def error_event(self): return (None, {'error': {'message': 'The server is overloaded', 'type': 'server_error'}})


class ResponsesServer(ScriptedServer):
    "The OpenAI Responses API (`POST /v1/responses`)"
    path,base_path = '/v1/responses','/v1'

    def check_headers(self, headers):
        return [] if headers.get('authorization', '').startswith('Bearer ') else ['no `Authorization: Bearer` header']

    def check(self, body):
        p = []
        if not isinstance(body.get('model'), str): p.append('`model` is missing')
        for t in body.get('tools') or []:
            if not isinstance(t, dict) or t.get('type') != 'function' or 'function' in t:
                p.append(f"tool {json.dumps(t)[:80]} is not a flat {{'type': 'function', 'name', 'parameters'}}"); continue
            if not TOOL_NAME.match(str(t.get('name'))): p.append(f"tool name {t.get('name')!r} does not match {TOOL_NAME.pattern}")
            if (t.get('parameters') or {}).get('type') != 'object': p.append(f"tool {t.get('name')!r}: `parameters` must be an object schema")
        items = body.get('input')
        if isinstance(items, str): return p
        if not isinstance(items, list) or not items: return p + ['`input` must be a string or a non-empty list']
        calls,answered = {},set()
        for i,it in enumerate(items):
            typ = it.get('type', 'message') if isinstance(it, dict) else None
            if typ == 'message':
                if it.get('role') not in ('user', 'assistant', 'system', 'developer'): p.append(f"input[{i}]: unknown role {it.get('role')!r}")
                _text_content(it.get('content'), f"input[{i}]", p, ('input_text', 'output_text', 'input_image', 'refusal'))
            elif typ == 'function_call':
                cid = it.get('call_id')
                if not isinstance(cid, str) or not isinstance(it.get('name'), str): p.append(f"input[{i}]: a function_call needs `call_id` and `name`"); continue
                if cid in calls: p.append(f"input[{i}]: duplicate call_id {cid!r}")
                calls[cid] = i
                if not isinstance(it.get('arguments'), str): p.append(f"input[{i}].arguments must be a string")
            elif typ == 'function_call_output':
                cid = it.get('call_id')
                if cid not in calls: p.append(f"input[{i}]: No tool call found for function call output with call_id {cid!r}")
                elif cid in answered: p.append(f"input[{i}]: a second output for call_id {cid!r}")
                answered.add(cid)
                if not isinstance(it.get('output'), (str, list)): p.append(f"input[{i}]: `output` must be a string")
            elif typ == 'reasoning': pass
            else: p.append(f"input[{i}]: unknown item type {typ!r}")
        for cid in calls:
            if cid not in answered: p.append(f"No tool output found for function call {cid}")
        return p

    def reply(self, turn, n, body):
        if isinstance(turn, str):
            out = [{'type': 'message', 'id': f"msg_{n}", 'status': 'completed', 'role': 'assistant',
                    'content': [{'type': 'output_text', 'text': turn, 'annotations': []}]}]
        else: out = [{'type': 'function_call', 'id': f"fc_{n}_{k}", 'call_id': f"call_{n}_{k}", 'name': nm,
                      'arguments': _arguments_text(args), 'status': 'completed'} for k,(nm,args) in enumerate(turn)]
        return {'id': f"resp_{n}", 'object': 'response', 'created_at': time.time(), 'status': 'completed', 'model': body.get('model'),
                'output': out, 'parallel_tool_calls': True, 'tool_choice': body.get('tool_choice', 'auto'), 'tools': body.get('tools') or [],
                'temperature': 1.0, 'top_p': 1.0, 'error': None, 'incomplete_details': None, 'instructions': body.get('instructions'),
                'metadata': {}, 'usage': {'input_tokens': 10, 'output_tokens': 5, 'total_tokens': 15,
                                          'input_tokens_details': {'cached_tokens': 0}, 'output_tokens_details': {'reasoning_tokens': 0}}}


    def stream_events(self, turn, n, body):
        final = self.reply(turn, n, body)
        seq = itertools.count(1)
        ev = lambda typ, **d: (typ, {'type': typ, **d, 'sequence_number': next(seq)})
        out = [ev('response.created', response={**final, 'status': 'in_progress', 'output': []})]
        if isinstance(turn, str):
            item = final['output'][0]
            out += [ev('response.output_item.added', output_index=0, item={**item, 'status': 'in_progress', 'content': []}),
                    ev('response.content_part.added', item_id=item['id'], output_index=0, content_index=0, part={'type': 'output_text', 'text': '', 'annotations': []})]
            out += [ev('response.output_text.delta', item_id=item['id'], output_index=0, content_index=0, delta=p, logprobs=[]) for p in self.pieces(turn)]
            out += [ev('response.output_text.done', item_id=item['id'], output_index=0, content_index=0, text=turn, logprobs=[]),
                    ev('response.content_part.done', item_id=item['id'], output_index=0, content_index=0, part=item['content'][0]),
                    ev('response.output_item.done', output_index=0, item=item)]
        else:
            calls = []
            for k,item in enumerate(final['output']):
                calls.append([ev('response.output_item.added', output_index=k, item={**item, 'arguments': '', 'status': 'in_progress'})] +
                             [ev('response.function_call_arguments.delta', item_id=item['id'], output_index=k, delta=p) for p in self.pieces(item['arguments'])] +
                             [ev('response.function_call_arguments.done', item_id=item['id'], output_index=k, arguments=item['arguments']),
                              ev('response.output_item.done', output_index=k, item=item)])
            out += self.mixed(calls)
        return out + [ev('response.completed', response=final)]

    def error_event(self): return ('error', {'type': 'error', 'code': 'server_error', 'message': 'The server is overloaded', 'param': None, 'sequence_number': 99})


class AnthropicServer(ScriptedServer):
    "Anthropic Messages (`POST /v1/messages`)"
    path,base_path = '/v1/messages',''

    def check_headers(self, headers):
        p = [] if headers.get('x-api-key') or headers.get('authorization', '').startswith('Bearer ') else ['no `x-api-key` (or `authorization`) header']
        if not headers.get('anthropic-version'): p.append('no `anthropic-version` header')
        return p

    def check(self, body):
        p = []
        if not isinstance(body.get('model'), str): p.append('`model` is missing')
        if not isinstance(body.get('max_tokens'), int): p.append('`max_tokens` is required')
        tools = body.get('tools') or []
        for t in tools:
            if isinstance(t, dict) and t.get('type') not in (None, 'custom') and isinstance(t.get('name'), str): continue # a server tool (web search, text editor...)
            if not isinstance(t, dict) or 'function' in t or 'input_schema' not in t: p.append(f"tool {json.dumps(t)[:80]} is not {{'name', 'description', 'input_schema'}}"); continue
            if not TOOL_NAME.match(str(t.get('name'))): p.append(f"tool name {t.get('name')!r} does not match {TOOL_NAME.pattern}")
            if t['input_schema'].get('type') != 'object': p.append(f"tool {t.get('name')!r}: `input_schema` must be an object schema")
        tc = body.get('tool_choice')
        if tc is not None and (not isinstance(tc, dict) or tc.get('type') not in ('auto', 'any', 'tool', 'none')): p.append(f"bad tool_choice {tc!r}")
        if tc is not None and not tools: p.append('`tool_choice` needs `tools`')
        msgs = body.get('messages')
        if not isinstance(msgs, list) or not msgs: return p + ['`messages` must be a non-empty list']
        if 'system' in body and not isinstance(body['system'], (str, list)): p.append('`system` must be a string or a list of text blocks')
        used_tool_blocks,pending = False,[]
        for i,m in enumerate(msgs):
            role = m.get('role') if isinstance(m, dict) else None
            if role not in ('user', 'assistant'): p.append(f"messages.{i}: role must be 'user' or 'assistant', got {role!r}"); continue
            if i == 0 and role != 'user': p.append('messages.0: the first message must use the user role')
            if i and msgs[i-1].get('role') == role: p.append(f"messages.{i}: roles must alternate between user and assistant")
            c = m.get('content')
            blocks = [{'type': 'text', 'text': c}] if isinstance(c, str) else c
            if not isinstance(blocks, list) or not blocks or not all(isinstance(b, dict) and 'type' in b for b in blocks):
                p.append(f"messages.{i}: content must be a non-empty string or list of blocks"); continue
            results = [b for b in blocks if b['type'] == 'tool_result']
            if role == 'user':
                n_first = next((k for k,b in enumerate(blocks) if b['type'] != 'tool_result'), len(blocks))
                if len(results) > n_first: p.append(f"messages.{i}: `tool_result` blocks must come first in the content, before any other block")
                ids = [b.get('tool_use_id') for b in results]
                if pending and sorted(map(str, ids)) != sorted(pending):
                    p.append(f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: {', '.join(x for x in pending if x not in ids) or '-'}; "
                             f"unexpected tool_use_id: {', '.join(str(x) for x in ids if x not in pending) or '-'}")
                elif not pending and results: p.append(f"messages.{i}: unexpected `tool_use_id` found in `tool_result` blocks: {ids}")
                if len(set(map(str, ids))) != len(ids): p.append(f"messages.{i}: duplicate tool_result ids {ids}")
                for b in results:
                    if 'is_error' in b and not isinstance(b['is_error'], bool): p.append(f"messages.{i}: is_error must be a bool")
                    if not isinstance(b.get('content', ''), (str, list)): p.append(f"messages.{i}: tool_result content must be a string or blocks")
                pending = []
            else:
                if results: p.append(f"messages.{i}: an assistant message cannot hold `tool_result` blocks")
                if pending: p.append(f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: {', '.join(pending)}")
                uses = [b for b in blocks if b['type'] == 'tool_use']
                for b in uses:
                    if not isinstance(b.get('id'), str) or not isinstance(b.get('input'), dict) or not isinstance(b.get('name'), str):
                        p.append(f"messages.{i}: a tool_use block needs `id`, `name` and an object `input`")
                    extra = set(b) - {'type', 'id', 'name', 'input', 'cache_control', 'caller'}
                    if extra: p.append(f"messages.{i}: tool_use: Extra inputs are not permitted: {sorted(extra)}")
                pending = [b.get('id') for b in uses]
            used_tool_blocks |= any(b['type'] in ('tool_use', 'tool_result') for b in blocks)
        if pending: p.append(f"`tool_use` ids were found without `tool_result` blocks immediately after: {', '.join(pending)}")
        if used_tool_blocks and not tools: p.append("Requests which include `tool_use` or `tool_result` blocks must define tools.")
        return p

    def reply(self, turn, n, body):
        if isinstance(turn, str): content,stop = [{'type': 'text', 'text': turn}],'end_turn'
        else:
            content = [{'type': 'text', 'text': 'Let me use the tools.'}] + [
                {'type': 'tool_use', 'id': f"toolu_{n}_{k}", 'name': nm, 'input': args} for k,(nm,args) in enumerate(turn)]
            stop = 'tool_use'
        return {'id': f"msg_{n}", 'type': 'message', 'role': 'assistant', 'model': body.get('model'), 'content': content,
                'stop_reason': stop, 'stop_sequence': None, 'usage': {'input_tokens': 10, 'output_tokens': 5}}

    def error(self, msg): return {'type': 'error', 'error': {'type': 'invalid_request_error', 'message': msg}}

    def stream_events(self, turn, n, body):
        final = self.reply(turn, n, body)
        ev = lambda typ, **d: (typ, {'type': typ, **d})
        out = [ev('message_start', message={**final, 'content': [], 'stop_reason': None, 'usage': {'input_tokens': 10, 'output_tokens': 1}}), ev('ping')]
        blocks = []
        for i,b in enumerate(final['content']):
            if b['type'] == 'text':
                blocks.append([ev('content_block_start', index=i, content_block={'type': 'text', 'text': ''})] +
                              [ev('content_block_delta', index=i, delta={'type': 'text_delta', 'text': p}) for p in self.pieces(b['text'])] +
                              [ev('content_block_stop', index=i)])
            else:
                blocks.append([ev('content_block_start', index=i, content_block={**b, 'input': {}})] +
                              [ev('content_block_delta', index=i, delta={'type': 'input_json_delta', 'partial_json': p}) for p in self.pieces(json.dumps(b['input']))] +
                              [ev('content_block_stop', index=i)])
        out += blocks[0] + self.mixed(blocks[1:]) # the text first; the calls' blocks interleaved (the API sends one block after another)
        return out + [ev('message_delta', delta={'stop_reason': final['stop_reason'], 'stop_sequence': None}, usage={'output_tokens': 5}), ev('message_stop')]

    def error_event(self): return ('error', {'type': 'error', 'error': {'type': 'overloaded_error', 'message': 'Overloaded'}})


GEMINI_NAME = re.compile(r'^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$')
GEMINI_PATH = re.compile(r'^/v1(?:beta|alpha)?/models/([^/:?]+):(generateContent|streamGenerateContent)(?:\?.*)?$')

class GeminiServer(ScriptedServer):
    "The Gemini API (`POST /v1beta/models/{model}:generateContent`, `:streamGenerateContent?alt=sse`), as `google-genai` calls it"
    path,base_path = '/v1beta/models/{model}:generateContent','' # the client adds the API version

    def __init__(self, turns, call_ids=False, **kw): # call_ids=True: calls come with ids (Vertex AI sends them; the Gemini API does not)
        super().__init__(turns, **kw)
        self.call_ids = call_ids

    def path_ok(self, path): return GEMINI_PATH.match(path) is not None
    def streams(self, path, body): return ':streamGenerateContent' in path

    def check_headers(self, headers): return [] if headers.get('x-goog-api-key') else ['no `x-goog-api-key` header']

    def check(self, body):
        p = []
        for t in body.get('tools') or []:
            for f in (t.get('functionDeclarations') or []) if isinstance(t, dict) else []:
                if not GEMINI_NAME.match(str(f.get('name'))): p.append(f"function name {f.get('name')!r} does not match {GEMINI_NAME.pattern}")
                params = f.get('parameters') or f.get('parametersJsonSchema')
                if params is not None and str(params.get('type')).upper() != 'OBJECT': p.append(f"function {f.get('name')!r}: parameters must be an object schema")
        mode = ((body.get('toolConfig') or {}).get('functionCallingConfig') or {}).get('mode')
        if mode is not None and mode not in ('AUTO', 'ANY', 'NONE', 'VALIDATED'): p.append(f"bad functionCallingConfig mode {mode!r}")
        contents = body.get('contents')
        if not isinstance(contents, list) or not contents: return p + ['`contents` must be a non-empty list']
        pending = [] # (name, id) of the last model turn's function calls, to be answered by the next user turn
        for i,c in enumerate(contents):
            role,parts = (c.get('role'),c.get('parts')) if isinstance(c, dict) else (None,None)
            if role not in ('user', 'model'): p.append(f"contents[{i}]: role must be 'user' or 'model', got {role!r}"); continue
            if not isinstance(parts, list) or not parts or not all(isinstance(x, dict) and x for x in parts):
                p.append(f"contents[{i}]: needs a non-empty list of parts"); continue
            if i and contents[i-1].get('role') == role: p.append(f"contents[{i}]: please ensure that multiturn requests alternate between user and model")
            answers = [x['functionResponse'] for x in parts if 'functionResponse' in x]
            if role == 'user':
                got = [(a.get('name'), a.get('id')) for a in answers]
                if pending and sorted(map(str, got)) != sorted(map(str, pending)):
                    p.append(f"contents[{i}]: the number (and names) of function response parts must equal the function call parts of the previous turn: calls {pending}, responses {got}")
                elif not pending and answers: p.append(f"contents[{i}]: function response parts without function calls before them")
                for a in answers:
                    if not isinstance(a.get('response'), dict): p.append(f"contents[{i}]: functionResponse.response must be an object")
                pending = []
            else:
                if answers: p.append(f"contents[{i}]: a model turn cannot hold function responses")
                if pending: p.append(f"contents[{i}]: function calls of the previous turn were not answered: {pending}")
                pending = [(x['functionCall'].get('name'), x['functionCall'].get('id')) for x in parts if 'functionCall' in x]
        if pending: p.append(f"the last model turn's function calls have no function responses: {pending}")
        return p

    def parts(self, turn, n):
        if isinstance(turn, str): return [{'text': turn}]
        return [{'functionCall': {**({'id': f"call_{n}_{k}"} if self.call_ids else {}), 'name': nm, 'args': args}} for k,(nm,args) in enumerate(turn)]

    def reply(self, turn, n, body):
        return {'candidates': [{'content': {'role': 'model', 'parts': self.parts(turn, n)}, 'finishReason': 'STOP', 'index': 0}],
                'usageMetadata': {'promptTokenCount': 10, 'candidatesTokenCount': 5, 'totalTokenCount': 15}, 'modelVersion': 'test', 'responseId': f"r{n}"}

    def stream_events(self, turn, n, body):
        chunk = lambda parts, finish=None: (None, {'candidates': [{'content': {'role': 'model', 'parts': parts}, 'index': 0,
                                                                   **({'finishReason': finish} if finish else {})}], 'modelVersion': 'test', 'responseId': f"r{n}"})
        out = [chunk([{'text': p}]) for p in self.pieces(turn)] if isinstance(turn, str) else [chunk([part]) for part in self.parts(turn, n)]
        last = out[-1][1]['candidates'][0]['content']['parts']
        return out[:-1] + [chunk(last, 'STOP')] # Gemini sends the finish reason with the last parts (calls come whole, one per chunk here)

    def error(self, msg): return {'error': {'code': 400, 'message': msg, 'status': 'INVALID_ARGUMENT'}}
    def error_event(self): return (None, {'error': {'code': 503, 'message': 'The model is overloaded', 'status': 'UNAVAILABLE'}})
