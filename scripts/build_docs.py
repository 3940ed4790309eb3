#!/usr/bin/env python
"""Build the docs site offline into `_docs/` from the notebooks, and README.md from `nbs/index.ipynb`.

    .venv/bin/python scripts/build_docs.py           # writes _docs/ and README.md
    .venv/bin/python scripts/build_docs.py --check   # writes _docs/; fails if README.md is not what it generates

Publishing with Quarto (`nbdev-docs`) needs Quarto, which is not always at hand; this needs nothing from the
network. Each notebook is run from top to bottom in a fresh interpreter (as `nbdev-test` runs it), with the
`show_doc` cells nbdev adds for every exported function and class, so the pages show the examples' real
outputs and the API docs. Then nbdev's own docs processors (the ones `nbdev-proc-nbs` applies: frontmatter,
hidden and exported cells, links between names, ...) turn it into `_proc/<notebook>.ipynb`, and each processed
notebook is rendered to one HTML page with markdown-it-py and Pygments: the page's prose, its code with outputs,
and a sidebar linking every page. The pages load only local files (stylesheets next to them, images inline).

`nbdev-proc-nbs` itself is not called: before processing it tries to install Quarto (with `sudo` and `curl`), and
its `show_doc` step runs only the import and export cells, so a page whose examples were never run has no outputs.
`--quarto-check` also puts each notebook through exactly that processing, and fails on the notebooks that
publishing with `nbdev-docs` would fail on.
"""
import argparse, concurrent.futures, functools, difflib, html, json, os, posixpath, re, shutil, subprocess, sys
from dataclasses import dataclass, field
from pathlib import Path

root = Path(__file__).resolve().parent.parent

# Files under `nbs/` that are the site's sources or config, never copied into the site as they are
_not_assets = {'.ipynb', '.yml', '.yaml', '.qmd', '.md', '.py', '.pyc', '.toml'}
# Seconds one notebook may take to run before the build gives up on it (the notebooks run in seconds)
NOTEBOOK_TIMEOUT = 900

class BuildError(RuntimeError):
    "The site could not be built: names the notebook and what went wrong"

class QuartoError(BuildError):
    "A notebook that this build renders but that publishing with `nbdev-docs` (Quarto) would fail on"
# How a notebook's child process says which of the two went wrong
_EXIT_FAILED,_EXIT_QUARTO = 1,3

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
    from nbdev.config import get_config
    from nbdev.processors import FilterDefaults, add_show_docs, exec_show_docs
    from nbdev.test import _skip_cell
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
    flags = cfg.tst_flags.split() if isinstance(cfg.tst_flags, str) else list(cfg.tst_flags or [])
    skip = _skip_cell(nb, flags)
    sys.path.insert(0, str(cfg.config_path))
    os.environ['IN_TEST'] = '1'
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
    dest.parent.mkdir(parents=True, exist_ok=True)
    write_nb(nb, dest)

def api_docs_in_source_order(cells:list)->list:
    "`cells` with each run of `show_doc` cells nbdev added put in the order the names are defined (nbdev adds them reversed)"
    out,run = [],[]
    for c in cells + [None]:
        if c is not None and getattr(c, 'has_sd', False): run.append(c); continue
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

def process_all(nbs:Path, proc:Path, workers:int, quarto_check:bool=False)->list[Path]:
    "Run and process every notebook in `nbs` into `proc`, `workers` at a time; the processed paths"
    nbs_list = find_notebooks(nbs)
    if not nbs_list: raise BuildError(f"No notebooks found in {nbs}")
    dests = [proc/p.relative_to(nbs) for p in nbs_list]
    with concurrent.futures.ThreadPoolExecutor(max(1, workers)) as ex:
        futs = [ex.submit(_run_child, s, d, quarto_check) for s,d in zip(nbs_list, dests)]
        errors = [str(e) for f in futs if (e := f.exception()) is not None]
    if errors: raise BuildError('\n\n'.join(errors))
    return dests

# ---------------------------------------------------------------------------------------------------------------
# Reading processed notebooks

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
    toc: list = field(default_factory=list)

def read_page(proc_nb:Path, proc:Path)->Page:
    "The `Page` for processed notebook `proc_nb` (under `proc`): its frontmatter gives title, description and file name"
    import yaml
    nb = json.loads(proc_nb.read_text())
    rel = proc_nb.relative_to(proc)
    fm,cells = {},nb['cells']
    if cells and cells[0]['cell_type'] == 'raw' and _as_text(cells[0]['source']).lstrip().startswith('---'):
        fm = yaml.safe_load(_as_text(cells[0]['source']).strip().strip('-')) or {}
        nb['cells'] = cells[1:]
    from nbdev.config import nbpath2html
    out = fm.get('output-file') or nbpath2html(rel).name
    return Page(nb, (rel.parent/out).as_posix(), str(fm.get('title') or rel.stem), str(fm.get('description') or ''),
                rel.as_posix())

# ---------------------------------------------------------------------------------------------------------------
# Markdown

def slugify(text:str)->str:
    "The id Pandoc (so Quarto) gives a heading, which is also the anchor nbdev's doc links point at"
    s = re.sub(r'[^\w\s.-]', '', text.strip().lower())
    s = re.sub(r'\s+', '-', s)
    return re.sub(r'^[^a-z_]+', '', s) or 'section'

_re_fence = re.compile(r'^\s*(`{3,}|~{3,})')
_re_div_open = re.compile(r'^:::+\s*(?:\{([^}]*)\}|([\w-]+))\s*$')
_re_div_close = re.compile(r'^:::+\s*$')

def _div_attrs(spec:str)->str:
    classes = [t[1:] for t in spec.split() if t.startswith('.')]
    ids = [t[1:] for t in spec.split() if t.startswith('#')]
    attrs = f' class="{html.escape(" ".join(classes))}"' if classes else ''
    return attrs + (f' id="{html.escape(ids[0])}"' if ids else '')

def quarto_divs(md:str)->str:
    "Pandoc fenced divs (`::: {.callout-note}` ... `:::`) as HTML divs, leaving code blocks alone"
    out,fence = [],None
    for line in md.splitlines():
        m = _re_fence.match(line)
        if fence:
            if m and m[1][0] == fence[0] and len(m[1]) >= len(fence): fence = None
        elif m: fence = m[1]
        elif (d := _re_div_open.match(line)):
            spec = d[1] if d[1] is not None else '.'+d[2]
            out += ['', f'<div{_div_attrs(spec)}>', '']; continue
        elif _re_div_close.match(line):
            out += ['', '</div>', '']; continue
        out.append(line)
    return '\n'.join(out)

_re_heading_attrs = re.compile(r'\s*\{([^}]*)\}\s*$')

def _highlight(code, lang, attrs):
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound
    try: lexer = get_lexer_by_name(lang or 'text')
    except ClassNotFound: lexer = get_lexer_by_name('text')
    return f'<pre class="highlight"><code>{highlight(code, lexer, HtmlFormatter(nowrap=True))}</code></pre>'

def _tex_as_written(content:str, opts:dict)->str:
    dollars = '$$' if opts.get('display_mode') else '$'
    return f'{dollars}{html.escape(content)}{dollars}'

class Site:
    "Renders processed notebooks into pages that link to each other"
    def __init__(self, pages:list[Page], cfg):
        self.pages,self.cfg = pages,cfg
        self.by_source = {p.source: p for p in pages}
        self.site_url = f"{cfg.doc_host.rstrip('/')}{cfg.doc_baseurl.rstrip('/')}/" if cfg.doc_host else None
        self.md = self._markdown()
        self.ids = None # {page path: its element ids}, known once every page has been rendered

    def _markdown(self):
        from markdown_it import MarkdownIt
        from mdit_py_plugins.attrs import attrs_plugin
        from mdit_py_plugins.deflist import deflist_plugin
        from mdit_py_plugins.dollarmath import dollarmath_plugin
        from mdit_py_plugins.footnote import footnote_plugin
        from mdit_py_plugins.tasklists import tasklists_plugin
        md = (MarkdownIt('commonmark', {'html': True, 'highlight': _highlight}).enable(['table', 'strikethrough'])
              .use(attrs_plugin).use(deflist_plugin).use(footnote_plugin).use(tasklists_plugin)
              # TeX between dollars, as Pandoc reads it, kept out of emphasis and shown as written (no math fonts offline)
              .use(dollarmath_plugin, allow_space=False, allow_digits=False, double_inline=True, renderer=_tex_as_written))
        md.core.ruler.push('page_links', self._page_links)
        return md

    def _local_href(self, href:str, page:Page)->str:
        "`href` made relative to `page` when it points into this site (its published URL, or a notebook)"
        if self.site_url and href.startswith(self.site_url): target = href[len(self.site_url):]
        elif re.match(r'^[a-z][a-z0-9+.-]*:|^//|^#', href, re.I): return href
        else: target = posixpath.normpath(posixpath.join(posixpath.dirname(page.source), href)) if href else href
        path,_,frag = target.partition('#')
        if path.endswith('.ipynb') and path in self.by_source: path = self.by_source[path].path
        elif path.endswith('.ipynb'): return href
        if not path: return href
        rel = posixpath.relpath(path, posixpath.dirname(page.path) or '.')
        return rel + ('#'+frag if frag else '')

    def _page_links(self, state):
        "Markdown-it core rule: heading ids (and the page's contents), links into the site made relative"
        page,ids = state.env['page'],state.env['ids']
        toks = state.tokens
        for i,tok in enumerate(toks):
            if tok.type == 'heading_open':
                inline = toks[i+1]
                if inline.children and inline.children[-1].type == 'text' and (m := _re_heading_attrs.search(inline.children[-1].content)):
                    inline.children[-1].content = inline.children[-1].content[:m.start()]
                    for a in m[1].split():
                        if a.startswith('#'): tok.attrSet('id', a[1:])
                        elif a.startswith('.'): tok.attrJoin('class', a[1:])
                text = ''.join(c.content for c in inline.children or [] if c.type in ('text', 'code_inline'))
                hid = tok.attrGet('id') or slugify(text)
                base,n = hid,1
                # an API heading owns its name's id (nbdev's links point there), even when prose above uses the same words
                taken = ids if state.env.get('api_docs') else ids | state.env['api_ids']
                while hid in taken: hid,n = f'{base}-{n}',n+1
                ids.add(hid)
                tok.attrSet('id', hid)
                if tok.tag in ('h2', 'h3'): page.toc.append((int(tok.tag[1]), text.strip(), hid))
            for t in [tok, *(tok.children or [])]:
                for attr in ('href', 'src'):
                    v = t.attrGet(attr)
                    if isinstance(v, str): t.attrSet(attr, self._local_href(v, page))
                if t.type == 'image' and isinstance(t.attrGet('src'), str) and t.attrGet('src').startswith('attachment:'):
                    t.attrSet('src', state.env['attachments'].get(t.attrGet('src')[11:], t.attrGet('src')))
            if tok.children: tok.children = self._unlink_undocumented(tok.children, page)

    def _unlink_undocumented(self, children:list, page:Page)->list:
        "nbdev links every name it knows, also names without API docs (private ones): those stay code, without the link"
        if self.ids is None: return children
        drop = set()
        for i,t in enumerate(children[:-2]):
            if t.type != 'link_open' or children[i+1].type != 'code_inline' or children[i+2].type != 'link_close': continue
            path,_,frag = (t.attrGet('href') or '').partition('#')
            target = posixpath.normpath(posixpath.join(posixpath.dirname(page.path), path)) if path else page.path
            if frag and target in self.ids and frag not in self.ids[target]: drop |= {i, i+2}
        return [t for i,t in enumerate(children) if i not in drop]

    def markdown(self, text:str, env:dict)->str: return self.md.render(quarto_divs(text), env)

    # -- cells
    def render_output(self, out:dict, opts:dict, env:dict)->str:
        kind = out.get('output_type')
        if kind == 'stream':
            return f'<div class="cell-output cell-output-{out.get("name", "stdout")}"><pre><code>{html.escape(strip_ansi(_as_text(out["text"])))}</code></pre></div>'
        if kind == 'error':
            tb = strip_ansi('\n'.join(out.get('traceback') or [f"{out.get('ename')}: {out.get('evalue')}"]))
            return f'<div class="cell-output cell-output-error"><pre><code>{html.escape(tb)}</code></pre></div>'
        data = out.get('data') or {}
        if 'text/markdown' in data and opts.get('output') == 'asis': return self.markdown(_as_text(data['text/markdown']), {**env, 'api_docs': True})
        if 'text/html' in data: body = _as_text(data['text/html'])
        elif 'image/svg+xml' in data: body = _as_text(data['image/svg+xml'])
        elif (img := next((m for m in ('image/png', 'image/jpeg', 'image/gif', 'image/webp') if m in data), None)):
            b64 = _as_text(data[img]).replace('\n', '')
            body = f'<img src="data:{img};base64,{b64}" alt="output image">'
        elif 'text/markdown' in data: body = self.markdown(_as_text(data['text/markdown']), env)
        elif 'application/json' in data: body = f'<pre><code>{html.escape(json.dumps(data["application/json"], indent=2))}</code></pre>'
        elif 'text/plain' in data: body = f'<pre><code>{html.escape(strip_ansi(_as_text(data["text/plain"])))}</code></pre>'
        else: return ''
        return f'<div class="cell-output cell-output-display">{body}</div>'

    def render_cell(self, cell:dict, env:dict)->str:
        src = _as_text(cell.get('source', ''))
        env['attachments'] = {k: f'data:{m};base64,{v}' for k,d in (cell.get('attachments') or {}).items() for m,v in d.items()}
        if cell['cell_type'] == 'markdown': return self.markdown(src, env)
        if cell['cell_type'] == 'raw':
            fmt = (cell.get('metadata') or {}).get('format', '')
            return src if fmt in ('text/html', 'html') else ''
        opts,code = split_directives(src)
        if _false(opts.get('include')): return ''
        parts = []
        if code.strip() and not _false(opts.get('echo')):
            code_html = _highlight(code, 'python', None)
            if opts.get('code-fold') in ('show', 'true', 'hide'):
                summary = html.escape(opts.get('code-summary') or 'Code')
                code_html = f'<details class="code-fold"{" open" if opts["code-fold"] == "show" else ""}><summary>{summary}</summary>{code_html}</details>'
            parts.append(f'<div class="sourceCode">{code_html}</div>')
        if not _false(opts.get('output')): parts += [self.render_output(o, opts, env) for o in cell.get('outputs') or []]
        parts = [p for p in parts if p]
        if not parts: return ''
        if opts.get('output') == 'asis' and _false(opts.get('echo')): return '\n'.join(parts)
        return '<div class="cell">\n' + '\n'.join(parts) + '\n</div>'

    def render_body(self, page:Page)->tuple[str,set]:
        "The page's content and its element ids"
        env = {'page': page, 'ids': {'content', 'sidebar', 'title'}, 'api_ids': api_ids(page.nb)}
        page.toc.clear()
        return '\n'.join(h for c in page.nb['cells'] if (h := self.render_cell(c, env))), env['ids']

    def render_all(self)->dict:
        "{page path: html} for every page; bodies are rendered twice: the first time finds each page's anchors"
        self.ids = {p.path: self.render_body(p)[1] for p in self.pages}
        return {p.path: self.render_page(p) for p in self.pages}

    def render_page(self, page:Page)->str:
        body = self.render_body(page)[0]
        up = posixpath.relpath('.', posixpath.dirname(page.path) or '.')
        up = '' if up == '.' else up + '/'
        rel = lambda p: posixpath.relpath(p.path, posixpath.dirname(page.path) or '.')
        i = self.pages.index(page)
        prev_p,next_p = (self.pages[i-1] if i else None), (self.pages[i+1] if i+1 < len(self.pages) else None)
        # the description is markdown to Quarto too (`code`, *emphasis*); the <meta> tag keeps its plain text
        env = {'page': Page({'cells': []}, page.path, page.title, source=page.source), 'ids': set(), 'api_ids': set(), 'attachments': {}}
        description_html = self.md.renderInline(page.description, env) if page.description else ''
        return _page_template().render(page=page, body=body, up=up, pages=self.pages, rel=rel, prev_p=prev_p, next_p=next_p,
                                       description_html=description_html,
                                       site_title=self.cfg.title, site_description=self.cfg.description,
                                       repo_url=self.cfg.git_url)

_re_api_heading = re.compile(r'^#{2,6}\s+(\S.*?)\s*$', re.M)

def api_ids(nb:dict)->set:
    "The heading ids of the API docs (`show_doc` outputs) in processed notebook `nb`"
    return {slugify(m[1]) for c in nb['cells'] for o in c.get('outputs') or []
            for m in _re_api_heading.finditer(_as_text((o.get('data') or {}).get('text/markdown', '')))}

_re_ansi = re.compile(r'\x1B(?:[@-Z\\-_]|\[[0-?]*[ -/]*[@-~])')
def strip_ansi(s:str)->str: return _re_ansi.sub('', s)

@functools.cache
def _page_template():
    import jinja2
    return jinja2.Environment(autoescape=True, trim_blocks=True, lstrip_blocks=True).from_string(PAGE_TEMPLATE)

PAGE_TEMPLATE = '''<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{ page.title }}{% if page.title != site_title %} – {{ site_title }}{% endif %}</title>
{% if page.description %}<meta name="description" content="{{ page.description }}">{% endif %}
<link rel="stylesheet" href="{{ up }}site.css">
<link rel="stylesheet" href="{{ up }}pygments.css">
<link rel="stylesheet" href="{{ up }}styles.css">
</head>
<body>
<header class="site-header">
  <a class="site-title" href="{{ up }}index.html">{{ site_title }}</a>
  <span class="site-description">{{ site_description }}</span>
  {% if repo_url %}<a class="site-repo" href="{{ repo_url }}">Repository</a>{% endif %}
</header>
<div class="layout">
<nav id="sidebar" class="sidebar" aria-label="Pages">
<ul>
{% for p in pages %}
  <li><a href="{{ rel(p) }}"{% if p is sameas page %} class="active" aria-current="page"{% endif %}>{{ p.title }}</a>
  {% if p is sameas page and page.toc %}
    <ul class="toc">
    {% for level, text, hid in page.toc %}
      <li class="toc-h{{ level }}"><a href="#{{ hid }}">{{ text }}</a></li>
    {% endfor %}
    </ul>
  {% endif %}
  </li>
{% endfor %}
</ul>
</nav>
<main id="content">
<header id="title" class="page-header">
<h1 class="title">{{ page.title }}</h1>
{% if page.description %}<div class="description">{{ description_html | safe }}</div>{% endif %}
</header>
{{ body | safe }}
<nav class="pager" aria-label="Previous and next page">
{% if prev_p %}<a class="prev" rel="prev" href="{{ rel(prev_p) }}">← {{ prev_p.title }}</a>{% endif %}
{% if next_p %}<a class="next" rel="next" href="{{ rel(next_p) }}">{{ next_p.title }} →</a>{% endif %}
</nav>
</main>
</div>
</body>
</html>
'''

SITE_CSS = '''/* The offline site's layout; styles.css (the project's, shared with Quarto) comes after it. System fonts only. */
:root { --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --bg-code: #f6f8fa; --accent: #0b5cad; }
* { box-sizing: border-box; }
html { scroll-padding-top: 4rem; }
body { margin: 0; color: var(--fg); background: #fff; line-height: 1.55;
       font: 16px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
a { color: var(--accent); text-decoration: none; } a:hover { text-decoration: underline; }
code, pre { font-family: ui-monospace, SFMono-Regular, "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 0.875em; }
:not(pre) > code { background: var(--bg-code); padding: 0.1em 0.3em; border-radius: 4px; }
pre { background: var(--bg-code); padding: 0.75rem 1rem; overflow-x: auto; border-radius: 6px; line-height: 1.45; }
pre code { font-size: inherit; }
.site-header { position: sticky; top: 0; z-index: 2; display: flex; gap: 1rem; align-items: baseline; flex-wrap: wrap;
               padding: 0.6rem 1.5rem; background: #2c3e50; color: #fff; }
.site-header a { color: #fff; } .site-title { font-weight: 700; font-size: 1.15rem; }
.site-description { opacity: 0.8; font-size: 0.9rem; flex: 1; } .site-repo { font-size: 0.9rem; }
.layout { display: grid; grid-template-columns: 16rem minmax(0, 1fr); gap: 2rem; max-width: 80rem; margin: 0 auto; padding: 0 1.5rem; }
.sidebar { position: sticky; top: 3.5rem; align-self: start; max-height: calc(100vh - 4rem); overflow-y: auto; padding: 1.5rem 0; font-size: 0.92rem; }
.sidebar ul { list-style: none; margin: 0; padding: 0; }
.sidebar li { margin: 0.15rem 0; }
.sidebar a { display: block; padding: 0.2rem 0.6rem; border-radius: 4px; color: var(--fg); }
.sidebar a.active { background: #e7f0fa; color: var(--accent); font-weight: 600; }
.sidebar .toc { margin: 0.2rem 0 0.5rem 0.6rem; border-left: 1px solid var(--line); }
.sidebar .toc a { color: var(--muted); padding: 0.1rem 0.6rem; } .sidebar .toc .toc-h3 a { padding-left: 1.4rem; font-size: 0.85rem; }
main { min-width: 0; padding: 1.5rem 0 4rem; }
.page-header { margin-bottom: 1.5rem; } .page-header h1 { margin: 0 0 0.3rem; font-size: 2.2rem; }
h2 { margin-top: 2.2rem; padding-bottom: 0.25rem; border-bottom: 1px solid var(--line); } h3 { margin-top: 1.6rem; }
hr { border: 0; border-top: 1px solid var(--line); margin: 2rem 0 1rem; }
table { border-collapse: collapse; margin: 1rem 0; display: block; overflow-x: auto; }
th, td { border: 1px solid var(--line); padding: 0.3rem 0.7rem; text-align: left; vertical-align: top; }
blockquote { margin: 1rem 0; padding: 0 1rem; color: var(--muted); border-left: 3px solid var(--line); }
img { max-width: 100%; }
.cell { margin: 1rem 0; }
.cell .sourceCode pre { margin: 0; }
.cell-output pre { margin: 0.25rem 0 0; }
.cell-output-error pre { color: #a40000; }
details.code-fold > summary { cursor: pointer; color: var(--muted); font-size: 0.9rem; margin-bottom: 0.3rem; }
.callout-note, .callout-tip, .callout-warning, .callout-important, .callout-caution { border-left: 4px solid var(--accent); background: #f3f7fc; padding: 0.5rem 1rem; margin: 1rem 0; border-radius: 4px; }
.callout-warning, .callout-caution, .callout-important { border-left-color: #c27c0e; background: #fdf8ee; }
.pager { display: flex; justify-content: space-between; margin-top: 3rem; padding-top: 1rem; border-top: 1px solid var(--line); }
.pager .next { margin-left: auto; }
@media (max-width: 800px) {
  .layout { grid-template-columns: 1fr; gap: 0; }
  .sidebar { position: static; max-height: none; padding-bottom: 0; border-bottom: 1px solid var(--line); }
}
'''

# ---------------------------------------------------------------------------------------------------------------
# README.md

def _fence(text:str, info:str='')->str:
    "`text` as a fenced code block whose fence is longer than any run of backticks inside it"
    n = max([3] + [len(m) + 1 for m in re.findall(r'`{3,}', text)])
    return f"{'`'*n}{info}\n{text.rstrip()}\n{'`'*n}"

def readme_output(out:dict, where:str)->str:
    "One output as GitHub markdown"
    kind = out.get('output_type')
    if kind == 'stream': return _fence(strip_ansi(_as_text(out['text'])))
    if kind == 'error': raise BuildError(f"{where} has an error output: README.md shows outputs that worked")
    data = out.get('data') or {}
    if 'text/markdown' in data: return _as_text(data['text/markdown']).strip()
    if 'text/html' in data: return _as_text(data['text/html']).strip()
    if 'text/plain' in data: return _fence(strip_ansi(_as_text(data['text/plain'])))
    raise BuildError(f"{where} shows {', '.join(data)}: README.md can show text, markdown and HTML outputs; hide that cell "
                     "from the README with `#| hide` or make its output text")

_re_md_link = re.compile(r'(\]\()([^)\s]+?\.ipynb)(#[^)\s]*)?(\))')

def readme_markdown(page:Page, site:'Site'=None)->str:
    "README.md from the processed home page: its title, nbdev's autogenerated note, description, prose, code and outputs"
    def published(m): # a link to a notebook goes to its page on the published site, where README.md is read (GitHub, PyPI)
        target = site.by_source.get(posixpath.normpath(posixpath.join(posixpath.dirname(page.source), m[2]))) if site else None
        if target is None or not site.site_url: return m[0]
        return f'{m[1]}{site.site_url}{target.path}{m[3] or ""}{m[4]}'
    parts,cells = [f'# {page.title}'],page.nb['cells']
    if cells and cells[0]['cell_type'] == 'markdown' and _as_text(cells[0]['source']).lstrip().startswith('<!--'):
        parts.append(_as_text(cells[0]['source']).strip())
        cells = cells[1:]
    if page.description: parts.append('> ' + page.description)
    for i,cell in enumerate(cells):
        src = _as_text(cell.get('source', '')).strip()
        if cell['cell_type'] == 'markdown': parts.append(_re_md_link.sub(published, src)); continue
        if cell['cell_type'] != 'code': continue
        opts,code = split_directives(src)
        if _false(opts.get('include')): continue
        if code.strip() and not _false(opts.get('echo')): parts.append(_fence(code, 'python'))
        if not _false(opts.get('output')):
            parts += [readme_output(o, f"A cell of {page.source} ({code[:60]!r})") for o in cell.get('outputs') or []]
    return '\n\n'.join(p for p in parts if p) + '\n'

# ---------------------------------------------------------------------------------------------------------------
# The whole build

def copy_assets(nbs:Path, dest:Path):
    "Copy the files pages may refer to (images, stylesheets, ...) from `nbs` into the site"
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

def build(dest:Path=None, proc:Path=None, readme:Path=None, check:bool=False, workers:int=None, path:Path=None,
          quarto_check:bool=False)->dict:
    "Build the site into `dest` and README into `readme` (or compare with it when `check`); returns what was built"
    from nbdev.config import get_config
    from pygments.formatters import HtmlFormatter
    cfg = get_config(path or root)
    nbs = cfg.nbs_path
    dest = Path(dest or cfg.doc_path).resolve()
    proc = Path(proc or cfg.config_path/'_proc').resolve()
    readme = Path(readme or cfg.config_path/'README.md')
    workers = workers or min(os.cpu_count() or 1, 4)
    for d,what in ((dest, 'site'), (proc, 'processed notebooks')): _replaceable(d, what, cfg)
    if proc.exists(): shutil.rmtree(proc)
    processed = process_all(nbs, proc, workers, quarto_check)
    pages = [read_page(p, proc) for p in processed]
    readme_nb = Path(cfg.readme_nb).as_posix()
    pages.sort(key=lambda p: (p.source != readme_nb, p.source))
    site = Site(pages, cfg)
    if dest.exists(): shutil.rmtree(dest)
    dest.mkdir(parents=True)
    copy_assets(nbs, dest)
    (dest/'site.css').write_text(SITE_CSS)
    (dest/'pygments.css').write_text(HtmlFormatter(style='default').get_style_defs('.highlight'))
    if not (dest/'styles.css').exists(): (dest/'styles.css').write_text('')
    for path,text in site.render_all().items():
        (dest/path).parent.mkdir(parents=True, exist_ok=True)
        (dest/path).write_text(text)
    res = {'site': dest, 'pages': [p.path for p in pages], 'readme': None, 'readme_ok': True}
    home = next((p for p in pages if p.source == readme_nb), None)
    if home is None: return res
    text = readme_markdown(home, site)
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
    ap.add_argument('--proc', type=Path, help="where to write the processed notebooks (default: `_proc`)")
    ap.add_argument('--readme', type=Path, help="the README to write or check (default: README.md)")
    ap.add_argument('--check', action='store_true', help="do not write the README: fail if it differs from what nbs/index.ipynb generates")
    ap.add_argument('--workers', type=int, help="notebooks run at once (default: CPUs, at most 4)")
    ap.add_argument('--project', type=Path, help="the nbdev project to build (default: the one this script is in)")
    ap.add_argument('--quarto-check', action='store_true', help="also process each notebook exactly as `nbdev-docs` does "
                    "before Quarto renders it, and fail on the notebooks that Quarto publishing would fail on")
    ap.add_argument('--process-one', nargs=2, type=Path, metavar=('NOTEBOOK', 'DEST'), help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.process_one:
        try:
            process_notebook(*a.process_one)
            if a.quarto_check: nbdev_docs_processing(a.process_one[0])
        except BuildError as e:
            print(e, file=sys.stderr)
            sys.exit(_EXIT_QUARTO if isinstance(e, QuartoError) else _EXIT_FAILED)
        return
    try: res = build(a.dest, a.proc, a.readme, a.check, a.workers, a.project, a.quarto_check)
    except BuildError as e: sys.exit(f"Docs build failed: {e}")
    print(f"Built {len(res['pages'])} pages into {res['site']}: {', '.join(res['pages'])}")
    if a.check and not res['readme_ok']:
        sys.exit(f"{res['readme_diff'][:4000]}\nREADME.md is not what nbs/index.ipynb generates: edit nbs/index.ipynb, "
                 "run `.venv/bin/python scripts/build_docs.py` and commit README.md")
    if res['readme']: print(f"Wrote {res['readme']}")

if __name__ == '__main__': main()
