#!/usr/bin/env python3
"""Generate N deterministic NDJSON records for the profile benchmark.

    python3 bench/gen_records.py N OUT [--seed S]

Each line is one compact JSON object with 12 top-level fields (about 260 bytes
a line, so N=1,000,000 is about 260 MB):

  id       string, unique "rec-0000001"
  ts       RFC 3339 timestamp string, increasing, "2024-01-01T00:00:03Z"
  kind     enum-like string, 6 values (skewed)
  score    float 0..100
  count    int 0..~1e6 (log-normal)
  active   bool
  note     nullable string (null ~30%)
  tags     array of 0-4 strings (12 values)
  geo      object {lat: float, lon: float, city: string (40 values)}
  metrics  object {cpu: float, latency: {p99: float}}
  level    int 1..5
  owner    string, 200 distinct user handles ("asmith")

Standard library only; lines are built with f-strings (all strings come from
fixed JSON-safe vocabularies), so 1M lines take a few seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from random import Random

KINDS = ["view", "click", "purchase", "signup", "refund", "error"]
KIND_WEIGHTS = [40, 30, 12, 8, 4, 6]

TAGS = ["mobile", "desktop", "tablet", "eu", "us", "apac", "beta", "premium",
        "trial", "returning", "new", "bot"]

CITIES = [
    ("Paris", 48.8566, 2.3522), ("Berlin", 52.5200, 13.4050), ("London", 51.5074, -0.1278),
    ("Madrid", 40.4168, -3.7038), ("Rome", 41.9028, 12.4964), ("Amsterdam", 52.3676, 4.9041),
    ("Vienna", 48.2082, 16.3738), ("Prague", 50.0755, 14.4378), ("Warsaw", 52.2297, 21.0122),
    ("Lisbon", 38.7223, -9.1393), ("Dublin", 53.3498, -6.2603), ("Stockholm", 59.3293, 18.0686),
    ("Oslo", 59.9139, 10.7522), ("Helsinki", 60.1699, 24.9384), ("Zurich", 47.3769, 8.5417),
    ("New York", 40.7128, -74.0060), ("San Francisco", 37.7749, -122.4194),
    ("Chicago", 41.8781, -87.6298), ("Austin", 30.2672, -97.7431), ("Seattle", 47.6062, -122.3321),
    ("Boston", 42.3601, -71.0589), ("Toronto", 43.6532, -79.3832), ("Vancouver", 49.2827, -123.1207),
    ("Mexico City", 19.4326, -99.1332), ("Sao Paulo", -23.5505, -46.6333),
    ("Buenos Aires", -34.6037, -58.3816), ("Bogota", 4.7110, -74.0721), ("Lima", -12.0464, -77.0428),
    ("Tokyo", 35.6762, 139.6503), ("Osaka", 34.6937, 135.5023), ("Seoul", 37.5665, 126.9780),
    ("Singapore", 1.3521, 103.8198), ("Mumbai", 19.0760, 72.8777), ("Bangalore", 12.9716, 77.5946),
    ("Sydney", -33.8688, 151.2093), ("Melbourne", -37.8136, 144.9631),
    ("Auckland", -36.8485, 174.7633), ("Cape Town", -33.9249, 18.4241), ("Nairobi", -1.2921, 36.8219),
    ("Cairo", 30.0444, 31.2357),
]

FIRST = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy",
         "mallory", "nina", "oscar", "peggy", "quinn", "rupert", "sybil", "trent", "ursula", "victor"]
LAST = ["smith", "jones", "garcia", "muller", "rossi", "silva", "kim", "tanaka", "novak", "okafor"]
OWNERS = [f"{f[0]}{l}" for f in FIRST for l in LAST]  # 200 handles like "asmith" (initials are distinct)

NOTES = [
    "refund requested",
    "retry after timeout",
    "fraud rule hit",
    "legacy import",
    "manual override",
    "duplicate event",
    "rate limited",
    "resumed session",
    "price changed",
    "cache miss",
    "slow upstream",
    "opted out",
    "variant B",
    "coupon applied",
    "address updated",
    "card declined",
]
# JSON-encode once: safe to splice into the f-string
NOTES_JSON = [json.dumps(n) for n in NOTES]
OWNERS_JSON = [json.dumps(o) for o in OWNERS]
TAG_JSON = [json.dumps(t) for t in TAGS]
CITY_JSON = [(json.dumps(c), lat, lon) for c, lat, lon in CITIES]
KIND_JSON = [json.dumps(k) for k in KINDS]

START_EPOCH = 1704067200  # 2024-01-01T00:00:00Z


def generate(n: int, out: str, seed: int = 1234) -> None:
    rng = Random(seed)
    rnd = rng.random
    randrange = rng.randrange
    lognorm = rng.lognormvariate
    kinds_cum = []
    acc = 0
    for w in KIND_WEIGHTS:
        acc += w
        kinds_cum.append(acc)
    kind_total = acc
    # cumulative weights -> 100-entry lookup table for speed
    kind_table = []
    for i in range(kind_total):
        kind_table.append(KIND_JSON[next(j for j, c in enumerate(kinds_cum) if i < c)])
    n_owner = len(OWNERS_JSON)
    n_city = len(CITY_JSON)
    n_notes = len(NOTES_JSON)
    tag_json = TAG_JSON
    n_tags = len(tag_json)
    tag_count_table = [0] * 6 + [1] * 7 + [2] * 4 + [3] * 2 + [4] * 1

    gmtime = time.gmtime
    t_ms = START_EPOCH * 1000
    day_cache: dict[int, str] = {}

    chunk: list[str] = []
    append = chunk.append
    tmp = out + ".tmp"
    with open(tmp, "w", encoding="ascii", newline="\n", buffering=1 << 20) as f:
        for i in range(1, n + 1):
            t_ms += randrange(1, 6000)
            secs, ms = divmod(t_ms, 1000)
            day, sod = divmod(secs, 86400)
            dstr = day_cache.get(day)
            if dstr is None:
                g = gmtime(day * 86400)
                dstr = f"{g.tm_year:04d}-{g.tm_mon:02d}-{g.tm_mday:02d}"
                day_cache[day] = dstr
            hh, rem = divmod(sod, 3600)
            mm, ss = divmod(rem, 60)

            r = rnd()
            if r < 0.30:
                note = "null"
            else:
                note = NOTES_JSON[int(rnd() * n_notes)]
            nt = tag_count_table[int(rnd() * 20)]  # 0..4 tags, mean 1.25
            if nt == 0:
                tags = "[]"
            elif nt == 1:
                tags = f"[{tag_json[int(rnd() * n_tags)]}]"
            else:
                start = int(rnd() * n_tags)
                tags = "[" + ",".join(tag_json[(start + k * 5) % n_tags] for k in range(nt)) + "]"
            city, lat, lon = CITY_JSON[int(rnd() * n_city)]
            p50 = lognorm(2.5, 0.5)
            p99 = p50 * (2.0 + 6.0 * rnd())
            active = "true" if rnd() < 0.72 else "false"
            append(
                f'{{"id":"rec-{i:07d}","ts":"{dstr}T{hh:02d}:{mm:02d}:{ss:02d}Z",'
                f'"kind":{kind_table[int(rnd() * kind_total)]},"score":{rnd() * 100:.2f},'
                f'"count":{int(lognorm(6.0, 2.0)) % 1000000},"active":{active},"note":{note},'
                f'"tags":{tags},"geo":{{"lat":{lat + (rnd() - 0.5) * 0.2:.3f},'
                f'"lon":{lon + (rnd() - 0.5) * 0.2:.3f},"city":{city}}},'
                f'"metrics":{{"cpu":{rnd():.2f},'
                f'"latency":{{"p99":{p99:.1f}}}}},'
                f'"level":{1 + int(rnd() * 5)},"owner":{OWNERS_JSON[int(rnd() * n_owner)]}}}\n'
            )
            if len(chunk) >= 10000:
                f.write("".join(chunk))
                chunk.clear()
        if chunk:
            f.write("".join(chunk))
            chunk.clear()
    os.replace(tmp, out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("n", type=int, help="number of records (lines)")
    ap.add_argument("out", help="output .ndjson path")
    ap.add_argument("--seed", type=int, default=1234)
    args = ap.parse_args()
    if args.n < 0:
        sys.exit("N must be >= 0")
    d = os.path.dirname(os.path.abspath(args.out))
    os.makedirs(d, exist_ok=True)
    t0 = time.perf_counter()
    generate(args.n, args.out, args.seed)
    dt = time.perf_counter() - t0
    size = os.path.getsize(args.out)
    print(f"wrote {args.n:,} records, {size / 1e6:.1f} MB "
          f"({size / max(args.n, 1):.0f} B/line) to {args.out} in {dt:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
