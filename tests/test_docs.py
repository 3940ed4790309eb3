"""The docs site, built offline from every notebook by `scripts/build_docs.py` (MkDocs with the Material theme) and
checked as a reader sees it: each notebook has a page with the API docs of what it exports and its examples'
outputs, API entries read as Python (classes as classes, no `__main__.`, `NoneType` or private module paths),
links resolve, nothing comes from the network, README.md is what `nbs/index.ipynb` generates, and in headless
Chromium, at desktop and phone widths: search finds a name, the contents list is beside the text, the page's
text comes first on a phone, a linked heading is not under the header, code has copy buttons, headings anchors,
and each API entry a link to its source."""
import ast, functools, html.parser, http.server, importlib.util, json, os, re, select, shutil, subprocess, sys, tempfile, threading, time
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlparse
import pytest, yaml
from nbdev.config import get_config, nbpath2html

root = Path(__file__).resolve().parent.parent
nbs = root/'nbs'
# The notebooks that get pages, found as the build finds them, so notebooks added later are checked too
notebooks = sorted(p for p in nbs.rglob('*.ipynb') if not any(s[0] in '_.' for s in p.relative_to(nbs).parts))
page_of = {nb: nbpath2html(nb.relative_to(nbs)).as_posix() for nb in notebooks}

@pytest.fixture(scope='module')
def built(tmp_path_factory):
    """The site, processed notebooks and README built into a temporary directory by the one offline command (or the
    ones already built into the directory `TOOLSLM_LIKE_DOCS_BUILT` names, with `_docs/` and `_proc/`: `.ci/run` builds
    once and sets it; set it to iterate on the checks)"""
    if (given := os.environ.get('TOOLSLM_LIKE_DOCS_BUILT')): return Path(given)
    d = tmp_path_factory.mktemp('docs')
    cmd = [sys.executable, str(root/'scripts'/'build_docs.py'), '--dest', str(d/'_docs'), '--proc', str(d/'_proc'), '--readme', str(d/'README.md'),
           '--quarto-check'] # publishing with nbdev-docs must keep working too (it runs only some cells: see build_docs.py)
    t0 = time.perf_counter()
    r = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, f"docs build failed:\n{r.stdout[-3000:]}\n{r.stderr[-8000:]}"
    print(f"docs build took {time.perf_counter()-t0:.1f}s")
    return d

def _directives(src:str)->set:
    return {m[1] for m in re.finditer(r'^\s*#\|\s*([\w-]+)', src, re.M)}

def exported_names(nb:Path)->list[str]:
    "The public functions and classes notebook `nb` exports (each gets `show_doc` API docs on its page)"
    names = []
    for c in json.loads(nb.read_text())['cells']:
        src = ''.join(c['source']) if isinstance(c['source'], list) else c['source']
        d = _directives(src)
        if c['cell_type'] != 'code' or not d & {'export', 'exports'} or 'hide' in d: continue
        try: tree = ast.parse(re.sub(r'^\s*[%!].*$', '', src, flags=re.M))
        except SyntaxError: continue
        names += [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                  and (not n.name.startswith('_') or n.name.startswith('__')) and not _patches_private_class(n)]
    return names

def _patches_private_class(f)->bool:
    "Whether `f` is a method fastcore's `@patch` adds to a private class (`def typed(self:_Strict)`): it has no API entry"
    private = lambda node: node is not None and bool(re.match(r'_(?!_)', ast.unparse(node).split('.')[-1].strip('\'"')))
    for d in getattr(f, 'decorator_list', []):
        if isinstance(d, ast.Call) and 'patch_to' in ast.unparse(d.func) and d.args: return private(d.args[0])  # @patch_to(_Cls)
        if 'patch' in ast.unparse(d): return private(f.args.args[0].annotation if f.args.args else None)  # @patch def m(self:_Cls)
    return False

@functools.cache
def _builder():
    spec = importlib.util.spec_from_file_location('build_docs', root/'scripts'/'build_docs.py')
    mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
    return mod

# ---------------------------------------------------------------------------------------------------------------
# Reading pages as HTML

class _PageParser(html.parser.HTMLParser):
    "Collects a page's ids, its links (`a href`), the resources it loads, and its text"
    def __init__(self):
        super().__init__()
        self.ids,self.links,self.resources,self.text = set(),[],[],[]
        self._skip = 0
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if 'id' in a: self.ids.add(a['id'])
        if tag == 'a' and 'name' in a: self.ids.add(a['name'])
        if tag == 'a' and a.get('href') is not None: self.links.append(a['href'])
        if tag in ('img', 'script', 'iframe', 'source', 'audio', 'video', 'embed', 'input', 'track') and a.get('src'): self.resources.append(a['src'])
        # a canonical or prev/next link names a page; the browser loads nothing from it
        if tag == 'link' and a.get('href') and a.get('rel') not in ('canonical', 'prev', 'next', 'alternate'): self.resources.append(a['href'])
        if tag in ('object',) and a.get('data'): self.resources.append(a['data'])
        if tag in ('style', 'script'): self._skip += 1
        for v in a.values():
            if v and re.search(r'url\(\s*[\'"]?(?:https?:)?//', v): self.resources.append(v)
    def handle_endtag(self, tag):
        if tag in ('style', 'script'): self._skip -= 1
    def handle_data(self, data):
        if not self._skip: self.text.append(data)

def parse_page(path:Path)->_PageParser:
    p = _PageParser(); p.feed(path.read_text()); p.close()
    return p

def _pages(site:Path)->list[Path]:
    "The site's pages, but not 404.html: the web server shows it for any missing path, so it links by absolute paths"
    return [p for p in site.rglob('*.html') if p.relative_to(site).as_posix() != '404.html']

def _is_remote(url:str)->bool: return bool(re.match(r'^(?:[a-z][a-z0-9+.-]*:)?//', url.strip(), re.I))

def broken_links(site:Path)->list[str]:
    "Every link or resource in the site's pages that points inside the site at a file or an anchor that is not there"
    problems,pages = [],{p: parse_page(p) for p in _pages(site)}
    for page,parsed in pages.items():
        for href in parsed.links + parsed.resources:
            if _is_remote(href) or re.match(r'^[a-z][a-z0-9+.-]*:', href, re.I): continue  # off-site links and data:, mailto:
            path,frag = urldefrag(href)
            target = (page.parent/unquote(path)).resolve() if path else page
            if target.is_dir(): target = target/'index.html'
            if site.resolve() not in (target, *target.parents): problems.append(f"{page.name}: {href} points outside the site"); continue
            if not target.is_file(): problems.append(f"{page.name}: {href} -> no such file"); continue
            if frag and target.suffix == '.html' and unquote(frag) not in (pages[target] if target in pages else parse_page(target)).ids:
                problems.append(f"{page.name}: {href} -> no element with id {frag!r}")
    return problems

def network_resources(site:Path)->list[str]:
    "Everything the site's pages or stylesheets would fetch from the network when shown"
    found = [f"{p.name}: {r}" for p in _pages(site) for r in parse_page(p).resources if _is_remote(r) or '//' in r and 'url(' in r]
    for css in site.rglob('*.css'):
        found += [f"{css.name}: {m[0]}" for m in re.finditer(r'(?:@import\s+|url\()\s*[\'"]?(?:https?:)?//[^\s\'")]+', css.read_text())]
    return found

def test_checkers_find_problems(tmp_path):
    "The link and network checks below can fail: a made-up site with one of each problem"
    (tmp_path/'a.html').write_text('<h1 id="top">A</h1><a href="b.html">ok</a><a href="b.html#there">ok</a><a href="c.html">gone</a>'
                                   '<a href="b.html#nowhere">bad anchor</a><a href="https://example.com/">fine: a link out</a>'
                                   '<link rel="canonical" href="https://example.com/a.html">'
                                   '<link rel="stylesheet" href="https://cdn.example.com/x.css"><img src="//cdn.example.com/y.png">')
    (tmp_path/'b.html').write_text('<h2 id="there">B</h2><a href="a.html#top">back</a>')
    (tmp_path/'s.css').write_text('@import url("https://fonts.example.com/f.css"); body { color: red }')
    assert sorted(broken_links(tmp_path)) == ["a.html: b.html#nowhere -> no element with id 'nowhere'", 'a.html: c.html -> no such file']
    assert sorted(network_resources(tmp_path)) == ['a.html: //cdn.example.com/y.png', 'a.html: https://cdn.example.com/x.css',
                                                   's.css: url("https://fonts.example.com/f.css']

def _build_project(tmp_path, notebooks:dict, *flags)->subprocess.CompletedProcess:
    "Build a small nbdev project made of `notebooks` ({path under nbs: [(cell type, source)]}) in `tmp_path`"
    (tmp_path/'pyproject.toml').write_text('[project]\nname = "miniproj"\ndescription = "A small project"\n[tool.nbdev]\njupyter_hooks = false\n')
    for rel,cells in notebooks.items():
        (tmp_path/'nbs'/rel).parent.mkdir(parents=True, exist_ok=True)
        mk = lambda i,t,src: {'cell_type': t, 'id': f'c{i}', 'metadata': {}, 'source': src,
                              **({'outputs': [], 'execution_count': None} if t == 'code' else {})}
        nb = {'cells': [mk(i, 'markdown' if t == 'md' else t, src) for i,(t,src) in enumerate(cells)],
              'metadata': {'kernelspec': {'display_name': 'python3', 'language': 'python', 'name': 'python3'}}, 'nbformat': 4, 'nbformat_minor': 5}
        (tmp_path/'nbs'/rel).write_text(json.dumps(nb))
    return subprocess.run([sys.executable, str(root/'scripts'/'build_docs.py'), '--project', str(tmp_path), *flags],
                          capture_output=True, text=True, timeout=600)

def test_notebooks_anywhere_become_linked_pages(tmp_path):
    "Any notebook is built, also in a folder: its API docs, outputs, and links to and from it work from where it lands"
    r = _build_project(tmp_path, {
        'index.ipynb': [('md', '# miniproj\n\n> A small project'), ('md', 'See [`greet`](guides/10_guide.ipynb#greet) in the guide.')],
        'guides/10_guide.ipynb': [('md', '# A guide\n\n> In a folder'), ('code', '#| default_exp core'),
            ('code', '#| export\ndef greet(name:str, # Who to greet\n         )->str: # The greeting\n    "Say hello to `name`"\n    return f"Hello, {name}!"'),
            ('md', 'Back [home](../index.ipynb).'), ('code', 'greet("reader")')]})
    assert r.returncode == 0, r.stderr[-4000:]
    site = tmp_path/'_docs'
    assert {'guides/guide.html', 'index.html'} <= {p.relative_to(site).as_posix() for p in site.rglob('*.html')}
    assert broken_links(site) == [] and network_resources(site) == []
    guide_html = (site/'guides'/'guide.html').read_text()
    assert re.search(r'<h3 [^>]*id="greet"[^>]*>greet<', guide_html) and 'Hello, reader!' in html.unescape(guide_html)
    assert 'def greet(\n    name:str, # Who to greet\n)-&gt;str: # The greeting' in re.sub(r'<[^>]+>', '', guide_html)
    guide,home = parse_page(site/'guides'/'guide.html'),parse_page(site/'index.html')
    assert {'../index.html', '../site.css'} <= set(guide.links + guide.resources) and 'guides/guide.html#greet' in home.links
    assert (tmp_path/'README.md').read_text().startswith('# miniproj')

def test_only_some_notebooks_rerun(tmp_path):
    "`--only` runs the notebooks it names and reuses the others' processed notebooks; it fails on a name it does not know"
    nbs_ = {'index.ipynb': [('md', '# miniproj\n\n> A small project'), ('code', 'print("home" + "page")')],
            '01_guide.ipynb': [('md', '# A guide\n\n> In short'), ('code', 'print("first" + "run")')]}
    r = _build_project(tmp_path, nbs_, '--only', 'guide')
    assert r.returncode == 1 and 'index.ipynb are not there: build them all once first' in r.stderr, r.stderr[-3000:]
    assert _build_project(tmp_path, nbs_).returncode == 0
    runs = lambda: json.loads((tmp_path/'_proc'/'notebook_runs.json').read_text())
    first = runs()
    assert sorted(first) == ['01_guide.ipynb', 'index.ipynb'] and first['index.ipynb']['python'] == sys.version, first
    assert first['index.ipynb'] == _builder().run_record(tmp_path/'nbs'/'index.ipynb', tmp_path/'miniproj'), "what the tests compare"
    nbs_['01_guide.ipynb'][1] = ('code', 'print("second" + "run")')
    nbs_['index.ipynb'][1] = ('code', 'print("not" + "rerun")')
    r = _build_project(tmp_path, nbs_, '--only', 'guide')
    assert r.returncode == 0, r.stderr[-3000:]
    site = tmp_path/'_docs'
    assert 'secondrun' in (site/'guide.html').read_text() and 'homepage' in (site/'index.html').read_text()
    assert runs()['index.ipynb'] == first['index.ipynb'] and runs()['01_guide.ipynb']['notebook'] != first['01_guide.ipynb']['notebook']
    r = _build_project(tmp_path, nbs_, '--only', 'nope')
    assert r.returncode == 1 and '--only names no notebook: nope; the notebooks: 01_guide.ipynb, index.ipynb' in r.stderr, r.stderr[-3000:]

def test_a_failing_notebook_fails_the_build_and_is_named(tmp_path):
    r = _build_project(tmp_path, {'index.ipynb': [('md', '# miniproj\n\n> A small project')],
                                  '01_bad.ipynb': [('md', '# bad\n\n> Breaks'), ('code', '1/0')]})
    assert r.returncode == 1 and '01_bad.ipynb failed to run' in r.stderr and 'ZeroDivisionError' in r.stderr, r.stderr[-3000:]
    assert not (tmp_path/'README.md').exists()
    # the command the message suggests for seeing why is one that runs
    cmd = re.search(r'run `(nbdev-test [^`]*)` to see why', r.stderr)[1].split()
    nbdev_test = Path(sys.executable).parent/'nbdev-test'
    seen = subprocess.run([str(nbdev_test), *cmd[1:]], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert 'ZeroDivisionError' in seen.stdout + seen.stderr and 'usage:' not in seen.stderr, seen.stderr[-3000:]

def test_a_broken_link_fails_the_build_and_names_the_notebook(tmp_path):
    "MkDocs checks links (strict): a link to a page or an anchor that is not there stops the build, naming the notebook"
    r = _build_project(tmp_path, {'index.ipynb': [('md', '# miniproj\n\n> A small project'), ('md', 'See [x](nope.ipynb) and [y](#nowhere).')]})
    assert r.returncode == 1 and "contains a link 'nope.ipynb', but the target is not found" in r.stderr, r.stderr[-3000:]
    assert "contains a link '#nowhere', but there is no such anchor" in r.stderr and 'index.md is made from nbs/index.ipynb' in r.stderr

def test_check_names_the_page_and_cell_of_what_a_page_must_not_show(tmp_path):
    "`--check` fails on a build machine's path, an IPython frame or `__main__.` in an output, naming page, cell and text"
    r = _build_project(tmp_path, {'index.ipynb': [('md', '# miniproj\n\n> A small project'),
        ('md', 'Prose may name /tmp and `NoneType` on purpose.'), ('code', "from pathlib import Path\nprint(Path('/tmp/build').resolve())"),
        ('code', 'class Point: pass\nPoint'), ('code', "x = Path('/root/data')")]}, '--check')
    assert r.returncode == 1, r.stderr[-3000:]
    lines = [l for l in r.stderr.splitlines() if l.startswith('index.html, ')]
    assert len(lines) == 2, r.stderr[-3000:]
    assert lines[0].startswith("index.html, nbs/index.ipynb, cell id c2 ('from pathlib import Path'): shows a path of the build machine, '/tmp/build': ...")
    assert lines[1].startswith("index.html, nbs/index.ipynb, cell id c3 ('class Point: pass'): shows `__main__.`, '__main__.': ...__main__.Point...")
    assert 'Docs check failed: pages show what they must not' in r.stderr

def test_quarto_check_finds_what_nbdev_docs_would_fail_on(tmp_path):
    "A cell mixing an import with code that uses an earlier cell renders here, but nbdev-docs (Quarto) fails on it: --quarto-check says so"
    nb = {'index.ipynb': [('md', '# miniproj\n\n> A small project'), ('code', '#| default_exp core'),
                          ('code', '#| export\ndef double(x:int)->int:\n    "Twice `x`"\n    return 2*x'),
                          ('code', 'base = 21'), ('code', 'import math\nprint(double(base), math.pi > 3)')]}
    assert _build_project(tmp_path, nb).returncode == 0
    r = _build_project(tmp_path, nb, '--quarto-check')
    assert r.returncode == 1 and "index.ipynb cannot be published with `nbdev-docs`" in r.stderr, r.stderr[-3000:]
    assert "NameError: name 'base' is not defined" in r.stderr and 'Put the imports in a cell of their own' in r.stderr

# ---------------------------------------------------------------------------------------------------------------
# Notebooks as Markdown pages, API entries as Python

def _page(cells, source='01_m.ipynb', path='m.html'):
    bd = _builder()
    return bd.Page({'cells': cells}, path, 'M', 'The `m` command, *briefly*', source=source)

def test_cells_as_markdown_the_way_quarto_reads_them():
    "Quarto's cell options and callouts, outputs as text blocks, the cell comments `--check` reads, links between pages"
    bd = _builder()
    page = _page([
        {'cell_type': 'markdown', 'source': '## Setup {#setup}\n\n::: {.callout-note}\nA **note**\n:::\n\n```\n:::\n```\n\nSee [`g`](02_g.ipynb#g) and [`h`](https://toolslm-like.github.io/toolslm_like/g.html#h).'},
        {'cell_type': 'code', 'id': 'ab12', 'source': '#| code-fold: show\n#| code-summary: "Exported source"\ndef f(): pass', 'outputs': []},
        {'cell_type': 'code', 'source': '#| include: false\nsecret()', 'outputs': []},
        {'cell_type': 'code', 'source': '#| echo: false\nprint("shown")', 'outputs': [{'output_type': 'stream', 'name': 'stdout', 'text': 'shown\n'}]},
        {'cell_type': 'code', 'id': 'cd34', 'source': 'print("```")', 'outputs': [{'output_type': 'stream', 'name': 'stdout', 'text': '```\n'}]},
    ])
    other = bd.Page({'cells': []}, 'g.html', 'g', source='02_g.ipynb')
    site = bd.Site([page, other], get_config(root))
    site.anchors = {'g.html': {'g'}, 'm.html': {'setup'}}
    md = bd.page_markdown(page, site)
    assert md.startswith('---\ntitle: "M"\ndescription: "The `m` command, *briefly*"\n---\n\n# M\n\n<div class="page-description" markdown>The `m` command, *briefly*</div>')
    assert '## Setup {#setup}' in md and '<div class="admonition note" markdown>\n<p class="admonition-title">Note</p>\n\nA **note**\n\n</div>' in md
    assert '```\n:::\n```' in md, "a ::: inside a code block stays as it is"
    assert 'See [`g`](g.md#g) and `h`.' in md, "a link to an API entry becomes a link to its page; a name with none stays code"
    assert '<details class="code-fold" markdown open>\n<summary>Exported source</summary>\n\n```python\ndef f(): pass\n```\n\n</details>' in md
    assert 'secret' not in md and 'print("shown")' not in md and '```text\nshown\n```' in md
    assert '````text\n```\n````' in md, "a fence longer than the backticks inside"
    assert "<!-- cell: nbs/01_m.ipynb, cell id cd34 (&#x27;print(&quot;```&quot;)&#x27;) -->" in md

def test_readme_links_notebooks_to_their_published_pages():
    "README.md is read on GitHub and PyPI, so a link to a notebook goes to its page on the published site"
    bd = _builder()
    home = bd.Page({'cells': [{'cell_type': 'markdown', 'source': 'See [providers](06_providers.ipynb#tool_schemas), [x](missing.ipynb), [y](https://a.b/c.ipynb).'}]},
                   'index.html', 'proj', 'What it does', source='index.ipynb')
    site = bd.Site([home, bd.Page({'cells': []}, 'providers.html', 'providers', source='06_providers.ipynb')], get_config(root))
    url = site.site_url
    assert url and url.startswith('https://')
    assert bd.readme_markdown(home, site) == ('# proj\n\n> What it does\n\n'
        f'See [providers]({url}providers.html#tool_schemas), [x](missing.ipynb), [y](https://a.b/c.ipynb).\n')

def test_a_warning_at_a_cells_line_names_the_line_and_stays_out_of_readme():
    """A warning raised at a notebook cell's line (a `SandboxWarning` where bubblewrap is missing) shows `cell line N:`,
    not IPython's file name for the cell (an IPython frame); the site shows it, README (committed) leaves stderr out"""
    import warnings
    bd,old = _builder(),warnings.formatwarning
    try:
        bd._nb_outputs().plain_cell_warnings()
        text = warnings.formatwarning('protections are off', UserWarning, '<ipython-input-3-1f2e3d4c>', 3, 'sb = Sandbox()')
        other = warnings.formatwarning('x', UserWarning, '/a/b.py', 7, 'y = 1')
    finally: warnings.formatwarning = old
    assert text == 'cell line 3: UserWarning: protections are off\n  sb = Sandbox()\n' and other.startswith('/a/b.py:7: UserWarning: x')
    err = {'output_type': 'stream', 'name': 'stderr', 'text': text}
    assert bd.output_markdown(err, 'a cell', False) == '' and 'cell line 3' in bd.output_markdown(err, 'a cell', True)

def test_public_names_in_signatures():
    bd = _builder()
    assert bd.public_name('concurrent.futures._base.Executor') == 'concurrent.futures.Executor'
    assert bd.public_name('__main__.ToolHistory') == 'ToolHistory' and bd.public_name('typing.Any') == 'Any'
    assert bd.public_name('json.decoder.JSONDecoder') == 'json.decoder.JSONDecoder', "a public path stays as it is"
    assert bd.public_name('somepkg._private.Thing') == 'Thing', "when the public module is not known, the bare name"
    assert bd.clean_names('x:typing.Optional[concurrent.futures._base.Future]=None, y:NoneType, # see e.g. __main__.Foo') == \
        'x:Optional[concurrent.futures.Future]=None, y:None, # see e.g. Foo'

_api_examples = '''
import concurrent.futures, dataclasses, enum, typing
from typing import Callable
from nbdev.showdoc import show_doc
class SchemaError(ValueError):
    "A function that cannot be a tool"
class ToolHistory(list):
    "Messages of a chat"
    def __init__(self, messages:tuple=(), # The messages so far
                 provider:str|None=None): # Which API they are for
        super().__init__(messages)
@dataclasses.dataclass
class Step:
    "One turn"
    n:int # Its number
    label:str='' # What it is called
    _seen:bool=False # private: not shown
class Colour(enum.Enum):
    "A colour"
    RED = 1
class Call(typing.TypedDict, total=False):
    "A record"
    id:str|None # Its id
    n:int # How many
def run(tools:list[ToolHistory], # Where the calls go
        ns=None, # The namespace
        executor:concurrent.futures.Executor|None=None, # Runs the calls
        on_event:'Callable[[Step], None]|None'=None, # Told about each call
       )->SchemaError: # What comes back
    "Run the tools"
'''

def test_api_entries_read_as_python(tmp_path):
    "show_doc's entries on the site: classes as classes (a TypedDict as its keys with their comments), no `__main__.`, no made-up `NoneType`, public module paths, a source-code block"
    script = tmp_path/'examples.py'  # run as a script, so its classes are `__main__.X`, as in a notebook
    script.write_text(f"import importlib.util, sys\nspec = importlib.util.spec_from_file_location('bd', {str(root/'scripts'/'build_docs.py')!r})\n"
            "bd = importlib.util.module_from_spec(spec); spec.loader.exec_module(bd)\nimport nbdev.showdoc\n"
            "nbdev.showdoc.BasicMarkdownRenderer = bd._api_entry_renderer()\n" + _api_examples +
            "for o in (SchemaError, ToolHistory, Step, Colour, run, Call): print(show_doc(o)._repr_markdown_()); print('=====')\n")
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=root)
    assert r.returncode == 0, r.stderr[-3000:]
    err,hist,step,colour,run,call = r.stdout.split('=====\n')[:6]
    assert err.startswith('### SchemaError { #schemaerror .api-name }\n\n')
    assert '\n<div class="api-signature" markdown>\n\n```python\nclass SchemaError(ValueError):\n```\n\n</div>\n\n*A function that cannot be a tool*' in err
    assert ('```python\nclass ToolHistory(list):\n    def __init__(\n        self,\n        messages:tuple=(), # The messages so far\n'
            '        provider:str | None=None, # Which API they are for\n    ):\n```') in hist
    assert '```python\n@dataclass\nclass Step:\n    n:int # Its number\n    label:str=\'\' # What it is called\n```' in step, step
    assert '```python\nclass Colour(Enum):\n```' in colour
    assert '```python\nclass Call(TypedDict, total=False):\n    id:str | None # Its id\n    n:int # How many\n```' in call, call
    assert '### run { #run .api-name }' in run
    assert ('def run(\n    tools:list[ToolHistory], # Where the calls go\n    ns=None, # The namespace\n'
            '    executor:concurrent.futures.Executor | None=None, # Runs the calls\n') in run, run
    assert '__main__' not in r.stdout and 'NoneType' not in r.stdout and '._base.' not in r.stdout

def test_page_problems_name_the_cell():
    "The page check reads outputs and API signatures (not prose, comments or example code), and names the cell of each problem"
    bd = _builder()
    page = ('<article><!-- cell: nbs/x.ipynb, cell id a1 (&#x27;run()&#x27;) -->'
            '<div class="language-python highlight"><pre><code>Path("/tmp")</code></pre></div>'
            '<div class="language-text highlight"><pre><code>Traceback:\n  File "/work/p/.venv/lib/python3.11/site-packages/m.py"\n'
            '  File "&lt;ipython-input-3-ab&gt;", line 2\n</code></pre></div>'
            '<!-- cell: nbs/x.ipynb, cell id b2 (&#x27;## Prose&#x27;) --><p>A private /tmp; `NoneType`</p>'
            '<!-- cell: nbs/x.ipynb, the API entry of f (its signature or docstring) --><h3>f</h3>'
            '<div class="language-python highlight"><pre><code><span class="k">def</span> f(x:NoneType=None, <span class="c1"># in /tmp</span>\n'
            '  e:concurrent.futures._base.Executor)</code></pre></div><p><em>Writes to /tmp, never site-packages/</em></p>'
            '</article><footer>/home</footer>')
    assert bd.page_problems(page, 'x.html') == [
        'x.html, nbs/x.ipynb, cell id a1 (\'run()\'): shows a path of the build machine, \'/work/p\': ...Traceback: File "/work/p/.venv/lib/python3.11/site-packages/m.py" File "<ipython-i...',
        'x.html, nbs/x.ipynb, cell id a1 (\'run()\'): shows an IPython frame, \'<ipython-input-3\': ...e "/work/p/.venv/lib/python3.11/site-packages/m.py" File "<ipython-input-3-ab>", line 2...',
        "x.html, nbs/x.ipynb, the API entry of f (its signature or docstring): shows `NoneType`, 'NoneType': ...def f(x:NoneType=None, e:concurrent.futures._base.Executor)...",
        "x.html, nbs/x.ipynb, the API entry of f (its signature or docstring): shows a private module path (write the public one), 'concurrent.futures._base.Executor': ...def f(x:NoneType=None, e:concurrent.futures._base.Executor)..."]

def test_page_problems_heading_named_like_an_api_entry():
    "A section heading with an API entry's name lists the name twice in the contents: the check names it; the page title may"
    bd = _builder()
    page = ('<h1 id="toolbox_1">toolbox</h1><h2 id="call_func_1"><code>call_func</code></h2><h2 id="calling">Calling</h2>'
            '<h3 class="api-name" id="call_func">call_func</h3><h3 class="api-name" id="toolbox">Toolbox</h3>')
    assert bd.page_problems(page, 'x.html') == ['x.html: the heading #call_func_1 has the same name as an API entry on the page: '
                                                'the contents list shows the name twice: give the section its own words']

def test_long_outputs_laid_out_over_lines():
    "A long dict, list, JSON or `Name(...)` output line is broken after its commas to fit; nothing but whitespace changes"
    bd = _builder()
    d = {'name': 'add', 'input_schema': {'type': 'object', 'properties': {'a': {'type': 'integer', 'description': 'First, [x]'},
         'b': {'type': 'integer'}}, 'required': ['a', 'b']}, 'ids': list(range(30))}
    for text in (repr(d), json.dumps(d), f'LoopStep(iteration=1, calls={d!r})', '  ' + json.dumps(d, separators=(',', ':'))):
        out = bd.pretty_output(text, 60)
        assert out != text and max(map(len, out.splitlines())) <= 60 + 32, out  # a string longer than the line stays whole
        assert re.sub(r'\s+', '', out) == re.sub(r'\s+', '', text) and 'First, [x]' in out, out
        assert re.findall(r"'[^']*'|\"[^\"]*\"", out) == re.findall(r"'[^']*'|\"[^\"]*\"", text), "strings untouched"
    assert bd.pretty_output(repr(d), 60).splitlines()[:3] == ["{'name': 'add',", " 'input_schema': {'type': 'object',",
                                                               "                  'properties': {'a': {'type': 'integer',"]
    short,prose,unbalanced = repr({'a': 1}),'Error: ' + 'the call (a, b) failed, ' * 8,'{' + "'a': [1, 2, " * 10
    assert [bd.pretty_output(t, 60) for t in (short, prose, unbalanced)] == [short, prose, unbalanced]
    assert bd.pretty_output(f'{short}\n{d}\nend', 60).startswith(short + "\n{'name': 'add',\n 'input_schema'"), "line by line"

def _hooks():
    spec = importlib.util.spec_from_file_location('docs_hooks', root/'docs'/'hooks.py')
    mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
    return mod

def test_signature_and_output_lines_wrap_under_themselves():
    "The hook puts each line of a signature or output in a block that hangs past its indent; example code and multi-line spans stay"
    h = _hooks()
    sig = ('<div class="api-signature">\n<div class="language-python highlight"><pre><span></span><code><span class="k">def</span> f(\n'
           '    x:<span class="nb">int</span>, <span class="c1"># a long comment</span>\n)\n</code></pre></div>\n</div>')
    out = h.on_page_content(sig + '<div class="language-python highlight"><pre><span></span><code>x = 1\ny = 2\n</code></pre></div>')
    assert ('<code data-copy="def f(\n    x:int, # a long comment\n)"><span class="wl" style="--lead:0ch;--hang:4ch"><span class="k">def</span> f(\n</span>'
            '<span class="wl" style="--lead:4ch;--hang:4ch"><span class=lead>    </span>x:<span class="nb">int</span>, '
            '<span class="c1"># a long comment</span>\n</span><span class="wl" style="--lead:0ch;--hang:4ch">)\n</span></code>') in out
    assert out.endswith('<code>x = 1\ny = 2\n</code></pre></div>'), "example code keeps its lines"
    text = '<div class="language-text highlight"><pre><span></span><code>{&#39;a&#39;: 1,\n &#39;b&#39;: 2}\n</code></pre></div>'
    assert '<span class="wl" style="--lead:1ch;--hang:2ch"><span class=lead> </span>&#39;b&#39;: 2}\n</span>' in h.on_page_content(text)
    assert h.wrap_lines('<span class="s">"""a\nb"""</span>\n', 4) == '<span class="s">"""a\nb"""</span>\n', "a span across lines: as it is"

def test_navigation_groups():
    "The pages in two groups, in NAV_GROUPS' order; a page it does not name goes last in the reference; no page twice"
    bd = _builder()
    pages = [bd.Page({'cells': []}, f'{n}.html', n) for n in ('worker', 'funccall', 'index', 'new_one', 'limits')]
    groups = bd.nav_groups(pages)
    assert {g: [p.path for p in ps] for g,ps in groups.items()} == {
        'Guides': ['index.html', 'funccall.html'], 'Reference': ['limits.html', 'worker.html', 'new_one.html']}
    named = [n for ns in bd.NAV_GROUPS.values() for n in ns]
    assert len(named) == len(set(named)) and list(bd.NAV_GROUPS) == ['Guides', 'Reference']
    # every page of this project is placed on purpose (contributing is listed before its notebook exists)
    assert not [p for p in page_of.values() if Path(p).stem not in named], "a page NAV_GROUPS does not place"
    assert {'index', 'funccall', 'providers', 'toolbox', 'toolloop', 'sandbox', 'mcp', 'cli', 'textcalls', 'streaming',
            'indexes', 'contributing'} == set(bd.NAV_GROUPS['Guides'])

# ---------------------------------------------------------------------------------------------------------------
# The built site, read as files

def test_notebooks_found(): assert nbs/'index.ipynb' in notebooks and len(notebooks) >= 2, notebooks

@pytest.mark.parametrize('nb', notebooks, ids=[p.stem for p in notebooks])
def test_page_has_api_docs(built, nb):
    "Each notebook has a page whose API docs have a heading (with the id nbdev's links use) and a source link for each exported name"
    page = built/'_docs'/page_of[nb]
    assert page.is_file(), f"{nb.name} has no page {page_of[nb]}; pages: {sorted(p.name for p in (built/'_docs').rglob('*.html'))}"
    txt,parsed = page.read_text(),parse_page(page)
    for name in exported_names(nb):
        assert name.lower() in parsed.ids or any(i.endswith('.'+name.lower()) for i in parsed.ids), f"{page.name} has no API docs anchor for {name}"
        m = re.search(rf'<h[2-4] class="api-name" id="[^"]*{re.escape(name.lower())}"[^>]*>(?:\w+\.)?{re.escape(name)}<.*?(?=<h[2-4] class="api-name"|$)', txt, re.S)
        assert m, f"{page.name} has no API heading for {name}"
        assert re.search(r'<a class="api-source" href="https://github\.com/toolslm-like/toolslm_like/blob/main/toolslm_like/\w+\.py#L\d+"', m[0]), \
            f"{page.name}: the API entry of {name} has no link to its source"

def _module_pages()->dict:
    "{module of the library: the page of the notebook that exports it (`#| default_exp`)}"
    cfg,found = get_config(root),{}
    for nb,path in page_of.items():
        for c in json.loads(nb.read_text())['cells']:
            if c['cell_type'] == 'code' and (m := re.search(r'^\s*#\|\s*default_exp:?\s+(\S+)', ''.join(c['source']), re.M)):
                found[f'{cfg.lib_name}.{m[1]}'] = path; break
    return found

def exported_names_of(module:str)->list[str]:
    "A module's `__all__` and its constants: the public UPPER_CASE names its top-level statements assign"
    mod = importlib.import_module(module)
    tree = ast.parse(Path(mod.__file__).read_text())
    consts = [e.id for n in tree.body if isinstance(n, (ast.Assign, ast.AnnAssign))
              for t in (n.targets if isinstance(n, ast.Assign) else [n.target]) for e in ast.walk(t)
              if isinstance(e, ast.Name) and re.fullmatch(r'[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*', e.id)]
    return list(dict.fromkeys([*getattr(mod, '__all__', []), *consts]))

def _entry(page_html:str, name:str):
    "The HTML of the API entry of `name` on a page: from its heading to the next entry's"
    m = re.search(rf'<h[2-4] class="api-name" id="{re.escape(name.lower())}".*?(?=<h[2-4] class="api-name"|</article>|$)', page_html, re.S)
    return m and m[0]

def test_every_exported_name_has_an_entry(built):
    """Each name a module exports (its `__all__`, and its constants) has an API entry on its page with a source link,
    a constant's showing its source line; each name of the package's `toolslm_like.__all__` has one on its module's page"""
    import toolslm_like
    site,missing,pages = built/'_docs',[],_module_pages()
    assert len(pages) >= 10, pages
    for module,path in pages.items():
        page = (site/path).read_text()
        for name in exported_names_of(module):
            entry = _entry(page, name)
            if not entry or 'class="api-source"' not in entry: missing.append(f"{module}.{name} (on {path})"); continue
            code = html.unescape(re.sub(r'<[^>]+>', '', ''.join(re.findall(r'<code[^>]*>(.*?)</code>', entry, re.S))))
            if re.fullmatch(r'[A-Z][A-Z0-9_]*', name) and not re.search(rf'\b{re.escape(name)}\b[^\n]*=', code):
                missing.append(f"{module}.{name} (on {path}: its entry does not show its source line)")
    for name,mod in toolslm_like._names.items():
        path = pages.get(f'toolslm_like.{mod}')
        if not path or not _entry((site/path).read_text(), name): missing.append(f"toolslm_like.{name} (no entry on {path})")
    assert not missing, f"{len(missing)} exported names without an API entry:\n" + '\n'.join(missing)

def test_dataclass_fields_show_their_comments(built):
    "The entry of each exported dataclass lists its public fields, each with its type, default and the comment beside it in the source"
    import dataclasses
    bd,problems,seen = _builder(),[],0
    for module,path in _module_pages().items():
        page = (built/'_docs'/path).read_text()
        mod = importlib.import_module(module)
        for name,cls in vars(mod).items(): # those of `__all__` have entries (above); others may too
            if not (isinstance(cls, type) and dataclasses.is_dataclass(cls) and cls.__module__ == module) or name.startswith('_'): continue
            if not (entry := _entry(page, name)):
                if name in getattr(mod, '__all__', ()): problems.append(f"{path}: {name} has no entry")
                continue
            seen += 1
            text = html.unescape(re.sub(r'<[^>]+>', '', entry))
            comments = bd.field_comments(cls)
            for f in dataclasses.fields(cls):
                if f.name.startswith('_'): continue
                line = next((l.strip() for l in text.splitlines() if l.strip().startswith(f'{f.name}:')), None)
                if line is None or (comments.get(f.name) and not line.endswith('# ' + comments[f.name])):
                    problems.append(f"{path}, {name}.{f.name}: shows {line!r}, its comment in the source: {comments.get(f.name)!r}")
    assert seen >= 4 and not problems, f"{seen} dataclasses; fields without their comment:\n" + '\n'.join(problems)

def test_navigation_groups_on_the_site(built):
    "The navigation shows the guides, then the reference, each page under its group once"
    bd = _builder()
    nav = re.search(r'<nav class="md-nav md-nav--primary".*?</nav>\s*</div>\s*</div>\s*</div>', (built/'_docs'/'index.html').read_text(), re.S)[0]
    at = {g: m.start() for g in bd.NAV_GROUPS if (m := re.search(rf'>\s*{g}\s*<', nav))}
    assert list(at) == list(bd.NAV_GROUPS) and at['Guides'] < at['Reference'], f"the navigation shows no groups {list(bd.NAV_GROUPS)}: {at}"
    for g,names in bd.NAV_GROUPS.items():
        for n in names:
            if f'{n}.html' not in page_of.values(): continue
            hits = [m.start() for m in re.finditer(rf'href="(?:\./)?{re.escape(n)}\.html"', nav)]
            assert hits, f"{n}.html is not in the navigation"
            after = [x for x in at.values() if x < hits[0]]
            assert after and max(after) == at[g], f"{n}.html is not under {g}"

def _output_texts(proc_nb:Path):
    "The text of each example output (not API docs) in processed notebook `proc_nb`"
    for c in json.loads(proc_nb.read_text())['cells']:
        src = ''.join(c.get('source', []))
        if c['cell_type'] != 'code' or re.search(r'^#\|\s*(output:\s*(false|asis)|include:\s*false)', src, re.M): continue
        for o in c.get('outputs', []):
            data = o.get('data') or {}
            if set(data) - {'text/plain'}: continue  # shown as HTML, an image or markdown, not as this text
            t = o.get('text') or data.get('text/plain')
            if t: yield ''.join(t) if isinstance(t, list) else t

@pytest.mark.parametrize('nb', notebooks, ids=[p.stem for p in notebooks])
def test_page_shows_example_outputs(built, nb):
    "The examples' real outputs, made by running the notebook during the build, are on the page"
    proc_nb = built/'_proc'/nb.relative_to(nbs)
    page_text = html.unescape(' '.join(parse_page(built/'_docs'/page_of[nb]).text))
    squash = lambda s: re.sub(r'\s+', ' ', s).strip()
    outs = list(_output_texts(proc_nb))
    # outputs the site lays out over lines (`pretty_output`) differ only in whitespace
    bare = lambda s: re.sub(r'\s+', '', s)
    missing = [o[:200] for o in outs if squash(re.sub(r'\x1b\[[0-9;]*m', '', o)) not in squash(page_text)
               and bare(re.sub(r'\x1b\[[0-9;]*m', '', o)) not in bare(page_text)]
    assert not missing, f"{page_of[nb]} lacks outputs: {missing}"

def test_home_page_examples_ran(built):
    "The home page shows what its examples print, so the notebooks really were run"
    text = ' '.join(parse_page(built/'_docs'/'index.html').text)
    assert '3628800' in text and "There is no tool named 'os.system'" in html.unescape(text)

def test_links_resolve(built):
    "Every link between pages (the navigation, prev/next, links from names to their API docs) lands on a page and an anchor"
    site = built/'_docs'
    assert broken_links(site) == []
    for nb,path in page_of.items():
        links = parse_page(site/path).links
        missing = [q for q in page_of.values() if q != path and not any(urldefrag(l)[0].endswith(Path(q).name) for l in links)]
        assert not missing, f"{path} does not link to {missing}"

def test_nothing_from_the_network(built):
    "Pages and stylesheets load only files of the site: no CDN stylesheets, scripts, fonts or images"
    assert network_resources(built/'_docs') == []

def test_search_covers_every_page(built):
    "The search index has every page, and the API entry of `get_schema` as a section of funccall's page"
    docs = json.loads((built/'_docs'/'search'/'search_index.json').read_text())['docs']
    assert set(page_of.values()) <= {urldefrag(d['location'])[0] for d in docs}
    assert any(d['location'] == 'funccall.html#get_schema' and d['title'] == 'get_schema' for d in docs)

def test_pages_show_no_build_machine_details(built):
    """No page shows a path of the build machine, an IPython frame, `__main__.`, `NoneType` or a private module path
    in an output or API entry (what `build_docs.py --check` fails on); each line names the notebook cell to fix"""
    problems = _builder().site_problems(built/'_docs')
    assert not problems, f"{len(problems)} problems:\n" + '\n'.join(problems)

def test_notebooks_keep_the_page_rules():
    "`scripts/nb_outputs.py check`: export cells short, each followed by an example with its output, saved outputs clean"
    r = subprocess.run([sys.executable, str(root/'scripts'/'nb_outputs.py'), 'check'], capture_output=True, text=True, timeout=300, cwd=root)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-2000:]

def test_readme_is_generated_from_index(built):
    "README.md is what the build generates from nbs/index.ipynb; after editing the notebook run `python scripts/build_docs.py`"
    assert (built/'_proc'/'README.md').read_text() == (root/'README.md').read_text(), \
        "README.md differs from what nbs/index.ipynb generates: run `.venv/bin/python scripts/build_docs.py` and commit README.md"

def test_quarto_config_still_publishes():
    "nbs/_quarto.yml and nbs/nbdev.yml stay what `nbdev-docs` expects, so publishing with Quarto works where it is installed"
    from nbdev.quarto import _nbdev_yml
    cfg = get_config(root)
    q,n = yaml.safe_load((nbs/'_quarto.yml').read_text()),yaml.safe_load((nbs/'nbdev.yml').read_text())
    assert q['project']['type'] == 'website' and {'nbdev.yml', 'sidebar.yml'} <= set(q['metadata-files'])
    assert (nbs/q['format']['html']['css']).is_file()
    vals = {k: cfg[k] for k in ['title', 'description', 'branch', 'git_url', 'doc_host', 'doc_baseurl']}
    assert (nbs/'nbdev.yml').read_text() == _nbdev_yml.format(**vals, doc_path=cfg.doc_path.name), \
        "nbs/nbdev.yml differs from what nbdev-docs writes from pyproject.toml, so publishing would rewrite it"
    assert n['project']['output-dir'] == '_docs'

def test_mkdocs_config_matches_the_project():
    "mkdocs.yml names what pyproject.toml says (the build passes those values too; this keeps `mkdocs serve` honest)"
    cfg = get_config(root)
    mk = yaml.load((root/'mkdocs.yml').read_text(), Loader=yaml.BaseLoader)
    assert (mk['site_name'], mk['site_description']) == (cfg.title, cfg.description)
    assert mk['site_url'].rstrip('/') == cfg.doc_host + cfg.doc_baseurl and mk['site_dir'] == '_docs'

# ---------------------------------------------------------------------------------------------------------------
# In headless Chromium, as a reader sees the pages

def _chromium():
    return next((p for p in (shutil.which(n) for n in ('chromium', 'chromium-browser', 'google-chrome')) if p), None)

class Browser:
    "Headless Chromium driven over the DevTools protocol on a pipe (no extra packages, no port)"
    flags = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
             '--disable-component-update', '--disable-sync', '--disable-extensions', '--disable-default-apps', '--mute-audio',
             # a request that does get made goes nowhere: the check sees it, the network never does
             '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1', '--remote-debugging-pipe', '--window-size=1280,900']

    def __init__(self, exe:str):
        self.profile = tempfile.mkdtemp(prefix='chromium-profile-')
        to_chrome,self._w = os.pipe()
        self._r,from_chrome = os.pipe()
        def fds(): os.dup2(to_chrome, 3); os.dup2(from_chrome, 4)
        self.log = open(Path(self.profile)/'chromium.log', 'w+')
        self.proc = subprocess.Popen([exe, *self.flags, f'--user-data-dir={self.profile}', 'about:blank'], pass_fds=(3, 4),
                                     preexec_fn=fds, stdout=self.log, stderr=self.log)
        os.close(to_chrome); os.close(from_chrome)
        self._buf,self._id,self.events = b'',0,[]
        target = self.send('Target.createTarget', url='about:blank')['targetId']
        self.session = self.send('Target.attachToTarget', targetId=target, flatten=True)['sessionId']
        for domain in ('Page', 'Network', 'Runtime'): self.send(f'{domain}.enable', session=True)

    def _read(self, deadline):
        while b'\0' not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._r], [], [], left)[0]: raise TimeoutError(f'Chromium did not answer:\n{self._log_tail()}')
            chunk = os.read(self._r, 1 << 16)
            if not chunk: raise RuntimeError(f'Chromium closed the DevTools pipe:\n{self._log_tail()}')
            self._buf += chunk
        msg,_,self._buf = self._buf.partition(b'\0')
        return json.loads(msg)

    def _log_tail(self): self.log.flush(); self.log.seek(0); return self.log.read()[-3000:]

    def send(self, method, session=False, timeout=30, **params):
        self._id += 1
        msg = {'id': self._id, 'method': method, 'params': params}
        if session: msg['sessionId'] = self.session
        os.write(self._w, json.dumps(msg).encode() + b'\0')
        deadline = time.monotonic() + timeout
        while True:
            m = self._read(deadline)
            if m.get('id') == self._id:
                if 'error' in m: raise RuntimeError(f"{method}: {m['error']}")
                return m['result']
            self.events.append(m)

    def wait_for(self, method, timeout=30):
        deadline = time.monotonic() + timeout
        while True:
            for i,e in enumerate(self.events):
                if e.get('method') == method: return self.events.pop(i)
            self.events.append(self._read(deadline))

    def open(self, url:str)->dict:
        "Load `url` and return the requests it made, the loads that failed, and what the page looks like to a reader"
        self.events.clear()
        self.send('Page.navigate', session=True, url=url)
        self.wait_for('Page.loadEventFired')
        seen = self.evaluate(_READER_VIEW)
        seen['requests'] = [e['params']['request']['url'] for e in self.events if e.get('method') == 'Network.requestWillBeSent']
        seen['failed'] = [e['params'].get('errorText') for e in self.events if e.get('method') == 'Network.loadingFailed']
        return seen

    def viewport(self, width:int, height:int):
        "Lay pages out as a screen `width` x `height` CSS pixels shows them (a phone's, when narrow)"
        self.send('Emulation.setDeviceMetricsOverride', session=True, width=width, height=height, deviceScaleFactor=1, mobile=width < 600)

    def search(self, words:str, timeout=15)->list[str]:
        "Type `words` into the open page's search box; the links of the results it lists"
        self.evaluate("(() => { const t = document.querySelector('label.md-header__button[for=__search], label[for=__search]');"
                      " const box = document.getElementById('__search'); if (box) { box.checked = true; box.dispatchEvent(new Event('change')); } })()")
        self.evaluate("document.querySelector('input.md-search__input').focus()")
        self.send('Input.insertText', session=True, text=words)
        return self.until("[...document.querySelectorAll('.md-search-result__link')].map(a => a.href)", timeout) or []

    def until(self, js:str, timeout=15):
        "The value of `js` in the open page once it is truthy (looked at every 50 ms), or its last value after `timeout` s"
        deadline = time.monotonic() + timeout
        while not (value := self.evaluate(js)) and time.monotonic() < deadline: time.sleep(0.05)
        return value

    def evaluate(self, js:str):
        r = self.send('Runtime.evaluate', session=True, expression=js, returnByValue=True)
        if 'exceptionDetails' in r: raise RuntimeError(r['exceptionDetails'])
        return r['result'].get('value')

    def close(self):
        try: self.send('Browser.close', timeout=5)
        except Exception: pass
        try: self.proc.wait(10)
        except subprocess.TimeoutExpired: self.proc.kill(); self.proc.wait()
        os.close(self._w); os.close(self._r); self.log.close()
        shutil.rmtree(self.profile, ignore_errors=True)

# What a reader sees: the visible text (innerText leaves out what CSS hides), the headings that are on screen,
# where each link goes (as the browser resolves it), and how the page is laid out
_READER_VIEW = '''(() => {
  const visible = el => !!el && !!(el.offsetWidth || el.offsetHeight || el.getClientRects().length) && getComputedStyle(el).visibility !== 'hidden';
  const box = el => { if (!visible(el)) return null; const r = el.getBoundingClientRect(); return {top: r.top, bottom: r.bottom, left: r.left, right: r.right}; };
  const article = document.querySelector('article') || document.body;
  const code = [...article.querySelectorAll('pre > code')];
  return {
    title: document.title,
    h1: ((article.querySelector('h1') || {}).innerText || '').replace(/¶$/, ''),  // less its anchor link
    text: article.innerText,
    headings: [...article.querySelectorAll('h1[id],h2[id],h3[id],h4[id]')].filter(visible).map(h => [h.id, h.innerText]),
    ids: [...document.querySelectorAll('[id]')].map(e => e.id),
    links: [...document.querySelectorAll('a[href]')].map(a => a.href),
    nav_links: [...document.querySelectorAll('nav.md-nav--primary a.md-nav__link')].filter(visible).length,
    toc_links: [...document.querySelectorAll('nav.md-nav--secondary a.md-nav__link')].filter(visible).map(a => a.getAttribute('href')),
    header: box(document.querySelector('header.md-header')),
    header_position: getComputedStyle(document.querySelector('header.md-header') || document.body).position,
    article: box(article), toc: box(document.querySelector('.md-sidebar--secondary')), primary_nav: box(document.querySelector('.md-sidebar--primary')),
    first_text: box(article.querySelector('h1 ~ p, h1 ~ div p')),
    viewport: {width: window.innerWidth, height: window.innerHeight}, scroll_width: document.documentElement.scrollWidth,
    code_blocks: code.length, copy_buttons: code.filter(c => c.parentElement.querySelector('button[data-md-type=copy], button.md-clipboard')).length,
    anchors: [...article.querySelectorAll('h2[id],h3[id]')].filter(h => h.querySelector(`a.headerlink[href="#${CSS.escape(h.id)}"]`)).length,
    headings_23: article.querySelectorAll('h2[id],h3[id]').length,
    api_entries: article.querySelectorAll('.api-name').length,
    api_sources: [...article.querySelectorAll('.api-name')].filter(h => h.nextElementSibling && visible(h.nextElementSibling.querySelector('a.api-source[href^="https://github.com/"]'))).length,
    code_highlighted: [...article.querySelectorAll('.highlight .k, .highlight .kn')].some(e => getComputedStyle(e).color !== getComputedStyle(e.parentElement).color),
    broken_images: [...document.images].filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src.slice(0, 80)),
  };
})()'''

def _off_machine(urls):
    local = ('file', 'data', 'about', 'blob', 'chrome', 'devtools')
    return [u for u in urls if urlparse(u).scheme not in local and urlparse(u).hostname not in ('localhost', '127.0.0.1', '::1')]

@pytest.fixture(scope='module')
def browser():
    exe = _chromium()
    if exe is None:
        if os.environ.get('TOOLSLM_LIKE_REQUIRE_CHROMIUM'): pytest.fail("Chromium is needed for the docs check: apt-get install -y chromium")
        pytest.skip("Chromium is not installed (apt-get install -y chromium); CI installs it and runs this check")
    b = Browser(exe)
    yield b
    b.close()

@pytest.fixture(scope='module')
def served(built):
    "The built site served on 127.0.0.1, as a reader's browser gets it (search's worker does not run from file:// pages)"
    handler = functools.partial(_QuietHandler, directory=str(built/'_docs'))
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f'http://127.0.0.1:{server.server_address[1]}/'
    server.shutdown(); server.server_close(); thread.join(10)

class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args): pass

def test_browser_check_sees_off_machine_requests(browser, tmp_path):
    "The Chromium check can fail: a page with a CDN stylesheet and a remote image is caught"
    (tmp_path/'remote.html').write_text('<!doctype html><title>t</title><link rel="stylesheet" href="https://cdn.example.com/x.css">'
                                        '<h1>Hi</h1><img src="http://198.51.100.7/y.png">')
    seen = browser.open((tmp_path/'remote.html').as_uri())
    assert sorted(_off_machine(seen['requests'])) == ['http://198.51.100.7/y.png', 'https://cdn.example.com/x.css']
    assert seen['h1'] == 'Hi' and len(seen['broken_images']) == 1

DESKTOP,PHONE = (1280, 900),(400, 800)

def test_pages_in_chromium(served, browser):
    "Every page renders styled at desktop width, shows its title and API names, loads nothing off the machine, and its links land"
    browser.viewport(*DESKTOP)
    seen = {}
    for nb,path in page_of.items():
        url = served + path
        s = seen[url] = browser.open(url)
        assert s['h1'] and s['title'].startswith(s['h1']), (path, s['title'], s['h1'])
        assert _off_machine(s['requests']) == [] and s['failed'] == [], (path, s['requests'], s['failed'])
        assert s['header_position'] == 'sticky' and s['nav_links'] >= len(page_of) and s['broken_images'] == [], (path, s['nav_links'])
        headings = ' '.join(f'{i} {t}' for i,t in s['headings'])
        for name in exported_names(nb):
            assert name in s['text'], f"{name} is not visible on {path}"
            assert re.search(rf'\S*{re.escape(name.lower())} \S*{re.escape(name)}', headings), f"{name} has no visible API heading on {path}"
        if exported_names(nb): assert s['code_highlighted'], f"{path}: code is not highlighted"
        # the page's contents beside the text, on the right; a copy button on each code block; an anchor link on each heading
        if s['headings_23']:
            assert s['toc'] and s['toc']['left'] >= s['article']['right'] - 1 and len(s['toc_links']) >= min(s['headings_23'], 3), (path, s['toc'], s['article'])
        assert s['copy_buttons'] == s['code_blocks'], f"{path}: {s['code_blocks'] - s['copy_buttons']} code blocks have no copy button"
        assert s['anchors'] == s['headings_23'], f"{path}: {s['headings_23'] - s['anchors']} headings have no anchor link"
        assert s['api_sources'] == s['api_entries'] >= len(exported_names(nb)), f"{path}: {s['api_entries'] - s['api_sources']} API entries show no source link"
    # every link into the site, as the browser resolved it, lands on a page it has loaded, at an id that page has
    for url,s in list(seen.items()):
        for link in s['links']:
            if not link.startswith(served): continue
            target,frag = urldefrag(link)
            if target.endswith('/'): target += 'index.html'
            if target not in seen: seen[target] = browser.open(target)
            assert seen[target]['h1'] or not target.endswith('.html'), f"{url} links to {target}, which shows nothing"
            assert not frag or unquote(frag) in seen[target]['ids'], f"{url} links to {link}: no such anchor"

# Code and output boxes on a page as a reader sees them: for each, the notebook cell it comes from (the build's
# `<!-- cell: ... -->` comments), what it is (example code, an output, an API signature), its longest line, and
# whether it scrolls sideways (its text wider than the box)
_BOXES = '''(() => {
  const article = document.querySelector('article'), walker = document.createTreeWalker(article, NodeFilter.SHOW_COMMENT | NodeFilter.SHOW_ELEMENT);
  const out = []; let cell = '';
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (n.nodeType === Node.COMMENT_NODE) { const m = n.data.match(/^\\s*cell: (.*?)\\s*$/s); if (m) cell = m[1]; continue; }
    if (n.tagName !== 'PRE') continue;
    const code = n.querySelector('code') || n;
    out.push({cell, kind: n.closest('.api-signature') ? 'signature' : n.closest('.language-text') ? 'output' : 'code',
              longest: Math.max(...n.innerText.split('\\n').map(l => l.length)),
              scrolls: n.scrollWidth > n.clientWidth + 1 || code.scrollWidth > code.clientWidth + 1});
  }
  return out;
})()'''
WIDE = (1400, 900)
MAX_SCROLLING = 0.10 # of a page's code and output boxes, at most, may scroll sideways at 1400 px

def test_boxes_rarely_scroll_sideways(served, browser):
    """At 1400 px, at most 10% of a page's code and output boxes scroll sideways, and no signature or output does:
    signatures and outputs wrap, a 120-character line of code fits. Fails with every page's figure, and the cells of the
    boxes that scroll on the pages over the line (their code has lines too long to fit: shorten them in the notebook)"""
    browser.viewport(*WIDE)
    figures,wrapping,over = {},[],[]
    for path in page_of.values():
        browser.open(served + path)
        boxes = browser.evaluate(_BOXES)
        wide = [b for b in boxes if b['scrolls']]
        figures[path] = (len(wide), len(boxes))
        wrapping += [f"{path}: {b['kind']} of {html.unescape(b['cell'])}" for b in wide if b['kind'] != 'code']
        if len(wide) > MAX_SCROLLING * len(boxes):
            over += [f"{path}: {html.unescape(b['cell'])}: a line of {b['longest']} characters" for b in wide]
    shown = '\n'.join(f"{p}: {w} of {n} boxes scroll ({100*w/max(n, 1):.0f}%)" for p,(w,n) in figures.items())
    assert not wrapping, "signatures and outputs must wrap, these scroll:\n" + '\n'.join(wrapping) + '\n' + shown
    assert not over, f"more than {MAX_SCROLLING:.0%} of the boxes scroll sideways at {WIDE[0]} px:\n{shown}\n" + '\n'.join(over)

def test_signatures_and_outputs_wrap_on_a_phone(served, browser):
    "At 400 px no signature or output scrolls sideways: a parameter's comment wraps under it"
    browser.viewport(*PHONE)
    for path in ('funccall.html', 'toolloop.html', 'providers.html'):
        browser.open(served + path)
        boxes = browser.evaluate(_BOXES)
        assert any(b['kind'] == 'signature' for b in boxes) and any(b['kind'] == 'output' for b in boxes), path
        wide = [f"{b['kind']} of {html.unescape(b['cell'])} (a line of {b['longest']})" for b in boxes if b['scrolls'] and b['kind'] != 'code']
        assert not wide, f"{path} at {PHONE[0]} px:\n" + '\n'.join(wide)
    # the copy button copies a wrapped signature as it reads in the source (Material copies the nearest `data-copy`)
    browser.open(served + 'toolloop.html')
    copied = browser.evaluate("(() => { const c = document.querySelector('#loopstep ~ .api-signature pre > code');"
                              " const t = c.closest('[data-copy]'); return t ? t.getAttribute('data-copy') : c.innerText; })()")
    assert copied.startswith('@dataclass\nclass LoopStep:\n    iteration:int # '), copied

def test_search_finds_a_name(served, browser):
    "Typing a name into the search box lists the page that documents it, linked to its API entry"
    browser.viewport(*DESKTOP)
    browser.open(served + 'index.html')
    hrefs = [re.sub(r'\?h=[^#]*', '', h) for h in browser.search('get_schema')]  # ?h= marks the words on the page
    assert served + 'funccall.html#get_schema' in hrefs, hrefs
    assert any(h.startswith(served + 'indexes.html') for h in browser.search('ToolIndex')), "a second search, on another page"

@pytest.mark.parametrize('size', [DESKTOP, PHONE], ids=['desktop', 'phone'])
def test_linked_heading_is_below_the_header(served, browser, size):
    "Following a link to an API entry shows its heading on screen, not under the sticky header"
    browser.viewport(*size)
    browser.open('about:blank')
    browser.open(served + 'funccall.html#get_schema')
    browser.until('window.scrollY > 0') # the browser scrolls to the heading after the load
    pos = browser.evaluate('''(() => { const h = document.getElementById('get_schema').getBoundingClientRect();
        const head = document.querySelector('header.md-header').getBoundingClientRect();
        return {top: h.top, bottom: h.bottom, header: head.bottom, height: window.innerHeight, scrolled: window.scrollY}; })()''')
    assert pos['scrolled'] > 0 and pos['header'] <= pos['top'] and pos['bottom'] < pos['height'], pos

def test_phone_layout(served, browser):
    """At 400 px: a small header, the page's text within the first screen, the navigation tucked away, no sideways
    scrolling; copy buttons, heading anchors, source links and search work there too"""
    browser.viewport(*PHONE)
    for path in ('funccall.html', 'index.html', 'toolbox.html'):
        s = browser.open(served + path)
        assert s['viewport']['width'] == PHONE[0] and s['scroll_width'] <= PHONE[0], (path, s['scroll_width'])
        assert s['header']['bottom'] - s['header']['top'] <= 60, (path, s['header'])
        assert s['first_text'] and s['first_text']['top'] < PHONE[1] * 0.6, (path, s['first_text'])
        assert s['primary_nav'] is None or s['primary_nav']['right'] <= 0, (path, s['primary_nav'])
        assert s['copy_buttons'] == s['code_blocks'] > 0 and s['anchors'] == s['headings_23'] and s['api_sources'] == s['api_entries'], (path, s)
    hrefs = [re.sub(r'\?h=[^#]*', '', h) for h in browser.search('call_func')]
    assert served + 'funccall.html#call_func' in hrefs, hrefs
