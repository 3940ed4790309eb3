"Index sources, the cache and the venv: git repositories pinned to refs, plain folders, dependencies installed once"
import importlib.util, json, os, sys
from pathlib import Path
import pytest
from toolslm_like.funccall import SchemaError, get_schema, call_func
from toolslm_like.indexes import ToolIndex, ToolIndexError, default_cache_dir
from index_builders import write_files, make_wheel, git_init, commit, git

SHOUT_TOOL = '''
    import tinydep

    def shout(text:str # What to shout
             )->str: # The text, shouted
        "Shout a text"
        return tinydep.shout(text)
'''

def shout_wheel(repo, version, bangs):
    return make_wheel(repo/'wheels', 'tinydep', version, {'tinydep/__init__.py': f'def shout(s): return s.upper() + "{"!" * bangs}"\n'})

def shout_repo(path):
    "A git repository with one tool that needs `tinydep`, a local wheel it carries (so no network): tags v1 and v2"
    repo = git_init(write_files(path, {'tools.toml': '[index]\ntools = ["shouting.shout"]\n', 'shouting.py': SHOUT_TOOL}))
    whl = shout_wheel(repo, '0.1', 1)
    (repo/'requirements.txt').write_text(f"--no-index\n./wheels/{whl.name}\n")
    v1 = commit(repo, 'v1', tag='v1')
    (repo/'wheels'/whl.name).unlink()
    whl = shout_wheel(repo, '0.2', 2)
    (repo/'requirements.txt').write_text(f"--no-index\n./wheels/{whl.name}\n")
    v2 = commit(repo, 'v2', tag='v2')
    return repo,v1,v2

def test_git_index_installs_once_and_reinstalls_when_the_ref_changes(tmp_path):
    repo,v1,v2 = shout_repo(tmp_path/'repo')
    cache = tmp_path/'cache'
    with ToolIndex(f"{repo}@v1", cache_dir=cache) as idx:
        assert idx.actions == ['fetch', 'venv', 'install'] and idx.commit == v1
        assert idx.ns['shouting.shout']('hi') == 'HI!'
        assert importlib.util.find_spec('tinydep') is None # installed in the index's venv only
    entry = next(cache.iterdir())
    record = json.loads((entry/'record.json').read_text())
    assert record['commit'] == v1 and record['ref'] == 'v1' and record['install']['deps']
    with ToolIndex(f"{repo}@v1", cache_dir=cache) as idx: # second load: nothing fetched, nothing installed
        assert idx.actions == [] and idx.ns['shouting.shout']('hi') == 'HI!'
    with ToolIndex(f"{repo}@v2", cache_dir=cache) as idx: # a changed ref: fetched and installed again
        assert idx.actions == ['fetch', 'venv', 'install'] and idx.commit == v2
        assert idx.ns['shouting.shout']('hi') == 'HI!!'
    with ToolIndex(f"{repo}@{v1}", cache_dir=cache) as idx: # pinned by commit hash
        assert idx.actions == ['fetch', 'venv', 'install'] and idx.ns['shouting.shout']('hi') == 'HI!'
    assert list(cache.iterdir()) == [entry] # one cache entry per source

def test_local_repository_follows_its_head(tmp_path):
    repo = git_init(write_files(tmp_path/'repo', {'tools.toml': '[index]\ntools = ["greet.hello"]\n',
        'greet.py': 'def hello(name:str): # Who\n    "Say hello"\n    return "hello " + name\n'}))
    commit(repo, 'first')
    cache = tmp_path/'cache'
    with ToolIndex(repo, cache_dir=cache) as idx: assert idx.ns['greet.hello']('bo') == 'hello bo'
    with ToolIndex(repo, cache_dir=cache) as idx: assert idx.actions == []
    (repo/'greet.py').write_text('def hello(name:str): # Who\n    "Say hello"\n    return "hi " + name\n')
    (repo/'untracked.txt').write_text('not committed')
    c2 = commit(repo, 'second')
    with ToolIndex(repo, cache_dir=cache) as idx:
        assert idx.commit == c2 and 'fetch' in idx.actions and idx.ns['greet.hello']('bo') == 'hi bo'

def test_unknown_ref_and_ref_on_a_plain_folder_are_clear_errors(tmp_path):
    repo = git_init(write_files(tmp_path/'repo', {'tools.toml': '[index]\ntools = ["greet.hello"]\n', 'greet.py': 'def hello(): "Hi"\n'}))
    commit(repo, 'first')
    with pytest.raises(ToolIndexError, match="no commit or ref 'nope'"): ToolIndex(f"{repo}@nope", cache_dir=tmp_path/'c')
    folder = write_files(tmp_path/'plain', {'tools.toml': '[index]\ntools = ["greet.hello"]\n', 'greet.py': 'def hello(): "Hi"\n'})
    with pytest.raises(ToolIndexError, match="plain folder, not a git repository"): ToolIndex(f"{folder}@v1", cache_dir=tmp_path/'c')

def test_pyproject_dependencies_and_nested_modules(tmp_path):
    whl = make_wheel(tmp_path/'dist', 'tinydep', '0.3', {'tinydep/__init__.py': 'def shout(s): return s.upper() + "?"\n'})
    folder = write_files(tmp_path/'plain', {
        'tools.toml': '[index]\ntools = ["pkg.sub.shouting.shout"]\n',
        'pyproject.toml': f'[project]\nname = "shouting"\nversion = "0"\ndependencies = ["tinydep @ {whl.as_uri()}"]\n',
        'pkg/__init__.py': '', 'pkg/sub/__init__.py': '', 'pkg/sub/shouting.py': SHOUT_TOOL})
    # tools may also come from a `src/` layout, or from a package installed in the index's venv
    write_files(folder, {'tools.toml': '[index]\ntools = ["pkg.sub.shouting.shout", "srcmod.loud", "tinydep.shout"]\n',
                         'src/srcmod.py': 'def loud(s:str):\n    "Loud"\n    return s + "!"\n'})
    with ToolIndex(folder, cache_dir=tmp_path/'cache') as idx:
        assert idx.actions == ['copy', 'venv', 'install']
        assert call_func('pkg.sub.shouting.shout', {'text': 'ok'}, idx.ns) == 'OK?'
        assert idx.ns['srcmod.loud']('a') == 'a!'
        assert idx.ns['tinydep.shout']('x') == 'X?' # from the venv's site-packages
        with pytest.raises(SchemaError, match='no docstring'): get_schema(idx.ns['tinydep.shout']) # as for the function itself
        assert get_schema(idx.ns['pkg.sub.shouting.shout'])['input_schema']['properties']['text']['description'] == 'What to shout'
    write_files(folder, {'pkg/sub/shouting.py': SHOUT_TOOL.replace('return tinydep.shout(text)', 'return tinydep.shout(text) * 2')})
    with ToolIndex(folder, cache_dir=tmp_path/'cache') as idx: # a changed file is copied again; the same dependencies are not reinstalled
        assert idx.actions == ['copy'] and idx.ns['pkg.sub.shouting.shout']('a') == 'A?A?'

def test_default_cache_is_per_user_and_never_the_current_directory(tmp_path, monkeypatch):
    folder = write_files(tmp_path/'plain', {'tools.toml': '[index]\ntools = ["greet.hello"]\n', 'greet.py': 'def hello():\n    "Hi"\n    return "hi"\n'})
    monkeypatch.delenv('TOOLSLM_LIKE_CACHE', raising=False)
    monkeypatch.setenv('XDG_CACHE_HOME', str(tmp_path/'xdg'))
    work = tmp_path/'work'; work.mkdir()
    monkeypatch.chdir(work)
    assert default_cache_dir() == tmp_path/'xdg'/'toolslm_like'/'indexes'
    with ToolIndex(folder) as idx: assert idx.ns['greet.hello']() == 'hi'
    assert list(work.iterdir()) == [] and len(list((tmp_path/'xdg'/'toolslm_like'/'indexes').iterdir())) == 1
    monkeypatch.setenv('TOOLSLM_LIKE_CACHE', str(tmp_path/'mine'))
    assert default_cache_dir() == tmp_path/'mine'/'indexes'

def test_failed_install_is_retried_next_time_with_pip_too(tmp_path, monkeypatch):
    monkeypatch.setenv('TOOLSLM_LIKE_INSTALLER', 'pip') # the installer when uv is not there
    folder = write_files(tmp_path/'plain', {'tools.toml': '[index]\ntools = ["greet.hello"]\n', 'greet.py': 'def hello(): "Hi"\n',
                                            'requirements.txt': '--no-index\n./wheels/missing-0.1-py3-none-any.whl\n'})
    with pytest.raises(ToolIndexError, match='Installing the dependencies'): ToolIndex(folder, cache_dir=tmp_path/'cache')
    entry = next((tmp_path/'cache').iterdir())
    assert 'install' not in json.loads((entry/'record.json').read_text())
    make_wheel(folder/'wheels', 'missing', '0.1', {'missing/__init__.py': ''})
    with ToolIndex(folder, cache_dir=tmp_path/'cache') as idx: assert 'install' in idx.actions

def test_tools_toml_problems_name_the_tool(tmp_path):
    folder = write_files(tmp_path/'plain', {'tools.toml': '[index]\ntools = ["greet.hello", "greet.nothing", "nomod.f"]\n',
                                            'greet.py': 'def hello(): "Hi"\n'})
    with pytest.raises(ToolIndexError) as e: ToolIndex(folder, cache_dir=tmp_path/'cache')
    msg = str(e.value)
    assert "greet.nothing: ToolIndexError: module 'greet' has no function 'nothing'" in msg and "nomod.f: ModuleNotFoundError" in msg, msg

def test_a_remote_source_is_not_fetched_again_unless_its_ref_changes_or_update(tmp_path):
    repo,v1,v2 = shout_repo(tmp_path/'repo')
    url,cache = (tmp_path/'repo').as_uri(),tmp_path/'cache' # a file:// URL takes the remote path: no commit lookup in the source
    with ToolIndex(f"{url}@v1", cache_dir=cache) as idx: assert idx.actions == ['fetch', 'venv', 'install'] and idx.commit == v1
    with ToolIndex(f"{url}@v1", cache_dir=cache) as idx: assert idx.actions == []
    with ToolIndex(f"{url}@v1", cache_dir=cache, update=True) as idx: assert idx.actions == ['fetch'] # same commit: the venv stays
    with ToolIndex(f"{url}@v2", cache_dir=cache) as idx: assert idx.actions == ['fetch', 'venv', 'install'] and idx.ns['shouting.shout']('a') == 'A!!'
    with ToolIndex(url, cache_dir=cache) as idx: assert idx.actions == ['fetch'] and idx.commit == v2 # the default branch's head

def test_a_changed_dependency_file_reinstalls_a_plain_folder(tmp_path):
    folder = write_files(tmp_path/'plain', {'tools.toml': '[index]\ntools = ["shouting.shout"]\n', 'shouting.py': SHOUT_TOOL})
    whl = shout_wheel(folder, '0.1', 1)
    (folder/'requirements.txt').write_text(f"--no-index\n./wheels/{whl.name}\n")
    with ToolIndex(folder, cache_dir=tmp_path/'cache') as idx: assert idx.ns['shouting.shout']('a') == 'A!'
    whl = shout_wheel(folder, '0.2', 3)
    (folder/'requirements.txt').write_text(f"--no-index\n./wheels/{whl.name}\n")
    with ToolIndex(folder, cache_dir=tmp_path/'cache') as idx:
        assert idx.actions == ['copy', 'venv', 'install'] and idx.ns['shouting.shout']('a') == 'A!!!'

def test_a_local_branch_wins_over_the_sources_own_remote_branch(tmp_path):
    upstream = git_init(write_files(tmp_path/'up', {'tools.toml': '[index]\ntools = ["greet.hello"]\n',
        'greet.py': 'def hello():\n    "Hi"\n    return "upstream"\n'}))
    commit(upstream, 'up')
    git(tmp_path, 'clone', '-q', str(upstream), str(tmp_path/'mine'))
    mine = tmp_path/'mine'
    (mine/'greet.py').write_text('def hello():\n    "Hi"\n    return "mine"\n')
    c = commit(mine, 'local work')
    with ToolIndex(f"{mine}@main", cache_dir=tmp_path/'cache') as idx: assert idx.commit == c and idx.ns['greet.hello']() == 'mine'
