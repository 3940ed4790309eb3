"""scripts/ast_race.py: the notebook runners parse a cell again when CPython 3.11's AST race (python/cpython#106905)
made the parse fail, and let every other error through"""
import sys
from pathlib import Path
import pytest
from IPython.core.compilerop import CachingCompiler

sys.path.insert(0, str(Path(__file__).resolve().parent.parent/'scripts'))
from ast_race import AST_RACE, PARSE_TRIES, retry_cell_parsing

@pytest.fixture
def parse_failing(monkeypatch):
    "CachingCompiler.ast_parse made to fail its first `n[0]` calls with `error`, then parse"
    real,state = CachingCompiler.ast_parse,{'left': 0, 'error': None, 'calls': 0}
    def parse(self, *a, **kw):
        state['calls'] += 1
        if state['left']: state['left'] -= 1; raise state['error']
        return real(self, *a, **kw)
    monkeypatch.setattr(CachingCompiler, 'ast_parse', parse)
    return state

def test_a_race_is_parsed_again(parse_failing):
    parse_failing.update(left=2, error=SystemError(f'{AST_RACE} (before=36, after=142)'))
    retry_cell_parsing(); retry_cell_parsing() # the second call adds no second layer
    tree = CachingCompiler().ast_parse('x = 1 + 1')
    assert type(tree).__name__ == 'Module' and parse_failing['calls'] == 3

def test_a_race_that_never_ends_and_other_errors_are_raised(parse_failing):
    retry_cell_parsing()
    parse_failing.update(left=PARSE_TRIES, error=SystemError(AST_RACE))
    with pytest.raises(SystemError, match=AST_RACE): CachingCompiler().ast_parse('1')
    assert parse_failing['calls'] == PARSE_TRIES
    parse_failing.update(left=1, error=SystemError('something else'), calls=0)
    with pytest.raises(SystemError, match='something else'): CachingCompiler().ast_parse('1')
    assert parse_failing['calls'] == 1
