"""Stands in for polars on the GPU machine, where it is not installed and its 54 MB wheel does not
fit the size limit of what travels there (scripts/device-train puts this folder on the path only
when polars cannot be imported).

Ultralytics imports polars only to read its own results.csv back into the checkpoint's metadata,
inside a try that falls back to an empty table, and to format metrics tables training does not
print. So importing succeeds and any use fails, as a missing feature should, loudly.
"""


class PolarsMissing(RuntimeError):
    pass


def read_csv(*args, **kwargs):
    raise PolarsMissing("polars is not installed here (scripts/device_shims/polars.py)")


class DataFrame:
    def __init__(self, *args, **kwargs):
        raise PolarsMissing("polars is not installed here (scripts/device_shims/polars.py)")
