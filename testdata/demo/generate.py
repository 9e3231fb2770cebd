#!/usr/bin/env python3
"""Generate schemascope's embedded demo data sets.

Deterministic (random.Random(42)), standard library only. Run from anywhere:

    python3 testdata/demo/generate.py

Writes, next to this script:
  infrastructure.json            graph, graphty shape  {"nodes": [...], "edges": [...]}
  infrastructure.networkx.json   the same graph, networkx node-link shape
  sensors.ndjson                 AimDB-like record set: one {"key","value","metadata"} per line
  sensors.json                   latest value of every record: {"<key>": <value>, ...}

All data is synthetic. See README.md for what each file contains and which
quirks are planted on purpose.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from pathlib import Path
from random import Random

OUT_DIR = Path(__file__).resolve().parent
SEED = 42

# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------

UTC = dt.timezone.utc


def iso_z(t: dt.datetime) -> str:
    """2024-03-05T10:22:00Z (whole seconds)."""
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def rfc3339_ms(t: dt.datetime) -> str:
    """2025-01-15T08:30:12.345Z (milliseconds)."""
    t = t.astimezone(UTC)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def rand_uuid4(rng: Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def r2(x: float) -> float:
    return round(x, 2)


def write_json(path: Path, obj) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        json.dump(obj, f, indent=1, ensure_ascii=False)
        f.write("\n")


# ---------------------------------------------------------------------------
# (a) infrastructure graph
# ---------------------------------------------------------------------------

REGIONS = ["us-east", "us-west", "eu-central", "ap-south"]
REGION_SHORT = {"us-east": "us-e", "us-west": "us-w", "eu-central": "eu", "ap-south": "ap"}
TAGS = [
    "production", "staging", "critical", "monitored", "backup", "legacy",
    "pci", "gdpr", "autoscaled", "canary", "internal", "public",
]
TEAMS = ["platform", "payments", "search", "data", "identity", "mobile", "sre", "growth"]
MEMORY_MB = [1024, 2048, 4096, 8192, 16384, 32768, 65536]
ENGINES = ["postgres", "postgres", "postgres", "mysql", "redis", "mongodb"]


def build_graph(rng: Random):
    start = dt.datetime(2022, 1, 1, tzinfo=UTC)
    span_s = int((dt.datetime(2025, 6, 30, tzinfo=UTC) - start).total_seconds())

    def created() -> str:
        # whole minutes, like "2024-03-05T10:22:00Z"
        return iso_z(start + dt.timedelta(minutes=rng.randrange(span_s // 60)))

    def tags() -> list[str]:
        n = rng.choices([0, 1, 2, 3, 4, 5], weights=[10, 25, 30, 20, 10, 5])[0]
        return rng.sample(TAGS, n)

    def base(kind: str, name: str, category: str, region: str | None = None) -> dict:
        return {
            "type": kind,
            "name": name,
            "cpu": r2(rng.uniform(0.02, 0.98)),
            "memory": rng.choice(MEMORY_MB),
            "active": rng.random() < 0.85,
            "tags": tags(),
            "region": region or rng.choice(REGIONS),
            "metadata": {
                "owner": rng.choice(TEAMS),
                "created": created(),
                "category": category,
            },
        }

    nodes: list[dict] = []
    by_kind: dict[str, list[dict]] = {k: [] for k in ("server", "database", "cache", "gateway", "client")}

    def add(node_id: str, data: dict) -> None:
        node = {"id": node_id, "data": data}
        nodes.append(node)
        by_kind[data["type"]].append(node)

    # gateways: 14 -------------------------------------------------------
    gw_count: dict[str, int] = {}
    for i in range(14):
        region = REGIONS[i % len(REGIONS)]
        short = REGION_SHORT[region]
        gw_count[short] = gw_count.get(short, 0) + 1
        name = f"gw-{short}-{gw_count[short]}"
        d = base("gateway", name, "network", region)
        d["docs_url"] = f"https://wiki.example.com/{name}"
        add(f"gateway-{i + 1:03d}", d)

    # servers: 62 --------------------------------------------------------
    server_roles = [("web", 24, "web"), ("api", 20, "compute"), ("worker", 12, "batch"), ("auth", 6, "compute")]
    k = 0
    for role, count, category in server_roles:
        for j in range(count):
            k += 1
            d = base("server", f"{role}-{j + 1:02d}", category)
            current = r2(rng.uniform(0.02, 0.95))
            d["metrics"] = {
                "cpu": {"current": current, "peak": r2(min(1.0, current + rng.uniform(0.01, 0.4)))},
                "requests_per_sec": int(rng.lognormvariate(5.0, 1.1)),
            }
            add(f"server-{k:03d}", d)

    # databases: 20 ------------------------------------------------------
    db_names = ["db-master", "db-analytics", "db-sessions"]
    db_names += [f"db-replica-{i:02d}" for i in range(1, 9)]
    db_names += [f"pg-orders-{i:02d}" for i in range(1, 4)]
    db_names += [f"mysql-legacy-{i:02d}" for i in range(1, 3)]
    db_names += [f"redis-queue-{i:02d}" for i in range(1, 3)]
    db_names += ["mongo-events-01", "db-archive"]
    assert len(db_names) == 20
    for i, name in enumerate(db_names):
        d = base("database", name, "storage")
        if name.startswith(("db-master", "db-replica", "pg-", "db-archive", "db-analytics")):
            engine = "postgres"
        elif name.startswith("mysql"):
            engine = "mysql"
        elif name.startswith("redis") or name == "db-sessions":
            engine = "redis"
        elif name.startswith("mongo"):
            engine = "mongodb"
        else:
            engine = rng.choice(ENGINES)
        d["engine"] = engine
        d["replicas"] = 8 if name == "db-master" else rng.randint(0, 3)
        add(f"database-{i + 1:03d}", d)

    # caches: 8 ----------------------------------------------------------
    for i in range(8):
        d = base("cache", f"cache-{i + 1:02d}", "storage")
        d["engine"] = "redis" if i < 6 else "memcached"
        add(f"cache-{i + 1:03d}", d)

    # clients: 56 --------------------------------------------------------
    for i in range(56):
        d = base("client", f"client-{i + 1:02d}", rng.choice(["consumer", "consumer", "partner", "internal"]))
        add(f"client-{i + 1:03d}", d)

    # ---- deliberate quirks --------------------------------------------
    # (1) a few nodes missing cpu
    for n in rng.sample(nodes, 4):
        del n["data"]["cpu"]
    # (2) active: null on three nodes
    for n in rng.sample(nodes, 3):
        n["data"]["active"] = None
    # (3) memory as a string ("16GB") on four nodes (mixed int/string)
    for n in rng.sample(nodes, 4):
        mb = n["data"]["memory"]
        n["data"]["memory"] = f"{mb // 1024}GB"
    # (4) ip on a dozen servers/databases; uuid on ~25 nodes
    for n in rng.sample(by_kind["server"] + by_kind["database"], 12):
        n["data"]["ip"] = f"10.{rng.randint(0, 9)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"
    for n in rng.sample(nodes, 25):
        n["data"]["uuid"] = rand_uuid4(rng)
    # (5) one node with an email contact
    by_kind["database"][0]["data"]["metadata"]["contact"] = "ops@example.com"

    # ---- edges --------------------------------------------------------
    edges: list[dict] = []
    seen: set[tuple[str, str]] = set()

    def latency() -> int:
        # log-normal: median ~27 ms, ~5% above 100 ms, clamped to 1..500
        return max(1, min(500, int(rng.lognormvariate(3.3, 0.85))))

    def connect(src: dict, dst: dict, rel: str) -> bool:
        key = (src["id"], dst["id"])
        if src is dst or key in seen:
            return False
        seen.add(key)
        edges.append({"source": src["id"], "target": dst["id"],
                      "data": {"weight": r2(rng.uniform(0.1, 1.0)), "latency": latency(), "relationship": rel}})
        return True

    servers, dbs, caches = by_kind["server"], by_kind["database"], by_kind["cache"]
    gws, clients = by_kind["gateway"], by_kind["client"]
    web_api = [s for s in servers if s["data"]["name"].startswith(("web", "api", "auth"))]

    # clients -> gateways (1 or 2 each)
    for c in clients:
        for g in rng.sample(gws, rng.choice([1, 1, 1, 2])):
            connect(c, g, "connects")
    # gateways -> web/api/auth servers (every such server gets at least one gateway)
    for s in web_api:
        connect(rng.choice(gws), s, "connects")
    for g in gws:
        for s in rng.sample(web_api, 1):
            connect(g, s, "connects")
    # servers -> databases / caches / other servers
    for s in servers:
        connect(s, rng.choice(dbs), "depends_on")
        if rng.random() < 0.3:
            connect(s, rng.choice(caches), "depends_on")
    while len(edges) < 228:
        a, b = rng.sample(servers, 2)
        connect(a, b, "depends_on")
    # replication, only database -> database
    master = dbs[0]
    for d in dbs:
        if d["data"]["name"].startswith("db-replica"):
            connect(master, d, "replicates")
    connect(dbs[11], dbs[12], "replicates")  # pg-orders-01 -> pg-orders-02
    connect(dbs[11], dbs[13], "replicates")  # pg-orders-01 -> pg-orders-03

    # every node must have at least one edge (isolated nodes are fine in
    # general, but the demo is nicer without them)
    touched = {e["source"] for e in edges} | {e["target"] for e in edges}
    for n in nodes:
        if n["id"] not in touched:
            kind = n["data"]["type"]
            if kind == "database":
                connect(rng.choice(servers), n, "depends_on")
            elif kind == "cache":
                connect(rng.choice(servers), n, "depends_on")
            elif kind == "client":
                connect(n, rng.choice(gws), "connects")
            else:
                connect(rng.choice(gws), n, "connects")

    rng.shuffle(edges)
    # ids: e-0001..; ~10% of edges have no id at all
    no_id = set(rng.sample(range(len(edges)), round(len(edges) * 0.10)))
    out_edges = []
    for i, e in enumerate(edges):
        oe = {}
        if i not in no_id:
            oe["id"] = f"e-{i + 1:04d}"
        oe.update(e)
        out_edges.append(oe)
    # a few edges missing latency
    for e in rng.sample(out_edges, 5):
        del e["data"]["latency"]

    return nodes, out_edges


def to_networkx(nodes: list[dict], edges: list[dict]) -> dict:
    """networkx node-link shape: attributes at top level, edge id (if any) kept as "id"."""
    nx_nodes = [{"id": n["id"], **n["data"]} for n in nodes]
    links = []
    for e in edges:
        link = {"source": e["source"], "target": e["target"]}
        if "id" in e:
            link["id"] = e["id"]
        link.update(e["data"])
        links.append(link)
    return {"directed": True, "multigraph": False, "graph": {}, "nodes": nx_nodes, "links": links}


# ---------------------------------------------------------------------------
# (b) AimDB-like sensor record set
# ---------------------------------------------------------------------------

SENSORS = ["sensor-01", "sensor-02", "sensor-03", "sensor-04"]


def type_id(rng: Random) -> str:
    return f"TypeId(0x{rng.getrandbits(128):032x})"


def build_sensors(rng: Random):
    t0 = dt.datetime(2025, 1, 15, 8, 0, 0, tzinfo=UTC)
    boot = t0 - dt.timedelta(seconds=7)

    # per key: (buffer_type, capacity, writable, producers, consumers, n_values, value factory)
    records: list[tuple[str, dict, list]] = []

    def schedule(n: int, first_s: float, step_s: float, jitter: float) -> list[dt.datetime]:
        out, t = [], first_s
        for _ in range(n):
            out.append(t0 + dt.timedelta(seconds=t))
            t += step_s * (1 + rng.uniform(-jitter, jitter))
        return out

    def meta(buffer_type: str, cap, writable: bool, prod: int, cons: int) -> dict:
        return {
            "type_id": type_id(rng),
            "buffer_type": buffer_type,
            "buffer_capacity": cap,
            "writable": writable,
            "producer_count": prod,
            "consumer_count": cons,
            "created_at": rfc3339_ms(boot + dt.timedelta(milliseconds=rng.randint(0, 900))),
        }

    # server::Temperature -- 30 values
    times = schedule(30, 2.0, 10.0, 0.2)
    vals = []
    temp = 41.0
    for t in times:
        temp += rng.gauss(0, 0.8)
        vals.append((t, {"celsius": round(temp, 2), "sensor_id": rng.choice(SENSORS),
                         "timestamp": round(t.timestamp(), 3)}))
    records.append(("server::Temperature", meta("spmc_ring", 100, False, 1, 3), vals))

    # server::Humidity -- 24 values, optional "calibrated"
    times = schedule(24, 3.5, 12.5, 0.2)
    vals = []
    hum = 45.0
    for i, t in enumerate(times):
        hum = min(99.0, max(5.0, hum + rng.gauss(0, 1.5)))
        v = {"percent": round(hum, 1), "sensor_id": rng.choice(SENSORS), "timestamp": round(t.timestamp(), 3)}
        if i % 3 == 1:
            v["calibrated"] = rng.random() < 0.7
        vals.append((t, v))
    records.append(("server::Humidity", meta("spmc_ring", 50, False, 1, 2), vals))

    # server::Config -- 6 values (one with an empty allowed_origins)
    times = schedule(6, 0.5, 50.0, 0.3)
    origins_pool = ["https://app.example.com", "https://admin.example.com",
                    "http://localhost:3000", "https://partner.example.org"]
    vals = []
    for i, t in enumerate(times):
        origins = [] if i == 3 else rng.sample(origins_pool, rng.randint(1, 3))
        vals.append((t, {"port": 8080 if i < 4 else 9090, "host": "0.0.0.0" if i % 2 == 0 else "127.0.0.1",
                         "debug_mode": i in (0, 3), "max_connections": rng.choice([128, 256, 512, 1024]),
                         "allowed_origins": origins}))
    records.append(("server::Config", meta("single_latest", None, True, 1, 4), vals))

    # server::Status -- 13 values
    times = schedule(13, 1.0, 25.0, 0.25)
    states = ["starting", "running", "running", "running", "degraded", "running",
              "running", "degraded", "degraded", "running", "stopped", "starting", "running"]
    errors = ["connection reset by peer", "sensor-03 timeout after 5000ms", "disk usage above 90%"]
    vals = []
    up = 0
    for t, state in zip(times, states):
        up = 0 if state == "starting" else up + rng.randint(20, 30)
        err = rng.choice(errors) if state in ("degraded", "stopped") else None
        vals.append((t, {"state": state, "uptime_s": up, "last_error": err}))
    records.append(("server::Status", meta("single_latest", None, True, 2, 2), vals))

    # sensor::Location -- 5 values (nested, alt_m sometimes null)
    times = schedule(5, 0.2, 60.0, 0.4)
    sites = ["rack-a3", "rack-a3", "rack-b1", "rack-b1", "roof-north"]
    loc_tags = ["indoor", "outdoor", "rooftop", "calibrated", "rack-mounted"]
    vals = []
    for i, t in enumerate(times):
        vals.append((t, {"site": sites[i],
                         "position": {"lat": round(52.52 + rng.uniform(-0.01, 0.01), 6),
                                      "lon": round(13.405 + rng.uniform(-0.01, 0.01), 6),
                                      "alt_m": None if i in (1, 3) else round(rng.uniform(30, 60), 1)},
                         "tags": rng.sample(loc_tags, rng.randint(1, 3))}))
    records.append(("sensor::Location", meta("single_latest", None, True, 1, 1), vals))

    # fleet::Device -- 10 values (arrays of objects)
    times = schedule(10, 4.0, 30.0, 0.2)
    device_ids = [rand_uuid4(rng) for _ in range(3)]
    fw = [1, 4, 0]
    vals = []
    for i, t in enumerate(times):
        if i in (4, 8):
            fw[2] += 1
        ts = int(t.timestamp())
        readings = [{"t": ts - 5 * j, "v": round(rng.uniform(0, 100), 3)} for j in range(rng.randint(1, 5))]
        vals.append((t, {"device_id": device_ids[i % 3], "firmware": f"{fw[0]}.{fw[1]}.{fw[2]}",
                         "readings": readings}))
    records.append(("fleet::Device", meta("mailbox", 16, False, 3, 1), vals))

    # alerts::Active -- 8 values; value is an ARRAY of objects (some empty)
    times = schedule(8, 5.0, 35.0, 0.3)
    alert_msgs = [("warning", "temperature above 45C"), ("critical", "sensor-03 offline"),
                  ("info", "firmware update available"), ("warning", "humidity above 60%")]
    vals = []
    for i, t in enumerate(times):
        n = 0 if i in (0, 5) else rng.randint(1, 3)
        alerts = []
        for j, (sev, msg) in enumerate(rng.sample(alert_msgs, n)):
            alerts.append({"id": f"alrt-{i:02d}{j}", "severity": sev, "message": msg,
                           "since": rfc3339_ms(t - dt.timedelta(seconds=rng.randint(1, 300))),
                           "acknowledged": rng.random() < 0.3})
        vals.append((t, alerts))
    records.append(("alerts::Active", meta("spmc_ring", 32, False, 1, 2), vals))

    # counter::Requests -- 15 values; value is a bare integer
    times = schedule(15, 1.5, 20.0, 0.1)
    vals = []
    c = 0
    for t in times:
        c += rng.randint(50, 400)
        vals.append((t, c))
    records.append(("counter::Requests", meta("single_latest", None, False, 4, 1), vals))

    # flatten: lines interleaved in global time order (each key's history stays oldest first)
    lines = []
    for key, m, vals in records:
        for t, v in vals:
            lines.append((t, key, v, {**m, "last_update": rfc3339_ms(t)}))
    lines.sort(key=lambda x: (x[0], x[1]))
    latest = {key: vals[-1][1] for key, _, vals in records}
    return lines, latest


# ---------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------

def main() -> None:
    rng = Random(SEED)
    nodes, edges = build_graph(rng)

    ids = [n["id"] for n in nodes]
    names = [n["data"]["name"] for n in nodes]
    assert len(set(ids)) == len(ids), "duplicate node id"
    assert len(set(names)) == len(names), "duplicate node name"
    idset = set(ids)
    for e in edges:
        assert e["source"] in idset and e["target"] in idset, f"dangling edge {e}"
    assert len(nodes) >= 150 and len(edges) >= 230, (len(nodes), len(edges))

    write_json(OUT_DIR / "infrastructure.json", {"nodes": nodes, "edges": edges})
    write_json(OUT_DIR / "infrastructure.networkx.json", to_networkx(nodes, edges))

    lines, latest = build_sensors(Random(SEED + 1))
    with open(OUT_DIR / "sensors.ndjson", "w", encoding="utf-8", newline="\n") as f:
        for _, key, value, meta in lines:
            f.write(json.dumps({"key": key, "value": value, "metadata": meta}, ensure_ascii=False) + "\n")
    write_json(OUT_DIR / "sensors.json", latest)

    print(f"infrastructure: {len(nodes)} nodes, {len(edges)} edges "
          f"({sum('id' not in e for e in edges)} without id)")
    print(f"sensors: {len(latest)} records, {len(lines)} values")


if __name__ == "__main__":
    main()
