"""Writes a table as a Hive-style partitioned dataset with pyarrow (the independent writer the
partitioned-folder tests read), for schemascope and DuckDB to answer the same statements over.

    python3 tests/tables/write_partitioned.py SOURCE DIR FORMAT KEY[,KEY...]

SOURCE is a JSON array of objects (vega-datasets' cars.json) or a CSV file; DIR is written as
DIR/KEY=VALUE/.../part-0.FORMAT (FORMAT parquet or csv), a null key as Hive writes it
(`__HIVE_DEFAULT_PARTITION__`), with the partition keys left out of the files, as Spark and
pyarrow leave them.
"""

import json
import sys

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.dataset as ds


def load(path):
    if path.endswith(".json"):
        with open(path, encoding="utf-8") as f:
            return pa.Table.from_pylist(json.load(f))
    return pacsv.read_csv(path)


def main(source, out, fmt, keys):
    table = load(source)
    partitioning = ds.partitioning(
        pa.schema([table.schema.field(k) for k in keys]), flavor="hive"
    )
    options = None
    if fmt == "csv":
        options = ds.CsvFileFormat().make_write_options(include_header=True)
    ds.write_dataset(
        table,
        out,
        format=fmt,
        partitioning=partitioning,
        file_options=options,
        basename_template="part-{i}." + fmt,
        existing_data_behavior="overwrite_or_ignore",
    )


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split(","))
