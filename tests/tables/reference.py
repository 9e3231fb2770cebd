"""Per-column figures of a CSV or Parquet file computed by pandas/pyarrow, the independent
reference the CSV and Parquet tests compare schemascope's profile with.

    python3 tests/tables/reference.py FILE

prints {column: {"present", "nulls", "distinct", "min", "max", "mean"}} as JSON. A CSV is read
with every field as text (empty fields null, nothing else), so that the reference does not
depend on pandas' own type guesses; a column whose every value reads as a number is then
compared as numbers.
"""

import json
import math
import sys

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq


def numeric(series):
    values = pd.to_numeric(series, errors="coerce")
    return values if values.notna().sum() == series.notna().sum() else None


def figures(series):
    present = int(series.notna().sum())
    out = {"present": present, "nulls": int(series.isna().sum()), "distinct": int(series.nunique(dropna=True))}
    values = numeric(series)
    if values is not None and present:
        finite = values[values.notna()]
        out.update(distinct=int(finite.nunique()), min=float(finite.min()), max=float(finite.max()),
                   mean=float(finite.astype("float64").mean()))
    return out


def main(path):
    if path.endswith(".parquet"):
        table = pq.read_table(path)
        result = {}
        for name in table.column_names:
            column = table.column(name)
            if pa.types.is_dictionary(column.type):
                column = pc.cast(column, column.type.value_type)
            kind = str(column.type)
            if kind.startswith(("list", "struct", "map")) or kind == "null":
                result[name] = {"present": len(column) - column.null_count, "nulls": column.null_count}
                continue
            entry = {"present": len(column) - column.null_count, "nulls": column.null_count,
                     "distinct": pc.count_distinct(column).as_py()}
            if kind.startswith(("int", "uint", "double", "float", "decimal")):
                finite = pc.filter(column, pc.is_finite(pc.cast(column, "double", safe=False)))
                if len(finite):
                    entry.update(min=float(pc.min(finite).as_py()), max=float(pc.max(finite).as_py()),
                                 mean=float(pc.mean(pc.cast(finite, "double", safe=False)).as_py()))
            result[name] = entry
    else:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""], sep=None, engine="python")
        result = {name: figures(frame[name]) for name in frame.columns}
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
