"Every public parameter has its comment (issue 16): each name in a module's `__all__` is documented where a user reads it"
import dataclasses, importlib, importlib.util, inspect, pkgutil
from fastcore.docments import docments
import toolslm_like
from pathlib import Path
_spec = importlib.util.spec_from_file_location('build_docs', Path(__file__).resolve().parent.parent/'scripts'/'build_docs.py')
_build_docs = importlib.util.module_from_spec(_spec); _spec.loader.exec_module(_build_docs)
comments_of = _build_docs.comments_of # the comments the docs pages show: a function's own, else those of what it stands in for

_SKIP_MODULES = {'_modidx', '__main__'}
_UNNAMED = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)

def public_modules()->list:
    "Every `toolslm_like.*` module a user imports (not `_modidx`, not `__main__`), imported"
    return [importlib.import_module(f"toolslm_like.{m.name}") for m in pkgutil.iter_modules(toolslm_like.__path__)
            if m.name not in _SKIP_MODULES]

def _function_of(o):
    "The plain function behind a class attribute (method, static or class method), or `None` for anything else"
    if isinstance(o, (staticmethod, classmethod)): o = o.__func__
    return o if inspect.isfunction(o) else None

def undocumented(f, # A function (or method, with `self`/`cls` first), or a dataclass (its fields)
                 where:str # Its name in the report, e.g. 'toolloop.Dialect.request'
                )->list: # `where(param)` for each named parameter without a docments comment
    "The named parameters of `f` (not `self`, `cls`, `*args`, `**kwargs`) that have no docments comment"
    docs = comments_of(f)
    params = inspect.signature(f).parameters.values()
    return [f"{where}({p.name})" for p in params
            if p.kind not in _UNNAMED and p.name not in ('self', 'cls') and not docs.get(p.name)]

def public_callables(mod)->list:
    "`(where, function)` for each public function in `mod.__all__`, and each public class's own `__init__` and public methods"
    short,out = mod.__name__.split('.')[-1],[]
    for name in getattr(mod, '__all__', []):
        o = getattr(mod, name)
        if inspect.isfunction(o): out.append((f"{short}.{name}", o))
        elif inspect.isclass(o):
            for attr,v in vars(o).items():
                if (attr == '__init__' or not attr.startswith('_')) and (f := _function_of(v)) is not None:
                    # a dataclass's `__init__` is written by `dataclasses`: its parameters' comments are on the fields
                    out.append((f"{short}.{name}.{attr}", o if attr == '__init__' and dataclasses.is_dataclass(o) else f))
    return out

def missing_comments(mods)->list:
    "Every public parameter of the modules `mods` without a docments comment"
    return [m for mod in mods for where,f in public_callables(mod) for m in undocumented(f, where)]

def test_every_public_parameter_has_its_comment():
    mods = public_modules()
    assert len(mods) > 10 and sum(len(public_callables(m)) for m in mods) > 100 # the walk finds the public surface
    missing = missing_comments(mods)
    assert not missing, f"{len(missing)} public parameters have no docments comment:\n" + '\n'.join(missing)

def _bare(a:int, b:str='x', *args, **kwargs): return a
def _commented(a:int, # The first
               b:str='x', # The second
               *args, **kwargs): return a

@dataclasses.dataclass
class _Point:
    x:float # Across
    y:float = 0

class _Demo:
    def __init__(self, n:int):
        self.n = n
    def run(self, k): return k
    def _private(self, k): return k
    @staticmethod
    def helper(q:int # documented
              ): return q

def _override(a:int, b:str='x', c=0): return a
_override.__delwrap__ = _commented # as `TypeKind.__init_subclass__` sets it on an override

def test_an_override_takes_its_base_comments():
    test_docs = comments_of(_override)
    assert (test_docs['a'], test_docs['b'], test_docs['c']) == ('The first', 'The second', None)
    assert undocumented(_override, 'demo._override') == ['demo._override(c)'] # what the base does not say is still missing

def test_the_check_can_fail():
    "The same helpers find what is missing: a function or a class without comments is reported, parameter by parameter"
    assert undocumented(_bare, 'demo._bare') == ['demo._bare(a)', 'demo._bare(b)']
    assert undocumented(_commented, 'demo._commented') == []
    import types
    mod = types.ModuleType('toolslm_like.demo')
    mod._Demo,mod._Point,mod._bare,mod._commented,mod.__all__ = _Demo,_Point,_bare,_commented,['_Demo', '_Point', '_bare', '_commented']
    assert missing_comments([mod]) == ['demo._Demo.__init__(n)', 'demo._Demo.run(k)', 'demo._Point.__init__(y)', 'demo._bare(a)', 'demo._bare(b)']
