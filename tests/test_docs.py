"""The docs site, built offline from every notebook by `scripts/build_docs.py` and checked as a reader sees it:
each notebook has a page with the API docs of what it exports and its examples' outputs, links resolve,
nothing comes from the network, README.md is what `nbs/index.ipynb` generates, and in headless Chromium the
pages render with their API names visible and load nothing from off the machine."""
import ast, html.parser, json, os, re, select, shutil, subprocess, sys, tempfile, time
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
    "The site, processed notebooks and README built into a temporary directory by the one offline command"
    d = tmp_path_factory.mktemp('docs')
    cmd = [sys.executable, str(root/'scripts'/'build_docs.py'), '--dest', str(d/'_docs'), '--proc', str(d/'_proc'), '--readme', str(d/'README.md')]
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
                  and (not n.name.startswith('_') or n.name.startswith('__'))]
    return names

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
        if tag == 'link' and a.get('href'): self.resources.append(a['href'])
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

def _is_remote(url:str)->bool: return bool(re.match(r'^(?:[a-z][a-z0-9+.-]*:)?//', url.strip(), re.I))

def broken_links(site:Path)->list[str]:
    "Every link or resource in the site's pages that points inside the site at a file or an anchor that is not there"
    problems,pages = [],{p: parse_page(p) for p in site.rglob('*.html')}
    for page,parsed in pages.items():
        for href in parsed.links + parsed.resources:
            if _is_remote(href) or re.match(r'^[a-z][a-z0-9+.-]*:', href, re.I): continue  # off-site links and data:, mailto:
            path,frag = urldefrag(href)
            target = (page.parent/unquote(path)).resolve() if path else page
            if site.resolve() not in (target, *target.parents): problems.append(f"{page.name}: {href} points outside the site"); continue
            if not target.is_file(): problems.append(f"{page.name}: {href} -> no such file"); continue
            if frag and target.suffix == '.html' and unquote(frag) not in (pages[target] if target in pages else parse_page(target)).ids:
                problems.append(f"{page.name}: {href} -> no element with id {frag!r}")
    return problems

def network_resources(site:Path)->list[str]:
    "Everything the site's pages or stylesheets would fetch from the network when shown"
    found = [f"{p.name}: {r}" for p in site.rglob('*.html') for r in parse_page(p).resources if _is_remote(r) or '//' in r and 'url(' in r]
    for css in site.rglob('*.css'):
        found += [f"{css.name}: {m[0]}" for m in re.finditer(r'(?:@import\s+|url\()\s*[\'"]?(?:https?:)?//[^\s\'")]+', css.read_text())]
    return found

def test_checkers_find_problems(tmp_path):
    "The link and network checks below can fail: a made-up site with one of each problem"
    (tmp_path/'a.html').write_text('<h1 id="top">A</h1><a href="b.html">ok</a><a href="b.html#there">ok</a><a href="c.html">gone</a>'
                                   '<a href="b.html#nowhere">bad anchor</a><a href="https://example.com/">fine: a link out</a>'
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
    assert sorted(p.relative_to(site).as_posix() for p in site.rglob('*.html')) == ['guides/guide.html', 'index.html']
    assert broken_links(site) == [] and network_resources(site) == []
    guide_html = (site/'guides'/'guide.html').read_text()
    assert '<h3 id="greet">greet</h3>' in guide_html and 'Hello, reader!' in html.unescape(guide_html)
    guide,home = parse_page(site/'guides'/'guide.html'),parse_page(site/'index.html')
    assert {'../index.html', '../site.css'} <= set(guide.links + guide.resources) and 'guides/guide.html#greet' in home.links
    assert (tmp_path/'README.md').read_text().startswith('# miniproj')

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

def _builder():
    import importlib.util
    spec = importlib.util.spec_from_file_location('build_docs', root/'scripts'/'build_docs.py')
    mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
    return mod

def test_markdown_as_quarto_reads_it():
    "The Pandoc/Quarto markdown notebooks and nbdev's API docs use: fenced divs, attributes, tables, TeX, cell options"
    bd = _builder()
    page = bd.Page({'cells': [
        {'cell_type': 'markdown', 'source': '## Setup {#setup}\n\n::: {.callout-note}\nA **note**\n:::\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n'
                                            'It costs $5 and $10; $x_1 * y_1$ is TeX.\n\n```\n:::\n```'},
        {'cell_type': 'code', 'source': '#| echo: false\n#| output: asis\nshow_doc(f)', 'outputs': [{'output_type': 'execute_result',
            'data': {'text/markdown': '### f\n\n[source](https://github.com/o/r/blob/main/m.py#L1){target="_blank" style="float:right"}'}}]},
        {'cell_type': 'code', 'source': '#| code-fold: show\n#| code-summary: "Exported source"\ndef f(): pass', 'outputs': []},
        {'cell_type': 'code', 'source': '#| include: false\nsecret()', 'outputs': []},
        {'cell_type': 'code', 'source': 'print("<hi>")', 'outputs': [{'output_type': 'stream', 'name': 'stdout', 'text': '<hi>\n'}]},
    ]}, 'm.html', 'M', 'The `m` command, *briefly*', source='01_m.ipynb')
    out = bd.Site([page], get_config(root)).render_all()['m.html']
    assert '<div class="description">The <code>m</code> command, <em>briefly</em></div>' in out, "the description is markdown, as Quarto reads it"
    assert '<meta name="description" content="The `m` command, *briefly*">' in out
    assert '<h2 id="setup">Setup</h2>' in out and '<div class="callout-note">' in out and '<strong>note</strong>' in out
    assert '<td>1</td>' in out and 'It costs $5 and $10;' in out and '<span class="math inline">$x_1 * y_1$</span>' in out
    assert '<code>:::\n</code>' in out, "a ::: inside a code block stays as it is"
    assert '<h3 id="f">f</h3>' in out and 'target="_blank"' in out and '{target=' not in out
    assert '<details class="code-fold" open><summary>Exported source</summary>' in out and '#|' not in out
    assert 'secret' not in out and '&lt;hi&gt;' in out
    assert [t for _,t,_ in page.toc] == ['Setup', 'f']

def test_quarto_check_finds_what_nbdev_docs_would_fail_on(tmp_path):
    "A cell mixing an import with code that uses an earlier cell renders here, but nbdev-docs (Quarto) fails on it: --quarto-check says so"
    nb = {'index.ipynb': [('md', '# miniproj\n\n> A small project'), ('code', '#| default_exp core'),
                          ('code', '#| export\ndef double(x:int)->int:\n    "Twice `x`"\n    return 2*x'),
                          ('code', 'base = 21'), ('code', 'import math\nprint(double(base), math.pi > 3)')]}
    assert _build_project(tmp_path, nb).returncode == 0
    r = _build_project(tmp_path, nb, '--quarto-check')
    assert r.returncode == 1 and "index.ipynb cannot be published with `nbdev-docs`" in r.stderr, r.stderr[-3000:]
    assert "NameError: name 'base' is not defined" in r.stderr and 'Put the imports in a cell of their own' in r.stderr

def test_readme_links_notebooks_to_their_published_pages():
    "README.md is read on GitHub and PyPI, so a link to a notebook goes to its page on the published site"
    bd = _builder()
    home = bd.Page({'cells': [{'cell_type': 'markdown', 'source': 'See [providers](01_providers.ipynb#tool_schemas), [x](missing.ipynb), [y](https://a.b/c.ipynb).'}]},
                   'index.html', 'proj', 'What it does', source='index.ipynb')
    site = bd.Site([home, bd.Page({'cells': []}, 'providers.html', 'providers', source='01_providers.ipynb')], get_config(root))
    url = site.site_url
    assert url and url.startswith('https://')
    assert bd.readme_markdown(home, site) == ('# proj\n\n> What it does\n\n'
        f'See [providers]({url}providers.html#tool_schemas), [x](missing.ipynb), [y](https://a.b/c.ipynb).\n')

# ---------------------------------------------------------------------------------------------------------------
# The built site, read as files

def test_notebooks_found(): assert nbs/'index.ipynb' in notebooks and len(notebooks) >= 2, notebooks

@pytest.mark.parametrize('nb', notebooks, ids=[p.stem for p in notebooks])
def test_page_has_api_docs(built, nb):
    "Each notebook has a page whose API docs have a heading (with the id nbdev's links use) for each exported name"
    page = built/'_docs'/page_of[nb]
    assert page.is_file(), f"{nb.name} has no page {page_of[nb]}; pages: {sorted(p.name for p in (built/'_docs').rglob('*.html'))}"
    txt,parsed = page.read_text(),parse_page(page)
    for name in exported_names(nb):
        assert name.lower() in parsed.ids or any(i.endswith('.'+name.lower()) for i in parsed.ids), f"{page.name} has no API docs anchor for {name}"
        assert re.search(rf'<h[2-4] id="[^"]*{re.escape(name.lower())}"[^>]*>[^<]*{re.escape(name)}', txt), f"{page.name} has no API heading for {name}"

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
    missing = [o[:200] for o in outs if squash(re.sub(r'\x1b\[[0-9;]*m', '', o)) not in squash(page_text)]
    assert not missing, f"{page_of[nb]} lacks outputs: {missing}"

def test_home_page_examples_ran(built):
    "The home page shows what its examples print, so the notebooks really were run"
    text = ' '.join(parse_page(built/'_docs'/'index.html').text)
    assert '3628800' in text and "There is no tool named 'os.system'" in html.unescape(text)

def test_links_resolve(built):
    "Every link between pages (the sidebar, prev/next, links from names to their API docs) lands on a page and an anchor"
    site = built/'_docs'
    assert broken_links(site) == []
    for nb,path in page_of.items():
        links = parse_page(site/path).links
        missing = [q for q in page_of.values() if q != path and not any(urldefrag(l)[0].endswith(Path(q).name) for l in links)]
        assert not missing, f"{path} does not link to {missing}"

def test_nothing_from_the_network(built):
    "Pages and stylesheets load only files of the site: no CDN stylesheets, scripts, fonts or images"
    assert network_resources(built/'_docs') == []

def test_readme_is_generated_from_index(built):
    "README.md is what the build generates from nbs/index.ipynb; after editing the notebook run `python scripts/build_docs.py`"
    assert (built/'README.md').read_text() == (root/'README.md').read_text(), \
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

# ---------------------------------------------------------------------------------------------------------------
# In headless Chromium, as a reader sees the pages

def _chromium():
    return next((p for p in (shutil.which(n) for n in ('chromium', 'chromium-browser', 'google-chrome')) if p), None)

class Browser:
    "Headless Chromium driven over the DevTools protocol on a pipe (no extra packages, no port)"
    flags = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
             '--disable-component-update', '--disable-sync', '--disable-extensions', '--disable-default-apps', '--mute-audio',
             # a request that does get made goes nowhere: the check sees it, the network never does
             '--host-resolver-rules=MAP * ~NOTFOUND', '--remote-debugging-pipe', '--window-size=1280,900']

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

    def evaluate(self, js:str):
        r = self.send('Runtime.evaluate', session=True, expression=js, returnByValue=True)
        if 'exceptionDetails' in r: raise RuntimeError(r['exceptionDetails'])
        return r['result']['value']

    def close(self):
        try: self.send('Browser.close', timeout=5)
        except Exception: pass
        try: self.proc.wait(10)
        except subprocess.TimeoutExpired: self.proc.kill(); self.proc.wait()
        os.close(self._w); os.close(self._r); self.log.close()
        shutil.rmtree(self.profile, ignore_errors=True)

# What a reader sees: the visible text (innerText leaves out what CSS hides), the headings that are on screen,
# where each link goes (as the browser resolves it), and whether the site's stylesheet took effect
_READER_VIEW = '''(() => {
  const visible = el => !!(el.offsetWidth || el.offsetHeight || el.getClientRects().length) && getComputedStyle(el).visibility !== 'hidden';
  return {
    title: document.title,
    h1: (document.querySelector('h1') || {}).innerText || '',
    text: document.body.innerText,
    headings: [...document.querySelectorAll('h1[id],h2[id],h3[id],h4[id]')].filter(visible).map(h => [h.id, h.innerText]),
    ids: [...document.querySelectorAll('[id]')].map(e => e.id),
    links: [...document.querySelectorAll('a[href]')].map(a => a.href),
    sidebar_links: [...document.querySelectorAll('nav.sidebar a')].filter(visible).length,
    styled: getComputedStyle(document.querySelector('.sidebar') || document.body).position === 'sticky',
    code_highlighted: [...document.querySelectorAll('.highlight .k, .highlight .kn')].some(e => getComputedStyle(e).color !== getComputedStyle(e.parentElement).color),
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

def test_browser_check_sees_off_machine_requests(browser, tmp_path):
    "The Chromium check can fail: a page with a CDN stylesheet and a remote image is caught"
    (tmp_path/'remote.html').write_text('<!doctype html><title>t</title><link rel="stylesheet" href="https://cdn.example.com/x.css">'
                                        '<h1>Hi</h1><img src="http://198.51.100.7/y.png">')
    seen = browser.open((tmp_path/'remote.html').as_uri())
    assert sorted(_off_machine(seen['requests'])) == ['http://198.51.100.7/y.png', 'https://cdn.example.com/x.css']
    assert seen['h1'] == 'Hi' and len(seen['broken_images']) == 1

def test_pages_in_chromium(built, browser):
    "Every page renders styled in Chromium, shows its title and API names, loads nothing off the machine, and its links land"
    site = (built/'_docs').resolve()
    seen = {}
    for nb,path in page_of.items():
        url = (site/path).as_uri()
        s = seen[url] = browser.open(url)
        assert s['h1'] and s['title'].startswith(s['h1']), (path, s['title'], s['h1'])
        assert _off_machine(s['requests']) == [] and s['failed'] == [], (path, s['requests'], s['failed'])
        assert s['styled'] and s['sidebar_links'] >= len(page_of) and s['broken_images'] == [], (path, s)
        headings = ' '.join(f'{i} {t}' for i,t in s['headings'])
        for name in exported_names(nb):
            assert name in s['text'], f"{name} is not visible on {path}"
            assert re.search(rf'\S*{re.escape(name.lower())} \S*{re.escape(name)}', headings), f"{name} has no visible API heading on {path}"
        if exported_names(nb): assert s['code_highlighted'], f"{path}: code is not highlighted"
    # every link into the site, as the browser resolved it, lands on a page it has loaded, at an id that page has
    for url,s in seen.items():
        for link in s['links']:
            if not link.startswith(site.as_uri()): continue
            target,frag = urldefrag(link)
            if target not in seen: seen[target] = browser.open(target)
            assert seen[target]['h1'] or not target.endswith('.html'), f"{url} links to {target}, which shows nothing"
            assert not frag or unquote(frag) in seen[target]['ids'], f"{url} links to {link}: no such anchor"
