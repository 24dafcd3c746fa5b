"""Matrix-vector products kept on the calling thread (``_blas.matvec``/``vecmat``): NumPy's
answer for a product in one piece, one cut into row blocks (with a last, shorter block), and
rows longer than a block; float32 results stay float32."""
from __future__ import annotations

import numpy as np
import pytest

from hookgrad import _blas

SHAPES = {"one piece": (40, 30), "row blocks": (1100, 130), "rows longer than a block":
          (3, _blas._MATVEC_BLOCK + 5), "no rows": (0, 7)}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", list(SHAPES))
def test_matvec_and_vecmat_give_numpys_products(case, dtype):
    rng = np.random.default_rng(0)
    rows, columns = SHAPES[case]
    matrix = rng.standard_normal((rows, columns)).astype(dtype)
    right = rng.standard_normal(columns).astype(dtype)
    left = rng.standard_normal(rows).astype(dtype)
    tol = 1e-4 if dtype == np.float32 else 1e-12
    for ours, expected in ((_blas.matvec(matrix, right), matrix.astype(np.float64) @ right),
                           (_blas.vecmat(left, matrix), left @ matrix.astype(np.float64))):
        assert ours.dtype == dtype and ours.shape == expected.shape
        np.testing.assert_allclose(ours, expected, rtol=tol, atol=tol * np.sqrt(max(rows, columns)))
