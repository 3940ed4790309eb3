"README's Quickstart: exactly two commands, and the second is what CI runs"
import re, shlex, subprocess, sys
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
