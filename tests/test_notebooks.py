"""Runs every notebook in `nbs/` as one pytest test, each in a fresh interpreter (as `nbdev-test` would).

When `TOOLSLM_LIKE_DOCS_BUILT` names a docs build (`scripts/build_docs.py`, which runs every notebook too; `.ci/run`
builds once and sets it), a notebook that build ran and passed on this very interpreter, with the same notebook and
library (its record in `_proc/notebook_runs.json`), passes without running again; any other runs as usual."""
import functools, importlib.util, json, os, subprocess, sys
from pathlib import Path
import pytest

root = Path(__file__).resolve().parent.parent
notebooks = sorted(p for p in (root/'nbs').glob('*.ipynb') if not p.name.startswith('_'))

# `nbdev.test` is used from the child interpreter, never imported here: pytest would collect its `test_nb` as a test
_runner = '''
import sys
from nbdev.config import get_config
from nbdev.test import test_nb
sys.path.insert(0, sys.argv[2])
from ast_race import retry_cell_parsing
retry_cell_parsing() # CPython 3.11's AST race with an example's threads (python/cpython#106905)
cfg = get_config()
flags = cfg.tst_flags.split() if isinstance(cfg.tst_flags, str) else cfg.tst_flags
ok,took = test_nb(sys.argv[1], skip_flags=flags, basepath=cfg.config_path)
sys.exit(0 if ok else 1)
'''

@functools.cache
def _builder():
    spec = importlib.util.spec_from_file_location('build_docs', root/'scripts'/'build_docs.py')
    mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
    return mod

def built_run(nb:Path, built:Path|None)->dict|None:
    """The record of the docs build in `built` of a passing run of `nb` on this interpreter, with this notebook and
    library as they are now; None when there is no such build, record, or it differs (then the notebook runs)"""
    if built is None or not (runs := built/'_proc'/_builder().RUNS).is_file(): return None
    record = json.loads(runs.read_text()).get(nb.relative_to(root/'nbs').as_posix())
    return record if record and record == _builder().run_record(nb, root/'toolslm_like') else None

def _built()->Path|None: return Path(d) if (d := os.environ.get('TOOLSLM_LIKE_DOCS_BUILT')) else None

@pytest.mark.parametrize('nb', notebooks, ids=[p.stem for p in notebooks])
def test_notebook(nb, record_property):
    if built_run(nb, _built()): return record_property('ran', 'in the docs build')  # it ran there, on this interpreter
    r = subprocess.run([sys.executable, '-c', _runner, str(nb), str(root/'scripts')], cwd=nb.parent, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, f"{nb.name} failed:\n{r.stdout[-5000:]}\n{r.stderr[-15000:]}"

def test_notebooks_found(): assert len(notebooks) >= 2, notebooks

def test_a_build_run_is_reused_only_when_it_matches(tmp_path):
    "A build's record is reused only for the same interpreter, notebook text and library, and a run that passed"
    nb = notebooks[0]
    record = _builder().run_record(nb, root/'toolslm_like')
    assert built_run(nb, None) is None and built_run(nb, tmp_path) is None, "no build, or one without records"
    (tmp_path/'_proc').mkdir()
    write = lambda **changed: (tmp_path/'_proc'/'notebook_runs.json').write_text(json.dumps({nb.name: {**record, **changed}}))
    write()
    assert built_run(nb, tmp_path) == record and record['passed'] and record['python'] == sys.version
    for changed in ({'python': '3.9.0 (other)'}, {'notebook': '0' * 64}, {'library': '0' * 64}, {'passed': False}):
        write(**changed)
        assert built_run(nb, tmp_path) is None, changed
