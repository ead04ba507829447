"""Threads: concurrent calls match serial ones; Ctrl-C and the progress callback stop a call."""

import concurrent.futures
import os
import signal
import threading
import time

import pytest

import clustersim
from conftest import SOURCE, example

GPT = example("gpt-22b-a100.textproto")

# Long enough to interrupt (about 3 s on one core, two of them simulating):
# every data-parallel replica of a 256-GPU GPT-22B step.
LONG = dict(num_gpus=256, global_batch_size=1024, no_fold=True)
# Under a second: 64 GPUs.
MEDIUM = dict(num_gpus=64, global_batch_size=256, no_fold=True)


def os_threads():
    """The process's threads, once this thread's command worker has started."""
    clustersim.collective(min_bytes="1M", max_bytes="1M")
    return len(os.listdir("/proc/self/task"))


def test_concurrent_runs_match_serial():
    cases = [dict(tensor_model_parallel_size=tp, micro_batch_size=mbs, global_batch_size=16)
             for tp in (1, 2, 4, 8) for mbs in (1, 2)]
    serial = [clustersim.run(GPT, **c) for c in cases]
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        parallel = list(pool.map(lambda c: clustersim.run(GPT, **c), cases))
    assert parallel == serial


def test_calls_release_the_gil():
    """A Python thread keeps running while a long call simulates."""
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.01)

    t = threading.Thread(target=ticker)
    t.start()
    start = time.monotonic()
    clustersim.run(GPT, **MEDIUM)
    stop.set()
    t.join()
    # The call lasts most of a second; a ticker that needed the GIL held by the
    # call would not tick at all. Three ticks leave room for a loaded machine.
    assert len([x for x in ticks if x >= start]) >= 3


def interrupt_at_first_progress(call):
    """Calls call(progress) with a callback that sends SIGINT once the
    simulation reports a total; returns the seconds from the signal to the
    KeyboardInterrupt."""
    sent = []

    def arm(done, total):
        if total > 0 and not sent:
            sent.append(time.monotonic())
            os.kill(os.getpid(), signal.SIGINT)

    with pytest.raises(KeyboardInterrupt):
        call(arm)
    return time.monotonic() - sent[0]


def test_ctrl_c_raises_keyboard_interrupt_within_a_second():
    """SIGINT while the step simulates (the task graph is built first: progress
    reports tasks once the simulation starts)."""
    before = os_threads()
    latency = interrupt_at_first_progress(lambda arm: clustersim.run(GPT, progress=arm, **LONG))
    assert latency < 1.0, f"KeyboardInterrupt {latency:.2f} s after the signal"
    assert os_threads() <= before  # threads ended by earlier tests may still be exiting
    # The module is usable afterwards.
    assert clustersim.run(GPT)["step_time_s"] > 0


def test_progress_reports_and_an_exception_in_it_stops_the_call():
    seen = []
    clustersim.run(GPT, **MEDIUM, progress=lambda d, t: seen.append((d, t)))
    assert seen and seen[-1][0] == seen[-1][1] > 0
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)

    class Stop(Exception):
        pass

    raised = []

    def stop(done, total):
        if total > 0:
            raised.append(time.monotonic())
            raise Stop()

    before = os_threads()
    with pytest.raises(Stop):
        clustersim.run(GPT, progress=stop, **LONG)
    assert time.monotonic() - raised[0] < 1.0
    assert os_threads() <= before  # threads ended by earlier tests may still be exiting


def test_search_progress_counts_strategies():
    seen = []
    rows = clustersim.search(model="llama2-7b", gpu="h100-sxm5-80gb", num_gpus=2,
                             global_batch_size=8, top_k=1, threads=2,
                             progress=lambda d, t: seen.append((d, t)))
    assert rows and seen[-1][0] == seen[-1][1] > 1


def test_ctrl_c_stops_a_serving_simulation():
    """SIGINT while a long serving trace simulates (20,000 requests: seconds)."""
    latency = interrupt_at_first_progress(lambda arm: clustersim.serve(
        example("serve-llama3-8b-h100.textproto"), num_requests=20000, request_rate=50,
        progress=arm))
    assert latency < 1.0, f"KeyboardInterrupt {latency:.2f} s after the signal"


def test_ctrl_c_stops_a_validation_between_rows():
    """SIGINT while a published table is validated (the unseen table: tens of seconds)."""
    table = os.path.join(SOURCE, "tests/validation/unseen/training-runs.csv")
    latency = interrupt_at_first_progress(lambda arm: clustersim.validate(table, progress=arm))
    assert latency < 1.0, f"KeyboardInterrupt {latency:.2f} s after the signal"
