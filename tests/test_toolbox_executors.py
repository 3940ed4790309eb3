"`Toolbox` with executors that run tools elsewhere: a process pool, and dask.distributed's in-process cluster"
import asyncio, concurrent.futures, multiprocessing, os, time
import pytest
from toolslm_like.toolbox import Toolbox

def where(x:int # A number
         )->dict: # The number and the process that saw it
    "Say which process ran this"
    return {'x': x, 'pid': os.getpid()}

def nap(seconds:float # How long to sleep
       )->str: # 'slept'
    "Sleep, then say so"
    time.sleep(seconds)
    return 'slept'

def boom(x:int # A number
        )->float: # Never returns
    "Fail"
    return 1/(x-x)

async def ahello(name:str # Who
                )->str: # A greeting
    "Greet, asynchronously"
    await asyncio.sleep(0)
    return f"hello {name}"

_tries = {}
def flaky(key:str # A key
         )->str: # The key, once the connection holds
    "Fail with a dropped connection the first time each key is asked for (in this process)"
    _tries[key] = _tries.get(key, 0) + 1
    if _tries[key] == 1: raise ConnectionResetError('connection reset by peer')
    return key

tools = [where, nap, boom, ahello, flaky]

def call(i, tool, **args): return {'id': f'c{i}', 'name': tool, 'arguments': args}

def check_batch(tb, parallel):
    res = tb.execute([call(1, 'where', x='1'), call(2, 'boom', x=1), call(3, 'nope'), call(4, 'ahello', name='Ann'), call(5, 'where', x='y')],
                     parallel=parallel)
    assert [r['id'] for r in res] == ['c1', 'c2', 'c3', 'c4', 'c5']
    assert res[0]['output']['x'] == 1 and res[0]['error'] is None # converted from "1" before it was sent
    assert res[1]['error'].endswith('ZeroDivisionError: division by zero') and 'return 1/(x-x)' in res[1]['error'], res[1]['error']
    assert res[2]['error'].startswith('ToolNotFoundError') and res[2]['attempts'] == 0
    assert res[3]['output'] == 'hello Ann' # async tools run on an event loop here, not on the executor
    assert res[4]['error'].startswith('ArgumentError') and res[4]['attempts'] == 0
    return res

@pytest.fixture(scope='module')
def process_pool():
    with concurrent.futures.ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context('spawn')) as pool:
        yield pool

@pytest.mark.parametrize('parallel', [False, True])
def test_process_pool(process_pool, parallel):
    tb = Toolbox(tools, executor=process_pool)
    res = check_batch(tb, parallel)
    assert res[0]['output']['pid'] != os.getpid() # it ran in a worker process

def test_process_pool_timeout_stops_the_tool(process_pool):
    tb = Toolbox(tools, executor=process_pool)
    tb.execute([call(0, 'where', x=0)]*2, parallel=True) # workers started
    res = tb.execute([call(1, 'nap', seconds=30), call(2, 'where', x=2)], timeout=2)
    assert res[0]['error'].startswith('TimeoutError') and res[1]['output']['x'] == 2, res
    # the worker's own time limit interrupted the sleep, so both workers are free again at once
    res = tb.execute([call(3, 'nap', seconds=0.1), call(4, 'nap', seconds=0.1)], parallel=True, timeout=20)
    assert [r['output'] for r in res] == ['slept', 'slept'], res

def test_process_pool_async(process_pool):
    tb = Toolbox(tools, executor=process_pool)
    res = asyncio.run(tb.aexecute([call(1, 'where', x=5), call(2, 'ahello', name='Bo'), call(3, 'nap', seconds=5)], parallel=True, timeout=0.5))
    assert res[0]['output']['pid'] != os.getpid() and res[1]['output'] == 'hello Bo' and res[2]['error'].startswith('TimeoutError')

@pytest.fixture(scope='module')
def dask_client():
    distributed = pytest.importorskip('distributed')
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=4, dashboard_address=None) as client:
        yield client

@pytest.mark.parametrize('parallel', [False, True])
def test_dask_executor(dask_client, parallel):
    tb = Toolbox(tools, executor=dask_client.get_executor())
    check_batch(tb, parallel)

@pytest.mark.timing(reason="four 1 s calls at once on dask's four threads take about 1 s; one after another, 4 s")
def test_dask_executor_parallel_and_timeout(dask_client):
    tb = Toolbox(tools, executor=dask_client.get_executor())
    t = time.perf_counter()
    res = tb.execute([call(i, 'nap', seconds=1.0) for i in range(4)], parallel=True)
    assert [r['output'] for r in res] == ['slept']*4 and time.perf_counter() - t < 3.5 # four threads at once
    res = tb.execute([call(1, 'nap', seconds=30), call(2, 'where', x=1)], timeout=1)
    assert res[0]['error'].startswith('TimeoutError') and res[1]['output']['x'] == 1

def test_dask_retries_run_again(dask_client):
    "dask's executor caches results by arguments by default (`pure=True`); a retry must still run the tool again"
    tb = Toolbox(tools, executor=dask_client.get_executor(), backoff=0)
    res = tb.execute([call(1, 'flaky', key='dask')], retries=2)
    assert (res[0]['output'], res[0]['attempts']) == ('dask', 2), res

def test_tracebacks_start_at_the_tool():
    "In the installed module our own frames are left out of the error a model sees, on every path"
    import toolslm_like
    ours = os.path.dirname(toolslm_like.__file__) + os.sep # the package's files (a checkout may be named toolslm_like too)
    tb = Toolbox(tools)
    for kw in ({}, {'parallel': True}, {'timeout': 5}):
        res = tb.execute([call(1, 'boom', x=1), call(2, 'boom', x=2)], **kw)
        for r in res:
            assert ours not in r['error'] and 'concurrent' not in r['error'] and 'return 1/(x-x)' in r['error'], (kw, r['error'])
    tb.close()

def test_process_pool_approve(process_pool):
    "The approval hook runs here, before anything is sent: refused calls never reach the pool, edited arguments do"
    seen = []
    def hook(c):
        seen.append(c)
        return {'x': 7} if c['arguments'].get('x') == 1 else 'not that one' if c['name'] == 'nap' else None
    tb = Toolbox(tools, executor=process_pool, approve=hook)
    for parallel in (False, True):
        seen.clear()
        res = tb.execute([call(1, 'where', x=1), call(2, 'nap', seconds=30), {'call_id': 'r3', 'name': 'where', 'arguments': '{"x": 3}'}],
                         parallel=parallel, timeout=10)
        assert [c['id'] for c in seen] == ['c1', 'c2', 'r3'] and seen[2]['arguments'] == {'x': 3} # ids and JSON text arguments read
        assert res[0]['output']['x'] == 7 and res[0]['output']['pid'] != os.getpid() and res[0]['edited_arguments'] == {'x': 7}
        assert (res[1]['refused'], res[1]['error'], res[1]['attempts']) == ('not that one', None, 0)
        assert (res[2]['id'], res[2]['output']['x']) == ('r3', 3)

def test_approve_on_the_callers_thread():
    "A sync hook runs on the thread that called `execute`, also for parallel batches (a hook may ask a person and wait)"
    import threading
    threads = []
    def hook(c): threads.append(threading.current_thread())
    tb = Toolbox(tools, approve=hook)
    res = tb.execute([call(1, 'nap', seconds=0.2), call(2, 'nap', seconds=0.2)], parallel=True)
    assert [r['output'] for r in res] == ['slept']*2 and threads == [threading.current_thread()]*2

@pytest.mark.timing(reason="eight batches whose hooks each wait 0.05 s finish together, not one after another")
def test_async_hook_from_many_threads():
    "An async hook with the sync API, from several threads at once: each batch gets its own answers, none waits on another"
    async def hook(c):
        await asyncio.sleep(0.05)
        return c['arguments']['x'] % 2 == 0 or f"odd: {c['arguments']['x']}"
    tb = Toolbox(tools, approve=hook)
    def batch(i): return tb.execute([call(j, 'where', x=i*10+j) for j in range(4)], parallel=bool(i % 2))
    t = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(8) as pool: out = list(pool.map(batch, range(8)))
    for i,res in enumerate(out):
        assert [r.get('refused') for r in res] == [None, f'odd: {i*10+1}', None, f'odd: {i*10+3}']
        assert [r['output']['x'] for r in res if r['output']] == [i*10, i*10+2]
    assert time.perf_counter() - t < 10
    tb.close()
