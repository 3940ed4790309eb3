"""Small local HTTP servers that speak the wire formats of OpenAI Chat Completions, the OpenAI Responses API and
Anthropic Messages, play back a scripted conversation, and check every request they receive the way the real APIs do
(ids matched, roles, block order). Used by the toolloop notebook and by `tests/test_toolloop_servers.py`.

A script is a list of turns; each turn is either a string (the model answers in plain text) or a list of
`(name, arguments)` pairs (the model asks for those tool calls, in parallel)."""
import json, re, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOOL_NAME = re.compile(r'^[a-zA-Z0-9_-]{1,64}$')

class ScriptedServer:
    "A scripted model on 127.0.0.1: answers each POST to `path` with the next turn, and records what it received"
    path = None # the endpoint the SDK posts to
    base_path = '' # what goes after the server's address in the SDK's `base_url`

    def __init__(self, turns):
        self.turns,self.requests,self.problems,self.headers = list(turns),[],[],[]
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
                data = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header('content-type', 'application/json')
                self.send_header('content-length', str(len(data)))
                self.end_headers()
                self.wfile.write(data)
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
            self.requests.append(body); self.headers.append(headers)
            problems = [f"request {len(self.requests)}: {p}" for p in self.check_headers(headers) + self.check(body)]
            if path.split('?')[0] != self.path: problems.append(f"request {len(self.requests)}: posted to {path}, expected {self.path}")
            if not self.turns: problems.append(f"request {len(self.requests)}: the script has no turn left")
            if problems:
                self.problems += problems
                return 400, self.error('; '.join(problems))
            return 200, self.reply(self.turns.pop(0), len(self.requests), body)

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

    def __init__(self, turns, call_ids=True): # call_ids=False: calls come without ids, as some compatible servers send them
        super().__init__(turns)
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
