"Helpers for the index tests: build index folders, git repositories and small local wheels, all offline"
import base64, hashlib, subprocess, textwrap, zipfile
from pathlib import Path

def write_files(root:Path, files:dict)->Path:
    "Write {relative path: text} under `root` (text is dedented)"
    root.mkdir(parents=True, exist_ok=True)
    for p,t in files.items():
        (root/p).parent.mkdir(parents=True, exist_ok=True)
        (root/p).write_text(textwrap.dedent(t).lstrip('\n'))
    return root

def make_wheel(dest:Path, name:str, version:str, files:dict)->Path:
    "A pure-Python wheel built by hand (no build backend, no network): {path in wheel: source}"
    dest.mkdir(parents=True, exist_ok=True)
    di = f"{name}-{version}.dist-info"
    files = {**files, f"{di}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
             f"{di}/WHEEL": "Wheel-Version: 1.0\nGenerator: toolslm_like-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = []
    for p,t in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(t.encode()).digest()).rstrip(b'=').decode()
        record.append(f"{p},sha256={digest},{len(t.encode())}")
    files[f"{di}/RECORD"] = '\n'.join(record + [f"{di}/RECORD,,"]) + '\n'
    whl = dest/f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(whl, 'w') as z:
        for p,t in files.items(): z.writestr(p, t)
    return whl

def git(repo:Path, *args)->str:
    env = {'GIT_AUTHOR_NAME': 't', 'GIT_AUTHOR_EMAIL': 't@example.invalid', 'GIT_COMMITTER_NAME': 't',
           'GIT_COMMITTER_EMAIL': 't@example.invalid', 'HOME': str(repo), 'PATH': '/usr/bin:/bin'}
    return subprocess.run(['git', *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout.strip()

def git_init(repo:Path)->Path:
    git(repo, 'init', '-q', '-b', 'main')
    return repo

def commit(repo:Path, message:str, tag:str|None=None)->str:
    "Commit everything in `repo` (and tag it); the new commit's hash"
    git(repo, 'add', '-A'); git(repo, 'commit', '-q', '-m', message)
    if tag: git(repo, 'tag', tag)
    return git(repo, 'rev-parse', 'HEAD')
