"""README.md: its Quickstart (exactly two commands, the second is what CI runs), its Install section (the plain install
and each extra), its examples (they run with the plain install: nothing in them needs an extra), and the docs command"""
import json, re, shlex, subprocess, sys
from pathlib import Path

root = Path(__file__).resolve().parent.parent

def quickstart_commands():
    txt = (root/'README.md').read_text()
    qs = txt.split('## Quickstart', 1)[1].split('\n## ', 1)[0]
    return [b.strip() for b in re.findall(r'```(?:sh|bash|shell)\n(.*?)```', qs, re.S)]

def test_two_commands():
    cmds = quickstart_commands()
    assert len(cmds) == 2 and all('\n' not in c for c in cmds), cmds

def test_ci_runs_the_test_command():
    assert quickstart_commands()[1] in (root/'.ci'/'run').read_text()

def test_first_command_installs_the_dev_extra():
    assert quickstart_commands()[0].startswith("python3 -m venv .venv && .venv/bin/pip install -e '.[dev]' && ")

def test_first_command_shows_a_schema():
    "The part of the first command after installing runs (with this venv's scripts) and prints a tool schema"
    shown = quickstart_commands()[0].split(' && ')[-1]
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
    assert '```sh\n.venv/bin/python scripts/build_docs.py\n```' in _section('Docs')
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

def test_examples_run_with_the_plain_install():
    "Every Python example in README.md runs when the packages only the extras bring cannot be imported"
    blocks = re.findall(r'```python\n(.*?)```', (root/'README.md').read_text(), re.S)
    blocked = _only_in_extras()
    assert {'openai', 'anthropic', 'mcp', 'nbdev', 'pytest'} <= blocked and 'fastcore' not in blocked, sorted(blocked)
    assert blocks and 'from toolslm_like' in blocks[0], "the first example imports what it uses"
    r = subprocess.run([sys.executable, '-c', _plain_install, ','.join(sorted(blocked)), *blocks], capture_output=True, text=True, timeout=120, cwd=root)
    assert r.returncode == 0 and f'ran {len(blocks)} examples' in r.stdout, r.stderr[-3000:]

def test_the_import_blocker_can_fail():
    "The check above sees an example that needs an extra"
    r = subprocess.run([sys.executable, '-c', _plain_install, 'openai', 'import json', 'import openai'], capture_output=True, text=True, timeout=60, cwd=root)
    assert r.returncode == 1 and 'openai comes with an extra, not the plain install' in r.stderr and 'README example 2' in r.stderr
