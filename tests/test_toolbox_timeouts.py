"`Toolbox.execute(parallel=True, timeout=...)`: the threads' road keeps every time-limit guarantee (results on time, nothing lost, stuck Python code stopped)"
import asyncio, random, threading, time
import pytest
from toolslm_like.toolbox import Toolbox

def nap(seconds:float # How long to sleep
       )->str: # 'slept'
    "Sleep, then say so"
    time.sleep(seconds)
    return 'slept'

def spin(n:int # How many steps
        )->int: # The steps taken
    "Count, busily"
    i = 0
    while i < n: i += 1
    return i

async def anap(seconds:float # How long to sleep
              )->str: # 'slept'
    "Sleep without blocking the loop"
    await asyncio.sleep(seconds)
    return 'slept'

def add(a:int, # First number
        b:int # Second number
       )->int: # The sum
    "Add"
    return a + b

def call(i, tool, **args): return {'id': f'c{i}', 'name': tool, 'arguments': args}

@pytest.mark.timing(reason="a time limit returns on time: each stuck call is given up on at 0.2 s, the batch ends long before 2 s")
def test_stuck_calls_time_out_on_time_and_the_rest_still_run():
    with Toolbox([nap, spin, anap, add], max_workers=2) as tb: # both threads get stuck: new ones must take their place
        calls = [call('h', 'nap', seconds=2.0), call('s', 'spin', n=10**12), call('a', 'anap', seconds=2.0)]
        calls += [call(i, 'add', a=i, b=1) for i in range(50)]
        t = time.perf_counter()
        res = tb.execute(calls, parallel=True, timeout=0.2)
        took = time.perf_counter() - t
        assert took < 1.8, took # each stuck call for 0.2 s, not 2 s
        assert [r['id'] for r in res] == [c['id'] for c in calls]
        for r,tool in zip(res[:3], ('nap', 'spin', 'anap')):
            assert r['output'] is None and r['error'].startswith(f"TimeoutError: the tool '{tool}' did not finish within 0.2 seconds"), r
        assert [r['output'] for r in res[3:]] == [i+1 for i in range(50)] and all(r['error'] is None for r in res[3:])
        deadline = time.monotonic() + 30 # the busy loop is interrupted; the sleeping thread ends when its sleep does
        while len(tb._threads._abandoned) > 1 and time.monotonic() < deadline: time.sleep(0.02)
        assert len(tb._threads._abandoned) <= 1, tb._threads._abandoned

def test_timed_out_calls_are_retried():
    naps = []
    def slow_once(x:int # A number
                 )->int: # The same number
        "Slow the first time"
        naps.append(x)
        if len(naps) == 1: time.sleep(0.5)
        return x
    with Toolbox([slow_once, add], backoff=0) as tb:
        res = tb.execute([call(1, 'slow_once', x=7), call(2, 'add', a=1, b=1)], parallel=True, timeout=0.1, retries=1)
        assert [(r['output'], r['attempts']) for r in res] == [(7, 2), (2, 1)], res

def test_races_at_the_limit_settle_each_call_once():
    "Calls that end just around their limit: each gets exactly one result, and nothing raised to stop one reaches another"
    rng,outcomes = random.Random(1),set()
    with Toolbox([nap, add], max_workers=4, max_calls=400) as tb:
        tb.execute([call(i, 'nap', seconds=0.01) for i in range(8)], parallel=True, timeout=5) # the threads are started, and wait for work
        for _ in range(3):
            calls = [call(i, 'nap', seconds=rng.choice((0, 0.002, 0.004, 0.006, 0.008))) for i in range(400)]
            res = tb.execute(calls, parallel=True, timeout=0.005)
            assert [r['id'] for r in res] == [c['id'] for c in calls]
            for r in res: assert r['output'] == 'slept' or r['error'].startswith("TimeoutError: the tool 'nap' did not finish"), r
            outcomes |= {r['error'] is None for r in res}
        assert outcomes == {True, False}, outcomes # some in time, some not (a busy machine may time out a whole round, not all three)
        time.sleep(0.3) # every interrupted thread has left its batch by now: later calls on the same threads run undisturbed
        res = tb.execute([call(i, 'add', a=i, b=i) for i in range(200)], parallel=True, timeout=5)
        assert [r["output"] for r in res] == [2*i for i in range(200)], [r for r in res if r["error"]][:2]

@pytest.mark.timing(reason="calls that wait for a busy thread get their timeout result on time, long before the busy call ends")
def test_calls_waiting_for_a_thread_time_out_too():
    "The toolbox's only thread is busy with another batch: the calls of a timed batch that no thread takes get their timeout result on time"
    with Toolbox([nap, add], max_workers=1) as tb:
        busy = threading.Thread(target=tb.execute, args=([call(1, 'nap', seconds=1.0), call(2, 'nap', seconds=0.2)],), kwargs={'parallel': True})
        busy.start()
        deadline = time.monotonic() + 30 # until the other batch holds the only thread
        while (not tb._threads or not tb._threads._running) and time.monotonic() < deadline: time.sleep(0.01)
        t = time.perf_counter()
        res = tb.execute([call(3, 'add', a=1, b=2), call(4, 'add', a=3, b=4)], parallel=True, timeout=0.2)
        took = time.perf_counter() - t
        assert took < 0.9, took # (the busy call takes 1 s)
        assert all(r['error'].startswith("TimeoutError: the tool 'add' did not finish within 0.2 seconds") for r in res), res
        busy.join()
        assert [r['output'] for r in tb.execute([call(5, 'add', a=1, b=1), call(6, 'add', a=2, b=2)], parallel=True, timeout=1)] == [2, 4]

def test_serial_batches_with_a_timeout_run_one_call_after_another():
    spans = []
    def note(x:int # A number
            )->int: # The same number
        "Note when it ran"
        t = time.perf_counter(); time.sleep(0.02); spans.append((x, t, time.perf_counter()))
        return x
    async def anote(x:int # A number
                   )->int: # The same number
        "Note when it ran, asynchronously"
        t = time.perf_counter(); await asyncio.sleep(0.02); spans.append((x, t, time.perf_counter()))
        return x
    with Toolbox([note, anote, nap], max_workers=4) as tb:
        calls = [call(i, 'anote' if i % 2 else 'note', x=i) for i in range(6)]
        res = tb.execute(calls, timeout=1)
        assert [r['output'] for r in res] == list(range(6)), res
        assert [x for x,_,_ in spans] == list(range(6)) # in order
        assert all(end <= nxt_start for (_,_,end),(_,nxt_start,_) in zip(spans, spans[1:])), spans # never two at once
        # a stuck call times out, and the calls after it still run
        res = tb.execute([call('h', 'nap', seconds=30), call('a', 'note', x=7), call('s', 'nap', seconds=0)], timeout=0.2)
        assert res[0]['error'].startswith("TimeoutError: the tool 'nap' did not finish within 0.2 seconds") and [r['output'] for r in res[1:]] == [7, 'slept']

def test_serial_async_tool_times_out():
    with Toolbox([anap, add]) as tb:
        res = tb.execute([call(1, 'anap', seconds=30), call(2, 'add', a=1, b=2)], timeout=0.2)
        assert res[0]['error'].startswith("TimeoutError: the tool 'anap' did not finish") and res[1]['output'] == 3, res
