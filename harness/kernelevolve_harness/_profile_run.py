"""Runs the candidate once on the first shape, for Nsight Compute (`python3 -m kernelevolve_harness._profile_run
SPEC BACKEND ARTIFACT KERNEL`). Started by the judge only after the candidate was judged correct."""
from __future__ import annotations

import sys

from .backends import get_backend
from .spec import import_spec


def main(argv: list) -> int:
    spec_path, backend_name, artifact, kernel = argv[1:5]
    spec = import_spec(spec_path)
    backend = get_backend(backend_name)
    k = backend.load(artifact, kernel)
    args = spec.inputs(dict(spec.SHAPES[0]), 1)
    args = list(args) if isinstance(args, (tuple, list)) else [args]
    spec.launch(k, *args)  # the first call compiles (Triton); ncu -c 1 with -k picks the kernel launch
    backend.synchronize()
    spec.launch(k, *args)
    backend.synchronize()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
