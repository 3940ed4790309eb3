"Runs every notebook in `nbs/` as one pytest test, each in a fresh interpreter (as `nbdev-test` would)"
import subprocess, sys
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

@pytest.mark.parametrize('nb', notebooks, ids=[p.stem for p in notebooks])
def test_notebook(nb):
    r = subprocess.run([sys.executable, '-c', _runner, str(nb), str(root/'scripts')], cwd=nb.parent, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, f"{nb.name} failed:\n{r.stdout[-5000:]}\n{r.stderr[-15000:]}"

def test_notebooks_found(): assert len(notebooks) >= 2, notebooks
