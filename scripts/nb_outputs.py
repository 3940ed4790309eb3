#!/usr/bin/env python
"""Keep the examples' outputs in the notebooks, and check what the docs pages will show.

    .venv/bin/python scripts/nb_outputs.py run nbs/05_funccall.ipynb ...   # run top to bottom, save outputs in place
    .venv/bin/python scripts/nb_outputs.py check [nbs/05_funccall.ipynb ...]  # report what breaks the page rules

A reader on GitHub sees a notebook's saved outputs, so the notebooks keep them (`nbdev-clean` keeps outputs and
drops only execution counts and metadata). `run` runs a notebook as `nbdev-test` does (in its folder, a fresh
interpreter, `IN_TEST` unset so it reads as a reader sees it), stops at the first error, and writes the outputs back.

`check` fails on what a page must not show or be made of:
- an export cell longer than `MAX_EXPORT_LINES` lines (directives and blank lines not counted), not counting the body of
  a class, which stays whole in one cell (a class reads in one place: its private steps are methods in its body, not
  patches spread over cells) up to `MAX_CLASS_LINES`,
- an export cell not followed, before the next export cell, by a code cell with an output (its example),
- an output showing a path of the build machine, an IPython frame, `__main__.`, `NoneType` or an object address.
"""
import argparse, json, re, subprocess, sys
from pathlib import Path

root = Path(__file__).resolve().parent.parent
MAX_EXPORT_LINES = 30 # "about 30 lines at most" per export cell (issue 16), outside class bodies
# one class, whole: split a longer one into classes, not into patches. 270, not 250: `Sandbox` needs a few more lines
# once issue 28 gave it a keeper of its folders (ordinary users) and a socket supervisor, and it still reads whole
MAX_CLASS_LINES = 270

_re_export = re.compile(r'^\s*#\|\s*export', re.M)
_re_directive = re.compile(r'^\s*#\|')
# What no output may show: where the build ran, how IPython ran it, or what only this process knows
BAD_OUTPUT = [
    # a folder's bare name (`/tmp`, `/root`: what a sandbox sees or may not see) is no path of the build machine; what lies in it is
    (re.compile(r'(?<![\w.])(?:(?:/work|/root|/home|/tmp|/var/folders)/[\w.~-]+|(?:/usr/lib/python|/usr/local/lib|[A-Z]:\\Users)[\w.~/-]*)'), 'a path of the build machine'),
    (re.compile(r'site-packages|\.venv/|\.pyenv/'), 'a path of the build machine'),
    (re.compile(r'<ipython-input-\d+|Cell In\[\d+\]|/tmp/ipykernel_|File "<string>"'), 'an IPython frame'),
    (re.compile(r'__main__\.'), '`__main__.`'),
    (re.compile(r'\bNoneType\b'), '`NoneType`'),
    (re.compile(r' at 0x[0-9a-f]{6,}'), 'an object address (changes every run)'),
]

def _src(c): return ''.join(c['source']) if isinstance(c['source'], list) else c['source']
def _out_text(o):
    if 'text' in o: return ''.join(o['text']) if isinstance(o['text'], list) else o['text']
    if o.get('output_type') == 'error': return '\n'.join(o.get('traceback') or []) + f"\n{o.get('ename')}: {o.get('evalue')}"
    d = o.get('data') or {}
    return '\n'.join(''.join(v) if isinstance(v, list) else str(v) for k,v in d.items() if k.startswith('text/'))

def is_export(c): return c['cell_type'] == 'code' and bool(_re_export.match(_src(c).lstrip().split('\n')[0]))
def code_lines(c): return [l for l in _src(c).splitlines() if l.strip() and not _re_directive.match(l)]

def export_lines(c)->tuple:
    "(lines outside class bodies, [(class name, its lines)]) of a code cell; directives and blank lines not counted"
    import ast
    src = '\n'.join('' if _re_directive.match(l) else l for l in _src(c).splitlines())
    try: tree = ast.parse(src)
    except SyntaxError: return len(code_lines(c)),[]
    lines,inside,classes = src.splitlines(),set(),[]
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            body = range(node.body[0].lineno if node.body else node.lineno, node.end_lineno+1)
            classes.append((node.name, sum(1 for j in body if lines[j-1].strip())))
            inside.update(body)
    return sum(1 for j,l in enumerate(lines, 1) if l.strip() and j not in inside),classes

def problems(path:Path)->list[str]:
    "What in notebook `path` breaks the page rules, one line each naming the cell"
    nb = json.loads(Path(path).read_text())
    cells,out = nb['cells'],[]
    def where(i): return f"{Path(path).name} cell {i} ({(code_lines(cells[i]) or [''])[0][:50]!r})"
    for i,c in enumerate(cells):
        if c['cell_type'] != 'code': continue
        if is_export(c):
            n,classes = export_lines(c)
            if n > MAX_EXPORT_LINES: out.append(f"{where(i)}: export cell of {n} lines outside class bodies (at most {MAX_EXPORT_LINES})")
            for name,k in classes:
                if k > MAX_CLASS_LINES: out.append(f"{where(i)}: class {name} of {k} lines (at most {MAX_CLASS_LINES})")
            nxt = next((j for j in range(i+1, len(cells)) if is_export(cells[j])), len(cells))
            if not any(cells[j]['cell_type'] == 'code' and cells[j].get('outputs') for j in range(i+1, nxt)):
                out.append(f"{where(i)}: no example with an output follows this export cell")
        for o in c.get('outputs') or []:
            text = _out_text(o)
            if o.get('output_type') == 'error': out.append(f"{where(i)}: an error output")
            for rx,what in BAD_OUTPUT:
                if (m := rx.search(text)): out.append(f"{where(i)}: output shows {what}: {m[0]!r}")
    return out

# A warning raised at a line of a notebook's cell names that line as Python names one of a file, but IPython's file name
# for a cell (`<ipython-input-3-1f2e...>`) means nothing to a reader and changes every run: it shows `cell line 3:`
_re_cell_file = re.compile(r'<ipython-input-\d+-[0-9a-f]+>')

def plain_cell_warnings():
    """Make warnings raised at a notebook cell's line (a `SandboxWarning` pointing at `sb = Sandbox()`) name it
    `cell line N` instead of IPython's made-up file name; others show as Python shows them"""
    import warnings
    fmt = warnings.formatwarning
    if getattr(fmt, 'plain_cells', False): return
    def formatwarning(message, category, filename, lineno, line=None):
        text = fmt(message, category, filename, lineno, line)
        return f'cell line {text[len(filename)+1:]}' if _re_cell_file.fullmatch(str(filename)) else text
    formatwarning.plain_cells = True
    warnings.formatwarning = formatwarning

_runner = '''
import os, sys
os.environ.pop('IN_TEST', None)
sys.path.insert(0, sys.argv[2])
from nb_outputs import plain_cell_warnings
plain_cell_warnings()
from execnb.shell import CaptureShell
CaptureShell(sys.argv[1]).execute(sys.argv[1], sys.argv[1], exc_stop=True)
'''

def run(path:Path):
    "Run notebook `path` top to bottom in a fresh interpreter and save its outputs in it, then `nbdev-clean` it"
    path = Path(path).resolve()
    r = subprocess.run([sys.executable, '-c', _runner, str(path), str(root/'scripts')], cwd=path.parent, capture_output=True, text=True)
    if r.returncode: sys.exit(f"{path.name} failed; outputs not saved:\n{r.stdout[-3000:]}\n{r.stderr[-6000:]}")
    subprocess.run(['nbdev-clean', '--fname', str(path)], cwd=root, check=True)

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('what', choices=['run', 'check'])
    ap.add_argument('notebooks', nargs='*', type=Path)
    a = ap.parse_args(argv)
    nbs = a.notebooks or sorted((root/'nbs').glob('[!_]*.ipynb'))
    if a.what == 'run':
        for p in nbs: run(p); print(f"ran {p.name}: outputs saved")
        return
    found = [s for p in nbs for s in problems(p)]
    print('\n'.join(found) or f"{len(nbs)} notebooks keep the page rules")
    sys.exit(1 if found else 0)

if __name__ == '__main__': main()
