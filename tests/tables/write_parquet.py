"""Writes the Parquet files the table tests read into DIR (pyarrow):

    python3 tests/tables/write_parquet.py DIR

- `types.parquet`: a column of every type a Parquet file can hold as pyarrow writes it —
  integers of every width signed and unsigned (u64 past i64), float32/float64 with NaN and
  infinities, decimals (narrow and 38 digits), strings and large strings with unicode, binary,
  booleans, dates, times, timestamps in s/ms/us/ns with and without a zone, durations,
  dictionary-encoded text, lists (nested too), structs (nested), maps — nulls at every level;
  written in row groups of 1,000 so that several cores read it.
- `int96.parquet`: timestamps written as the deprecated INT96 (Spark, Impala, Hive).
- `seattle-weather.parquet`: the real CSV read by pandas and written with snappy compression.
- `zstd.parquet`: the same rows with zstd and dictionary pages.
- `dictionary-pages.parquet` and `plain-pages.parquet`: the same text columns with and without
  dictionary pages (few values with nulls; values that overflow the dictionary page in some row
  groups, so those fall back to plain pages; a long text in some rows; a column of nulls alone).
- `arrow-schema-corrupt.parquet`: a valid file whose embedded Arrow schema (`ARROW:schema`) has
  a byte zeroed (the `parquet` crate panics on it); `deep.parquet`: a list nested 400 levels,
  written without the Arrow schema (its schema tree is built recursively).
"""

import base64
import datetime
import decimal
import os
import random
import re
import sys

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

ROWS = 5_000


def maybe(i, every, value):
    return None if i % every == 0 else value


def types_table():
    rng = random.Random(28)
    zone = datetime.timezone(datetime.timedelta(hours=5, minutes=30))
    base = datetime.datetime(2020, 2, 29, 23, 59, 58, 123456)
    columns = {
        "i8": pa.array([maybe(i, 7, rng.randint(-128, 127)) for i in range(ROWS)], pa.int8()),
        "i16": pa.array([maybe(i, 11, rng.randint(-2**15, 2**15 - 1)) for i in range(ROWS)], pa.int16()),
        "i32": pa.array([maybe(i, 13, rng.randint(-2**31, 2**31 - 1)) for i in range(ROWS)], pa.int32()),
        "i64": pa.array([maybe(i, 17, rng.randint(-2**63, 2**63 - 1)) for i in range(ROWS)], pa.int64()),
        "u8": pa.array([maybe(i, 5, rng.randint(0, 255)) for i in range(ROWS)], pa.uint8()),
        "u32": pa.array([maybe(i, 5, rng.randint(0, 2**32 - 1)) for i in range(ROWS)], pa.uint32()),
        "u64": pa.array([maybe(i, 5, rng.randint(2**63, 2**64 - 1) if i % 2 else rng.randint(0, 99)) for i in range(ROWS)], pa.uint64()),
        "f32": pa.array([maybe(i, 9, [float("nan"), float("inf"), rng.uniform(-1e6, 1e6)][i % 3]) for i in range(ROWS)], pa.float32()),
        "f64": pa.array([maybe(i, 9, [float("-inf"), rng.gauss(0, 1e-300), rng.uniform(-1e300, 1e300), 0.1][i % 4]) for i in range(ROWS)], pa.float64()),
        "dec": pa.array([maybe(i, 6, decimal.Decimal(rng.randint(-10**9, 10**9)) / 100) for i in range(ROWS)], pa.decimal128(12, 2)),
        "dec38": pa.array([maybe(i, 6, decimal.Decimal(rng.randint(-10**37, 10**37)) / 10**10) for i in range(ROWS)], pa.decimal128(38, 10)),
        "text": pa.array([maybe(i, 4, rng.choice(["é", "日本", "a\nb", "", "\"q\"", "x" * 300]) + str(i % 50)) for i in range(ROWS)]),
        "large": pa.array([maybe(i, 4, "L" + str(i % 70)) for i in range(ROWS)], pa.large_string()),
        "bin": pa.array([maybe(i, 3, bytes([i % 256, (i * 7) % 256])) for i in range(ROWS)], pa.binary()),
        "flag": pa.array([maybe(i, 3, i % 5 == 0) for i in range(ROWS)]),
        "day": pa.array([maybe(i, 8, datetime.date(1960, 1, 1) + datetime.timedelta(days=i * 7)) for i in range(ROWS)]),
        "clock": pa.array([maybe(i, 8, datetime.time(i % 24, i % 60, i % 60, (i * 1000) % 1000000)) for i in range(ROWS)]),
        "ts_s": pa.array([maybe(i, 10, base + datetime.timedelta(seconds=i * 3601)) for i in range(ROWS)], pa.timestamp("s")),
        "ts_ms_utc": pa.array([maybe(i, 10, (base + datetime.timedelta(milliseconds=i * 1501)).replace(tzinfo=datetime.timezone.utc)) for i in range(ROWS)], pa.timestamp("ms", tz="UTC")),
        "ts_us_zone": pa.array([maybe(i, 10, (base + datetime.timedelta(microseconds=i * 999)).replace(tzinfo=zone)) for i in range(ROWS)], pa.timestamp("us", tz="+05:30")),
        "ts_ns": pa.array([maybe(i, 10, pd.Timestamp("1999-12-31 23:59:59.999999999") + pd.Timedelta(nanoseconds=i)) for i in range(ROWS)], pa.timestamp("ns")),
        "wait": pa.array([maybe(i, 10, datetime.timedelta(milliseconds=i * 250 - 600)) for i in range(ROWS)], pa.duration("ms")),
        "kind": pa.array([maybe(i, 12, ["red", "green", "blue"][i % 3]) for i in range(ROWS)]).dictionary_encode(),
        "tags": pa.array([maybe(i, 6, [maybe(j, 4, f"t{(i + j) % 9}") for j in range(i % 5)]) for i in range(ROWS)], pa.list_(pa.string())),
        "matrix": pa.array([maybe(i, 7, [[i, maybe(j, 2, j)] for j in range(i % 3)]) for i in range(ROWS)], pa.list_(pa.list_(pa.int64()))),
        "point": pa.array([maybe(i, 5, {"x": maybe(i, 3, i / 4), "label": f"p{i % 10}", "inner": maybe(i, 4, {"depth": i % 6})}) for i in range(ROWS)],
                          pa.struct([("x", pa.float64()), ("label", pa.string()), ("inner", pa.struct([("depth", pa.int32())]))])),
        "attrs": pa.array([maybe(i, 5, [(f"k{j}", maybe(i + j, 3, i * j)) for j in range(i % 4)]) for i in range(ROWS)], pa.map_(pa.string(), pa.int64())),
        "empty": pa.array([None] * ROWS, pa.null()),
    }
    return pa.table(columns)


def text_table():
    rng = random.Random(30)
    rows = 20_000
    return pa.table({
        "status": pa.array([maybe(i, 7, rng.choice(["shipped", "delivered", "pending", "ünïcode ✓", ""]))
                            for i in range(rows)], pa.string()),
        # Few values in the first row groups, unique ones later: the dictionary overflows.
        "customer": pa.array([f"customer {rng.randrange(40)}" if i < 8_000 else f"c-{i:06d} {'x' * (i % 50)}"
                              for i in range(rows)], pa.string()),
        "note": pa.array([maybe(i, 3, "long " * (i % 90) if i % 11 == 0 else f"note {i % 13}")
                          for i in range(rows)], pa.large_string()),
        "empty": pa.array([None] * rows, pa.string()),
    })


def main(out):
    os.makedirs(out, exist_ok=True)
    texts = text_table()
    pq.write_table(texts, os.path.join(out, "dictionary-pages.parquet"), row_group_size=4_000,
                   dictionary_pagesize_limit=2_048, data_page_size=1_024)
    pq.write_table(texts, os.path.join(out, "plain-pages.parquet"), row_group_size=4_000,
                   use_dictionary=False)
    pq.write_table(types_table(), os.path.join(out, "types.parquet"), row_group_size=1_000)
    stamps = pa.table({"at": pa.array([maybe(i, 4, datetime.datetime(2001, 9, 9, 1, 46, 40) + datetime.timedelta(seconds=i, microseconds=i)) for i in range(2_000)], pa.timestamp("us"))})
    pq.write_table(stamps, os.path.join(out, "int96.parquet"), use_deprecated_int96_timestamps=True)
    here = os.path.dirname(os.path.abspath(__file__))
    weather = pd.read_csv(os.path.join(here, "..", "..", "testdata", "tables", "seattle-weather.csv"))
    weather.to_parquet(os.path.join(out, "seattle-weather.parquet"), compression="snappy", row_group_size=400)
    weather.to_parquet(os.path.join(out, "zstd.parquet"), compression="zstd", use_dictionary=True)
    clean = os.path.join(out, "clean.parquet")
    pq.write_table(pa.table({"x": pa.array([1, 2, 3], pa.int64())}), clean)
    data = open(clean, "rb").read()
    key = data.find(b"ARROW:schema")
    start, end = re.compile(rb"[A-Za-z0-9+/=]{20,}").search(data, key + 12).span()
    raw = bytearray(base64.b64decode(data[start:end]))
    raw[32] = 0
    with open(os.path.join(out, "arrow-schema-corrupt.parquet"), "wb") as f:
        f.write(data[:start] + base64.b64encode(bytes(raw)) + data[end:])
    deep_type, deep_value = pa.int64(), 1
    for _ in range(400):
        deep_type, deep_value = pa.list_(deep_type), [deep_value]
    pq.write_table(pa.table({"deep": pa.array([deep_value], deep_type)}), os.path.join(out, "deep.parquet"),
                   store_schema=False)


if __name__ == "__main__":
    main(sys.argv[1])
