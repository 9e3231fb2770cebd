#!/usr/bin/env python3
"""Load a SQLite database into MariaDB (used by scripts/mariadb).

    python3 scripts/sqlite_mariadb.py SQLITE_FILE_OR_SQL_SCRIPT DB_NAME [MARIADB_ARG...]

Reads a SQLite database with the standard library's sqlite3 (a file, opened read-only, or a
.sql script, executed into an in-memory database) and pipes one SQL script into
`mariadb MARIADB_ARG... DB_NAME`. The database must exist and be empty; the connection comes from
MARIADB_ARG (scripts/mariadb passes root over the Unix socket).

Tables keep their names and column names (quoted with backticks), NOT NULL, literal DEFAULTs,
AUTOINCREMENT (as AUTO_INCREMENT, with SQLite's next value) and their primary key; InnoDB,
utf8mb4 with the server's default collation. Types are mapped faithfully, checked against the
stored values: INTEGER -> INT (BIGINT when a value needs it), N?VARCHAR(n) -> VARCHAR(n),
N?CHAR(n) -> CHAR(n), NUMERIC/DECIMAL(p,s) -> DECIMAL(p,s), bare NUMERIC -> DECIMAL(p,0) wide
enough when every value is integral, else DOUBLE, REAL -> DOUBLE, DATETIME -> DATETIME(fsp) and
DATE -> DATE when every value is one and formats back to the same text, TEXT -> TEXT (VARCHAR(n)
in a primary key, a foreign key or an index), BLOB -> LONGBLOB, no type -> from the values. A
column whose values do not fit its declared type gets the type of its values (said on stderr).

Rows go in with multi-row INSERTs (strings quoted under NO_BACKSLASH_ESCAPES, blobs as X'..',
floats as their shortest round-trip text), then the SQLite indexes, the foreign keys (one
MariaDB cannot create, for mismatched types or rows without a parent, is skipped with a message
on stderr), table and column comments (Chinook: those of scripts/chinook_pg.py; Northwind: a
few), CHECK constraints and views (SQLite's, translated naively: [name] and "name" -> `name`,
DATETIME('...') -> CAST('...' AS DATETIME); Chinook: CustomerInvoiceTotals as in
scripts/chinook_pg.py); a CHECK or a view that MariaDB refuses is skipped with a message on
stderr. Last, ANALYZE TABLE.

Afterwards the row count of every table is compared with SQLite's; any difference is an error
(exit status 1) naming the table.
"""

import decimal
import datetime
import os
import re
import sqlite3
import subprocess
import sys
import urllib.parse

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chinook_pg  # noqa: E402  (the Chinook comments, shared with the PostgreSQL loader)

PROG = "sqlite_mariadb.py"

# Per data set (recognised by its tables): comments and extra views.
CHINOOK_VIEWS = [
    (
        chinook_pg.VIEW_NAME,
        """CREATE VIEW `CustomerInvoiceTotals` AS
SELECT c.`CustomerId`, c.`FirstName`, c.`LastName`, c.`Country`,
       count(i.`InvoiceId`) AS `InvoiceCount`,
       CAST(coalesce(sum(i.`Total`), 0) AS DECIMAL(10,2)) AS `TotalSpent`
FROM `Customer` c
LEFT JOIN `Invoice` i ON i.`CustomerId` = c.`CustomerId`
GROUP BY c.`CustomerId`, c.`FirstName`, c.`LastName`, c.`Country`""",
    )
]
# (MariaDB has no comments on views: chinook_pg.VIEW_COMMENT has no counterpart.)
DATASETS = {
    "chinook": {
        "tables": {"Album", "Artist", "Track", "Invoice", "InvoiceLine", "Customer"},
        "table_comments": chinook_pg.TABLE_COMMENTS,
        "column_comments": chinook_pg.COLUMN_COMMENTS,
        "views": CHINOOK_VIEWS,
    },
    "northwind": {
        "tables": {"Orders", "Order Details", "Products", "Customers"},
        "table_comments": {
            "Orders": "One customer order; its lines are in Order Details.",
        },
        "column_comments": {
            ("Order Details", "Discount"): "Fraction of the unit price taken off, 0 to 1.",
            ("Orders", "Freight"): "Shipping cost charged to the customer.",
            ("Products", "Discontinued"): "'1' when the product is no longer sold, else '0' (text).",
        },
        "views": [],
    },
}

# A TEXT column in a key becomes VARCHAR(n): the first of these at least as long as the longest
# value (768 characters of utf8mb4 is InnoDB's 3072-byte limit for one key column).
KEY_LENGTHS = (16, 32, 64, 128, 255, 512, 768)
INSERT_BYTES = 512 * 1024  # one INSERT statement at most about this long
INSERT_ROWS = 1000
SQL_MODE = (
    "STRICT_ALL_TABLES,NO_BACKSLASH_ESCAPES,NO_AUTO_VALUE_ON_ZERO,NO_ZERO_IN_DATE,NO_ZERO_DATE,"
    "ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION"
)
DATETIME_RE = re.compile(r"(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?")
DATE_RE = re.compile(r"(\d{4})-(\d\d)-(\d\d)")


def say(msg):
    print(f"{PROG}: {msg}", file=sys.stderr)


def die(msg):
    raise SystemExit(f"{PROG}: error: {msg}")


def q(name):
    """A quoted identifier."""
    return "`" + name.replace("`", "``") + "`"


def sq(name):
    """A quoted identifier for SQLite."""
    return '"' + name.replace('"', '""') + '"'


def lit(text):
    """A string literal (the session has NO_BACKSLASH_ESCAPES). Text with control characters
    other than tab and newline goes in hex, so that no client or terminal mangles it."""
    if any((ord(c) < 32 and c not in "\t\n") or c == "\x7f" for c in text):
        return "_utf8mb4 X'" + text.encode("utf-8").hex() + "'"
    return "'" + text.replace("'", "''") + "'"


# ---------------------------------------------------------------- SQLite SQL -> MariaDB SQL

TOKEN_RE = re.compile(
    r"""(?P<str>'(?:[^']|'')*')
      | (?P<dq>"(?:[^"]|"")*")
      | (?P<br>\[[^\]]*\])
      | (?P<bt>`(?:[^`]|``)*`)
      | (?P<comment>--[^\n]*|/\*.*?\*/)
      | (?P<word>[A-Za-z_][A-Za-z0-9_$]*)
      | (?P<space>\s+)
      | (?P<other>.)""",
    re.S | re.X,
)


def tokens(sql):
    for m in TOKEN_RE.finditer(sql):
        yield m.lastgroup, m.group()


def translate(sql):
    """SQLite SQL -> MariaDB SQL, naively: [name] and "name" become `name`, comments go, and
    DATETIME('literal') becomes CAST('literal' AS DATETIME)."""
    out = []
    for kind, text in tokens(sql):
        if kind == "dq":
            out.append(q(text[1:-1].replace('""', '"')))
        elif kind == "br":
            out.append(q(text[1:-1]))
        elif kind == "comment":
            out.append(" ")
        else:
            out.append(text)
    return re.sub(
        r"\bDATETIME\s*\(\s*('(?:[^']|'')*')\s*\)",
        r"CAST(\1 AS DATETIME)",
        "".join(out),
        flags=re.I,
    )


def check_constraints(create_sql):
    """The expressions of the CHECK constraints in a SQLite CREATE TABLE, translated."""
    toks = list(tokens(create_sql))
    found = []
    i = 0
    while i < len(toks):
        kind, text = toks[i]
        if kind == "word" and text.upper() == "CHECK":
            j = i + 1
            while j < len(toks) and toks[j][0] in ("space", "comment"):
                j += 1
            if j < len(toks) and toks[j][1] == "(":
                depth, k = 0, j
                while k < len(toks):
                    if toks[k][1] == "(":
                        depth += 1
                    elif toks[k][1] == ")":
                        depth -= 1
                        if depth == 0:
                            break
                    k += 1
                found.append(translate("".join(t for _, t in toks[j + 1 : k])).strip())
                i = k
        i += 1
    return found


# ---------------------------------------------------------------- types


class Col:
    def __init__(self, table, name, decl, notnull, default, pk):
        self.table, self.name, self.decl = table, name, decl
        self.notnull, self.default, self.pk = bool(notnull), default, pk
        self.keyed = False  # in a primary key, a foreign key or an index
        self.autoinc = False
        self.sql = self.kind = None  # the MariaDB type and how values are written
        self.length = None  # VARCHAR/CHAR/VARBINARY length
        self.derived_length = False  # length chosen here (not declared): may grow to match
        self.comment = None

    def __str__(self):
        return f"{self.table}.{self.name}"

    def type_sql(self):
        if self.kind in ("string", "char", "varbinary") and self.length is not None:
            base = {"string": "VARCHAR", "char": "CHAR", "varbinary": "VARBINARY"}[self.kind]
            return f"{base}({self.length})"
        return self.sql


def key_length(longest, what):
    for n in KEY_LENGTHS:
        if n >= longest:
            return n
    die(f"{what}: a value of {longest} characters is too long for a key column")


def int_sql(values):
    return "BIGINT" if any(not -(2**31) <= v < 2**31 for v in values) else "INT"


def text_sql(byte_len):
    if byte_len <= 65535:
        return "TEXT"
    if byte_len <= 16777215:
        return "MEDIUMTEXT"
    return "LONGTEXT"


def as_text(v):
    return v if isinstance(v, str) else repr(v) if isinstance(v, float) else str(v)


def set_text(col, values):
    """TEXT, or VARCHAR(n) in a key, for values written as text."""
    texts = [as_text(v) for v in values]
    if col.keyed:
        col.kind, col.length, col.derived_length = "string", 0, True
        col.length = key_length(max((len(t) for t in texts), default=0), str(col))
    else:
        col.kind = "text"
        col.sql = text_sql(max((len(t.encode("utf-8")) for t in texts), default=0))


def set_from_values(col, values):
    """The type for what the values are (untyped columns, and values that do not fit)."""
    classes = {type(v) for v in values}
    if classes and classes <= {int}:
        col.kind, col.sql = "int", int_sql(values)
    elif classes and classes <= {int, float} and all(
        isinstance(v, float) or abs(v) <= 2**53 for v in values
    ):
        col.kind, col.sql = "double", "DOUBLE"
    elif bytes in classes:
        if col.keyed:
            longest = max(len(v if isinstance(v, bytes) else as_text(v).encode()) for v in values)
            col.kind, col.length, col.derived_length = "varbinary", key_length(longest, str(col)), True
        else:
            col.kind, col.sql = "blob", "LONGBLOB"
    else:
        set_text(col, values)


def fallback(col, values, why):
    set_from_values(col, values)
    say(f"{col}: declared {col.decl!r} but {why}: made {col.type_sql()}")


def datetime_fsp(values):
    """The fractional-second digits if every value is a DATETIME that formats back to the
    same text (every value with the same number of digits), else None."""
    fsp = None
    for v in values:
        m = DATETIME_RE.fullmatch(v) if isinstance(v, str) else None
        if not m:
            return None
        frac = m.group(7) or ""
        if fsp is None:
            fsp = len(frac)
        elif fsp != len(frac):
            return None
        try:
            datetime.datetime(*(int(g) for g in m.groups()[:6]))
        except ValueError:
            return None
    return fsp or 0


def all_dates(values):
    for v in values:
        m = DATE_RE.fullmatch(v) if isinstance(v, str) else None
        if not m:
            return False
        try:
            datetime.date(*(int(g) for g in m.groups()))
        except ValueError:
            return False
    return True


def to_decimal(v):
    return decimal.Decimal(v) if isinstance(v, int) else decimal.Decimal(repr(v))


def fits_decimal(values, p, s):
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return False
        if isinstance(v, float) and (v != v or v in (float("inf"), float("-inf"))):
            return False
        d = to_decimal(v)
        sign, digits, exp = d.as_tuple()
        if exp < -s:
            return False
        int_digits = len(digits) + exp if len(digits) + exp > 0 else 0
        if int_digits > p - s:
            return False
    return True


def set_type(col, values):
    t = " ".join(col.decl.upper().split())
    classes = {type(v) for v in values}
    if t == "":
        set_from_values(col, values)
        return
    m = re.fullmatch(
        r"(?:N|NATIONAL )?(VARCHAR|CHARACTER VARYING|VARYING CHARACTER|CHAR VARYING"
        r"|CHAR|CHARACTER|NCHAR|NATIVE CHARACTER)\s*\(\s*(\d+)\s*\)",
        t,
    )
    if m:
        n = int(m.group(2))
        varying = "VAR" in m.group(1)
        if not classes <= {str}:
            return fallback(col, values, "holds values that are not text")
        longest = max((len(v) for v in values), default=0)
        if longest > n:
            return fallback(col, values, f"holds a value of {longest} characters")
        if col.keyed and n > KEY_LENGTHS[-1]:
            col.kind, col.length, col.derived_length = "string", key_length(longest, str(col)), True
            say(f"{col}: {col.decl} is too long for a key: made {col.type_sql()}")
            return
        if not varying and any(v.endswith(" ") for v in values):
            # MariaDB strips a CHAR's trailing spaces.
            col.kind, col.length = "string", n
            say(f"{col}: declared {col.decl!r} but values end with spaces: made VARCHAR({n})")
            return
        if n > 16383:  # more than a row may hold in utf8mb4
            col.kind, col.sql = "text", text_sql(max(len(v.encode()) for v in values) if values else 0)
            return
        col.kind, col.length = ("string" if varying else "char"), n
        return
    m = re.fullmatch(r"(?:NUMERIC|DECIMAL|DEC)\s*\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)", t)
    if m:
        p, s = int(m.group(1)), int(m.group(2) or 0)
        if p <= 65 and s <= 38 and s <= p and fits_decimal(values, p, s):
            col.kind, col.sql = "decimal", f"DECIMAL({p},{s})"
            return
        say(f"{col}: values do not fit {col.decl}: treated as a bare NUMERIC")
        t = "NUMERIC"
    if t in ("DATETIME", "TIMESTAMP"):
        fsp = datetime_fsp(values)
        if fsp is None:
            return fallback(col, values, "not every value is a datetime that formats back the same")
        col.kind, col.sql = "datetime", "DATETIME" if fsp == 0 else f"DATETIME({fsp})"
        return
    if t == "DATE":
        if not all_dates(values):
            return fallback(col, values, "not every value is a date YYYY-MM-DD")
        col.kind, col.sql = "date", "DATE"
        return
    # SQLite's affinity rules for everything else.
    if "INT" in t:
        if not classes <= {int}:
            return fallback(col, values, "holds values that are not integers")
        col.kind, col.sql = "int", int_sql(values)
    elif "CHAR" in t or "CLOB" in t or "TEXT" in t:
        if not classes <= {str}:
            return fallback(col, values, "holds values that are not text")
        set_text(col, values)
    elif "BLOB" in t:
        if not classes <= {bytes}:
            return fallback(col, values, "holds values that are not blobs")
        if col.keyed:
            set_from_values(col, values or [b""])  # VARBINARY(n)
        else:
            col.kind, col.sql = "blob", "LONGBLOB"
    elif "REAL" in t or "FLOA" in t or "DOUB" in t:
        if not classes <= {int, float} or any(
            isinstance(v, int) and abs(v) > 2**53 for v in values
        ):
            return fallback(col, values, "holds values that are not numbers")
        col.kind, col.sql = "double", "DOUBLE"
    else:  # NUMERIC affinity: integral values -> DECIMAL(p,0), else DOUBLE
        if not classes <= {int, float}:
            return fallback(col, values, "holds values that are not numbers")
        if all(isinstance(v, int) or v.is_integer() for v in values) and fits_decimal(
            values, 65, 0
        ):
            digits = max((len(str(abs(int(v)))) for v in values), default=1)
            col.kind, col.sql = "decimal", f"DECIMAL({max(10, digits)},0)"
        else:
            col.kind, col.sql = "double", "DOUBLE"


def value_sql(col, v):
    if v is None:
        return "NULL"
    k = col.kind
    if k in ("blob", "varbinary"):
        b = v if isinstance(v, bytes) else as_text(v).encode("utf-8")
        return "X'" + b.hex() + "'"
    if k == "int":
        return str(v)
    if k == "double":
        if isinstance(v, int):
            return str(v)
        r = repr(v)
        if r in ("inf", "-inf", "nan"):
            die(f"{col}: {r} cannot be stored in MariaDB")
        return r if "e" in r else r + "e0"  # a DOUBLE literal, not a DECIMAL one
    if k == "decimal":
        return str(v) if isinstance(v, int) else format(decimal.Decimal(repr(v)), "f")
    if isinstance(v, bytes):
        die(f"{col}: a blob in a {col.type_sql()} column")
    return lit(as_text(v))


def default_sql(col):
    """The DEFAULT clause for SQLite's default expression, if it is a literal."""
    d = col.default
    if d is None:
        return ""
    t = d.strip()
    while t.startswith("(") and t.endswith(")"):
        t = t[1:-1].strip()
    if t.upper() == "NULL":
        return ""
    if re.fullmatch(r"[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?", t):
        if col.kind in ("datetime", "date"):
            say(f"{col}: the default {d} is not a date: left out")
            return ""
        return f" DEFAULT {t}"
    if re.fullmatch(r"'(?:[^']|'')*'", t):
        return f" DEFAULT {t}"
    if t.upper() in ("CURRENT_TIMESTAMP", "CURRENT_DATE") and col.kind in ("datetime", "date"):
        return f" DEFAULT {t.upper()}"
    say(f"{col}: the default {d} is not a literal: left out")
    return ""


# ---------------------------------------------------------------- the script


class Fk:
    def __init__(self, table, cols, ref, ref_cols, on_update, on_delete):
        self.table, self.cols, self.ref, self.ref_cols = table, cols, ref, ref_cols
        self.on_update, self.on_delete = on_update, on_delete
        self.name = None

    def __str__(self):
        return f"{self.table} ({', '.join(self.cols)}) -> {self.ref} ({', '.join(self.ref_cols)})"


def fk_compatible(a, b):
    strings = ("string", "char")
    if a.kind in strings and b.kind in strings:
        return True
    return a.kind == b.kind and a.type_sql() == b.type_sql() and a.kind not in ("text", "blob")


def open_source(path):
    if path.endswith(".sql"):
        db = sqlite3.connect(":memory:")
        with open(path, encoding="utf-8") as f:
            db.executescript(f.read())
        return db
    if not os.path.isfile(path):
        die(f"no such file: {path}")
    return sqlite3.connect("file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=ro", uri=True)


def build(db):
    """Returns (main script, [(what, statement)] that may fail, {table: row count})."""
    tables = [
        name
        for (name,) in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
            "ORDER BY name"
        )
    ]
    dataset = next((d for d in DATASETS.values() if d["tables"] <= set(tables)), None)
    table_sql = {
        name: sql for name, sql in db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'")
    }
    sequences = {}
    if "sqlite_sequence" in table_sql:
        sequences = dict(db.execute("SELECT name, seq FROM sqlite_sequence"))

    cols, rows = {}, {}
    for t in tables:
        cols[t] = [Col(t, *c[1:]) for c in db.execute(f"PRAGMA table_info({sq(t)})")]
        names = ", ".join(sq(c.name) for c in cols[t])
        rows[t] = db.execute(f"SELECT {names} FROM {sq(t)}").fetchall()
    by_name = {(t, c.name): c for t in tables for c in cols[t]}

    # Keys: primary keys, foreign keys and indexes.
    fks, indexes = [], []
    for t in tables:
        for c in cols[t]:
            if c.pk:
                c.keyed = True
        if re.search(r"\bAUTOINCREMENT\b", table_sql[t] or "", re.I):
            pks = [c for c in cols[t] if c.pk]
            if len(pks) == 1:
                pks[0].autoinc = True
        by_id = {}
        for fk_id, seq, ref, col, ref_col, on_upd, on_del, _m in db.execute(
            f"PRAGMA foreign_key_list({sq(t)})"
        ):
            by_id.setdefault(fk_id, []).append((seq, ref, col, ref_col, on_upd, on_del))
        for fk_id in sorted(by_id, reverse=True):  # SQLite lists them last-declared first
            parts = sorted(by_id[fk_id])
            ref = parts[0][1]
            if ref not in cols:
                say(f"skipping the foreign key {t} -> {ref}: there is no table {ref}")
                continue
            ref_cols = [p[3] for p in parts]
            if any(rc is None for rc in ref_cols):  # REFERENCES t: its primary key
                ref_cols = [c.name for c in sorted((c for c in cols[ref] if c.pk), key=lambda c: c.pk)]
            fk = Fk(t, [p[2] for p in parts], ref, ref_cols, parts[0][4], parts[0][5])
            fk.id = fk_id
            fks.append(fk)
            for c in fk.cols:
                by_name[(t, c)].keyed = True
            for c in fk.ref_cols:
                by_name[(ref, c)].keyed = True
        for _seq, name, unique, origin, partial in db.execute(f"PRAGMA index_list({sq(t)})"):
            if origin == "pk":
                continue
            info = db.execute(f"PRAGMA index_xinfo({sq(name)})").fetchall()
            keycols = [(r[2], r[3]) for r in info if r[5]]  # (name, desc) of the key columns
            if partial or any(n is None for n, _ in keycols):
                say(f"skipping the index {name} on {t}: partial or on an expression")
                continue
            if origin == "u":
                name = f"UQ_{t}_{'_'.join(n for n, _ in keycols)}"[:64]
            indexes.append((name, t, bool(unique), keycols))
            for n, _ in keycols:
                by_name[(t, n)].keyed = True

    # Types, from the declarations and the values.
    for t in tables:
        for i, c in enumerate(cols[t]):
            set_type(c, [r[i] for r in rows[t] if r[i] is not None])
    # The two ends of a foreign key: integers both INT or both BIGINT, and key lengths chosen
    # here as long as the other end's.
    changed = True
    while changed:
        changed = False
        for fk in fks:
            for a, b in zip(fk.cols, fk.ref_cols):
                ca, cb = by_name[(fk.table, a)], by_name[(fk.ref, b)]
                if ca.kind == cb.kind == "int" and ca.sql != cb.sql:
                    ca.sql = cb.sql = "BIGINT"
                    changed = True
                for x, y in ((ca, cb), (cb, ca)):
                    if (
                        x.derived_length
                        and y.kind in ("string", "char")
                        and x.kind == "string"
                        and y.length > x.length
                    ):
                        x.length = y.length
                        changed = True

    # Comments.
    table_comments = dataset["table_comments"] if dataset else {}
    for (t, c), text in (dataset["column_comments"] if dataset else {}).items():
        if (t, c) not in by_name:
            die(f"a comment for {t}.{c}, which does not exist")
        by_name[(t, c)].comment = text
    for t in table_comments:
        if t not in cols:
            die(f"a comment for the table {t}, which does not exist")

    out = [
        "SET NAMES utf8mb4;\n",
        f"SET SESSION sql_mode = '{SQL_MODE}';\n",
        "SET SESSION foreign_key_checks = 0;\n",
        "SET SESSION time_zone = '+00:00';\n",
    ]
    counts = {}
    for t in tables:
        lines = []
        for c in cols[t]:
            line = f"    {q(c.name)} {c.type_sql()}"
            if c.notnull or c.pk:
                line += " NOT NULL"
            if c.autoinc:
                line += " AUTO_INCREMENT"
            line += default_sql(c)
            if c.comment:
                line += f" COMMENT {lit(c.comment)}"
            lines.append(line)
        pk = [c.name for c in sorted((c for c in cols[t] if c.pk), key=lambda c: c.pk)]
        if pk:
            lines.append(f"    PRIMARY KEY ({', '.join(q(n) for n in pk)})")
        options = "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4"
        if any(c.autoinc for c in cols[t]) and sequences.get(t):
            options += f" AUTO_INCREMENT={int(sequences[t]) + 1}"
        if t in table_comments:
            options += f" COMMENT={lit(table_comments[t])}"
        out.append(f"CREATE TABLE {q(t)} (\n" + ",\n".join(lines) + f"\n) {options};\n")

        # Rows.
        counts[t] = len(rows[t])
        if rows[t]:
            head = f"INSERT INTO {q(t)} ({', '.join(q(c.name) for c in cols[t])}) VALUES\n"
            out.append("START TRANSACTION;\n")
            batch, size = [], 0
            for r in rows[t]:
                tup = "(" + ",".join(value_sql(c, v) for c, v in zip(cols[t], r)) + ")"
                batch.append(tup)
                size += len(tup)
                if size >= INSERT_BYTES or len(batch) >= INSERT_ROWS:
                    out.append(head + ",\n".join(batch) + ";\n")
                    batch, size = [], 0
            if batch:
                out.append(head + ",\n".join(batch) + ";\n")
            out.append("COMMIT;\n")

    # Indexes before the foreign keys, which then use them.
    for name, t, unique, keycols in indexes:
        parts = ", ".join(q(n) + (" DESC" if desc else "") for n, desc in keycols)
        out.append(f"CREATE {'UNIQUE ' if unique else ''}INDEX {q(name)} ON {q(t)} ({parts});\n")

    # Foreign keys; MariaDB checks the rows as it adds them.
    out.append("SET SESSION foreign_key_checks = 1;\n")
    orphans = {}
    for t in tables:
        try:
            for _t, _rowid, _parent, fk_id in db.execute(f"PRAGMA foreign_key_check({sq(t)})"):
                orphans[(t, fk_id)] = orphans.get((t, fk_id), 0) + 1
        except sqlite3.Error as e:
            say(f"SQLite cannot check the foreign keys of {t}: {e}")
            for fk in fks:
                if fk.table == t:
                    orphans[(t, fk.id)] = -1
    names = set()
    per_table = {}
    skipped_fks = []
    for fk in fks:
        bad = [
            (by_name[(fk.table, a)], by_name[(fk.ref, b)])
            for a, b in zip(fk.cols, fk.ref_cols)
            if not fk_compatible(by_name[(fk.table, a)], by_name[(fk.ref, b)])
        ]
        if bad:
            why = "; ".join(f"{a} is {a.type_sql()}, {b} is {b.type_sql()}" for a, b in bad)
            skipped_fks.append(f"{fk}: the types do not match ({why})")
            continue
        n = orphans.get((fk.table, fk.id), 0)
        if n:
            skipped_fks.append(f"{fk}: {n} rows have no parent" if n > 0 else f"{fk}: unchecked")
            continue
        actions = ""
        for word, action in (("DELETE", fk.on_delete), ("UPDATE", fk.on_update)):
            action = (action or "NO ACTION").upper()
            if action == "SET DEFAULT":
                say(f"foreign key {fk}: ON {word} SET DEFAULT is not supported by InnoDB: left out")
                continue
            if action == "SET NULL" and any(by_name[(fk.table, c)].notnull for c in fk.cols):
                say(f"foreign key {fk}: ON {word} SET NULL on a NOT NULL column: left out")
                continue
            actions += f" ON {word} {action}"
        base = f"FK_{fk.table}{''.join(fk.cols)}"[:60]
        name, i = base, 1
        while name.lower() in names:
            i += 1
            name = f"{base}_{i}"
        names.add(name.lower())
        per_table.setdefault(fk.table, []).append(
            f"ADD CONSTRAINT {q(name)} FOREIGN KEY ({', '.join(q(c) for c in fk.cols)}) "
            f"REFERENCES {q(fk.ref)} ({', '.join(q(c) for c in fk.ref_cols)}){actions}"
        )
    for t, adds in per_table.items():
        out.append(f"ALTER TABLE {q(t)}\n    " + ",\n    ".join(adds) + ";\n")
    for s in skipped_fks:
        say(f"skipping the foreign key {s}")

    # What MariaDB may refuse: CHECK constraints and views.
    optional = []
    for t in tables:
        for expr in check_constraints(table_sql[t] or ""):
            optional.append((f"the CHECK ({expr}) on {t}", f"ALTER TABLE {q(t)} ADD CHECK ({expr})"))
    for name, sql in db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'view'"):
        optional.append((f"the view {name}", translate(sql).strip().rstrip(";")))
    for name, sql in dataset["views"] if dataset else []:
        optional.append((f"the view {name}", sql))
    return "".join(out), optional, counts, tables


def run_client(client, script, force=False):
    args = client + (["--force"] if force else [])
    return subprocess.run(
        args, input=script.encode("utf-8"), stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


def main(argv):
    if len(argv) < 3 or argv[1].startswith("-"):
        raise SystemExit(__doc__)
    source, dbname, client_args = argv[1], argv[2], argv[3:]
    db = open_source(source)
    script, optional, expected, tables = build(db)
    # --no-defaults must come first; then ours. --binary-mode: \r\n and NUL stay as they are.
    client = [
        "mariadb",
        *client_args,
        "--default-character-set=utf8mb4",
        "--binary-mode",
        "--batch",
        "--skip-column-names",
        dbname,
    ]
    res = run_client(client, script)
    if res.returncode != 0:
        sys.stderr.write(res.stderr.decode("utf-8", "replace"))
        die(f"the mariadb client failed loading {source} into {dbname}")

    # CHECK constraints and views, each on its own lines; a failing one is reported and skipped.
    preamble = f"SET NAMES utf8mb4;\nSET SESSION sql_mode = '{SQL_MODE}';\n"
    lines = preamble.count("\n")
    spans, parts = [], [preamble]
    for what, stmt in optional:
        n = stmt.count("\n") + 1
        spans.append((lines + 1, lines + n, what))
        parts.append(stmt + ";\n")
        lines += n
    views = sum(1 for what, _ in optional if what.startswith("the view "))
    failed_views = 0
    if optional:
        res = run_client(client, "".join(parts), force=True)
        echo = False  # the client repeats a failing statement between lines of dashes
        for line in res.stderr.decode("utf-8", "replace").splitlines():
            if line == "--------------":
                echo = not echo
                continue
            m = re.match(r"ERROR \d+ \(\w+\) at line (\d+): (.*)", line)
            if not m:
                if line.strip() and not echo:
                    say(line)
                continue
            at = int(m.group(1))
            what = next((w for a, b, w in spans if a <= at <= b), f"line {at}")
            say(f"skipping {what}: {m.group(2)}")
            failed_views += what.startswith("the view ")

    subprocess.run(
        [*client[:-1], dbname, "-e", f"ANALYZE TABLE {', '.join(q(t) for t in tables)}"],
        stdout=subprocess.DEVNULL,
        check=True,
    )

    # Verify: every table holds exactly SQLite's rows.
    query = " UNION ALL ".join(f"SELECT {i}, count(*) FROM {q(t)}" for i, t in enumerate(tables))
    res = subprocess.run(
        [*client[:-1], dbname, "-e", query], stdout=subprocess.PIPE, check=True, text=True
    )
    actual = {}
    for line in res.stdout.splitlines():
        if line.strip():
            i, n = line.split("\t")
            actual[tables[int(i)]] = int(n)
    bad = [(t, expected[t], actual.get(t)) for t in tables if actual.get(t) != expected[t]]
    if bad:
        for t, e, a in bad:
            say(f"table {t}: SQLite has {e} rows, MariaDB {a}")
        raise SystemExit(1)
    total = sum(expected.values())
    print(
        f"{PROG}: loaded {len(tables)} tables, {total} rows (counts verified), "
        f"{views - failed_views} of {views} views into {dbname}"
    )


if __name__ == "__main__":
    main(sys.argv)
