"Black-box checks of `toolslm_like.providers` in a fresh interpreter"
import subprocess, sys

def test_importing_and_using_providers_loads_no_sdk():
    code = '''import sys, toolslm_like.providers as p
for prov in p.PROVIDERS: p.tool_schemas(p.provider_tool_name, prov, strict='auto')
calls = p.parse_tool_calls({'type': 'tool_use', 'id': 'toolu_1', 'name': 'provider_tool_name', 'input': {'name': 'a.b'}})
p.format_tool_results([{**calls[0], 'output': 'a-b', 'error': None}])
print(sorted(m for m in ('openai', 'anthropic', 'google.genai', 'mcp', 'pydantic') if m in sys.modules))'''
    r = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == '[]', r.stdout

# --- schemas against third-party software, and hostile schemas at every module that reads them

import copy, enum, random, time
from dataclasses import dataclass
from datetime import date, datetime
from typing import Literal, NamedTuple, TypedDict
import pytest

class Colour(enum.Enum): RED='red'; BLUE='blue'

@dataclass
class Address:
    "A postal address"
    street:str # Street and number
    city:str # City
    country:str='NZ' # ISO country code

class Span(TypedDict):
    start:int # First
    end:int # Last

class Pair(NamedTuple):
    x:int
    y:str='q'

@dataclass
class Tree:
    "A tree"
    label:str # Its label
    children:list['Tree'] # Its subtrees

def everything(a:int, b:float=1.5, c:str|None=None, d:list[int]=[1], e:tuple[int,str]=(1,'a'), g:set[str]=frozenset(), h:Colour=Colour.RED,
               j:Literal[1,2]=1, k:date=date(2020,1,1), l:datetime|None=None, p:Span|None=None, q:Pair|None=None,
               s:Tree|None=None, u:int|str=1, v:list[list[int]]=[], to:Address|None=None):
    "A tool with many kinds of parameters"

def test_strict_schemas_are_what_openai_agents_makes_them():
    "openai-agents' own strict checker finds nothing to change in our strict schemas (and `jsonschema` finds them valid)"
    strict_json = pytest.importorskip('agents.strict_schema')
    jsonschema = pytest.importorskip('jsonschema')
    from toolslm_like.providers import tool_specs, strict_schema
    def ship(to:Address, via:list[Address]|None=None, when:datetime|None=None): "Ship"
    for f in (everything, ship):
        p = strict_schema(tool_specs(f)[0]['parameters'], f.__name__)
        jsonschema.Draft202012Validator.check_schema(p)
        assert strict_json.ensure_strict_json_schema(copy.deepcopy(p)) == p

def _random_schema(rng, depth, defs):
    "A random schema using the keywords every module understands"
    kinds = ['integer', 'string', 'boolean', 'number', 'enum', 'null'] + (['array', 'object', 'anyOf', 'ref', 'allOf'] if depth < 4 else [])
    k = rng.choice(kinds)
    if k == 'enum': return {'enum': rng.sample(['a', 'b', 'c', 1, 2], rng.randint(1, 3))}
    if k == 'array': return {'type': 'array', 'items': _random_schema(rng, depth+1, defs)}
    if k == 'object':
        props = {f'f{i}': _random_schema(rng, depth+1, defs) for i in range(rng.randint(1, 3))}
        return {'type': 'object', 'properties': props, 'required': rng.sample(list(props), rng.randint(0, len(props))), 'additionalProperties': False}
    if k == 'anyOf': return {'anyOf': [_random_schema(rng, depth+1, defs) for _ in range(rng.randint(2, 3))]}
    if k == 'allOf': return {'allOf': [_random_schema(rng, depth+1, defs)]}
    if k == 'ref':
        name = f'D{len(defs)}'
        defs[name] = None
        defs[name] = _random_schema(rng, depth+1, defs)
        return {'$ref': f'#/$defs/{name}'} if rng.random() < 0.7 else {'$ref': f'#/$defs/{name}', 'description': 'a ref with a sibling'}
    return {'type': k}

def _random_value(rng, depth=0):
    return rng.choice([1, 'a', 'b', 2.5, True, None, [], {}] + ([[_random_value(rng, depth+1)], {'f0': _random_value(rng, depth+1)}] if depth < 3 else []))

def test_every_module_agrees_on_random_schemas():
    "The same random schema: every rewrite either works or raises `SchemaError`; MCP's check agrees with `jsonschema`, before and after `refs_into_defs`"
    jsonschema = pytest.importorskip('jsonschema')
    from toolslm_like.funccall import SchemaError, BadValue
    from toolslm_like.typekinds import Converter
    from toolslm_like.providers import strict_schema, gemini_schema
    from toolslm_like.schemawalk import refs_into_defs, describe_schema, sample_value
    from toolslm_like.mcp import _ValueCheck
    rng = random.Random(14)
    for i in range(300):
        defs = {}
        props = {f'p{j}': _random_schema(rng, 0, defs) for j in range(rng.randint(1, 3))}
        root = {'type': 'object', 'properties': props, 'required': list(props), **({'$defs': defs} if defs else {})}
        jsonschema.Draft202012Validator.check_schema(root)
        for rewrite in (lambda s: strict_schema(s, 't'), lambda s: strict_schema(s, 't', 'anthropic'), lambda s: gemini_schema(s, 't')):
            try: out = rewrite(root)
            except SchemaError: continue
            if out is not None and '$defs' in str(out): jsonschema.Draft202012Validator.check_schema(out)
        norm = refs_into_defs(root)
        describe_schema(root['properties']['p0'], root); sample_value(root['properties']['p0'], root)
        for _ in range(5):
            v = {k: _random_value(rng) for k in props}
            ok = jsonschema.Draft202012Validator(root).is_valid(v)
            assert jsonschema.Draft202012Validator(norm).is_valid(v) == ok, (root, v)
            try: _ValueCheck(norm.get('$defs', {}), Converter(True)).walk({k: x for k,x in norm.items() if k != '$defs'}, v); ours = True
            except BadValue: ours = False
            assert ours == ok, (root, v, ours)

HOSTILE = {
    'deep': (lambda: (lambda d: [d := {'type': 'array', 'items': d} for _ in range(5000)][-1])({'type': 'integer'})),
    'fan-out': (lambda: {'type': 'object', 'properties': {f'p{i}': {'$ref': '#/$defs/L0'} for i in range(20)},
                         '$defs': {f'L{n}': {'type': 'object', 'properties': {f'p{i}': {'$ref': f'#/$defs/L{n+1}'} for i in range(20)}} for n in range(10)} | {'L10': {'type': 'string'}}}),
    'ref cycle': (lambda: {'type': 'object', 'properties': {'a': {'$ref': '#/$defs/A'}}, '$defs': {'A': {'$ref': '#/$defs/B'}, 'B': {'$ref': '#/$defs/A'}}}),
    'anyOf bomb': (lambda: {'type': 'object', 'properties': {'a': {'$ref': '#/$defs/L0'}},
                            '$defs': {f'L{i}': {'anyOf': [{'$ref': f'#/$defs/L{i+1}'}, {'$ref': f'#/$defs/L{i+1}'}]} for i in range(40)} | {'L40': {'type': 'integer'}}}),
    'huge': (lambda: {'type': 'object', 'properties': {f'p{i}': {'type': 'string', 'description': 'x' * 1000} for i in range(1000)}}),
    'remote ref': (lambda: {'type': 'object', 'properties': {'a': {'$ref': 'https://example.com/s.json'}}}),
    'dangling ref': (lambda: {'type': 'object', 'properties': {'a': {'$ref': '#/$defs/Nowhere'}}}),
    'root recursion': (lambda: {'type': 'object', 'properties': {'me': {'$ref': '#'}, 'n': {'type': 'integer'}}}),
}

@pytest.mark.timing # a hostile schema must not hang or crawl: 10 s is ~100x what each takes, so only a hang fails it
@pytest.mark.parametrize('name', list(HOSTILE))
def test_hostile_schemas_from_a_server_fail_fast_and_clearly_everywhere(name):
    from toolslm_like.funccall import SchemaError, call_func
    from toolslm_like.providers import PROVIDERS, tool_schemas
    from toolslm_like.mcp import tool_function
    tool = {'name': 'hostile', 'description': 'A tool from a server we do not control', 'inputSchema': HOSTILE[name]()}
    start = time.monotonic()
    for provider in PROVIDERS:
        for strict in ((False, 'auto', True) if provider in ('openai', 'openai-responses', 'anthropic') else (False,)):
            try: tool_schemas(tool, provider, strict=strict)
            except SchemaError as e: assert len(str(e)) < 1000, str(e)[:200] # never RecursionError, MemoryError or a hang
    try: f = tool_function(tool, lambda n, a: ('sent', a))
    except SchemaError as e: assert len(str(e)) < 1000
    else:
        for args in ({}, {'a': 1}, {'me': {'me': {'n': 1}, 'n': 2}, 'n': 3}, {'p0': 'x'}):
            try: call_func(f, args)
            except (TypeError, ValueError) as e: assert len(str(e)) < 5000, str(e)[:200]
    assert time.monotonic() - start < 10

def test_arguments_too_deep_is_one_check_for_providers_and_cli():
    "`providers.parse_arguments` and the CLI refuse the same arguments as too deep (funccall's one depth check), on every Python"
    from toolslm_like import providers, cli
    from toolslm_like.limits import MAX_JSON_DEPTH
    for n in (MAX_JSON_DEPTH - 2, MAX_JSON_DEPTH - 1, MAX_JSON_DEPTH, MAX_JSON_DEPTH + 1, 100_000):
        text = '{"a": ' + '[' * n + ']' * n + '}' # the arguments object, then n levels of lists
        args,err = providers.parse_arguments(text, 'f')
        try: cli.parse_arguments(text); cli_refused = False
        except cli.CLIError: cli_refused = True
        assert (err is not None) == cli_refused == (n + 1 > MAX_JSON_DEPTH), (n, err)
        if err: assert err == f"The arguments for 'f' are nested more than {MAX_JSON_DEPTH} levels deep; send a flatter JSON object"
