"The Python versions the project claims: `requires-python` and the classifiers name the same ones (`.ci/run` tests each)"
import re, sys
from pathlib import Path
from packaging.specifiers import SpecifierSet
try: import tomllib
except ImportError: import tomli as tomllib # Python 3.10

project = tomllib.loads((Path(__file__).resolve().parent.parent/'pyproject.toml').read_text())['project']
classified = [tuple(map(int, m[1].split('.'))) for c in project['classifiers']
              if (m := re.fullmatch(r'Programming Language :: Python :: (3\.\d+)', c))]

def test_requires_python_allows_exactly_the_classified_versions():
    allows = SpecifierSet(project['requires-python'])
    assert [(3, minor) for minor in range(40) if f'3.{minor}.0' in allows] == sorted(classified), project['requires-python']

def test_this_python_is_one_the_project_claims():
    assert sys.version_info[:2] in classified, f"Python {sys.version.split()[0]} is not among {classified}: test it, then claim it"
