"""README.md: its Contributing section (exactly three commands: set up, run the tests as CI does, build the docs), its
Install section (the plain install and each extra), and its examples (those that need no extra run with the plain
install; each one that needs an extra comes after the line that names it)"""
import json, re, shlex, subprocess, sys
from pathlib import Path

root = Path(__file__).resolve().parent.parent

def contributing_commands():
    "The shell commands of README's Contributing section: set up, run the tests, build the docs"
    txt = (root/'README.md').read_text()
    qs = txt.split('\n## Contributing\n', 1)[1].split('\n## ', 1)[0]
    return [b.strip() for b in re.findall(r'```(?:sh|bash|shell)\n(.*?)```', qs, re.S)]

def test_three_commands():
    cmds = contributing_commands()
    assert len(cmds) == 3 and all('\n' not in c for c in cmds), cmds

def test_ci_runs_the_test_command():
    assert contributing_commands()[1] in (root/'.ci'/'run').read_text()

def test_first_command_installs_the_dev_extra():
    assert contributing_commands()[0].startswith("python3 -m venv .venv && .venv/bin/pip install -e '.[dev]' && ")

def test_first_command_shows_a_schema():
    "The part of the first command after installing runs (with this venv's scripts) and prints a tool schema"
    shown = contributing_commands()[0].split(' && ')[-1]
    args = shlex.split(shown)
    assert args[0].startswith('.venv/bin/'), args
    args[0] = str(Path(sys.executable).parent/args[0].removeprefix('.venv/bin/'))
    out = subprocess.run(args, capture_output=True, text=True, timeout=120, cwd=root)
    assert out.returncode == 0, out.stderr
    assert '"name": "python"' in out.stdout and '"input_schema"' in out.stdout, out.stdout

def _section(title:str)->str:
    return (root/'README.md').read_text().split(f'\n## {title}\n', 1)[1].split('\n## ', 1)[0]

def _extras()->dict:
    "pyproject.toml's optional dependencies: {extra: [requirement, ...]}"
    try: import tomllib
    except ImportError: import tomli as tomllib  # Python 3.10 (the dev extra installs it)
    return tomllib.loads((root/'pyproject.toml').read_text())['project']['optional-dependencies']

def test_install_names_the_plain_install_and_each_extra():
    "README's Install section: the plain `pip install`, the one from a clone, and a line on what each extra of pyproject.toml adds"
    inst = _section('Install')
    assert '```sh\npip install toolslm_like\n```' in inst and '`pip install -e .`' in inst
    for extra in _extras():
        spec = ".[dev]" if extra == 'dev' else f"toolslm_like[{extra}]"
        line = next((l for l in inst.splitlines() if l.startswith('- ') and f"'{spec}'" in l), None)
        assert line and len(line.split(':', 1)[1].split()) >= 8, f"README's Install section has no line on what [{extra}] adds"

def test_readme_names_the_docs_command():
    "The one offline command that builds the docs site, as README gives it, is the script CI runs"
    assert contributing_commands()[2] == '.venv/bin/python scripts/build_docs.py'
    assert 'scripts/build_docs.py --check' in (root/'.ci'/'run').read_text()

def _only_in_extras()->set:
    "Top-level import names of the packages only the extras bring (and what they need), not the plain install"
    from importlib.metadata import PackageNotFoundError, distributions, requires
    from packaging.requirements import Requirement
    norm = lambda n: re.sub(r'[-_.]+', '-', n).lower()
    def needs(reqs, seen):
        for r in map(Requirement, reqs):
            if norm(r.name) in seen or r.marker and not r.marker.evaluate({'extra': ''}): continue
            seen.add(norm(r.name))
            try: needs(requires(r.name) or [], seen)
            except PackageNotFoundError: pass
        return seen
    base = needs(['toolslm_like'], set())
    extra = needs([r for reqs in _extras().values() for r in reqs], set()) - base
    mods = set()
    for d in distributions(): # not `packages_distributions()`: on 3.10 it reads only top_level.txt, which most wheels lack now
        if norm(d.metadata['Name'] or '') not in extra: continue
        top = (d.read_text('top_level.txt') or '').split() or [
            f.parts[0].removesuffix('.py') for f in d.files or []
            if f.parts and f.parts[0] not in ('..', '__pycache__') and not f.parts[0].endswith(('.dist-info', '.data', '.pth'))
            and (f.suffix == '.py' or len(f.parts) > 1)]
        mods |= {m for m in top if m.isidentifier() and not m.startswith('_')}
    return mods

# The README's examples, run in order in a fresh interpreter where importing what only an extra installs fails
_plain_install = """
import importlib.abc, sys
blocked = set(sys.argv[1].split(','))
class OnlyThePlainInstall(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition('.')[0] in blocked: raise ModuleNotFoundError(f"{name} comes with an extra, not the plain install", name=name)
sys.meta_path.insert(0, OnlyThePlainInstall())
for i,block in enumerate(sys.argv[2:]): exec(compile(block, f'README example {i+1}', 'exec'), globals())
print('ran', len(sys.argv) - 2, 'examples')
"""

def needs_an_extra(blocks:list, # The README's Python examples, in order
                   blocked:set # Top-level modules only the extras bring
                  )->dict: # {index of an example that needs an extra: the extra's modules it imports, maybe none}
    "The examples that import a module of an extra, or use a name an earlier such example defined (`client`, `history`)"
    import ast
    tainted,found = set(),{}
    for i,block in enumerate(blocks):
        tree = ast.parse(block)
        mods = {a.name.partition('.')[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        mods |= {n.module.partition('.')[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        if mods & blocked or used & tainted:
            found[i] = mods & blocked
            tainted |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
            tainted |= {(a.asname or a.name).partition('.')[0] for n in ast.walk(tree)
                        if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}
    return found

def test_needs_an_extra_follows_names():
    "An example is set aside when it imports an extra's module or uses what such an example made, not otherwise"
    blocks = ['import json', 'import openai\nclient = openai.OpenAI()', 'x = 1', 'h = client.chat', 'print(h, x)']
    assert needs_an_extra(blocks, {'openai'}) == {1: {'openai'}, 3: set(), 4: set()}

def test_examples_run_with_the_plain_install():
    """Every Python example in README.md that needs no extra runs when the packages only the extras bring cannot be
    imported; one that needs an extra (the tool loop's SDK clients) comes after the README names the extra that brings
    what it imports (nbs/index.ipynb runs them all, against scripted model servers)"""
    txt = (root/'README.md').read_text()
    blocks = re.findall(r'```python\n(.*?)```', txt, re.S)
    blocked = _only_in_extras()
    assert {'openai', 'anthropic', 'mcp', 'nbdev', 'pytest'} <= blocked and 'fastcore' not in blocked, sorted(blocked)
    assert blocks and 'from toolslm_like' in blocks[0], "the first example imports what it uses"
    from packaging.requirements import Requirement
    norm = lambda n: re.sub(r'[-_.]+', '-', n).lower()
    extra = needs_an_extra(blocks, blocked)
    for i,mods in extra.items():
        before = txt.split(f"```python\n{blocks[i]}```", 1)[0]
        for m in mods:
            named = [x for x,reqs in _extras().items() if norm(m) in {norm(Requirement(r).name) for r in reqs}
                     and f"'toolslm_like[{x}]'" in before]
            assert named, f"README example {i+1} imports {m}, and no line before it names an extra that installs it"
    blocks = [b for i,b in enumerate(blocks) if i not in extra]
    r = subprocess.run([sys.executable, '-c', _plain_install, ','.join(sorted(blocked)), *blocks], capture_output=True, text=True, timeout=120, cwd=root)
    assert r.returncode == 0 and f'ran {len(blocks)} examples' in r.stdout, r.stderr[-3000:]

def test_the_import_blocker_can_fail():
    "The check above sees an example that needs an extra"
    r = subprocess.run([sys.executable, '-c', _plain_install, 'openai', 'import json', 'import openai'], capture_output=True, text=True, timeout=60, cwd=root)
    assert r.returncode == 1 and 'openai comes with an extra, not the plain install' in r.stderr and 'README example 2' in r.stderr
