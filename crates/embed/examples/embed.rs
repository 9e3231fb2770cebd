//! Prints, for each line of standard input, its token ids and sentence vector as one JSON
//! line: what a comparison with another implementation reads.
//!
//! ```sh
//! cargo run --release -p schemascope-embed --example embed -- MODEL_DIR < sentences.txt
//! ```

use std::io::BufRead;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args().nth(1).ok_or("usage: embed MODEL_DIR < lines")?;
    let model = schemascope_embed::Embedder::load(std::path::Path::new(&dir))?;
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        let out = serde_json::json!({"text": line, "ids": model.tokens(&line), "vector": model.embed(&line)});
        println!("{out}");
    }
    Ok(())
}
