"""The parity harness's fast subset (benchmarks/parity/cases.py, ``ci=True``) on SeaTunnel's engine (Zeta) and the
project: no unexplained difference, and none of the ``fixed`` class (those must stay absent). Differences
classified as deviations or SeaTunnel bugs are expected. The full list is the benchmark
(``python benchmarks/parity/run.py``, docs/parity.md).

Without the shared zeta folder (env ``SEATUNNEL_ZETA_DIR``, ``../shared/zeta``, ``/work/shared/zeta``) the tests
skip, saying so."""

from __future__ import annotations

import pytest

from benchmarks.parity.cases import CASES
from benchmarks.parity.engines import setup_zeta, zeta_dir
from benchmarks.parity.harness import run_case

SUBSET = [c for c in CASES if c.ci]


@pytest.fixture(scope="module")
def zeta():
    folder = zeta_dir()
    if folder is None:
        pytest.skip("SKIPPED: no SeaTunnel Zeta folder (set SEATUNNEL_ZETA_DIR to the folder of run-zeta.sh, "
                    "or make ../shared/zeta available): the parity subset did not run")
    code, err = setup_zeta(folder, connectors=(), libs=())
    assert code == 0, f"zeta setup.sh failed ({code}):\n{err[-3000:]}"
    return folder


@pytest.mark.parametrize("case", SUBSET, ids=[c.name for c in SUBSET])
def test_no_unexplained_difference(zeta, case, tmp_path):
    result = run_case(case, 1, zeta, work=tmp_path, log=lambda _: None)
    failing = [f"{d.cls or 'UNEXPLAINED'} {d.diff.aspect} {d.diff.where}: {d.diff.detail}"
               for d in result.diffs if d.cls in (None, "fixed")]
    assert not failing, "\n".join(failing)
