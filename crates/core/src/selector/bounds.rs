//! Bounds on a selector's size and nesting, checked before anything recurses over it. The
//! jmespath crate parses recursively (one level per `!`, `(`, `[`, `{`, projection), and every
//! walk of the tree — the evaluators, the fast path, the hints, dropping it — recurses once per
//! level, so `!!!…!type` or `[[[…type]]]` of a few kilobytes overflowed a 2 MiB stack and
//! aborted the server. Here:
//!
//! 1. a selector longer than [`MAX_SELECTOR_BYTES`] is refused unread;
//! 2. its brackets are counted without recursion, and nesting past [`MAX_SELECTOR_DEPTH`] is
//!    refused with the offset where it happens;
//! 3. it is parsed — on the calling thread when it is too short to nest deeply, else on a thread
//!    with a large known stack ([`crate::deep_stack`]) — and the tree's depth is measured
//!    without recursion; a tree deeper than [`MAX_SELECTOR_DEPTH`] (a chain of 200 `!`, or of
//!    200 `||`) is refused and dropped on that same thread.
//!
//! Every tree a [`super::Selector`] holds is therefore at most [`MAX_SELECTOR_DEPTH`]
//! deep, which every recursive walk of it relies on.

use jmespath::ast::Ast;

/// The longest selector accepted, in bytes.
pub const MAX_SELECTOR_BYTES: usize = 16 * 1024;

/// The deepest a selector may nest: brackets inside brackets, or levels of its parsed tree (each
/// `.`, `|`, `&&`, `||`, comparison, `!`, projection and function call is one).
pub const MAX_SELECTOR_DEPTH: usize = 128;

/// Selectors up to this long are parsed on the caller's thread: even nested at every byte, the
/// parser's recursion stays far inside the smallest stack a caller runs on (2 MiB).
const INLINE_PARSE_BYTES: usize = 256;

/// Why a selector was refused before or while parsing.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Refusal {
    /// Byte offset the refusal points at.
    pub offset: usize,
    /// What is wrong, for the reader.
    pub reason: String,
}

/// Parses `text` within the bounds above; `Err` carries the jmespath crate's own error or a
/// [`Refusal`].
pub(crate) fn parse(text: &str) -> Result<Ast, Result<jmespath::JmespathError, Refusal>> {
    if text.len() > MAX_SELECTOR_BYTES {
        return Err(Err(Refusal {
            offset: MAX_SELECTOR_BYTES,
            reason: format!(
                "the selector is {} bytes long; at most {MAX_SELECTOR_BYTES} are accepted",
                text.len()
            ),
        }));
    }
    if let Some(offset) = brackets_too_deep(text) {
        return Err(Err(too_deep(offset)));
    }
    let parse_and_measure = || {
        let ast = jmespath::parse(text).map_err(Ok)?;
        match deeper_than(&ast, MAX_SELECTOR_DEPTH) {
            Some(offset) => Err(Err(too_deep(offset))),
            None => Ok(ast),
        }
    };
    if text.len() <= INLINE_PARSE_BYTES {
        return parse_and_measure();
    }
    crate::deep_stack::on_deep_stack(parse_and_measure)
        .unwrap_or_else(|reason| Err(Err(Refusal { offset: 0, reason })))
}

fn too_deep(offset: usize) -> Refusal {
    Refusal {
        offset,
        reason: format!(
            "the selector nests deeper than {MAX_SELECTOR_DEPTH} levels (each bracket, `!`, `.`, `|`, `&&`, `||`, comparison and function call is a level); \
             write it flatter, e.g. contains(['a', 'b'], type) instead of a long chain of ||"
        ),
    }
}

/// The offset of the first bracket nested deeper than [`MAX_SELECTOR_DEPTH`], outside quoted
/// names, raw strings and JSON literals; `None` when none is.
fn brackets_too_deep(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            quote @ (b'\'' | b'"' | b'`') => {
                // Skip to the closing quote; a backslash escapes the next byte in all three.
                i += 1;
                while i < bytes.len() && bytes[i] != quote {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'(' | b'[' | b'{' => {
                depth += 1;
                if depth > MAX_SELECTOR_DEPTH {
                    return Some(i);
                }
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    None
}

/// The direct children of a node.
pub(crate) fn children(node: &Ast) -> Vec<&Ast> {
    match node {
        Ast::Comparison { lhs, rhs, .. }
        | Ast::And { lhs, rhs, .. }
        | Ast::Or { lhs, rhs, .. }
        | Ast::Subexpr { lhs, rhs, .. }
        | Ast::Projection { lhs, rhs, .. } => {
            vec![lhs, rhs]
        }
        Ast::Condition { predicate, then, .. } => vec![predicate, then],
        Ast::Expref { ast, .. } => vec![ast],
        Ast::Flatten { node, .. } | Ast::Not { node, .. } | Ast::ObjectValues { node, .. } => {
            vec![node]
        }
        Ast::Function { args, .. } => args.iter().collect(),
        Ast::MultiList { elements, .. } => elements.iter().collect(),
        Ast::MultiHash { elements, .. } => elements.iter().map(|pair| &pair.value).collect(),
        Ast::Identity { .. }
        | Ast::Field { .. }
        | Ast::Index { .. }
        | Ast::Literal { .. }
        | Ast::Slice { .. } => Vec::new(),
    }
}

/// The offset of a node more than `limit` levels deep, found without recursion; `None` when
/// the tree is within `limit`.
pub(crate) fn deeper_than(ast: &Ast, limit: usize) -> Option<usize> {
    let mut pending = vec![(ast, 1usize)];
    while let Some((node, depth)) = pending.pop() {
        if depth > limit {
            return Some(offset(node));
        }
        pending.extend(children(node).into_iter().map(|child| (child, depth + 1)));
    }
    None
}

fn offset(node: &Ast) -> usize {
    match node {
        Ast::Comparison { offset, .. }
        | Ast::Condition { offset, .. }
        | Ast::Identity { offset }
        | Ast::Expref { offset, .. }
        | Ast::Flatten { offset, .. }
        | Ast::Function { offset, .. }
        | Ast::Field { offset, .. }
        | Ast::Index { offset, .. }
        | Ast::Literal { offset, .. }
        | Ast::MultiList { offset, .. }
        | Ast::MultiHash { offset, .. }
        | Ast::Not { offset, .. }
        | Ast::Projection { offset, .. }
        | Ast::Subexpr { offset, .. }
        | Ast::Slice { offset, .. }
        | Ast::And { offset, .. }
        | Ast::Or { offset, .. }
        | Ast::ObjectValues { offset, .. } => *offset,
    }
}
