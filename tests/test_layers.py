"""The package's modules form layers: each imports only modules whose notebooks come before its own, so there is no
circle and no import that points forward; no module imports another's private names; and the public surface stays short.

Every import counts, at any depth (a lazy import inside a function too): `from .x import y`, `from toolslm_like.x import y`,
`import toolslm_like.x` and `importlib.import_module('toolslm_like.x')`.
"""
import ast, re
from pathlib import Path
import pytest

root = Path(__file__).resolve().parent.parent
pkg = root/'toolslm_like'
_re_source = re.compile(r'File to edit: \.\./nbs/(\d+[a-z]?)_(\w+)\.ipynb')
_re_number = re.compile(r'^(\d+)([a-z]?)_')

def chapter(number:str)->tuple:
    "A notebook number as an ordered key: '11' < '11a' < '11b' < '12' (a letter numbers a chapter after its notebook)"
    m = _re_number.match(number + '_')
    return int(m[1]), m[2]
HAND_WRITTEN = {'__init__', '__main__', '_modidx', 'jsonschema'} # not exported from a notebook: the package, `python -m`, nbdev's index, an old name
MAX_ALL_NAMES = 120 # all `__all__` together (issue "A house a newcomer can live in")

def notebook_numbers()->dict:
    "{module: the number of the notebook it is exported from}"
    out = {}
    for p in pkg.glob('*.py'):
        if p.stem in HAND_WRITTEN: continue
        m = _re_source.search(p.read_text())
        assert m and m[2] == p.stem, f"{p.name} does not say which notebook it is exported from, or that notebook is named otherwise"
        out[p.stem] = chapter(m[1])
    return out

def module_imports(path:Path)->list:
    "[(module, names imported from it (None for the module itself), line)] of this package, at any depth"
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            mod = node.module or ''
            if node.level == 1: name = mod
            elif mod == 'toolslm_like' or mod.startswith('toolslm_like.'): name = mod[len('toolslm_like.'):] if '.' in mod else ''
            else: continue
            if name: out.append((name.split('.')[0], [a.name for a in node.names], node.lineno))
            else: out += [(a.name, None, node.lineno) for a in node.names if a.name != '__version__']
        elif isinstance(node, ast.Import):
            out += [(a.name.split('.')[1], None, node.lineno) for a in node.names if a.name.startswith('toolslm_like.')]
        elif isinstance(node, ast.Call) and getattr(node.func, 'attr', getattr(node.func, 'id', None)) == 'import_module':
            if node.args and isinstance(node.args[0], ast.Constant) and str(node.args[0].value).startswith('toolslm_like.'):
                out.append((node.args[0].value.split('.')[1], None, node.lineno))
    return out

numbers = notebook_numbers()

def test_every_module_has_a_notebook_number():
    assert len(set(numbers.values())) == len(numbers), f"two modules share a notebook number: {numbers}"

@pytest.mark.parametrize('mod', sorted(numbers))
def test_imports_point_back(mod):
    "A module imports only modules exported from earlier notebooks: no forward import, so no circle"
    bad = [f"line {ln}: imports {m} (notebook {numbers.get(m)}), which comes after {mod} (notebook {numbers[mod]})"
           for m,_,ln in module_imports(pkg/f'{mod}.py') if m in numbers and m != mod and numbers[m] >= numbers[mod]]
    assert not bad, '\n'.join(bad)

@pytest.mark.parametrize('mod', sorted(numbers))
def test_no_private_names_across_modules(mod):
    "A helper two modules share has a public name in the lower one"
    bad = [f"line {ln}: imports {n} from {m}" for m,names,ln in module_imports(pkg/f'{mod}.py') for n in names or ()
           if n.startswith('_') and not n.startswith('__')]
    assert not bad, '\n'.join(bad)

def _cycle(graph:dict):
    "A circle in `graph` ({node: set of nodes}), as a list, or None"
    state,stack = {},[]
    def visit(n):
        state[n] = 1; stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1: return stack[stack.index(m):] + [m]
            if m not in state and (c := visit(m)): return c
        state[n] = 2; stack.pop()
    for n in sorted(graph):
        if n not in state and (c := visit(n)): return c

def test_the_check_finds_a_circle():
    assert _cycle({'a': {'b'}, 'b': {'c'}, 'c': {'a'}}) == ['a', 'b', 'c', 'a']
    assert _cycle({'a': {'b'}, 'b': {'c'}, 'c': set()}) is None

def test_no_circle():
    graph = {p.stem: {m for m,_,_ in module_imports(p) if m != p.stem} for p in pkg.glob('*.py') if p.stem not in ('_modidx',)}
    graph['__init__'] = set() # the package imports its modules lazily, when a name is first used; modules take only `__version__` from it
    assert (c := _cycle(graph)) is None, ' -> '.join(c)

def test_public_surface_is_short():
    "All modules' `__all__` together, the package's own included: at most MAX_ALL_NAMES names"
    import importlib
    sizes = {p.stem: len(getattr(importlib.import_module('toolslm_like' + ('' if p.stem == '__init__' else '.' + p.stem)),
                                 '__all__', ())) for p in sorted(pkg.glob('*.py')) if p.stem not in ('__main__', '_modidx')}
    sizes.pop('jsonschema') # the old name of schemawalk: the same names again
    assert sum(sizes.values()) <= MAX_ALL_NAMES, f"{sum(sizes.values())} names in __all__ (at most {MAX_ALL_NAMES}): {sizes}"

def test_package_names_load_when_used():
    "`from toolslm_like import ...` gives the names a user calls; `import toolslm_like` alone imports none of its modules"
    import json, subprocess, sys
    code = ("import importlib, json, sys, toolslm_like as t\n"
            "loaded = sorted(m for m in sys.modules if m.startswith('toolslm_like.'))\n"
            "wrong = [n for n,m in t._names.items() if getattr(t, n) is not getattr(importlib.import_module('toolslm_like.' + m), n)]\n"
            "print(json.dumps([loaded, wrong, len(t.__all__)]))")
    r = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, cwd=root, timeout=120)
    assert r.returncode == 0, r.stderr
    loaded,wrong,n = json.loads(r.stdout)
    assert loaded == [] and wrong == [] and 20 <= n <= 30, r.stdout

def test_package_refuses_unknown_names():
    import toolslm_like
    with pytest.raises(AttributeError, match="no attribute 'nope'"): toolslm_like.nope

MAX_LINE = 120
@pytest.mark.parametrize('mod', sorted(numbers))
def test_lines_fit(mod):
    "Lines of at most MAX_LINE characters in every exported module"
    long = [f"line {i}: {len(l)} characters" for i,l in enumerate((pkg/f'{mod}.py').read_text().splitlines(), 1) if len(l) > MAX_LINE]
    assert not long, '\n'.join(long[:10]) + (f'\n(and {len(long)-10} more)' if len(long) > 10 else '')

_re_nb_import = re.compile(r'^\s*(?:from|import)\s+toolslm_like\.(\w+)', re.M)
notebook_files = sorted((root/'nbs').glob('[0-9][0-9]*_*.ipynb'))

@pytest.mark.parametrize('nb', notebook_files, ids=[p.stem for p in notebook_files])
def test_notebooks_import_earlier_modules(nb):
    "A notebook's cells (its examples and tests too) import only its own module and those of earlier notebooks"
    import json
    me,bad = chapter(nb.name.split('_')[0]),[]
    for c in json.loads(nb.read_text())['cells']:
        if c['cell_type'] != 'code': continue
        for m in _re_nb_import.findall(''.join(c['source'])):
            n = numbers.get('schemawalk' if m == 'jsonschema' else m)
            if n is not None and n > me: bad.append(f"cell {c.get('id')}: imports toolslm_like.{m} (notebook {n})")
    assert not bad, '\n'.join(bad)
