"""claudette, cosette and lisette, installed from PyPI, with toolslm_like.funccall put in place of the funccall module
they import (as README shows): their real tool flows (tests/chatlib_flows.py) run twice against scripted model servers
on 127.0.0.1, once with their own module and once with ours, and every tool result sent back to the model is compared.

Those libraries need older SDKs than ours, so they live in a venv of their own, `.venv-chat` (built by `.ci/run`); the
tests skip when it is absent, and fail instead when TOOLSLM_LIKE_REQUIRE_CHATLIBS is set (as `.ci/run` sets it)."""
import json, os, re, subprocess, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parent.parent
PY = ROOT/'.venv-chat'/'bin'/'python'

# Where ours answers differently from the original on purpose, and why (flow, index of the tool result)
DELIBERATE = {
    'repairs': {
        2: "`xs: list[int]` sent as the text '5': ours passes [5], as the annotation asks; fastcore passes the bare 5",
        3: "`xs: list[int]` sent as \"['a']\": ours refuses strings where integers are expected; fastcore passes them on",
    },
}

def _chat_python()->Path:
    if not PY.exists():
        if os.environ.get('TOOLSLM_LIKE_REQUIRE_CHATLIBS'):
            pytest.fail(f"{PY} is missing: .ci/run builds it (claudette, cosette, lisette and the SDKs they need)")
        pytest.skip(".venv-chat is absent (.ci/run builds it: python -m venv .venv-chat; "
                    ".venv-chat/bin/pip install claudette cosette lisette, with the pins .ci/run gives)")
    # the same subprocesses whichever Python runs pytest: once, in the suite of the chat venv's own version, is enough
    cfg = (PY.parent.parent/'pyvenv.cfg').read_text()
    v = re.search(r'^version(?:_info)?\s*=\s*(\d+\.\d+)', cfg, re.M)
    if v and v[1] != '%d.%d' % sys.version_info[:2]:
        pytest.skip(f".venv-chat is Python {v[1]}'s: these tests run in that version's suite")
    return PY

def _start(mode:str)->subprocess.Popen:
    env = {**os.environ, 'PYTHONPATH': str(ROOT), 'LITELLM_LOCAL_MODEL_COST_MAP': 'True'}
    return subprocess.Popen([str(_chat_python()), str(ROOT/'tests'/'chatlib_flows.py'), mode], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

def _result(mode:str, p:subprocess.Popen)->dict:
    try: out,err = p.communicate(timeout=600)
    except subprocess.TimeoutExpired:
        p.kill(); p.communicate()
        pytest.fail(f"chatlib_flows.py {mode} still ran after 600 s")
    assert p.returncode == 0, f"chatlib_flows.py {mode} failed:\n{err[-3000:]}"
    return json.loads(out)

def _run(mode:str)->dict: return _result(mode, _start(mode))

@pytest.fixture(scope='module')
def runs()->dict:
    "Both runs, side by side (each is about 30 one-second flows)"
    started = {m: _start(m) for m in ('original', 'ours')}
    return {m: _result(m, p) for m,p in started.items()}

@pytest.fixture(scope='module')
def original(runs): return runs['original']

@pytest.fixture(scope='module')
def ours(runs): return runs['ours']

_error = re.compile(r'Traceback \(most recent call last\)|^\w*(Error|Exception)\b|^Tool not defined|^Error -', re.M)
def is_error(text:str)->bool: return bool(_error.search(text))

def test_no_name_is_missing():
    "Every name fastcore.funccall and toolslm.funccall export is in ours, taking at least the parameters theirs take"
    assert _run('names') == {}

def test_every_flow_runs_with_ours(ours):
    "No flow ends in an exception with our module in place, and every request the libraries send is well formed"
    assert len(ours) == 39
    for name,o in ours.items():
        assert o['crash'] is None, f"{name}: {o['crash']}"
        assert o['problems'] == [], f"{name}: {o['problems']}"
        assert o['results'] or name.endswith('structured'), f"{name}: no tool result was sent back"

def test_results_match_the_originals(original, ours):
    """Each tool result sent back is the original's, or an error in both, or a value where the original gave an error
    (or crashed), or a difference listed in DELIBERATE"""
    assert set(original) == set(ours)
    for name,o in original.items():
        mine,flow = ours[name],name.split(': ', 1)[1]
        if o['crash']: continue # the original's loop ended; ours is checked by test_every_flow_runs_with_ours
        assert len(mine['results']) == len(o['results']), f"{name}: {mine['results']} vs {o['results']}"
        for i,(a,b) in enumerate(zip(o['results'], mine['results'])):
            if a == b or i in DELIBERATE.get(flow, {}): continue
            assert is_error(a), f"{name}, result {i}: the original sent {a!r}, ours {b!r}"
        assert mine['value'] == o['value'], f"{name}: {mine['value']} vs {o['value']}"

def test_what_ours_does_better(original, ours):
    """The flows the issue found blocked now run (claudette's server-tool dicts, threads and signals, repairs, tc_refs),
    and a bad dataclass argument is an error the model reads, where fastcore's loops crash"""
    for lib in ('claudette', 'lisette'):
        assert ours[f'{lib}: async threads and signals']['results'] == ['main', 'ok']
    assert ours['claudette: server tools']['results'] == ['1']
    assert ours['claudette: async server tools']['results'] == ['2']
    for lib in ('claudette', 'cosette', 'lisette'):
        r = ours[f'{lib}: repairs']['results']
        assert r[:3] == ["[('k', 1)] []", '[] [1, 2]', "[('a', 2)] [5]"], r
        assert r[3].startswith("ArgumentError") and 'xs[0]: expected an integer' in r[3], r[3]
        bad = ours[f'{lib}: bad calls']['results']
        assert "a: expected an integer" in bad[0] and "c: unknown argument" in bad[2], bad
        assert original[f'{lib}: dataclass arguments']['crash'].startswith('TypeError') # fastcore builds it outside its try
        assert ours[f'{lib}: dataclass arguments']['results'] == [
            '7', "ArgumentError: Invalid arguments for tool 'dist':\n- p: missing required field 'y' (an integer)"]
    refs = [json.loads(r)[-1]['text'] for r in ours['lisette: tc_refs']['results']]
    assert refs[2:] == ['6', "[('k', 1)] [1]"], refs

def test_dataclass_tools_keep_field_comments(ours):
    "A dataclass as the tool itself (structured output) keeps its field comments as descriptions"
    for lib in ('claudette', 'cosette', 'lisette'):
        t = ours[f'{lib}: structured']['schemas'][0]
        props = (t.get('input_schema') or t.get('parameters') or t['function']['parameters'])['properties']
        assert {k: v['description'] for k,v in props.items()} == {'x': 'Across', 'y': 'Up'}, (lib, props)
