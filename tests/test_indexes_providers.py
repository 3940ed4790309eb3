"Dotted tool names of an index through `toolslm_like.providers`: mapped to names providers accept and back, with real SDK types"
import json
import pytest
from toolslm_like.funccall import get_schema, call_func
from toolslm_like.indexes import ToolIndex
from toolslm_like.providers import tool_schemas, parse_tool_calls, format_tool_results, tool_names
from index_builders import write_files

WEATHER = '''
    from typing import Literal

    def forecast(city:str, # The city to forecast for
                 days:int=1, # How many days
                 units:Literal['C', 'F']='C' # Temperature units
                )->dict: # Temperatures by day
        "Weather forecast for a city"
        return {'city': city, 'days': days, 'units': units}
'''

@pytest.fixture(scope='module')
def idx(tmp_path_factory):
    tmp = tmp_path_factory.mktemp('prov')
    folder = write_files(tmp/'index', {'tools.toml': '[index]\ntools = ["weather.forecast", "geo.maps.distance"]\n', 'weather.py': WEATHER,
        'geo/__init__.py': '', 'geo/maps.py': 'def distance(a:str, b:str)->float:\n    "Distance in km"\n    return 42.0\n'})
    with ToolIndex(folder, cache_dir=tmp/'cache') as idx: yield idx

def test_schemas_carry_mapped_names_and_the_tools_own_parameters(idx):
    names = tool_names(idx.ns)
    assert names.provider('weather.forecast') == 'weather-forecast' and names.python('geo-maps-distance') == 'geo.maps.distance'
    for provider,get in [('anthropic', lambda s: (s['name'], s['input_schema'])), ('openai', lambda s: (s['function']['name'], s['function']['parameters'])),
                         ('openai-responses', lambda s: (s['name'], s['parameters'])), ('mcp', lambda s: (s['name'], s['inputSchema']))]:
        got = [get(s) for s in tool_schemas(idx.ns, provider)]
        want = ['weather.forecast', 'geo.maps.distance'] if provider == 'mcp' else ['weather-forecast', 'geo-maps-distance'] # MCP allows dots
        assert [n for n,_ in got] == want, provider
        assert got[0][1] == get_schema(idx.ns['weather.forecast'], pname='parameters')['parameters']
    strict = tool_schemas(idx.ns, 'openai', strict=True)[0]['function']
    assert strict['strict'] is True and strict['parameters']['additionalProperties'] is False

def test_anthropic_round_trip(idx):
    anthropic = pytest.importorskip('anthropic')
    tool_schemas(idx.ns, 'anthropic')
    msg = anthropic.types.Message.model_validate({'id': 'msg_1', 'type': 'message', 'role': 'assistant', 'model': 'claude-x',
        'stop_reason': 'tool_use', 'stop_sequence': None, 'usage': {'input_tokens': 1, 'output_tokens': 1},
        'content': [{'type': 'tool_use', 'id': 'tu_1', 'name': 'weather-forecast', 'input': {'city': 'Oslo', 'units': 'F'}},
                    {'type': 'tool_use', 'id': 'tu_2', 'name': 'geo-maps-distance', 'input': {'a': 'Oslo', 'b': 'Bergen'}}]})
    calls = parse_tool_calls(msg)
    assert [c['name'] for c in calls] == ['weather.forecast', 'geo.maps.distance']
    results = [{'id': c['id'], 'name': c['name'], 'output': call_func(c['name'], c['arguments'], idx.ns), 'error': None} for c in calls]
    out = format_tool_results(results, 'anthropic')
    blocks = out['content']
    assert [b['tool_use_id'] for b in blocks] == ['tu_1', 'tu_2']
    assert json.loads(blocks[0]['content'] if isinstance(blocks[0]['content'], str) else blocks[0]['content'][0]['text']) == {'city': 'Oslo', 'days': 1, 'units': 'F'}

def test_openai_round_trip(idx):
    openai = pytest.importorskip('openai')
    tool_schemas(idx.ns, 'openai')
    cc = openai.types.chat.ChatCompletion.model_validate({'id': 'c', 'object': 'chat.completion', 'created': 0, 'model': 'gpt-x',
        'choices': [{'index': 0, 'finish_reason': 'tool_calls', 'message': {'role': 'assistant', 'content': None,
            'tool_calls': [{'id': 'call_1', 'type': 'function', 'function': {'name': 'weather-forecast', 'arguments': '{"city": "Rome", "days": "2"}'}}]}}]})
    [call] = parse_tool_calls(cc)
    assert call['name'] == 'weather.forecast'
    assert call_func(call['name'], call['arguments'], idx.ns) == {'city': 'Rome', 'days': 2, 'units': 'C'}
