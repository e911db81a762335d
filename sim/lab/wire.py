"""The runner <-> worker messages: one JSON object per line; numpy arrays as base64 float64/int64/bool.

JSON, not pickle: the worker runs a student's code, and what comes back is data, decoded
without executing anything.
"""

from __future__ import annotations

import base64
import json

import numpy as np

DTYPES = ("float64", "int64", "bool")
MAX_ELEMENTS = 4_000_000  # per array


def _encode(x):
    if isinstance(x, np.ndarray):
        dtype = "bool" if x.dtype == bool else "int64" if np.issubdtype(x.dtype, np.integer) else "float64"
        data = np.asarray(x, dtype=dtype)  # tobytes() below writes C order; ascontiguousarray would make 0-d 1-d
        return {"__nd__": list(data.shape), "dtype": dtype, "b64": base64.b64encode(data.tobytes()).decode()}
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, dict):
        return {str(k): _encode(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_encode(v) for v in x]
    return x


def _decode(x):
    if isinstance(x, dict):
        if "__nd__" in x:
            shape, dtype = [int(n) for n in x["__nd__"]], x["dtype"]
            if dtype not in DTYPES or int(np.prod(shape)) > MAX_ELEMENTS:
                raise ValueError(f"refusing an array of dtype {dtype!r}, shape {shape}")
            return np.frombuffer(base64.b64decode(x["b64"]), dtype=dtype).reshape(shape).copy()
        return {k: _decode(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_decode(v) for v in x]
    return x


def dumps(message: dict) -> bytes:
    return (json.dumps(_encode(message)) + "\n").encode()


def loads(line: bytes) -> dict:
    message = _decode(json.loads(line))
    if not isinstance(message, dict):
        raise ValueError("expected a JSON object")
    return message
