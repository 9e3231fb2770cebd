//! find_items: a selector over every item of a collection, on all cores — the matches, the
//! first of them rendered, the items it could not be evaluated on, and when nothing matched the
//! hints of [`crate::no_match`].

use std::sync::atomic::Ordering::Relaxed;

use serde::Serialize;
use serde_json::Value;

use crate::collection::Collection;
use crate::display::{Cuts, DisplayLimits};
use crate::error::CoreError;
use crate::sample::render_item;

use super::check::Halt;
use super::parse::Selector;

/// Most ids one answer lists.
pub const MAX_IDS: usize = 1_000;
/// Most items one find_items answer renders (a query's rows are bounded by their own cap).
pub const MAX_ITEMS: usize = 50;

/// Items a selector could not be evaluated on: they do not match, and the answer says so.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Unevaluated {
    /// How many items.
    pub count: usize,
    /// The first one's id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub example_id: Option<String>,
    /// Why it could not be evaluated (the jmespath crate's words).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub example_error: Option<String>,
}

impl Unevaluated {
    /// Counts one more item, keeping the first as the example.
    pub fn add(&mut self, id: &str, reason: String) {
        if self.example_id.is_none() {
            self.example_id = Some(id.to_string());
            self.example_error = Some(reason);
        }
        self.count += 1;
    }

    /// Adds another tally (a later part of the collection).
    pub fn merge(&mut self, other: Unevaluated) {
        if self.example_id.is_none() {
            self.example_id = other.example_id;
            self.example_error = other.example_error;
        }
        self.count += other.count;
    }

    /// " N nodes could not be evaluated and do not match (e.g. `id`: reason)." or "".
    pub fn sentence(&self, noun_one: &str, noun_many: &str) -> String {
        if self.count == 0 {
            return String::new();
        }
        let noun = if self.count == 1 { noun_one } else { noun_many };
        let example = match (&self.example_id, &self.example_error) {
            (Some(id), Some(error)) => format!(" (e.g. {}: {error})", crate::display::code(id)),
            _ => String::new(),
        };
        let (verb, does) = if self.count == 1 { ("was", "does") } else { ("were", "do") };
        format!(" {} {noun} {verb} not evaluated and {does} not match{example}.", self.count)
    }
}

/// What find_items found.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FindResult {
    /// The selector.
    pub selector: String,
    /// Matching items.
    pub count: usize,
    /// Items searched.
    pub total: usize,
    /// Ids of matching items (at most [`MAX_IDS`]).
    pub ids: Vec<String>,
    /// True when `ids` was cut.
    pub ids_truncated: bool,
    /// The first matching items, rendered.
    pub items: Vec<Value>,
    /// Items the selector could not be evaluated on (a function given a null, a string compared
    /// where a number was needed, an unreadable item): they do not match.
    pub unevaluated: Unevaluated,
    /// When nothing matched: why, where the data tells (see [`crate::no_match`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hints: Vec<String>,
    /// Values in `items` nested past the display depth, shown as `[depth limit: …]` markers.
    #[serde(skip_serializing_if = "is_zero")]
    pub depth_limited: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Evaluates `selector` on every item of `collection`, on all cores. An item the selector cannot
/// be evaluated on does not match and is counted in [`FindResult::unevaluated`]; one odd item
/// never fails the call. When nothing matches, `others` (the source's other collections) help
/// say why. The call stops with an error when one item is too costly ([`Halt`]) or the current
/// [`crate::cancel`] token is cancelled: every thread looks at it between items. The first
/// `limit` matches are rendered (callers bound it: [`MAX_ITEMS`] for find_items).
pub fn find_items(
    collection: &Collection,
    others: &[&Collection],
    selector: &Selector,
    limit: usize,
    limits: &DisplayLimits,
) -> Result<FindResult, CoreError> {
    let n = collection.len();
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get()).clamp(1, n.max(1));
    let chunk = n.div_ceil(threads).max(1);
    let cancel = crate::cancel::current();
    // Set by the first thread that halts, so the others stop too.
    let halted = std::sync::atomic::AtomicBool::new(false);
    let evaluated = std::sync::atomic::AtomicUsize::new(0);
    type Part = (Vec<usize>, Unevaluated, Option<(Halt, String)>);
    let outcomes: Vec<Part> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (cancel, halted, evaluated) = (&cancel, &halted, &evaluated);
                scope.spawn(move || {
                    let mut hits = Vec::new();
                    let mut unevaluated = Unevaluated::default();
                    let mut done = 0;
                    let mut halt = None;
                    for index in t * chunk..((t + 1) * chunk).min(n) {
                        if done % crate::cancel::CHECK_EVERY == 0
                            && (halted.load(Relaxed) || cancel.is_cancelled())
                        {
                            break;
                        }
                        let Some(item) = collection.item(index) else { continue };
                        done += 1;
                        match selector.check_json(item.json, cancel) {
                            Ok(Ok(true)) => hits.push(index),
                            Ok(Ok(false)) => {}
                            Ok(Err(reason)) => unevaluated.add(item.id, reason),
                            Err(stop) => {
                                halted.store(true, Relaxed);
                                halt = Some((stop, item.id.to_string()));
                                break;
                            }
                        }
                    }
                    evaluated.fetch_add(done, Relaxed);
                    (hits, unevaluated, halt)
                })
            })
            .collect();
        handles.into_iter().map(|h| crate::sync::joined(h.join())).collect()
    });
    let evaluated = evaluated.load(Relaxed);
    if let Some((halt, item)) = outcomes.iter().find_map(|(_, _, halt)| halt.clone()) {
        return Err(halt.into_error(selector.as_str(), &item, evaluated, n));
    }
    if let Err(cancelled) = cancel.check() {
        return Err(Halt::Cancelled(cancelled).into_error(selector.as_str(), "", evaluated, n));
    }
    let mut hits = Vec::new();
    let mut unevaluated = Unevaluated::default();
    for (part, skipped, _) in outcomes {
        hits.extend(part);
        unevaluated.merge(skipped);
    }
    let mut cuts = Cuts::default();
    let mut items = Vec::new();
    for &index in hits.iter().take(limit) {
        if let Some(item) = collection.item(index) {
            let value = collection.parse_item(&item)?;
            items.push(render_item(collection.kind(), &item, &value, limits, &mut cuts));
        }
    }
    let hints = if hits.is_empty() {
        crate::no_match::explain(selector, collection, others).hints
    } else {
        Vec::new()
    };
    Ok(FindResult {
        selector: selector.as_str().to_string(),
        count: hits.len(),
        total: n,
        ids: hits
            .iter()
            .take(MAX_IDS)
            .filter_map(|&i| collection.item(i).map(|it| it.id.to_string()))
            .collect(),
        ids_truncated: hits.len() > MAX_IDS,
        items,
        unevaluated,
        hints,
        depth_limited: cuts.depth,
    })
}
