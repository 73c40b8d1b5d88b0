"""usage: compare_npy.py GOT.npy WANT.npy [RTOL]

Prints "match: max relative error E" when GOT has WANT's shape and
max|GOT - WANT| / max|WANT| <= RTOL (default 1e-4), else "MISMATCH ...".
Integer arrays must be equal."""
import sys

import numpy as np

got, want = np.load(sys.argv[1]), np.load(sys.argv[2])
rtol = float(sys.argv[3]) if len(sys.argv) > 3 else 1e-4
if got.shape != want.shape:
    print(f"MISMATCH: shape {got.shape}, expected {want.shape}")
    sys.exit(0)
if want.dtype.kind in "iu":
    same = bool((got == want).all())
    print("match: equal" if same else f"MISMATCH: {got.tolist()} != {want.tolist()}")
    sys.exit(0)
err = float(np.abs(got.astype(np.float64) - want).max() / max(np.abs(want).max(), 1e-30))
print(f"{'match' if err <= rtol else 'MISMATCH'}: max relative error {err:.3g}")
