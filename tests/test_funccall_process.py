"Black-box checks of the installed `toolslm_like.funccall` in a fresh interpreter, where the library's frames are real module frames"
import subprocess, sys, textwrap
import pytest

def run(code, tmp_path):
    script = tmp_path/'script.py' # a real file, so tracebacks and docments have source lines
    script.write_text(textwrap.dedent(code))
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()

def test_python_uses_the_callers_globals(tmp_path):
    out = run('''
        import asyncio
        from toolslm_like.funccall import python, call_func, call_func_async
        x = 41
        print(python('x + 1'), call_func('python', {'code': 'x + 1'}, [python]),
              asyncio.run(call_func_async('python', {'code': 'x + 1'}, [python])), python('__name__'))
        python('y = 7')
        print(y)
    ''', tmp_path)
    assert out.splitlines() == ['42 42 42 __main__', '7'], out

def test_tool_traceback_starts_at_the_tool(tmp_path):
    out = run('''
        from toolslm_like.funccall import call_func
        def boom(x:int):
            "Fails"
            return 1/x
        print(call_func('boom', {'x': 0}, [boom], raise_on_err=False))
    ''', tmp_path)
    assert 'toolslm_like' not in out and 'return 1/x' in out and out.endswith('ZeroDivisionError: division by zero'), out

@pytest.mark.timing # a 1 s limit must neither stop the code early (0.9) nor late: 10 s is far past any scheduling delay
def test_timeout_on_the_main_thread_restores_the_handler(tmp_path):
    out = run('''
        import signal, time
        from toolslm_like.funccall import python
        mine = lambda *a: None
        signal.signal(signal.SIGALRM, mine)
        t = time.monotonic()
        r = python('while True: pass', timeout=1)
        print(r.startswith('TimeoutError'), 0.9 < time.monotonic()-t < 10, signal.getsignal(signal.SIGALRM) is mine)
    ''', tmp_path)
    assert out == 'True True True', out

@pytest.mark.timing # the blocked code sleeps 30 s: coming back within 10 s shows the 0.5 s limit stopped it
def test_python_in_a_worker_thread(tmp_path):
    "Off the main thread: the caller's globals, a traceback that starts at the model's code, and a blocking call back on time"
    out = run('''
        import time
        from concurrent.futures import ThreadPoolExecutor
        from toolslm_like.funccall import python
        x = 41
        with ThreadPoolExecutor(1) as ex:
            print(ex.submit(lambda: python('x + 1')).result())
            tb = ex.submit(lambda: python('def f():\\n    raise ValueError("bad")\\nf()')).result()
            print(tb.splitlines()[1].strip(), '|', tb.strip().splitlines()[-1])
            t = time.monotonic()
            r = ex.submit(lambda: python('import time; time.sleep(30)', timeout=0.5)).result()
            print(r.startswith('TimeoutError'), time.monotonic() - t < 10)
    ''', tmp_path)
    assert out.splitlines() == ['42', 'File "<python-tool-2>", line 3, in <module> | ValueError: bad', 'True True'], out

def test_async_traceback_starts_at_the_tool(tmp_path):
    "A sync tool run by `call_func_async` runs in a worker thread: its traceback leaves out the thread's and the loop's frames"
    out = run('''
        import asyncio
        from toolslm_like.funccall import call_func_async
        def divide(x:int):
            "Divides one by x"
            return 1/x
        print(asyncio.run(call_func_async('divide', {'x': 0}, [divide], raise_on_err=False)))
    ''', tmp_path)
    lines = out.splitlines()
    assert lines[0] == 'Traceback (most recent call last):' and lines[1].endswith(', in divide'), out
    assert 'asyncio' not in out and 'concurrent' not in out and out.endswith('ZeroDivisionError: division by zero'), out

def test_future_annotations_strict_nulls_and_pyc(tmp_path):
    "TypedDict markers under `from __future__ import annotations`, OpenAI strict-mode nulls end to end, and a tool installed only as .pyc"
    (tmp_path/'shapes.py').write_text(textwrap.dedent('''
        from __future__ import annotations
        import dataclasses
        import pydantic
        from typing_extensions import TypedDict, Required, NotRequired
        class Opts(TypedDict, total=False):
            fast: Required[bool] # Go fast?
            note: NotRequired[str] # A note
        @dataclasses.dataclass
        class Dim:
            w: int # Width
            h: int = 1 # Height
        class Box(pydantic.BaseModel):
            "A box"
            dim: Dim # Its size
            opts: Opts | None = None # Options
            qty: int = pydantic.Field(3, ge=1)
        def pack(box: Box, # The box
                 opts: Opts, # How
                 n: int = 1): # How many
            "Pack a box"
            return box.dim.h, box.qty, opts, n
        '''))
    (tmp_path/'compiled_src.py').write_text('def made(a:int, # A number\n         b:str="x"):\n    "Made"\n    return a\n')
    out = run('''
        import json, py_compile, shutil, sys, warnings, jsonschema
        py_compile.compile('compiled_src.py', cfile='compiled.pyc'); import os; os.remove('compiled_src.py')
        from toolslm_like.funccall import get_schema, call_func
        from toolslm_like.providers import tool_schemas
        import shapes, compiled
        s = get_schema(shapes.pack)['input_schema']
        ours = s['$defs'][s['properties']['opts']['$ref'][8:]]
        print(ours['required'], ours['additionalProperties'])
        p = tool_schemas([shapes.pack], 'openai', strict=True)[0]['function']['parameters']
        v = {'box': {'dim': {'w': 2, 'h': None}, 'opts': None, 'qty': None}, 'opts': {'fast': True, 'note': None}, 'n': None}
        jsonschema.Draft202012Validator(p).validate(v)
        print(call_func('pack', v, [shapes.pack]))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter('always')
            print(get_schema(compiled.made)['input_schema']['required'], len(w), 'could not be read' in str(w[0].message))
    ''', tmp_path)
    assert out.splitlines() == ["['fast'] False", "(1, 3, {'fast': True}, 1)", "['a'] 1 True"], out
