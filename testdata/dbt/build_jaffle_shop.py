"""Builds jaffle_shop.sqlite from dbt-labs/jaffle_shop (Apache-2.0, in jaffle_shop/): its seeds
loaded as tables, its staging models as views and its two marts as tables, each model's Jinja
rendered with `ref` naming the model's relation, as `dbt seed && dbt run` would on SQLite.

    python3 testdata/dbt/build_jaffle_shop.py
"""

import csv
import pathlib
import sqlite3

import jinja2

here = pathlib.Path(__file__).parent
project = here / "jaffle_shop"
target = here / "jaffle_shop.sqlite"
target.unlink(missing_ok=True)
db = sqlite3.connect(target)

for seed in sorted((project / "seeds").glob("*.csv")):
    with seed.open(newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]

    def typed(value):
        return int(value) if value.lstrip("-").isdigit() else value

    columns = ", ".join(f'"{c}"' for c in header)
    db.execute(f'CREATE TABLE "{seed.stem}" ({columns})')
    marks = ", ".join("?" for _ in header)
    db.executemany(f'INSERT INTO "{seed.stem}" VALUES ({marks})', [[typed(v) for v in r] for r in body])

env = jinja2.Environment()
for path, kind in [
    ("staging/stg_customers.sql", "VIEW"),
    ("staging/stg_orders.sql", "VIEW"),
    ("staging/stg_payments.sql", "VIEW"),
    ("customers.sql", "TABLE"),
    ("orders.sql", "TABLE"),
]:
    sql = env.from_string((project / "models" / path).read_text()).render(ref=lambda name: name)
    name = pathlib.Path(path).stem
    db.execute(f'CREATE {kind} "{name}" AS {sql}')

db.commit()
db.execute("VACUUM")
db.close()
print(f"wrote {target}")
