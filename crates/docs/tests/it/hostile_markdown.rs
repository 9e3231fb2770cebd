//! Markdown nested past any stack — blockquotes, lists, emphasis, links and brackets tens of
//! thousands deep — is parsed on a thread with a tokio worker's 2 MiB stack without overflowing:
//! the docs parser reads pulldown-cmark's events in a loop, and pulldown-cmark keeps its own
//! nesting on the heap.

use schemascope_docs::parse::parse_docs;

fn on_small_stack<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|scope| {
        schemascope_core::sync::joined(
            std::thread::Builder::new()
                .stack_size(2 << 20)
                .spawn_scoped(scope, work)
                .expect("spawns")
                .join(),
        )
    })
}

#[test]
fn deeply_nested_markdown_is_parsed_on_a_small_stack() {
    let n = 50_000;
    let bodies = [
        format!("{}deep", "> ".repeat(n)),
        format!("{}deep", "- ".repeat(n)),
        format!("{}deep{}", "*".repeat(n), "*".repeat(n)),
        format!("{}deep{}", "_".repeat(n), "_".repeat(n)),
        format!("{}deep{}", "[".repeat(n), "](x)".repeat(n)),
        format!("{}deep{}", "![".repeat(n), "](x)".repeat(n)),
        format!("{}deep{}", "`".repeat(n), "`".repeat(n)),
        format!("{}deep{}", "<a>".repeat(n), "</a>".repeat(n)),
        (0..2_000).map(|i| format!("{}- item\n", " ".repeat(2 * i))).collect(),
    ];
    for body in &bodies {
        let text =
            format!("# Table: Genre\n\n## Purpose\n\n{body}\n\n## Columns\n\n### Name\n\n{body}\n");
        let files = vec![("Genre.md".to_string(), text)];
        let (docs, warnings) = on_small_stack(|| parse_docs(&files));
        assert!(
            docs.table("Genre").is_some_and(|t| !t.columns.is_empty()),
            "{}…: {warnings:?}",
            &body[..20]
        );
    }
}
