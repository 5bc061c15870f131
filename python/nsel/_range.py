"""nsel.range: an NVTX range around a part of a step, as a context manager or a decorator. The
push and pop are the C library's (nsel_range_push / nsel_range_pop), which both Nsight Systems
generations record; no `nvtx` package is needed."""

import functools

from . import _nsel


class range:  # noqa: N801 - named like the context managers it stands beside (nsel.step)
    """`with nsel.range("forward"):` or `@nsel.range("forward")`: the NVTX range `name` around the
    block or each call, on the calling thread. `nsel report` shows a step's top-level ranges."""

    __slots__ = ("name",)

    def __init__(self, name):
        if not isinstance(name, str):
            raise TypeError(f"nsel.range({name!r}): expected the range's name as a str")
        self.name = name

    def __enter__(self):
        _nsel.range_push(self.name)
        return self

    def __exit__(self, *exception):
        _nsel.range_pop()
        return False

    def __call__(self, function):
        name = self.name

        @functools.wraps(function)
        def within_range(*args, **kwargs):
            _nsel.range_push(name)
            try:
                return function(*args, **kwargs)
            finally:
                _nsel.range_pop()

        return within_range

    def __repr__(self):
        return f"nsel.range({self.name!r})"
