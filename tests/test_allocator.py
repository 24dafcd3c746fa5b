"""hookgrad keeps a step's freed arrays mapped (glibc's thresholds raised at import): a loop
that allocates and frees the same large arrays faults their pages in once, not every pass."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from hookgrad import _allocator

# three 16 MiB arrays live at once, then all freed: with glibc's own thresholds the 48 MiB at
# the heap's top is above its trim threshold (twice the largest block freed), so it goes back
# to the kernel after every pass and the next pass faults it in again
LOOP = textwrap.dedent("""
    import resource
    import numpy as np
    import hookgrad

    def faults():
        return resource.getrusage(resource.RUSAGE_SELF).ru_minflt

    counts = []
    for _ in range(5):
        before = faults()
        a = np.ones(4 << 20, np.float32)
        b = np.ones(4 << 20, np.float32)
        c = a + b
        del a, b, c
        counts.append(faults() - before)
    print(max(counts[1:]))
""")
PAGES = 3 * (16 << 20) // os.sysconf("SC_PAGE_SIZE")


def _faults_after_first_pass(**env) -> int:
    environ = {k: v for k, v in os.environ.items()
               if not k.startswith("MALLOC_") and k != "GLIBC_TUNABLES"}
    environ.update(env)
    result = subprocess.run([sys.executable, "-c", LOOP], capture_output=True, text=True,
                            env=environ, check=True)
    return int(result.stdout.split()[-1])


linux_glibc = pytest.mark.skipif(not (sys.platform.startswith("linux") and _allocator._glibc()),
                                 reason="the thresholds are glibc's")


@linux_glibc
def test_a_loop_reuses_its_freed_arrays_without_page_faults():
    assert _faults_after_first_pass() < PAGES // 20


@linux_glibc
def test_the_opt_out_leaves_glibc_returning_the_memory():
    # the same loop faults (some of) its arrays in again on every pass
    assert _faults_after_first_pass(HOOKGRAD_KEEP_FREED_MEMORY="0") > PAGES // 20


def test_the_users_own_malloc_settings_are_left_alone():
    assert _allocator._wanted({})
    assert not _allocator._wanted({"HOOKGRAD_KEEP_FREED_MEMORY": "0"})
    assert not _allocator._wanted({"MALLOC_TRIM_THRESHOLD_": "1000"})
    assert not _allocator._wanted({"GLIBC_TUNABLES": "glibc.malloc.trim_threshold=1"})
    assert _allocator._wanted({"GLIBC_TUNABLES": "glibc.rtld.nns=2"})
    assert not _allocator.keep_freed_memory({"MALLOC_MMAP_THRESHOLD_": "1"})
