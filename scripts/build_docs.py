#!/usr/bin/env python
"""Build the docs site offline into `_docs/` from the notebooks (MkDocs, Material theme), and README.md from `nbs/index.ipynb`.

    .venv/bin/python scripts/build_docs.py           # writes _docs/ and README.md
    .venv/bin/python scripts/build_docs.py --check   # also fails if README.md is stale or a page shows what it must not
    .venv/bin/python scripts/build_docs.py --only funccall toolloop  # runs just those, reusing the others from _proc

Each notebook is run from top to bottom in a fresh interpreter (as `nbdev-test` runs it), with the `show_doc`
cells nbdev adds for every exported function and class, so the pages show the examples' real outputs and the
API docs. Then nbdev's own docs processors (the ones `nbdev-proc-nbs` applies: frontmatter, hidden and exported
cells, links between names, ...) turn it into `_proc/<notebook>.ipynb`. Each processed notebook becomes one
Markdown page in `_proc/_pages/`, and MkDocs with the Material theme (`mkdocs.yml`) renders them into the site:
search over every page, a contents list beside the text, copy buttons, heading anchors, a phone layout. Search runs
in a web worker, which browsers do not start for `file://` pages: serve the site (`.venv/bin/python -m http.server -d _docs`).

`show_doc` renders with `ApiEntry` here: signatures as a reader writes them (`class SchemaError(ValueError)`, no
`__main__.`, no `NoneType` made up for an unannotated `x=None`, public module paths instead of private ones), a
dataclass as its fields with their comments. Every name a module exports gets an entry: its `__all__` and its
constants (`add_missing_entries`: a value as its source line, a re-export linked to its own page). The navigation
groups the pages into guides and reference (`NAV_GROUPS`). Signatures and outputs wrap on narrow screens (docs/hooks.py
and docs/site.css), and a long dict, list or JSON output is laid out over lines (`pretty_output`).

The build records each notebook it ran and passed in `_proc/notebook_runs.json` (`run_record`: the interpreter, hashes
of the notebook and the library), and writes the README it generated to `_proc/README.md` (also with `--check`): CI builds
once and points the tests at it (`TOOLSLM_LIKE_DOCS_BUILT`), so the docs checks read this build and, on the same
interpreter, `tests/test_notebooks.py` does not run a notebook again.

`nbdev-proc-nbs` itself is not called: before processing it tries to install Quarto (with `sudo` and `curl`), and
its `show_doc` step runs only the import and export cells, so a page whose examples were never run has no outputs.
`--quarto-check` also puts each notebook through exactly that processing, and fails on the notebooks that
publishing with `nbdev-docs` would fail on.
"""
import argparse, ast, concurrent.futures, difflib, hashlib, html, html.parser, importlib, importlib.util, inspect, json, os, posixpath, re, shutil, subprocess, sys
from dataclasses import dataclass
from pathlib import Path

root = Path(__file__).resolve().parent.parent

# Files under `nbs/` that are the site's sources or config, never copied into the site as they are
_not_assets = {'.ipynb', '.yml', '.yaml', '.qmd', '.md', '.py', '.pyc', '.toml', '.css'}
# Seconds one notebook may take to run before the build gives up on it (the notebooks run in seconds)
NOTEBOOK_TIMEOUT = 900

class BuildError(RuntimeError):
    "The site could not be built: names the notebook and what went wrong"

class QuartoError(BuildError):
    "A notebook that this build renders but that publishing with `nbdev-docs` (Quarto) would fail on"
# How a notebook's child process says which of the two went wrong
_EXIT_FAILED,_EXIT_QUARTO = 1,3

def _hooks():
    "docs/hooks.py, the MkDocs hooks: its `slugify` is how the site makes heading ids"
    spec = importlib.util.spec_from_file_location('toolslm_like_docs_hooks', root/'docs'/'hooks.py')
    mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
    return mod
slugify = _hooks().slugify

# ---------------------------------------------------------------------------------------------------------------
# API entries: what `show_doc` shows for a function or class

_re_dotted = re.compile(r'(?<![\w.])(?:[A-Za-z_]\w*\.)+[A-Za-z_]\w*')

def public_name(dotted:str)->str:
    "The dotted name `dotted` as a reader imports it: no `__main__.`/`typing.`/`builtins.`, no private module in the path"
    parts = dotted.split('.')
    if parts[0] in ('__main__', 'typing', 'builtins'): return '.'.join(parts[1:])
    private = next((i for i,p in enumerate(parts[:-1]) if p.startswith('_') and not p.startswith('__')), None)
    if private is None or private == 0: return dotted
    mod,name = '.'.join(parts[:private]),parts[-1]
    try: found = hasattr(sys.modules.get(mod) or importlib.import_module(mod), name)
    except Exception: found = False
    return f'{mod}.{name}' if found else name  # `concurrent.futures._base.Executor` -> `concurrent.futures.Executor`

def clean_names(sig:str)->str:
    "Signature text `sig` with every dotted name made public (see `public_name`) and `NoneType` written `None`"
    return re.sub(r'\bNoneType\b', 'None', _re_dotted.sub(lambda m: public_name(m[0]), sig))

def _type_name(t)->str:
    return t.__qualname__ if inspect.isclass(t) else clean_names(inspect.formatannotation(t))

def class_signature(cls:type, name:str, text:str)->str:
    """`class Name(Bases):`, and the constructor's parameters when the class has its own: `text` is fastcore's
    signature of `cls` (`def Name(\\n    params...\\n):`), which reads like a function"""
    bases = [b for b in getattr(cls, '__orig_bases__', cls.__bases__) if b is not object and not getattr(b, '__name__', 'x').startswith('_')]
    head = f"class {name}{'(' + ', '.join(map(_type_name, bases)) + ')' if bases else ''}:"
    try: params = list(inspect.signature(cls).parameters.values())
    except (TypeError, ValueError): params = []
    import enum
    lines = text.split('\n')
    var = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    if (issubclass(cls, enum.Enum) or all(p.kind in var for p in params) or len(lines) < 3
        or not re.match(rf'(async )?def {re.escape(name.split(".")[-1])}\($', lines[0])): return head
    init = ['def __init__(', '    self,', '    ' + lines[1].lstrip()] + lines[2:]
    return head + '\n' + '\n'.join('    ' + l for l in init)

def _drop_made_up_none(dm):
    "fastcore annotates an unannotated `x=None` with the default's type, `NoneType`: such a parameter shows no type"
    for p in dm.dm.values():
        if p.get('anno') is type(None) and p.get('default', inspect.Parameter.empty) is None: p['anno'] = inspect.Parameter.empty

def comments_of(f)->dict:
    "`docments(f)`, where a parameter without a comment takes the one of the function `f` stands in for (`f.__delwrap__`)"
    # fastcore's docments walks `__delwrap__` too, but stops at a parameter the override names without a comment
    from fastcore.docments import docments
    docs = dict(docments(f))
    if (base := getattr(f, '__delwrap__', None)) is not None:
        inherited = comments_of(base)
        docs.update({k: inherited[k] for k,v in docs.items() if not v and inherited.get(k)})
    return docs

def _inherit_comments(dm):
    "Parameters of an API entry without a comment show the comment of the function it stands in for (`__delwrap__`)"
    if getattr(dm.obj, '__delwrap__', None) is None: return
    docs = comments_of(dm.obj)
    for k,p in dm.dm.items():
        if k != 'return' and not p.get('docment') and docs.get(k): p['docment'] = docs[k]

def _md_escape(name:str)->str: return re.sub(r'([_*\[\]`\\])', r'\\\1', name)

def source_twin(obj):
    """`obj` as the exported module defines it, when `obj` was defined in a notebook (`__main__`): its source can be
    read there (`inspect` finds no file for a class defined in a notebook), so the comments on its fields too"""
    if getattr(obj, '__module__', None) != '__main__' or not _export_module: return obj
    try: mod = importlib.import_module(_export_module)
    except Exception: return obj
    found = mod
    for part in getattr(obj, '__qualname__', '').split('.'): found = getattr(found, part, None)
    return found if found is not None and type(found) is type(obj) else obj

_export_module = None # the module the notebook being processed exports to (`#| default_exp`), as `lib.module`

def field_comments(cls:type)->dict:
    """{field: the `# comment` beside it} of the fields class `cls` declares in its body (the source of the exported
    module's class for one a notebook defines; fastcore's `docments` reads no class defined in `__main__`)"""
    import io, textwrap, tokenize
    try: src = textwrap.dedent(inspect.getsource(source_twin(cls)))
    except (OSError, TypeError): return {}
    comments = {t.start[0]: t.string.lstrip('#').strip() for t in tokenize.generate_tokens(io.StringIO(src).readline)
                if t.type == tokenize.COMMENT}
    body = next((n.body for n in ast.parse(src).body if isinstance(n, ast.ClassDef)), [])
    return {n.target.id: comments[n.end_lineno] for n in body
            if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name) and n.end_lineno in comments}

def dataclass_signature(cls:type, name:str)->str:
    """A dataclass as its source reads: `@dataclass`, `class Name(Bases):`, then one public field a line with its type,
    default and the `# comment` beside it in the source (inherited fields take their class's comments)"""
    import dataclasses
    docs = {}
    for c in reversed(cls.__mro__):
        if dataclasses.is_dataclass(c): docs.update(field_comments(c))
    params = cls.__dataclass_params__
    opts = [f'{k}=True' for k in ('frozen', 'kw_only', 'slots') if getattr(params, k, False)]
    head = class_signature(cls, name, '').split('\n')[0]
    lines = [f"@dataclass{'(' + ', '.join(opts) + ')' if opts else ''}", head]
    for f in dataclasses.fields(cls):
        if f.name.startswith('_'): continue
        t = f.type if isinstance(f.type, str) else _type_name(f.type)
        d = (f'={f.default!r}' if f.default is not dataclasses.MISSING else
             f'=field(default_factory={getattr(f.default_factory, "__qualname__", repr(f.default_factory))})'
             if f.default_factory is not dataclasses.MISSING else '')
        lines.append(f"    {f.name}:{t}{d}{' # ' + docs[f.name] if docs.get(f.name) else ''}")
    return '\n'.join(lines)

def is_typeddict(cls)->bool:
    "Whether `cls` is a TypedDict class (`typing`'s or `typing_extensions`')"
    return isinstance(cls, type) and issubclass(cls, dict) and hasattr(cls, '__total__') and hasattr(cls, '__required_keys__')

def typeddict_signature(cls:type, name:str)->str:
    """A TypedDict as its source reads: `class Name(TypedDict, total=False):`, then one key a line with its type and the
    `# comment` beside it in the source (a key only a base class declares: its type as Python has it)"""
    import textwrap
    try: body = next((n.body for n in ast.parse(textwrap.dedent(inspect.getsource(source_twin(cls)))).body
                      if isinstance(n, ast.ClassDef)), [])
    except (OSError, TypeError, SyntaxError): body = []
    written = {n.target.id: ast.unparse(n.annotation) for n in body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
    docs = field_comments(cls)
    bases = [b.__name__ for b in getattr(cls, '__orig_bases__', ()) if getattr(b, '__name__', '_')[:1] != '_'] or ['TypedDict']
    lines = [f"class {name}({', '.join(bases)}{'' if cls.__total__ else ', total=False'}):"]
    for k,t in cls.__annotations__.items():
        lines.append(f"    {k}:{written.get(k) or _type_name(t)}{' # ' + docs[k] if docs.get(k) else ''}")
    return '\n'.join(lines)

def api_entry_markdown(r)->str:
    "The Markdown of one API entry: heading (with the id nbdev's links use), a link to its source, signature, docstring"
    from fastcore.docments import DocmentText
    from nbdev.doclinks import NbdevLookup
    import dataclasses
    text = str(r.dm)
    if inspect.isclass(r.sym) and dataclasses.is_dataclass(r.sym): text = dataclass_signature(r.sym, r.nm)
    elif is_typeddict(r.sym): text = typeddict_signature(r.sym, r.nm)
    elif isinstance(r.dm, DocmentText) and inspect.isclass(r.sym): text = class_signature(r.sym, r.nm, text)
    h = '#' * r.title_level
    md = f'{h} {_md_escape(r.nm)} {{ #{r.nm.lower()} .api-name }}\n\n'
    if (src := NbdevLookup().code(r.fn)):
        md += f'[source]({src}){{ .api-source title="The source of {r.nm} on GitHub" }}\n\n'
    md += f'<div class="api-signature" markdown>\n\n```python\n{clean_names(text)}\n```\n\n</div>\n'
    if r.docs: md += '\n' + re.sub(r'^(\s*)(.+)', r'\1*\2*', r.docs, count=1) + '\n'
    return md

# ---------------------------------------------------------------------------------------------------------------
# API entries for every exported name: `show_doc` covers functions and classes an `#| export` cell defines; the names
# of a module's `__all__` bound otherwise (a re-export, a value, a class in an `#| exporti` cell) and its constants
# (public UPPER_CASE names an export cell assigns, `exporti` too: they import all the same) get their entry here, after the cell that binds them

_re_export_cell = re.compile(r'^\s*#\|\s*(export|exports|exporti)\b', re.M)
_re_constant = re.compile(r'[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*')

def bound_names(tree)->list:
    "The names the top-level statements of `tree` bind: definitions, assignments and imports, in order"
    out = []
    for n in tree.body:
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)): out.append((n.name, n))
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            out += [((a.asname or a.name).split('.')[0], n) for a in n.names if a.name != '*']
        elif isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target]):
                out += [(e.id, n) for e in ast.walk(t) if isinstance(e, ast.Name)]
    return out

def _parsed(src:str):
    try: return ast.parse(re.sub(r'^\s*[%!].*$', '', src, flags=re.M))
    except SyntaxError: return None

def entries_wanted(cells:list, mod)->list:
    """[(name, index of the cell binding it or None, whether it imports it)] of the names without an API entry in `cells`
    (a notebook with its `show_doc` cells) that need one: those of `mod.__all__`, and the constants its export cells assign"""
    shown = {m[1] for c in cells if getattr(c, 'has_sd', False) and (m := re.match(r'\s*show_doc\((?:\w+\.)*(\w+)\)', c.source))}
    binds,constants = {},[]
    for i,c in enumerate(cells):
        if c.cell_type != 'code' or not (m := _re_export_cell.search(c.source)) or not (tree := _parsed(c.source)): continue
        for name,node in bound_names(tree):
            binds.setdefault(name, (i, isinstance(node, (ast.Import, ast.ImportFrom))))
            if (isinstance(node, (ast.Assign, ast.AnnAssign)) and _re_constant.fullmatch(name)
                and name not in constants): constants.append(name)
    names = [n for n in dict.fromkeys([*getattr(mod, '__all__', []), *constants]) if n not in shown]
    return [(n, *binds.get(n, (None, False))) for n in names]

# The section that ends a page with the entries of names its module exports but does not define (re-exports), and of
# those it defines before the page's text begins (its first `##` section): a page starts with its text, not entries
ALSO_EXPORTED = ('## Also exported here\n\nNames this module exports besides those above: what it takes from other modules '
                 '(documented there, linked), and the values it defines first.')

def _statement(mod_src:str, name:str):
    "The top-level statement of module source `mod_src` that binds `name` (its last), and the module's lines"
    tree,lines = ast.parse(mod_src),mod_src.splitlines()
    found = [node for n,node in bound_names(tree) if n == name]
    return (found[-1] if found else None),lines

def _page_of_module(module:str):
    "The page documenting `module` of this library (`typekinds.html`), from nbdev's index of its names, or None"
    from nbdev.config import get_config
    try: syms = importlib.import_module(f'{get_config().lib_name}._modidx').d['syms'].get(module) or {}
    except Exception: return None
    return next((v[0].split('#')[0] for v in syms.values()), None)

def value_entry_markdown(name:str, mod, level:int=4)->str:
    """The API entry of `name`, which module `mod` binds by an assignment (its source lines, with the comments beside
    and under them, and its value when the source does not spell it) or an import (where it comes from, linked)"""
    from nbdev.config import get_config
    cfg = get_config()
    rel = Path(cfg.lib_path.name, *mod.__name__.split('.')[1:]).with_suffix('.py') # as the repository holds it
    file = cfg.lib_path.parent/rel if (cfg.lib_path.parent/rel).is_file() else Path(mod.__file__)
    node,lines = _statement(file.read_text(), name)
    if node is None: raise BuildError(f"{mod.__name__}.{name} is exported, but no statement of {file.name} binds it")
    src_url = f"{cfg.git_url}/blob/{cfg.branch}/{(cfg.lib_path.relative_to(cfg.config_path).parent/rel).as_posix()}#L{node.lineno}"
    md = (f'{"#" * level} {_md_escape(name)} {{ #{name.lower()} .api-name }}\n\n'
          f'[source]({src_url}){{ .api-source title="The source of {name} on GitHub" }}\n\n')
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        alias = next(a for a in node.names if (a.asname or a.name).split('.')[0] == name)
        origin = node.module or ''
        if isinstance(node, ast.ImportFrom) and node.level:
            origin = '.'.join(mod.__name__.split('.')[:-node.level] + ([origin] if origin else []))
        code = (f"from {origin} import {alias.name}" if isinstance(node, ast.ImportFrom) else f"import {alias.name}") + \
               (f" as {alias.asname}" if alias.asname else '')
        md += f'<div class="api-signature" markdown>\n\n```python\n{code}\n```\n\n</div>\n'
        page = _page_of_module(origin)
        where = f'[`{alias.name}`]({page}#{alias.name.lower()})' if page else f'`{origin}.{alias.name}`'
        return md + f'\n*{where} of `{origin}`, exported from here too*\n'
    end = node.end_lineno
    while end < len(lines) and lines[end].strip().startswith('#') and lines[end][:1].isspace(): end += 1
    code = '\n'.join(lines[node.lineno-1:end])
    md += f'<div class="api-signature" markdown>\n\n{_fence(code, "python")}\n\n</div>\n'
    try: ast.literal_eval(node.value)
    except Exception:
        try: shown = repr(getattr(mod, name, None))
        except Exception: shown = '' # an int longer than Python will write out, say: its source says what it is
        if shown and len(shown) <= 200 and shown not in code and not re.search(r' at 0x[0-9a-f]+', shown): md += f'\n*Its value:* <code>{html.escape(shown)}</code>\n'
    return md

def _needs_show_doc(obj, module:str)->bool:
    """Whether `obj`, which `module` exports, gets a `show_doc` entry: a function or class of this library whose own
    module does not export it (else its entry is there; another library's is shown as the statement binding it)"""
    if not (inspect.isclass(obj) or inspect.isfunction(obj)): return False
    home = getattr(obj, '__module__', None) or ''
    if home == module: return True
    if not home.startswith(module.split('.')[0] + '.'): return False
    try: return obj.__name__ not in getattr(importlib.import_module(home), '__all__', ())
    except Exception: return True

def add_missing_entries(cells:list, module:str)->list:
    """`cells` with an API entry cell after the cell binding each name `entries_wanted` finds: a `show_doc` cell for a
    function or class, a Markdown cell (its source set by `value_entry_markdown` after nbdev's processors, which would
    add links inside its links) for a value or a re-export documented on another page"""
    from fastcore.nbio import mk_cell
    try: mod = importlib.import_module(module)
    except Exception: return cells
    after = {}
    text_starts = next((i for i,c in enumerate(cells) if c.cell_type == 'markdown' and re.match(r'##\s', c.source)), 0)
    for name,i,imported in entries_wanted(cells, mod):
        obj = getattr(mod, name, None)
        if _needs_show_doc(obj, module):
            cell = mk_cell(f'show_doc({name})'); cell.has_sd = True
        else:
            cell = mk_cell(f'API entry of {name}', 'markdown'); cell.metadata['api_entry'] = name
            cell.entry_ = lambda name=name: value_entry_markdown(name, mod)
        if imported or i is None or i < text_starts: i = None # to the page's end
        else:
            while i+1 < len(cells) and getattr(cells[i+1], 'has_sd', False): i += 1
        after.setdefault(i, []).append(cell)
    end = [mk_cell(ALSO_EXPORTED, 'markdown'), *after[None]] if after.get(None) else []
    out = [c for i,c in enumerate(cells) for c in [c, *after.get(i, [])]] + end
    for i,c in enumerate(out): c.idx_ = i
    return out

def _api_entry_renderer():
    "nbdev's `show_doc` renderer with `api_entry_markdown` as its Markdown (a class made when nbdev is imported)"
    from fastcore.docments import DocmentText
    from nbdev.showdoc import BasicMarkdownRenderer
    class ApiEntry(BasicMarkdownRenderer):
        "`show_doc`'s renderer for the site: see `api_entry_markdown`"
        def __init__(self, sym, name=None, title_level=3, maxline=110):
            super().__init__(sym, name=name, title_level=title_level, maxline=maxline)
            if isinstance(self.dm, DocmentText): _drop_made_up_none(self.dm); _inherit_comments(self.dm)
        def _repr_markdown_(self): return api_entry_markdown(self)
    return ApiEntry

# ---------------------------------------------------------------------------------------------------------------
# Processing: run one notebook and apply nbdev's docs processors (in a child interpreter, one per notebook)

def _as_text(v): return ''.join(v) if isinstance(v, list) else v

def _joined_outputs(outputs):
    "Outputs with multi-line text joined into strings, as nbdev's processors expect"
    for o in outputs:
        if 'text' in o: o['text'] = _as_text(o['text'])
        for mime,v in (o.get('data') or {}).items(): o['data'][mime] = _as_text(v)
    return outputs

def process_notebook(src:Path, dest:Path):
    "Run notebook `src` with nbdev's `show_doc` cells added, then apply nbdev's docs processors; write it to `dest`"
    from fastcore.nbio import read_nb, write_nb
    from fastcore.xtras import working_directory
    from execnb.shell import CaptureShell
    import nbdev.showdoc
    from nbdev.config import get_config
    from nbdev.processors import FilterDefaults, add_show_docs, exec_show_docs
    from nbdev.test import _skip_cell
    nbdev.showdoc.BasicMarkdownRenderer = _api_entry_renderer() # the renderer every `show_doc` call uses by default
    src = Path(src).resolve()
    cfg = get_config(src.parent)
    nb = read_nb(src)
    proc = FilterDefaults().nb_proc(nb)
    procs = list(proc.procs)
    # nbdev's processors, in nbdev's order, with its `exec_show_docs` (imports, exports and show_doc only) replaced
    # by running every cell right after `add_show_docs`: examples get their outputs and show_doc sees the real objects
    split = next((i+1 for i,p in enumerate(procs) if isinstance(p, add_show_docs)),
                 next((i for i,p in enumerate(procs) if isinstance(p, exec_show_docs)), 0))
    for p in procs[:split]: proc._proc(p)
    nb.cells = api_docs_in_source_order(nb.cells)
    sys.path.insert(0, str(cfg.config_path)) # the project's own package, as the notebook imports it
    global _export_module
    if (exp := next((d['default_exp'] for c in nb.cells if (d := getattr(c, 'directives_', None) or {}).get('default_exp')), None)):
        _export_module = f'{cfg.lib_name}.{str(exp).split()[0]}'
        nb.cells = add_missing_entries(nb.cells, _export_module)
    flags = cfg.tst_flags.split() if isinstance(cfg.tst_flags, str) else list(cfg.tst_flags or [])
    skip = _skip_cell(nb, flags)
    os.environ['IN_TEST'] = '1'
    sys.path.insert(0, str(root/'scripts'))
    from ast_race import retry_cell_parsing
    retry_cell_parsing() # CPython 3.11's AST race with an example's threads (python/cpython#106905)
    _nb_outputs().plain_cell_warnings() # a warning at a cell's line names it `cell line N`, not IPython's file name
    shell = CaptureShell(src, profile=bool(cfg.get('exec_profile'))) # as nbdev-test makes it
    shell.run_cell('from nbdev.showdoc import show_doc')
    with working_directory(src.parent):
        for cell in nb.cells:
            if skip(cell): continue
            shell.cell(cell, timeout=cfg.cell_timeout or None)
            if shell.exc is not None: raise BuildError(shell.prettytb(fname=src))
            _joined_outputs(cell.outputs)
    for p in procs[split:]:
        if not isinstance(p, exec_show_docs): proc._proc(p)
    for cell in nb.cells:
        if (entry := getattr(cell, 'entry_', None)): cell.source = entry()
    dest.parent.mkdir(parents=True, exist_ok=True)
    write_nb(nb, dest)

_re_private_doc = re.compile(r'show_doc\((?:\w+\.)*_(?!_)\w*\.')

def api_docs_in_source_order(cells:list)->list:
    """`cells` with each run of `show_doc` cells nbdev added put in the order the names are defined (nbdev adds them
    reversed), less those of methods `@patch` adds to a private class (`_Strict.typed`): a reader cannot call those"""
    out,run = [],[]
    for c in cells + [None]:
        if c is not None and getattr(c, 'has_sd', False):
            if not _re_private_doc.match(c.source): run.append(c)
            continue
        out += run[::-1] + ([c] if c is not None else [])
        run = []
    for i,c in enumerate(out): c.idx_ = i
    return out

def nbdev_docs_processing(src:Path):
    "Process `src` exactly as `nbdev-docs` does before Quarto renders it (its `exec_show_docs` runs only import, export and show_doc cells)"
    import tempfile, warnings
    from nbdev.processors import FilterDefaults
    from nbdev.serve_drv import main as nbdev_process
    with tempfile.TemporaryDirectory() as d, warnings.catch_warnings():
        warnings.simplefilter('ignore') # nbdev warns about every cell mixing imports and code; the one that fails is named below
        try: nbdev_process((Path(src), Path(d)/Path(src).name, FilterDefaults))
        except Exception as e:
            lines = str(e).splitlines() # nbdev's message: the cell's number, its whole source, then the error
            short = '\n'.join(lines[:4] + ['...'] + lines[-1:] if len(lines) > 6 else lines)
            raise QuartoError(f"{Path(src).name} cannot be published with `nbdev-docs` (Quarto): nbdev's processing fails:\n{short}\n"
                             "When documenting, nbdev runs only cells with imports or exports: a cell that mixes imports with code using "
                             "earlier cells fails there. Put the imports in a cell of their own.") from None

# The build's record of the notebooks it ran, in the processed notebooks' folder: {notebook under nbs: `run_record`}.
# `tests/test_notebooks.py` reads it (`TOOLSLM_LIKE_DOCS_BUILT`): on the interpreter that built the site, a notebook whose
# record matches is not run a second time, as CI's `.ci/run` builds the site once and then runs the tests
RUNS = 'notebook_runs.json'

def run_record(nb:Path, lib:Path)->dict:
    """What a passing run of notebook `nb` tells: the interpreter it ran on (`sys.version`), a hash of the notebook's text
    and one of the library's modules (under `lib`) it imported; equal records mean the same run"""
    h = hashlib.sha256()
    for p in sorted(Path(lib).rglob('*.py')): h.update(p.relative_to(lib).as_posix().encode() + b'\0' + p.read_bytes())
    return {'python': sys.version, 'notebook': hashlib.sha256(Path(nb).read_bytes()).hexdigest(), 'library': h.hexdigest(), 'passed': True}

def _run_child(src:Path, dest:Path, quarto_check:bool=False):
    cmd = [sys.executable, str(Path(__file__).resolve()), '--process-one', str(src), str(dest)] + (['--quarto-check'] if quarto_check else [])
    try: r = subprocess.run(cmd, cwd=src.parent, capture_output=True, text=True, timeout=NOTEBOOK_TIMEOUT)
    except subprocess.TimeoutExpired: raise BuildError(f"{src.name} ran for longer than {NOTEBOOK_TIMEOUT}s: make its cells faster") from None
    if r.returncode == _EXIT_QUARTO: raise QuartoError(r.stderr.strip()[-6000:])
    if r.returncode != 0:
        raise BuildError(f"{src.name} failed to run, so its page cannot be built; run `nbdev-test {src}` to see why:\n"
                         f"{r.stderr[-6000:]}")

def find_notebooks(nbs:Path)->list[Path]:
    "The notebooks that become pages: every `.ipynb` under `nbs`, but not in or named with a leading `_` or `.`"
    return sorted(p for p in nbs.rglob('*.ipynb') if not any(s[0] in '_.' for s in p.relative_to(nbs).parts))

def chosen(nbs_list:list[Path], nbs:Path, only:list[str])->list[Path]:
    "The notebooks of `nbs_list` that `only` names: by path under `nbs`, file name, stem, or stem less its number (`funccall`)"
    names = lambda p: {p.relative_to(nbs).as_posix(), p.name, p.stem, re.sub(r'^\d+_', '', p.stem)}
    found = [p for p in nbs_list if names(p) & set(only)]
    if (unknown := [o for o in only if not any(o in names(p) for p in nbs_list)]):
        raise BuildError(f"--only names no notebook: {', '.join(unknown)}; the notebooks: {', '.join(p.name for p in nbs_list)}")
    return found

def process_all(nbs:Path, proc:Path, workers:int, quarto_check:bool=False, only:list[str]=None, lib:Path=None)->list[Path]:
    """Run and process every notebook in `nbs` into `proc`, `workers` at a time; the processed paths. With `only`,
    just the notebooks it names (see `chosen`): the others' processed notebooks in `proc` are kept from an earlier build.
    Each notebook that ran and passed gets its `run_record` (the library's modules under `lib`) in `proc/RUNS`"""
    nbs_list = find_notebooks(nbs)
    if not nbs_list: raise BuildError(f"No notebooks found in {nbs}")
    dests = [proc/p.relative_to(nbs) for p in nbs_list]
    todo = chosen(nbs_list, nbs, only) if only else nbs_list
    if only and (stale := [d.name for s,d in zip(nbs_list, dests) if s not in todo and not d.is_file()]):
        raise BuildError(f"--only reuses the other notebooks from {proc}, but {', '.join(stale)} are not there: build them all once first")
    def run(s, d):
        record = run_record(s, lib) if lib else None # before the run: the notebook as it was read
        _run_child(s, d, quarto_check)
        return record
    runs = proc/RUNS
    records = json.loads(runs.read_text()) if only and runs.is_file() else {}
    with concurrent.futures.ThreadPoolExecutor(max(1, workers)) as ex:
        futs = {ex.submit(run, s, d): s.relative_to(nbs).as_posix() for s,d in zip(nbs_list, dests) if s in todo}
        errors = [str(e) for f in futs if (e := f.exception()) is not None]
    for f,key in futs.items(): # a notebook that failed (or ran without a record) has none: the tests run it
        if f.exception() is None and f.result(): records[key] = f.result()
        else: records.pop(key, None)
    proc.mkdir(parents=True, exist_ok=True)
    runs.write_text(json.dumps(records, indent=1, sort_keys=True) + '\n')
    if errors: raise BuildError('\n\n'.join(errors))
    return dests

# ---------------------------------------------------------------------------------------------------------------
# Processed notebooks as Markdown pages (for MkDocs) and as README.md (for GitHub and PyPI)

_re_directive = re.compile(r'^\s*#\|\s*([\w-]+)\s*:?\s*(.*?)\s*$')

def split_directives(source:str)->tuple[dict,str]:
    "The Quarto cell options (`#| echo: false`) at the top of `source`, and the code below them"
    lines,opts = source.splitlines(),{}
    while lines and (m := _re_directive.match(lines[0])):
        opts[m[1]] = m[2].strip('"\'')
        lines.pop(0)
    return opts, '\n'.join(lines).strip('\n')

def _false(v): return str(v).lower() == 'false'

@dataclass
class Page:
    "A page of the site: the processed notebook it comes from and where it goes"
    nb: dict     # the processed notebook
    path: str    # the page's path in the site, '/'-separated, e.g. 'funccall.html'
    title: str
    description: str = ''
    source: str = '' # the notebook it was made from, relative to nbs
    @property
    def md(self)->str: return posixpath.splitext(self.path)[0] + '.md'  # its Markdown file, which MkDocs renders to `path`

def read_page(proc_nb:Path, proc:Path)->Page:
    "The `Page` for processed notebook `proc_nb` (under `proc`): its frontmatter gives title, description and file name"
    import yaml
    from nbdev.config import nbpath2html
    nb = json.loads(proc_nb.read_text())
    rel = proc_nb.relative_to(proc)
    fm,cells = {},nb['cells']
    if cells and cells[0]['cell_type'] == 'raw' and _as_text(cells[0]['source']).lstrip().startswith('---'):
        fm = yaml.safe_load(_as_text(cells[0]['source']).strip().strip('-')) or {}
        nb['cells'] = cells[1:]
    out = fm.get('output-file') or nbpath2html(rel).name
    return Page(nb, (rel.parent/out).as_posix(), str(fm.get('title') or rel.stem), str(fm.get('description') or ''), rel.as_posix())

_re_ansi = re.compile(r'\x1B(?:[@-Z\\-_]|\[[0-?]*[ -/]*[@-~])')
def strip_ansi(s:str)->str: return _re_ansi.sub('', s)

def _fence(text:str, info:str='')->str:
    "`text` as a fenced code block whose fence is longer than any run of backticks inside it"
    n = max([3] + [len(m) + 1 for m in re.findall(r'`{3,}', text)])
    return f"{'`'*n}{info}\n{text.rstrip()}\n{'`'*n}"

_re_fence = re.compile(r'^\s*(`{3,}|~{3,})')
_re_div_open = re.compile(r'^:::+\s*(?:\{([^}]*)\}|([\w-]+))\s*$')
_re_div_close = re.compile(r'^:::+\s*$')
_callouts = {'note': 'Note', 'tip': 'Tip', 'warning': 'Warning', 'important': 'Important', 'caution': 'Caution'}

def quarto_divs(md:str)->str:
    "Pandoc fenced divs (`::: {.callout-note}` ... `:::`) as HTML divs whose content is Markdown; callouts as admonitions"
    out,fence = [],None
    for line in md.splitlines():
        m = _re_fence.match(line)
        if fence:
            if m and m[1][0] == fence[0] and len(m[1]) >= len(fence): fence = None
        elif m: fence = m[1]
        elif (d := _re_div_open.match(line)):
            classes = [t[1:] for t in (d[1] if d[1] is not None else '.'+d[2]).split() if t.startswith('.')]
            kind = next((c[8:] for c in classes if c[8:] in _callouts and c.startswith('callout-')), None)
            if kind: out += ['', f'<div class="admonition {kind}" markdown>', f'<p class="admonition-title">{_callouts[kind]}</p>', '']
            else: out += ['', f'<div class="{html.escape(" ".join(classes))}" markdown>', '']
            continue
        elif _re_div_close.match(line):
            out += ['', '</div>', '']; continue
        out.append(line)
    return '\n'.join(out)

_re_md_link = re.compile(r'(\]\()([^)\s]+)(\))')
_re_code_link = re.compile(r'\[(`[^`\n]+`)\]\(([^)\s]+)\)')

class Site:
    "The pages and how a link from one to another is written: relative Markdown paths in the site, published URLs in README"
    def __init__(self, pages:list[Page], cfg):
        self.pages,self.cfg = pages,cfg
        self.by_source = {p.source: p for p in pages}
        self.site_url = f"{cfg.doc_host.rstrip('/')}{cfg.doc_baseurl.rstrip('/')}/" if cfg.doc_host else None
        self.anchors = None # {page path: the ids of its headings}, once every page's Markdown is known

    def target(self, href:str, page:Page):
        "(the page `href` in `page` points at, its fragment), or None when it points outside the site's pages"
        if self.site_url and href.startswith(self.site_url): path = href[len(self.site_url):]
        elif re.match(r'^[a-z][a-z0-9+.-]*:|^//|^#', href, re.I) or not href: return None
        else: path = posixpath.normpath(posixpath.join(posixpath.dirname(page.source), href))
        path,_,frag = path.partition('#')
        if path.endswith('.ipynb'): found = self.by_source.get(path)
        else: found = next((p for p in self.pages if p.path == path), None)
        return (found, frag) if found else None

    def site_links(self, md:str, page:Page)->str:
        "Links in `md` into the site as relative Markdown paths (MkDocs checks and rewrites them); a link to a name with no API entry becomes plain code"
        def unlink(m):
            t = self.target(m[2], page)
            return m[1] if t and self.anchors is not None and t[1] and t[1] not in self.anchors.get(t[0].path, ()) else m[0]
        def rel(m):
            if not (t := self.target(m[2], page)): return m[0]
            p = posixpath.relpath(t[0].md, posixpath.dirname(page.md) or '.')
            return f"{m[1]}{p}{'#' + t[1] if t[1] else ''}{m[3]}"
        return _re_md_link.sub(rel, _re_code_link.sub(unlink, md))

    def published_links(self, md:str, page:Page)->str:
        "Links in `md` to a notebook go to its page on the published site (README.md is read on GitHub and PyPI)"
        def published(m):
            t = self.target(m[2], page) if m[2].split('#')[0].endswith('.ipynb') else None
            if not t or not self.site_url: return m[0]
            return f"{m[1]}{self.site_url}{t[0].path}{'#' + t[1] if t[1] else ''}{m[3]}"
        return _re_md_link.sub(published, md)

# Characters of an output line that fit in an output box beside the sidebars at 1400 px (docs/site.css); a longer
# line that is a dict, a list, a tuple or an object's `Name(...)` repr (JSON text too) is laid out over lines as pprint does
OUTPUT_WIDTH = 100
_re_token = re.compile(r"""'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|[\[\](){},]|[^'"\[\](){},]+""")
_closers = {'[': ']', '(': ')', '{': '}'}

def _groups(tokens:list):
    "Tokens as a tree: a bracketed group is ['(', [items...], ')'], an item a list of tokens and groups; None if unbalanced"
    stack = [[]]
    for t in tokens:
        if t in _closers: stack.append([t])
        elif t in (']', ')', '}'):
            if len(stack) < 2 or _closers[stack[-1][0]] != t: return None
            g = stack.pop(); stack[-1].append((g[0], g[1:], t))
        else: stack[-1].append(t)
    return stack[0] if len(stack) == 1 else None

def _flat(parts)->str: return ''.join(p if isinstance(p, str) else p[0] + _flat(p[1]) + p[2] for p in parts)

def _layout(parts:list, col:int, width:int)->str:
    "`parts` written from column `col`: a group longer than the line breaks after its commas, its items aligned after the bracket"
    out = ''
    for p in parts:
        at = len(out.rsplit('\n', 1)[-1]) if '\n' in out else col + len(out) # the column `p` starts at
        if isinstance(p, str) or at + len(_flat([p])) <= width: s = p if isinstance(p, str) else _flat([p])
        else:
            line,items,cur = at + 1,[],[]
            for q in p[1]:
                cur.append(q)
                if q == ',': items.append(cur); cur = []
            if cur: items.append(cur)
            pieces = []
            for it in items:
                if it and isinstance(it[0], str) and it[0] != it[0].lstrip() and pieces: it = [it[0].lstrip()] + it[1:]
                pieces.append(_layout(it, line, width).rstrip(' '))
            if all(isinstance(q, str) for it in items for q in it): # plain items (numbers, strings): as many a line as fit
                rows = ['']
                for piece in pieces:
                    if rows[-1] and line + len(rows[-1]) + 1 + len(piece) > width: rows.append('')
                    rows[-1] += (' ' if rows[-1] else '') + piece
                pieces = rows
            s = p[0] + ('\n' + ' ' * line).join(pieces) + p[2]
        out += s
    return out

def pretty_output(text:str, width:int=OUTPUT_WIDTH)->str:
    """`text` with each line longer than `width` that is one bracketed value (a dict, list, tuple, `Name(...)`, JSON)
    broken after its commas as pprint does; only whitespace changes (a line it cannot read stays as it is)"""
    def pretty(line:str)->str:
        body = line.strip()
        if len(line) <= width or not re.fullmatch(r'(?:[A-Za-z_][\w.]*)?[\[({].*[\])}]', body, re.S): return line
        toks = _re_token.findall(body)
        if ''.join(toks) != body or (tree := _groups(toks)) is None: return line
        indent = len(line) - len(line.lstrip(' '))
        out = ' ' * indent + _layout(tree, indent, width)
        squash = lambda t: re.sub(r'\s+', '', ''.join(x for x in _re_token.findall(t) if x[:1] not in '\'"') ) + \
                           ''.join(x for x in _re_token.findall(t) if x[:1] in '\'"')
        return out if squash(out) == squash(line) else line
    return '\n'.join(pretty(l) for l in text.split('\n'))

def output_markdown(out:dict, where:str, for_site:bool)->str:
    "One output as Markdown: text in a code block, Markdown as it is, HTML and images inline (the site; README takes text, not stderr)"
    kind = out.get('output_type')
    tidy = pretty_output if for_site else (lambda t: t)
    # README is committed, so it shows what the examples give on every machine: not what they write to stderr (a
    # warning such as the `SandboxWarning` of a machine without bubblewrap), which the site built there shows
    if kind == 'stream' and out.get('name') == 'stderr' and not for_site: return ''
    if kind == 'stream': return _fence(tidy(strip_ansi(_as_text(out['text']))), 'text')
    if kind == 'error':
        if not for_site: raise BuildError(f"{where} has an error output: README.md shows outputs that worked")
        return _fence(strip_ansi('\n'.join(out.get('traceback') or [f"{out.get('ename')}: {out.get('evalue')}"])), 'text')
    data = out.get('data') or {}
    if 'text/markdown' in data: return _as_text(data['text/markdown']).strip()
    if 'text/html' in data: return f'<div class="cell-output-html" markdown="0">\n{_as_text(data["text/html"]).strip()}\n</div>'
    img = next((m for m in ('image/png', 'image/jpeg', 'image/gif', 'image/webp') if m in data), None)
    if img and for_site: return f'<img class="cell-output-image" alt="output image" src="data:{img};base64,{_as_text(data[img]).replace(chr(10), "")}">'
    if 'text/plain' in data: return _fence(tidy(strip_ansi(_as_text(data['text/plain']))), 'text')
    if not for_site:
        raise BuildError(f"{where} shows {', '.join(data)}: README.md can show text, markdown and HTML outputs; hide that cell "
                         "from the README with `#| hide` or make its output text")
    return ''

def cell_markdown(cell:dict, where:str, for_site:bool)->str:
    "One processed cell as Markdown: prose as it is, code in a Python block, then its outputs"
    src = _as_text(cell.get('source', '')).strip()
    if cell['cell_type'] == 'markdown':
        for k,d in (cell.get('attachments') or {}).items():
            for mime,b64 in d.items(): src = src.replace(f'attachment:{k}', f'data:{mime};base64,{b64}')
        return quarto_divs(src) if for_site else src
    if cell['cell_type'] != 'code': return ''
    opts,code = split_directives(src)
    if _false(opts.get('include')): return ''
    parts = []
    if code.strip() and not _false(opts.get('echo')):
        block = _fence(code, 'python')
        if for_site and opts.get('code-fold') in ('show', 'true', 'hide'):
            block = (f'<details class="code-fold" markdown{" open" if opts["code-fold"] == "show" else ""}>\n'
                     f'<summary>{html.escape(opts.get("code-summary") or "Code")}</summary>\n\n{block}\n\n</details>')
        parts.append(block)
    if not _false(opts.get('output')): parts += [output_markdown(o, where, for_site) for o in cell.get('outputs') or []]
    return '\n\n'.join(p for p in parts if p)

def _cells(page:Page)->list:
    "The page's cells after nbdev's autogenerated-file note (README keeps that note; a page shows it to no one)"
    cells = page.nb['cells']
    note = bool(cells) and cells[0]['cell_type'] == 'markdown' and _as_text(cells[0]['source']).lstrip().startswith('<!--')
    return cells[1:] if note else cells

def cell_label(page:Page, i:int, cell:dict)->str:
    "Which cell of which notebook cell `i` of `page` is, as its owner finds it: its id, or the API entry `show_doc` made"
    src = _as_text(cell.get('source', ''))
    if (name := (cell.get('metadata') or {}).get('api_entry')): return f"nbs/{page.source}, the API entry of {name} (its source)"
    if (m := re.search(r'^\s*show_doc\((.*)\)\s*$', src, re.M)): return f"nbs/{page.source}, the API entry of {m[1]} (its signature or docstring)"
    first = next((l for l in src.splitlines() if l.strip() and not l.lstrip().startswith('#|')), '')[:60]
    return f"nbs/{page.source}, cell id {cell.get('id', '?')} ({first!r})"

def page_markdown(page:Page, site:Site)->str:
    "The Markdown page MkDocs renders: title, description, then each cell; each cell starts with a comment naming it for `page_problems`"
    fm = {'title': page.title, **({'description': page.description} if page.description else {})}
    parts = ['---\n' + ''.join(f'{k}: {json.dumps(v)}\n' for k,v in fm.items()) + '---', f'# {_md_escape(page.title)}']
    if page.description: parts.append(f'<div class="page-description" markdown>{page.description}</div>')
    for i,cell in enumerate(_cells(page)):
        md = cell_markdown(cell, f"A cell of {page.source}", True)
        if md: parts += [f'<!-- cell: {html.escape(cell_label(page, i, cell)).replace("--", "- -")} -->', site.site_links(md, page)]
    return '\n\n'.join(parts) + '\n'

def readme_markdown(page:Page, site:Site=None)->str:
    "README.md from the processed home page: its title, nbdev's autogenerated note, description, prose, code and outputs"
    parts,cells = [f'# {page.title}'],page.nb['cells']
    if cells is not _cells(page): parts.append(_as_text(cells[0]['source']).strip())
    if page.description: parts.append('> ' + page.description)
    for cell in _cells(page):
        src = _as_text(cell.get('source', '')).strip()
        md = cell_markdown(cell, f"A cell of {page.source} ({src[:60]!r})", False)
        parts.append(site.published_links(md, page) if site and cell['cell_type'] == 'markdown' else md)
    return '\n\n'.join(p for p in parts if p) + '\n'

_re_heading = re.compile(r'^#{1,6}\s+(.*?)\s*(?:\{([^}]*)\})?\s*$', re.M)

def heading_ids(md:str)->set:
    "The ids the headings in page Markdown `md` get: their `{ #id }`, or the slug of their text (code blocks skipped)"
    md = re.sub(r'^(`{3,}|~{3,}).*?^\1', '', md, flags=re.M|re.S)
    ids = set()
    for m in _re_heading.finditer(md):
        given = re.search(r'#([\w.:-]+)', m[2] or '')
        ids.add(given[1] if given else slugify(re.sub(r'[\\`*]', '', m[1])))
    return ids

# ---------------------------------------------------------------------------------------------------------------
# What no page may show (checked on the built site by `--check`), in the examples' outputs and the API entries
# (prose and example code may name such things on purpose: "a private /tmp", `Path('/tmp')`): the rules
# `scripts/nb_outputs.py check` applies to the outputs saved in the notebooks, and in API entries no private module path
def _nb_outputs():
    spec = importlib.util.spec_from_file_location('toolslm_like_nb_outputs', root/'scripts'/'nb_outputs.py')
    mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
    return mod
PAGE_RULES = [(rx, what, False) for rx,what in _nb_outputs().BAD_OUTPUT] + [ # (pattern, what it is, only in API entries?)
    (re.compile(r'(?<![\w.])(?:[a-z]\w*\.)+_[a-z]\w*\.[A-Za-z]\w*'), 'a private module path (write the public one)', True)]

class _TextParser(html.parser.HTMLParser):
    """A built page cut at the `<!-- cell: ... -->` comments into [cell label, text it shows]: of an example cell its
    outputs (text blocks and HTML), of an API entry its signature less the comments (not prose, not example code)"""
    _void = {'br', 'hr', 'img', 'input', 'link', 'meta', 'wbr', 'source', 'col', 'area', 'base', 'embed', 'track', 'param'}
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.chunks,self._open = [['the page', []]],[]  # _open: (tag, what it is: 'output', 'code', 'comment' or '')
    def _shown(self)->bool:
        kinds = {k for _,k in self._open}
        if len(self.chunks) < 2 or 'skip' in kinds: return False
        return 'code' in kinds and 'comment' not in kinds if 'API entry' in self.chunks[-1][0] else 'output' in kinds
    def handle_starttag(self, tag, attrs):
        if tag in self._void: return
        cls = dict(attrs).get('class') or ''
        kind = ('skip' if tag in ('script', 'style') else 'output' if re.search(r'\b(language-text|cell-output-html)\b', cls)
                else 'code' if 'language-python' in cls else 'comment' if tag == 'span' and re.fullmatch(r'c1?|cm|ch|cs', cls) else '')
        self._open.append((tag, kind))
    def handle_endtag(self, tag):
        while self._open and self._open.pop()[0] != tag: pass
        if tag == 'article': self.chunks.append(['the page', []])  # the cells end with the page's content
    def handle_comment(self, data):
        if (m := re.match(r'\s*cell: (.*?)\s*$', data, re.S)): self.chunks.append([html.unescape(m[1]), []])
    def handle_data(self, data):
        if self._shown(): self.chunks[-1][1].append(data)

def page_problems(page_html:str, name:str)->list[str]:
    "What built page `name` (its HTML `page_html`) shows that no page may: one line per cell and rule, naming the cell and the text around it"
    p = _TextParser(); p.feed(page_html); p.close()
    found = []
    for label,texts in p.chunks:
        text,seen = ''.join(texts),set()
        for rx,what,api_only in PAGE_RULES:
            if what in seen or api_only and 'API entry' not in label or not (ms := list(rx.finditer(text))): continue
            seen.add(what)
            m = ms[0]
            around = re.sub(r'\s+', ' ', text[max(0, m.start()-60):m.end()+60]).strip()
            found.append(f"{name}, {label}: shows {what}, {m[0]!r}{f' ({len(ms)} times)' if len(ms) > 1 else ''}: ...{around}...")
    api_ids = set(re.findall(r'<h\d[^>]*class="api-name"[^>]*id="([^"]+)"', page_html))
    for hid in re.findall(r'<h[2-6](?![^>]*class="api-name")[^>]*id="([^"]+)"', page_html): # h1 is the page's title
        if hid not in api_ids and re.sub(r'_\d+$', '', hid) in api_ids:
            found.append(f"{name}: the heading #{hid} has the same name as an API entry on the page: the contents list "
                         "shows the name twice: give the section its own words")
    return found

def site_problems(site:Path)->list[str]:
    "`page_problems` of every page of the built `site`"
    return [s for p in sorted(site.rglob('*.html')) if p.name != '404.html' for s in page_problems(p.read_text(), p.relative_to(site).as_posix())]

# ---------------------------------------------------------------------------------------------------------------
# The whole build

def copy_assets(nbs:Path, dest:Path):
    "Copy the files pages may refer to (images, data files, ...) from `nbs` into the pages' folder"
    for s in nbs.rglob('*'):
        rel = s.relative_to(nbs)
        if not s.is_file() or any(p[0] in '_.' for p in rel.parts) or s.suffix in _not_assets: continue
        (dest/rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(s, dest/rel)

def _replaceable(d:Path, what:str, cfg)->Path:
    "`d`, after making sure it is an output directory this script may empty (never the project or its notebooks)"
    nbs = Path(cfg.nbs_path).resolve()
    holds_sources = d == nbs or nbs in d.parents or d in nbs.parents
    if holds_sources or d.exists() and ((d/'pyproject.toml').exists() or (d/'.git').exists()):
        raise BuildError(f"Refusing to write the {what} into {d}: it is or holds the project's sources, and it is emptied first; "
                         "give a directory of its own, e.g. _docs")
    return d

def write_pages(pages:list[Page], site:Site, nbs:Path, dest:Path):
    "The pages as Markdown under `dest` (MkDocs' docs_dir), with the notebooks' assets and the site's stylesheet"
    dest.mkdir(parents=True)
    copy_assets(nbs, dest)
    shutil.copy2(root/'docs'/'site.css', dest/'site.css')
    site.anchors = None
    site.anchors = {p.path: heading_ids(page_markdown(p, site)) for p in pages}
    for p in pages:
        (dest/p.md).parent.mkdir(parents=True, exist_ok=True)
        (dest/p.md).write_text(page_markdown(p, site))

# The site's navigation: pages (their paths less `.html`) in two groups, in this order. Guides are what a user does;
# the reference is how it works inside. A page not named here (a new notebook) goes last in the reference.
NAV_GROUPS = {
    'Guides': ['index', 'funccall', 'providers', 'toolloop', 'toolbox', 'sandbox', 'streaming', 'textcalls', 'mcp',
               'indexes', 'cli', 'contributing'],
    'Reference': ['limits', 'errors', 'schemawalk', 'typekinds', 'interpreter', 'worker_child', 'worker', 'sandbox_bwrap',
                  'sandbox_folders', 'sandbox_processes', 'sandbox_supervisor'],
}

def nav_groups(pages:list[Page])->dict:
    "{group: [pages]} of `NAV_GROUPS`, pages it does not name appended to its last group, empty groups left out"
    key = lambda p: posixpath.splitext(p.path)[0]
    groups = {g: [p for n in names for p in pages if key(p) == n] for g,names in NAV_GROUPS.items()}
    named = {n for names in NAV_GROUPS.values() for n in names}
    groups[list(groups)[-1]] += [p for p in pages if key(p) not in named]
    return {g: ps for g,ps in groups.items() if ps}

def mkdocs_build(pages:list[Page], cfg, docs_dir:Path, site_dir:Path, config_file:Path):
    "Render the Markdown pages in `docs_dir` into `site_dir` with MkDocs (`config_file`), the site's name and URL from nbdev's config"
    import logging
    from mkdocs.commands.build import build as mkdocs_build_site
    from mkdocs.config import load_config
    from mkdocs.exceptions import Abort, ConfigurationError
    warnings = []
    class Collect(logging.Handler):
        def emit(self, r): warnings.append(r.getMessage()) if r.levelno >= logging.WARNING else None
    log,handler = logging.getLogger('mkdocs'),Collect()
    log.addHandler(handler)
    try:
        mk = load_config(str(config_file), docs_dir=str(docs_dir), site_dir=str(site_dir), site_name=cfg.title,
                         site_description=cfg.description, site_url=Site(pages, cfg).site_url,
                         nav=[{g: [{p.title: p.md} for p in ps]} for g,ps in nav_groups(pages).items()])
        mkdocs_build_site(mk)
    except (Abort, ConfigurationError) as e:
        named = [f"{p.md} is made from nbs/{p.source}" for p in pages if f"'{p.md}'" in '\n'.join(warnings)]
        raise BuildError(f"MkDocs could not build the site: {e}\n" + '\n'.join(warnings + named)) from None
    finally: log.removeHandler(handler)

def build(dest:Path=None, proc:Path=None, readme:Path=None, check:bool=False, workers:int=None, path:Path=None,
          quarto_check:bool=False, only:list[str]=None)->dict:
    "Build the site into `dest` and README into `readme` (or compare with it when `check`); returns what was built"
    from nbdev.config import get_config
    cfg = get_config(path or root)
    nbs = cfg.nbs_path
    dest = Path(dest or cfg.doc_path).resolve()
    proc = Path(proc or cfg.config_path/'_proc').resolve()
    readme = Path(readme or cfg.config_path/'README.md')
    workers = workers or min(os.cpu_count() or 1, 4)
    for d,what in ((dest, 'site'), (proc, 'processed notebooks')): _replaceable(d, what, cfg)
    if proc.exists() and not only: shutil.rmtree(proc)
    if (proc/'_pages').exists(): shutil.rmtree(proc/'_pages')
    processed = process_all(nbs, proc, workers, quarto_check, only, cfg.lib_path)
    pages = [read_page(p, proc) for p in processed]
    readme_nb = Path(cfg.readme_nb).as_posix()
    pages.sort(key=lambda p: (p.source != readme_nb, p.source))
    site = Site(pages, cfg)
    write_pages(pages, site, nbs, proc/'_pages')
    if dest.exists(): shutil.rmtree(dest)
    config_file = cfg.config_path/'mkdocs.yml'
    mkdocs_build(pages, cfg, proc/'_pages', dest, config_file if config_file.exists() else root/'mkdocs.yml')
    res = {'site': dest, 'pages': [p.path for p in pages], 'readme': None, 'readme_ok': True, 'problems': site_problems(dest)}
    home = next((p for p in pages if p.source == readme_nb), None)
    if home is None: return res
    text = readme_markdown(home, site)
    (proc/'README.md').write_text(text) # what it generated, checked or not: tests/test_docs.py compares it with README.md
    if check:
        old = readme.read_text() if readme.exists() else ''
        res['readme_ok'] = old == text
        res['readme_diff'] = ''.join(difflib.unified_diff(old.splitlines(True), text.splitlines(True), str(readme), 'generated'))
    else:
        if not readme.exists() or readme.read_text() != text: readme.write_text(text)
        res['readme'] = readme
    return res

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--dest', type=Path, help="where to write the site (default: the `doc_path` setting, `_docs`)")
    ap.add_argument('--proc', type=Path, help="where to write the processed notebooks and pages' Markdown (default: `_proc`)")
    ap.add_argument('--readme', type=Path, help="the README to write or check (default: README.md)")
    ap.add_argument('--check', action='store_true', help="do not write the README: fail if it differs from what nbs/index.ipynb "
                    "generates, or if a built page shows a path of this machine, an IPython frame, `__main__.`, `NoneType` or a private module path")
    ap.add_argument('--workers', type=int, help="notebooks run at once (default: CPUs, at most 4)")
    ap.add_argument('--project', type=Path, help="the nbdev project to build (default: the one this script is in)")
    ap.add_argument('--quarto-check', action='store_true', help="also process each notebook exactly as `nbdev-docs` does "
                    "before Quarto renders it, and fail on the notebooks that Quarto publishing would fail on")
    ap.add_argument('--only', nargs='+', metavar='NOTEBOOK', help="run just these notebooks (`05_funccall.ipynb`, or its name "
                    "less the number: `funccall`), and take the others' processed notebooks from `--proc`, as an earlier build left them: "
                    "quick while working on a few pages")
    ap.add_argument('--process-one', nargs=2, type=Path, metavar=('NOTEBOOK', 'DEST'), help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.process_one:
        try:
            # Quarto's processing first, as `nbdev-docs` does it: in a process where no example has run yet. After the
            # examples, threads they left (servers) may build ASTs beside nbdev's, which CPython 3.11.7 and older
            # can fail on ("AST constructor recursion depth mismatch", python/cpython#106905)
            if a.quarto_check: nbdev_docs_processing(a.process_one[0])
            process_notebook(*a.process_one)
        except BuildError as e:
            print(e, file=sys.stderr)
            sys.exit(_EXIT_QUARTO if isinstance(e, QuartoError) else _EXIT_FAILED)
        return
    try: res = build(a.dest, a.proc, a.readme, a.check, a.workers, a.project, a.quarto_check, a.only)
    except BuildError as e: sys.exit(f"Docs build failed: {e}")
    print(f"Built {len(res['pages'])} pages into {res['site']}: {', '.join(res['pages'])}")
    failed = []
    if res['problems']:
        print(f"{len(res['problems'])} things the pages must not show (fix them in the notebook named):\n" + '\n'.join(res['problems']), file=sys.stderr)
        if a.check: failed.append("pages show what they must not (above)")
    if a.check and not res['readme_ok']:
        print(f"{res['readme_diff'][:4000]}", file=sys.stderr)
        failed.append("README.md is not what nbs/index.ipynb generates: edit nbs/index.ipynb, run `.venv/bin/python scripts/build_docs.py` and commit README.md")
    if res['readme']: print(f"Wrote {res['readme']}")
    if failed: sys.exit('Docs check failed: ' + '; '.join(failed))

if __name__ == '__main__': main()
