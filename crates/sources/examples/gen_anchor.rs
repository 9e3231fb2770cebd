//! Writes the scale benchmark's anchor data: N deterministic NDJSON documents of about 260 bytes,
//! `id, name, category, price, qty, active, score, tags[], meta{source, version, geo{lat, lon}},
//! created, discount?, note?`, fast enough for 100 million of them (a Python generator would take
//! half an hour).
//!
//! `cargo run --release -p schemascope-sources --example gen_anchor -- N OUT`

use std::io::Write;

/// A small seeded generator (xorshift64*): the same file on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

const CATEGORIES: [&str; 12] = [
    "tools", "garden", "kitchen", "toys", "books", "music", "sports", "office", "health", "beauty",
    "auto", "pets",
];
const ADJECTIVES: [&str; 16] = [
    "Compact", "Deluxe", "Classic", "Smart", "Rugged", "Silent", "Mini", "Pro", "Eco", "Ultra",
    "Vintage", "Modular", "Portable", "Heavy", "Light", "Prime",
];
const NOUNS: [&str; 16] = [
    "Widget", "Gadget", "Lamp", "Kettle", "Drill", "Chair", "Speaker", "Bottle", "Racket",
    "Planner", "Brush", "Charger", "Leash", "Blender", "Helmet", "Puzzle",
];
const TAGS: [&str; 10] =
    ["new", "sale", "eco", "gift", "bulk", "limited", "import", "refurb", "bundle", "clearance"];
const SOURCES: [&str; 4] = ["web", "store", "partner", "api"];
const NOTES: [&str; 6] = [
    "restocked after the spring audit",
    "ships in two boxes",
    "customer favourite",
    "price matched",
    "fragile, handle with care",
    "discontinued by the maker",
];

fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let (Some(n), Some(out)) = (args.next(), args.next()) else {
        eprintln!("usage: gen_anchor N OUT");
        std::process::exit(2);
    };
    let n: u64 = n.parse().map_err(|_| std::io::Error::other("N must be a whole number"))?;
    let file = std::fs::File::create(&out)?;
    let mut w = std::io::BufWriter::with_capacity(4 << 20, file);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    // 2024-01-01T00:00:00Z, one record every 3 seconds.
    let start = 1_704_067_200_i64;
    let mut line = String::with_capacity(512);
    for i in 0..n {
        use std::fmt::Write as _;
        line.clear();
        let category = CATEGORIES[(rng.below(64) as usize * rng.below(64) as usize / 342) % 12];
        let price = (rng.unit() * rng.unit() * 99_999.0).round() / 100.0 + 0.99;
        let qty = rng.below(250);
        let active = rng.below(100) < 72;
        let score = rng.unit();
        let _ = write!(
            line,
            r#"{{"id":"a-{i:010}","name":"{} {} {}","category":"{category}","price":{price:.2},"qty":{qty},"active":{active},"score":{score:.6},"tags":["#,
            ADJECTIVES[rng.below(16) as usize],
            NOUNS[rng.below(16) as usize],
            rng.below(10_000),
        );
        for t in 0..rng.below(4) {
            if t > 0 {
                line.push(',');
            }
            let _ = write!(line, r#""{}""#, TAGS[rng.below(10) as usize]);
        }
        let lat = rng.unit() * 180.0 - 90.0;
        let lon = rng.unit() * 360.0 - 180.0;
        let created = chrono_like(start + i as i64 * 3);
        let _ = write!(
            line,
            r#"],"meta":{{"source":"{}","version":{},"geo":{{"lat":{lat:.5},"lon":{lon:.5}}}}},"created":"{created}""#,
            SOURCES[rng.below(4) as usize],
            1 + rng.below(5),
        );
        if rng.below(100) < 35 {
            let _ = write!(line, r#","discount":{:.2}"#, rng.below(50) as f64 / 100.0);
        }
        match rng.below(100) {
            0..40 => {}
            40..50 => line.push_str(r#","note":null"#),
            _ => {
                let _ = write!(line, r#","note":"{}""#, NOTES[rng.below(6) as usize]);
            }
        }
        line.push_str("}\n");
        w.write_all(line.as_bytes())?;
    }
    w.flush()
}

/// `seconds` since the Unix epoch as RFC 3339 UTC (civil-from-days, Howard Hinnant's algorithm).
fn chrono_like(seconds: i64) -> String {
    let days = seconds.div_euclid(86_400);
    let rem = seconds.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}
