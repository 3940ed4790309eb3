"""A retry for CPython 3.11's AST race (python/cpython#106905, fixed in 3.12): `compile` raises "AST constructor
recursion depth mismatch" when another thread builds an AST at the same moment (a notebook example's server thread
importing a module for the first time, in a fresh clone where nothing is compiled yet). The notebook runners
(`scripts/build_docs.py`, `tests/test_notebooks.py`) call `retry_cell_parsing()` before running any cell: the error
comes from parsing the cell's text, before any of it ran, so parsing again is safe."""

AST_RACE = 'AST constructor recursion depth mismatch'
PARSE_TRIES = 5 # the race needs two threads parsing at once: a second try almost always finds the other one done

def retry_cell_parsing():
    "Make IPython parse a cell again (up to `PARSE_TRIES` times) when CPython's AST race made the parse fail"
    import time
    from IPython.core.compilerop import CachingCompiler
    parse = CachingCompiler.ast_parse
    if getattr(parse, 'retries_ast_race', False): return
    def ast_parse(self, *args, **kwargs):
        for i in range(PARSE_TRIES):
            try: return parse(self, *args, **kwargs)
            except SystemError as e:
                if AST_RACE not in str(e) or i == PARSE_TRIES - 1: raise
                time.sleep(0.01 * (i + 1))
    ast_parse.retries_ast_race = True
    CachingCompiler.ast_parse = ast_parse
