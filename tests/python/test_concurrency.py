"""Many threads recording at once through the public API: nothing lost, torn or reordered."""
import threading
from collections import defaultdict

import perfprof
from perfprof import mstx

THREADS = 8
RANGES_PER_THREAD = 100_000


def test_eight_threads_times_one_hundred_thousand_ranges():
    barrier = threading.Barrier(THREADS)

    def work(index):
        names = [f"t{index} r{i}" for i in range(RANGES_PER_THREAD)]
        barrier.wait()
        start, end = mstx.range_start, mstx.range_end
        for name in names:
            end(start(name))

    with perfprof.profile(experimental_config=perfprof.ExperimentalConfig(mstx=True)) as prof:
        threads = [threading.Thread(target=work, args=(i,), name=f"w{i}") for i in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    ranges = prof.trace.ranges()
    assert len(ranges) == THREADS * RANGES_PER_THREAD
    assert set(prof.trace.stats.values()) == {0}, prof.trace.stats
    by_thread = defaultdict(list)
    for name, category, tid, begin, end, end_tid, flags in ranges:
        assert category == "user_annotation" and end_tid == tid and begin <= end and flags == 0
        by_thread[tid].append((begin, name))
    assert len(by_thread) == THREADS
    for records in by_thread.values():
        index = records[0][1].split()[0]
        assert [name for _, name in records] == [f"{index} r{i}" for i in range(RANGES_PER_THREAD)]
        assert all(a[0] <= b[0] for a, b in zip(records, records[1:]))
