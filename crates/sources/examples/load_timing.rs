//! Loads one source and prints how long loading (parse + profile) took: a quick check of the
//! scanner's speed without the CLI. `cargo run --release -p schemascope-sources --example load_timing FILE`

fn main() {
    let Some(arg) = std::env::args().nth(1) else {
        eprintln!("usage: load_timing SOURCE");
        std::process::exit(2);
    };
    let spec: schemascope_sources::SourceSpec = match arg.parse() {
        Ok(spec) => spec,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let start = std::time::Instant::now();
    match schemascope_sources::load(&spec, &schemascope_sources::NoProgress) {
        Ok(source) => {
            let items: usize = source.collections.iter().map(|c| c.len()).sum();
            println!(
                "{items} items, {} bytes in {:.3}s",
                source.bytes,
                start.elapsed().as_secs_f64()
            );
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
