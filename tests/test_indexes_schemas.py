"Proxies look like the functions they stand for: the same schema, signature, docstring, docments and kind, for every type that crosses"
import importlib.util, inspect, json
import pytest
from toolslm_like.funccall import get_schema, hide_params
from toolslm_like.indexes import ToolIndex
from index_builders import write_files

KINDS = '''
    import enum, typing
    from datetime import date, datetime
    from decimal import Decimal
    from pathlib import Path
    from typing import Annotated, Any, Literal, Optional, Sequence
    from uuid import UUID
    from dataclasses import dataclass

    class Color(enum.Enum):
        red = 'r'
        green = 'g'

    @dataclass
    class Report:
        text: str

    def everything(q:str, # The query
                   n:int=3, # How many
                   ratio:float=0.5, # A ratio
                   flag:bool=False, # A flag
                   tags:list[str]|None=None, # Tags
                   nested:dict[str, dict[str, int]]={}, # Nested counts
                   grid:list[list[int]]=[[1]], # A grid
                   maybe:list[int | None]=[], # Holes allowed
                   pair:tuple[int, str]=(1, 'a'), # A pair
                   many:tuple[int, ...]=(), # Any number
                   uniq:set[str]=set(), # Unique names
                   mode:Literal['fast', 'slow']='fast', # Mode
                   color:Color=Color.red, # A color
                   when:Optional[date]=None, # A day
                   at:datetime|None=None, # A moment
                   where:Path=Path('.'), # A folder
                   uid:UUID|None=None, # An id
                   price:Decimal=Decimal('1.5'), # A price
                   note:Annotated[str, 'a note from Annotated']='', 
                   seq:Sequence[int]=(), # A sequence
                   anything:Any=None, # Whatever
                   *, only_kw:int=0 # Keyword-only
                  )->dict[str, Any]: # What was received
        """Takes every kind of parameter that crosses.

        More text after a blank line."""
        return dict(locals())

    def google(city:str, days:int=1)->Report:
        """Forecast.

        Args:
            city: The city
            days: How many days
        """
        return Report(city)

    @hide_params('secret')
    def hidden(x:int, # Shown
               secret:Report|None=None): # Hidden, and its type cannot cross
        "Has a hidden parameter"
        return x

    async def asynchronous(x:int # A number
                          )->list[int]: # Twice
        "Async tool"
        return [x, x]
'''

@pytest.fixture(scope='module')
def loaded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp('schemas')
    # the index's module uses `hide_params`: a worker has toolslm_like's funccall loaded, so tools may import it
    src = KINDS.replace('from dataclasses import dataclass', 'from dataclasses import dataclass\n    from toolslm_like.funccall import hide_params')
    folder = write_files(tmp/'index', {'tools.toml': '[index]\ntools = ["kinds.everything", "kinds.google", "kinds.hidden", "kinds.asynchronous"]\n',
                                       'kinds.py': src})
    spec = importlib.util.spec_from_file_location('kinds', folder/'kinds.py'); mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
    with ToolIndex(folder, cache_dir=tmp/'cache') as idx: yield idx,mod

@pytest.mark.parametrize('name', ['everything', 'google', 'hidden', 'asynchronous'])
def test_same_schema_signature_and_doc(loaded, name):
    idx,mod = loaded
    p,f = idx.ns[f'kinds.{name}'],getattr(mod, name)
    assert get_schema(p) == get_schema(f)
    assert get_schema(p, pname='parameters', skip_hidden=True) == get_schema(f, pname='parameters', skip_hidden=True)
    assert (p.__name__, p.__doc__, inspect.iscoroutinefunction(p)) == (f.__name__, f.__doc__, inspect.iscoroutinefunction(f))
    ps,fs = inspect.signature(p),inspect.signature(f)
    assert [(x.name, x.kind) for x in ps.parameters.values()] == [(x.name, x.kind) for x in fs.parameters.values()]
    json.dumps(get_schema(p))

def test_values_round_trip(loaded):
    idx,mod = loaded
    from datetime import date
    from pathlib import Path
    out = idx.ns['kinds.everything']('q', when=date(2026, 1, 2), where=Path('/tmp'), color=mod.Color.green, pair=(2, 'b'), uniq={'a'}, only_kw=5)
    assert out['when'] == '2026-01-02' and out['where'] == '/tmp' and out['color'] == 'g' and out['pair'] == [2, 'b'] and out['only_kw'] == 5
    assert out['uniq'] == ['a'] and out['price'] == '1.5'
    assert idx.ns['kinds.google']('Oslo') == {'text': 'Oslo'} # a dataclass comes back as its JSON form
    assert idx.ns['kinds.hidden'](4) == 4
