//! What is read back from the session file is checked as strictly as what the tools accept: a
//! file written by hand, by another program or by an older version must not serve what no tool
//! call could set (a camera at 1e308, a thousand layers, an unknown layout option, a 10 MB layer
//! name). Each check goes through the tools' own validation where there is one (a layer's style
//! through `FlatStyle::nest`, layout options through `layout::check_options`, the selection
//! through `Selection::change`); what fails is dropped with a note naming the part and why, and
//! the session goes on with the default for it. Ids that are not in the graph are pruned later,
//! against the data (`reconcile.rs`).

use std::collections::HashSet;

use serde_json::Value;

use crate::algorithms::{self, NAMESPACE};
use crate::layers::{MAX_LAYER_NAME_BYTES, MAX_LAYERS, StyleLayers};
use crate::selection::{SelectMode, Selection};
use crate::state::{AlgorithmOutput, AlgorithmRun, MAX_HISTORY, NodePositions};
use crate::style::{ElementKind, FlatStyle, LayerSource, StyleLayer};
use crate::view::{Camera, Layout, MAX_COORDINATE, MAX_VIEWPORT_SIDE, MAX_ZOOM, View};

/// The most bytes of one saved part that are read; a larger one is not read at all.
pub const MAX_PART_BYTES: usize = 256 << 20;

/// How many names of dropped entries a note lists.
const NAMED: usize = 5;

/// The longest free text kept in a saved algorithm run (its stale reason), in bytes.
const MAX_NOTE_BYTES: usize = 4096;

/// How much of a saved value a note quotes.
const QUOTED_CHARS: usize = 60;

fn quoted(text: &str) -> String {
    match text.char_indices().nth(QUOTED_CHARS) {
        Some((at, _)) => format!("`{}…`", &text[..at]),
        None => format!("`{text}`"),
    }
}

/// One note for the entries of `part` that were dropped: how many, the first few with why.
/// The longest note kept, in bytes: a note may quote what it dropped, and a hand-edited file
/// can hold a selector or a preset of many megabytes, which every scene and log would repeat.
const MAX_WARNING_BYTES: usize = 400;
/// The most notes kept; the rest are counted in one more.
const MAX_NOTES: usize = 64;

/// `notes` within 64 notes of at most 400 bytes each (cut on a character boundary,
/// with the bytes left out said).
pub fn bounded_notes(mut notes: Vec<String>) -> Vec<String> {
    let more = notes.len().saturating_sub(MAX_NOTES);
    notes.truncate(MAX_NOTES);
    for note in &mut notes {
        if note.len() > MAX_WARNING_BYTES {
            let mut end = MAX_WARNING_BYTES;
            while !note.is_char_boundary(end) {
                end -= 1;
            }
            let cut = note.len() - end;
            note.truncate(end);
            note.push_str(&format!("… ({cut} more bytes)"));
        }
    }
    if more > 0 {
        notes.push(format!("… and {more} more note(s) about the session file"));
    }
    notes
}

fn note_dropped(part: &str, dropped: &[String], notes: &mut Vec<String>) {
    if dropped.is_empty() {
        return;
    }
    let more = dropped.len().saturating_sub(NAMED);
    let more = if more > 0 { format!(" (+{more} more)") } else { String::new() };
    notes.push(format!(
        "saved `{part}`: {} entr{} dropped, not as the tools would set them: {}{more}",
        dropped.len(),
        if dropped.len() == 1 { "y" } else { "ies" },
        dropped.iter().take(NAMED).cloned().collect::<Vec<_>>().join("; ")
    ));
}

fn finite_within(x: f64, bound: f64) -> bool {
    x.is_finite() && x.abs() <= bound
}

/// Why `layer` (not the first) is not one the tools could have added, if it is not.
fn layer_fault(layer: &StyleLayer, names: &HashSet<&str>) -> Option<String> {
    let name = layer.name.trim();
    if name.is_empty() || name != layer.name || layer.name.len() > MAX_LAYER_NAME_BYTES {
        return Some(format!("a layer name must be 1 to {MAX_LAYER_NAME_BYTES} bytes, trimmed"));
    }
    if layer.name == "default" || layer.source == LayerSource::System {
        return Some("only the built-in layer is `default` or from the system".into());
    }
    if names.contains(layer.name.as_str()) {
        return Some("its name is used by an earlier layer".into());
    }
    let rules = [(ElementKind::Node, &layer.node), (ElementKind::Edge, &layer.edge)];
    if rules.iter().all(|(_, rule)| rule.is_none()) {
        return Some("it styles neither nodes nor edges".into());
    }
    for (kind, rule) in rules {
        let Some(rule) = rule else { continue };
        // Empty matches every element, as the tools take it.
        if !rule.selector.trim().is_empty()
            && let Err(e) = schemascope_core::selector::Selector::parse(&rule.selector)
        {
            return Some(format!("its selector: {e}"));
        }
        for mapping in &rule.mappings {
            if let Err(e) = mapping.check(kind) {
                return Some(e.to_string());
            }
        }
        let channels: HashSet<_> = rule.mappings.iter().map(|m| m.channel).collect();
        if channels.len() != rule.mappings.len() {
            return Some("it maps one field twice".into());
        }
        // A layer of mappings alone has an empty fixed style, which `nest` refuses.
        if rule.mappings.is_empty() || rule.style != Value::Object(Default::default()) {
            let nested = FlatStyle::from_nested(kind, &rule.style).map(|flat| flat.nest(kind));
            match nested {
                Some(Ok(style)) if style == rule.style => {}
                Some(Err(e)) => return Some(e.to_string()),
                _ => return Some("its style has values no style parameter sets".into()),
            }
        }
    }
    None
}

/// The saved style layers: the built-in `default` first (as built in, whatever was saved in its
/// place: `StyleLayers::default` starts with it), then each saved layer the tools could have
/// added, at most [`MAX_LAYERS`] in all.
pub fn layers(saved: StyleLayers, notes: &mut Vec<String>) -> StyleLayers {
    let mut kept = StyleLayers::default();
    let mut dropped = Vec::new();
    let mut over = 0usize;
    let mut saved = saved.layers.into_iter().peekable();
    // The first saved layer stands for the built-in one, which replaces it.
    if saved.peek().is_some_and(|l| l.name == "default" && l.source == LayerSource::System) {
        saved.next();
    }
    for layer in saved {
        let names: HashSet<&str> = kept.layers.iter().map(|l| l.name.as_str()).collect();
        if let Some(why) = layer_fault(&layer, &names) {
            dropped.push(format!("layer {}: {why}", quoted(&layer.name)));
        } else if kept.layers.len() >= MAX_LAYERS {
            over += 1;
        } else {
            kept.layers.push(layer);
        }
    }
    note_dropped("layers", &dropped, notes);
    if over > 0 {
        notes.push(format!(
            "saved `layers`: {over} layer(s) past the most a session holds ({MAX_LAYERS}) were dropped, the newest ones"
        ));
    }
    kept
}

/// The saved selection as `select` would have made it: each id once, in order.
pub fn selection(saved: Selection, notes: &mut Vec<String>) -> Selection {
    let mut kept = Selection::default();
    kept.change(&saved.nodes, &saved.edges, SelectMode::Replace);
    let repeats = saved.nodes.len() + saved.edges.len() - kept.nodes.len() - kept.edges.len();
    if repeats > 0 {
        notes.push(format!("saved `selection`: {repeats} repeated id(s) dropped"));
    }
    kept
}

/// Whether `camera` is one set_camera, a preset or zoom_to_nodes could have set.
fn camera_fault(camera: &Camera) -> Option<String> {
    let points = camera.position.iter().chain(&camera.target);
    if !points.copied().all(|x| finite_within(x, MAX_COORDINATE)) {
        return Some(format!("its coordinates must be finite numbers within ±{MAX_COORDINATE:e}"));
    }
    if !(camera.zoom.is_finite() && camera.zoom > 0.0 && camera.zoom <= MAX_ZOOM) {
        return Some(format!("its zoom must be above 0 and at most {MAX_ZOOM:e}"));
    }
    None
}

/// The saved view; returns it and whether its camera was dropped (the caller frames the graph
/// then, as a new session does).
pub fn view(saved: View, notes: &mut Vec<String>) -> (View, bool) {
    let mut view = saved;
    let mut camera_dropped = false;
    if let Some(why) = camera_fault(&view.camera) {
        notes.push(format!(
            "saved `view`: the camera was dropped ({why}); the graph is framed instead"
        ));
        view.camera = Camera::default();
        camera_dropped = true;
    }
    if let Some([w, h]) = view.viewport
        && !((1..=MAX_VIEWPORT_SIDE).contains(&w) && (1..=MAX_VIEWPORT_SIDE).contains(&h))
    {
        notes.push(format!(
            "saved `view`: the viewport {w}x{h} was dropped (each side 1 to {MAX_VIEWPORT_SIDE} pixels)"
        ));
        view.viewport = None;
    }
    (view, camera_dropped)
}

/// The saved layout and positions: options as set_layout checks them, positions finite and
/// within the coordinate bound, one per id. What fails leaves no positions, so the graph is laid
/// out again.
pub fn layout(
    saved: Layout,
    positions: NodePositions,
    notes: &mut Vec<String>,
) -> (Layout, NodePositions) {
    let mut layout = saved;
    match crate::layout::check_options(layout.layout_type, &layout.options) {
        Ok(options) => layout.options = Value::Object(options),
        Err(e) => {
            notes.push(format!(
                "saved `layout`: its options were dropped ({e}); the graph is laid out again"
            ));
            layout.options = Value::Object(serde_json::Map::new());
            return (layout, NodePositions::default());
        }
    }
    let fault = if positions.ids.len() != positions.positions.len() {
        Some(format!("{} ids for {} positions", positions.ids.len(), positions.positions.len()))
    } else if !positions.positions.iter().flatten().all(|&x| finite_within(x, MAX_COORDINATE)) {
        Some(format!("a coordinate is not a finite number within ±{MAX_COORDINATE:e}"))
    } else if positions.iterations > crate::layout::MAX_SAVED_ITERATIONS {
        Some(format!(
            "{} iterations, more than a layout runs ({})",
            positions.iterations,
            crate::layout::MAX_SAVED_ITERATIONS
        ))
    } else {
        None
    };
    match fault {
        Some(why) => {
            notes.push(format!(
                "saved `layout`: the node positions were dropped ({why}); the graph is laid out again"
            ));
            (layout, NodePositions::default())
        }
        None => (layout, positions),
    }
}

/// Whether `value` is a scalar, or a list of scalars (a shortest path's ids).
fn flat_value(value: &Value) -> bool {
    match value {
        Value::Object(_) => false,
        Value::Array(items) => items.iter().all(|v| !v.is_array() && !v.is_object()),
        _ => true,
    }
}

/// Why `run` is not one run_algorithm could have recorded, if it is not.
fn run_fault(run: &AlgorithmRun) -> Option<String> {
    let Ok(info) = algorithms::find(&run.namespace, &run.algorithm_type) else {
        return Some("no such algorithm".into());
    };
    if run.algorithm_type != info.algorithm_type
        || run.algorithm != format!("{NAMESPACE}:{}", info.algorithm_type)
    {
        return Some("its name does not match its namespace and type".into());
    }
    if chrono::DateTime::parse_from_rfc3339(&run.run_at).is_err() {
        return Some(format!("`runAt` {} is not an RFC 3339 time", quoted(&run.run_at)));
    }
    if !(run.duration_ms.is_finite() && (0.0..=MAX_COORDINATE).contains(&run.duration_ms)) {
        return Some(format!("`durationMs` {} is not a duration", run.duration_ms));
    }
    let Some(options) = run.options.as_object() else {
        return Some("its options are not an object".into());
    };
    if let Some(key) = options.keys().find(|k| !info.options.contains(&k.as_str())) {
        return Some(format!("`{}` takes no option {}", info.algorithm_type, quoted(key)));
    }
    if !options.values().all(|v| !v.is_array() && !v.is_object()) {
        return Some("an option value is not a scalar".into());
    }
    let paths = |names: &[&str]| -> HashSet<String> {
        names.iter().map(|n| algorithms::property_path(info.algorithm_type, n)).collect()
    };
    let (node_paths, edge_paths) = (paths(info.node_properties), paths(info.edge_properties));
    let added = &run.added_properties;
    if !added.nodes.iter().all(|p| node_paths.contains(p))
        || !added.edges.iter().all(|p| edge_paths.contains(p))
    {
        return Some("it lists properties the algorithm does not write".into());
    }
    let Some(results) = run.graph_results.as_object() else {
        return Some("its graph results are not an object".into());
    };
    let known = |k: &str| {
        info.graph_properties.contains(&k)
            || [
                "directed",
                "directedBasis",
                "source",
                "target",
                "path",
                "weight",
                "unusedWeight",
                "parallelEdges",
            ]
            .contains(&k)
    };
    if let Some(key) = results.keys().find(|k| !known(k)) {
        return Some(format!("its graph results hold {}", quoted(key)));
    }
    if !results.values().all(flat_value) {
        return Some("a graph result is nested".into());
    }
    if run.data_fingerprint.as_ref().is_some_and(|f| f.len() != 16) {
        return Some("its data fingerprint is not one".into());
    }
    if run.stale_reason.as_ref().is_some_and(|r| r.len() > MAX_NOTE_BYTES) {
        return Some(format!("its stale reason is longer than {MAX_NOTE_BYTES} bytes"));
    }
    None
}

/// The saved algorithm runs run_algorithm could have recorded, the last [`MAX_HISTORY`].
pub fn history(saved: Vec<AlgorithmRun>, notes: &mut Vec<String>) -> Vec<AlgorithmRun> {
    let mut dropped = Vec::new();
    let mut kept: Vec<AlgorithmRun> = saved
        .into_iter()
        .filter(|run| match run_fault(run) {
            Some(why) => {
                dropped.push(format!("run of {}: {why}", quoted(&run.algorithm)));
                false
            }
            None => true,
        })
        .collect();
    note_dropped("history", &dropped, notes);
    let over = kept.len().saturating_sub(MAX_HISTORY);
    if over > 0 {
        kept.drain(..over);
        notes.push(format!(
            "saved `history`: the {over} oldest run(s) past the most kept ({MAX_HISTORY}) were dropped"
        ));
    }
    kept
}

/// Why `output`, saved under `key`, is not what run_algorithm could have written, if it is not.
fn output_fault(key: &str, output: &AlgorithmOutput) -> Option<String> {
    let Ok(info) = algorithms::find(&output.namespace, &output.algorithm_type) else {
        return Some("no such algorithm".into());
    };
    if output.algorithm_type != info.algorithm_type || key != format!("results:{}", output.key()) {
        return Some("its key does not match its namespace and type".into());
    }
    for (ids, columns, names) in [
        (&output.node_ids, &output.node_columns, info.node_properties),
        (&output.edge_ids, &output.edge_columns, info.edge_properties),
    ] {
        for (name, values) in columns {
            if !names.contains(&name.as_str()) {
                return Some(format!("the algorithm writes no {}", quoted(name)));
            }
            if values.len() != ids.len() {
                return Some(format!(
                    "{} values of {} for {} ids",
                    values.len(),
                    quoted(name),
                    ids.len()
                ));
            }
            if !values.iter().all(|v| !v.is_array() && !v.is_object()) {
                return Some(format!("a value of {} is not a scalar", quoted(name)));
            }
        }
    }
    None
}

/// The saved results under `key`, when run_algorithm could have written them.
pub fn results(
    key: &str,
    output: AlgorithmOutput,
    notes: &mut Vec<String>,
) -> Option<AlgorithmOutput> {
    match output_fault(key, &output) {
        Some(why) => {
            notes.push(format!("saved {} ignored: {why}", quoted(key)));
            None
        }
        None => Some(output),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::style::default_layer;

    #[test]
    fn a_camera_past_the_bound_and_a_viewport_no_page_reports_are_dropped() {
        let mut notes = Vec::new();
        let mut saved = View::default();
        saved.camera.position = [1e308, 0.0, 0.0];
        saved.viewport = Some([0, 800]);
        let (view, camera_dropped) = view(saved, &mut notes);
        assert!(camera_dropped && view.viewport.is_none(), "{view:?}");
        assert_eq!(view.camera, Camera::default());
        assert_eq!(notes.len(), 2, "{notes:?}");
        let mut kept = View::default();
        kept.camera.zoom = 2.0;
        kept.viewport = Some([1, MAX_VIEWPORT_SIDE]);
        let mut notes = Vec::new();
        assert_eq!(super::view(kept.clone(), &mut notes), (kept, false));
        assert!(notes.is_empty());
    }

    #[test]
    fn layers_keep_the_built_in_default_first_and_at_most_the_bound() {
        let mut tampered = default_layer();
        tampered.node = None;
        let mut saved = StyleLayers { layers: vec![tampered] };
        for i in 0..(MAX_LAYERS + 10) {
            saved
                .add(
                    Some(&format!("l{i}")),
                    LayerSource::User,
                    ElementKind::Node,
                    "",
                    None,
                    &FlatStyle { color: Some("red".into()), ..FlatStyle::default() },
                    1,
                )
                .ok();
        }
        // Past the bound by hand, as a file could hold them.
        let mut extra = saved.layers[1].clone();
        for i in 0..20 {
            extra.name = format!("extra-{i}");
            saved.layers.push(extra.clone());
        }
        let mut notes = Vec::new();
        let kept = layers(saved, &mut notes);
        assert_eq!(kept.layers.len(), MAX_LAYERS);
        assert_eq!(kept.layers[0], default_layer(), "the built-in one, not the saved one");
        assert!(notes.iter().any(|n| n.contains("past the most")), "{notes:?}");
    }

    #[test]
    fn notes_quoting_huge_values_are_cut_and_counted() {
        let mut notes = vec![format!("saved `view` ignored: preset `{}`", "p".repeat(30_000_000))];
        notes.extend((0..100).map(|i| format!("note {i}")));
        let bounded = bounded_notes(notes);
        assert_eq!(bounded.len(), MAX_NOTES + 1);
        assert!(bounded[0].len() < MAX_WARNING_BYTES + 40, "{}", bounded[0].len());
        assert!(bounded[0].ends_with("more bytes)"), "{}", &bounded[0][MAX_WARNING_BYTES - 10..]);
        assert_eq!(bounded[MAX_NOTES], "… and 37 more note(s) about the session file");
    }
}
