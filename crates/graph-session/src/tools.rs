//! The graph session tools (seed 003 and the graph tools of seed 000): each resolves the session,
//! changes or reads its state through the library, and returns the envelope with
//! `affectedNodes`/`affectedEdges` where elements were matched or changed.

use std::sync::Arc;

use crate::layers::{Arrange, ClearScope, MAX_LAYERS, RuleStyle, StyleLayers};
use crate::selection::SelectMode;
use crate::style::{ElementKind, LayerSource, MappedLeaf, StyleRule, compute};
use crate::view::{Camera, Dimension, Layout, MAX_COORDINATE, MAX_VIEWPORT_SIDE};
use schemascope_core::CoreError;
use schemascope_core::ceilings::Ceiling;
use schemascope_core::display::{DisplayLimits, code};
use schemascope_core::selector::Selector;
use schemascope_core::suggest::closest;
use serde_json::{Value, json};

use crate::algorithms::{self, ALGORITHMS, NAMESPACE};
use crate::answer::{Answer, MAX_AFFECTED, Outcome};
use crate::caller::Caller;
use crate::data::SessionData;
use crate::error::GraphSessionError;
use crate::layout::LAYOUT_NAMES;
use crate::params::*;
use crate::session::{GraphSession, now_rfc3339, relayout};
use crate::sessions::GraphSessions;
use crate::state::{AddedProperties, AlgorithmRun, Part};

/// Most ids or items describe_selection lists.
pub const MAX_SELECTION_LISTED: usize = 100;

fn session(
    graphs: &GraphSessions,
    source: Option<&str>,
) -> Result<Arc<GraphSession>, GraphSessionError> {
    graphs.session(source)
}

fn now_ms() -> u64 {
    u64::try_from(chrono::Utc::now().timestamp_millis()).unwrap_or(0)
}

fn kind_noun(kind: ElementKind, n: usize) -> String {
    let noun = match (kind, n == 1) {
        (ElementKind::Node, true) => "node",
        (ElementKind::Node, false) => "nodes",
        (ElementKind::Edge, true) => "edge",
        (ElementKind::Edge, false) => "edges",
    };
    format!("{n} {noun}")
}

/// Ids of the matching elements, in item order.
fn matched_ids(data: &SessionData, kind: ElementKind, matches: &[bool]) -> Vec<String> {
    let collection = data.collection(kind);
    matches
        .iter()
        .enumerate()
        .filter(|(_, hit)| **hit)
        .filter_map(|(i, _)| collection.item(i).map(|it| it.id.to_string()))
        .collect()
}

/// The answer listing `ids` as affected nodes or edges, by `kind`.
fn affecting_kind(result: Answer, kind: ElementKind, ids: Vec<String>) -> Answer {
    match kind {
        ElementKind::Node => result.affecting(Some(ids), None),
        ElementKind::Edge => result.affecting(None, Some(ids)),
    }
}

/// The singular and plural noun for elements of `kind`.
fn nouns(kind: ElementKind) -> (&'static str, &'static str) {
    match kind {
        ElementKind::Node => ("node", "nodes"),
        ElementKind::Edge => ("edge", "edges"),
    }
}

fn mode_label(dimension: Dimension) -> &'static str {
    match dimension {
        Dimension::TwoD => "2D",
        Dimension::ThreeD => "3D",
    }
}

fn point(p: [f64; 3]) -> Value {
    json!({"x": p[0], "y": p[1], "z": p[2]})
}

/// `query_graph`: counts, layout, view and a summary.
pub fn query_graph(graphs: &GraphSessions, params: QueryGraphParams) -> Outcome {
    (|| {
        let session = session(graphs, params.source.as_deref())?;
        let state = session.state();
        let data = session.data();
        let nodes = data.collection(ElementKind::Node).len();
        let edges = data.collection(ElementKind::Edge).len();
        let view = || {
            let camera = &state.view.camera;
            json!({
                "mode": mode_label(state.view.dimension),
                "camera": {"position": point(camera.position), "target": point(camera.target), "distance": camera.distance(), "zoom": camera.zoom, "activePreset": camera.preset},
                "viewport": state.view.viewport.map(|[w, h]| json!({"width": w, "height": h})),
                "immersiveMode": "none",
            })
        };
        let layout = || {
            json!({
                "type": state.layout.layout_type, "options": state.layout.options, "settled": state.layout.settled,
                "settledFrames": state.positions.iterations, "availableLayouts": LAYOUT_NAMES,
            })
        };
        let summary = || {
            json!({
                "nodeCount": nodes, "edgeCount": edges, "directed": data.direction().map(|d| d.directed), "directedBasis": data.direction().map(|d| d.basis),
                "currentLayout": state.layout.layout_type, "mode": mode_label(state.view.dimension),
                "styleLayerCount": state.layers.layers.len(),
                "selectedNodeCount": state.selection.nodes.len(), "selectedEdgeCount": state.selection.edges.len(),
                "algorithmsRun": state.history.iter().filter(|r| !r.stale).map(|r| r.algorithm.clone()).collect::<Vec<_>>(),
                "graphResults": state.history.iter().filter(|r| !r.stale).map(|r| (r.algorithm.clone(), r.graph_results.clone())).collect::<serde_json::Map<_, _>>(),
                "staleAlgorithmRuns": state.history.iter().filter(|r| r.stale).count(),
            })
        };
        let answer = match params.query {
            GraphQuery::NodeCount => {
                Answer::ok(format!("The graph has {nodes} nodes."), json!({"nodeCount": nodes}))
            }
            GraphQuery::EdgeCount => {
                Answer::ok(format!("The graph has {edges} edges."), json!({"edgeCount": edges}))
            }
            GraphQuery::CurrentLayout => {
                let layout_type =
                    serde_json::to_value(state.layout.layout_type).unwrap_or_default();
                Answer::ok(
                    format!("Current layout: {}.", layout_type.as_str().unwrap_or_default()),
                    json!({"currentLayout": layout_type}),
                )
            }
            GraphQuery::Summary => Answer::ok(
                format!("{nodes} nodes, {edges} edges, {} mode.", mode_label(state.view.dimension)),
                summary(),
            ),
            GraphQuery::All => {
                let mut all = summary();
                all["view"] = view();
                all["layout"] = layout();
                Answer::ok(format!("{nodes} nodes, {edges} edges; view, layout and state."), all)
            }
            GraphQuery::View => Answer::ok(
                format!("Current view: {} mode.", mode_label(state.view.dimension)),
                view(),
            ),
            GraphQuery::Layout => {
                let layout_type =
                    serde_json::to_value(state.layout.layout_type).unwrap_or_default();
                let settled = if state.layout.settled { "settled" } else { "not settled" };
                Answer::ok(
                    format!(
                        "Current layout: {} ({settled}).",
                        layout_type.as_str().unwrap_or_default()
                    ),
                    layout(),
                )
            }
        };
        Ok(with_restore_notes(answer, &session))
    })()
}

/// `answer` with what opening the session dropped from the session file (`restoreWarnings`),
/// said in its message: the values answered are the checked ones, not those saved.
fn with_restore_notes(mut answer: Answer, session: &GraphSession) -> Answer {
    let notes = session.restore_notes();
    if notes.is_empty() {
        return answer;
    }
    if let Value::Object(data) = &mut answer.data {
        data.insert("restoreWarnings".into(), json!(notes));
    }
    answer.message.push_str(&format!(
        " The session file held {} part(s) no tool could have set; they were dropped on opening (see `restoreWarnings`).",
        notes.len()
    ));
    answer
}

fn find(graphs: &GraphSessions, params: FindElementsParams, kind: ElementKind) -> Outcome {
    (|| {
        let session = session(graphs, params.source.as_deref())?;
        let data = session.data();
        let matches = data.matches(kind, &params.selector)?;
        let ids = matched_ids(&data, kind, &matches);
        let collection = data.collection(kind);
        let limit = Ceiling::Limit
            .admit_usize(params.limit, 10)
            .map_err(CoreError::from)?
            .min(schemascope_core::selector::MAX_ITEMS);
        let mut cuts = schemascope_core::display::Cuts::default();
        let index = data.id_index(kind);
        let items: Vec<Value> = ids
            .iter()
            .take(limit)
            .filter_map(|id| {
                let item = collection.item(*index.get(id)?)?;
                let value = collection.parse_item(&item).ok()?;
                Some(schemascope_core::sample::render_item(
                    collection.kind(),
                    &item,
                    &value,
                    &DisplayLimits::default(),
                    &mut cuts,
                ))
            })
            .collect();
        let count = ids.len();
        let hints = if count == 0 {
            empty_match_hints(&data, &session.state().history, kind, &params.selector)
        } else {
            Vec::new()
        };
        let unevaluated = data.unevaluated(kind, &params.selector);
        let (one, many) = nouns(kind);
        let mut message = if count == 0 {
            format!("No {many} match {}.", code(&params.selector))
        } else {
            format!("Found {} matching {}.", kind_noun(kind, count), code(&params.selector))
        };
        message.push_str(&unevaluated.sentence(one, many));
        for hint in &hints {
            message.push_str(&format!(" {hint}"));
        }
        message.push_str(&schemascope_core::display::depth_cut_sentence(cuts.depth));
        let data_out = json!({"selector": params.selector, "count": count, "total": collection.len(), "ids": ids.iter().take(schemascope_core::selector::MAX_IDS).collect::<Vec<_>>(), "idsTruncated": count > schemascope_core::selector::MAX_IDS, "items": items, "unevaluated": unevaluated, "hints": hints, "depthLimited": cuts.depth});
        let result = Answer::ok(message, data_out);
        Ok(affecting_kind(result, kind, ids))
    })()
}

/// Why a selector matched no element of `kind`, where the data tells (see
/// `schemascope_core::no_match`), plus what only the session knows: that a property is an
/// algorithm result, written once that algorithm has run.
fn empty_match_hints(
    data: &SessionData,
    history: &[AlgorithmRun],
    kind: ElementKind,
    selector: &str,
) -> Vec<String> {
    let Ok(compiled) = Selector::parse(selector) else { return Vec::new() };
    let other = match kind {
        ElementKind::Node => ElementKind::Edge,
        ElementKind::Edge => ElementKind::Node,
    };
    let mut others: Vec<&schemascope_core::Collection> = vec![&**data.collection(other)];
    let own = data.collection(kind).name().to_string();
    others.extend(
        data.source
            .collections
            .iter()
            .map(|c| &**c)
            .filter(|c| c.name() != own && c.name() != data.collection(other).name()),
    );
    let explained = schemascope_core::no_match::explain(&compiled, data.collection(kind), &others);
    let mut hints = explained.hints;
    for unknown in &explained.unknown_properties {
        hints.extend(crate::hints::algorithm_hint(&data.source, kind, unknown, history));
    }
    hints
}

/// `find_nodes`: nodes matching a selector.
pub fn find_nodes(graphs: &GraphSessions, params: FindElementsParams) -> Outcome {
    find(graphs, params, ElementKind::Node)
}

/// `find_edges`: edges matching a selector.
pub fn find_edges(graphs: &GraphSessions, params: FindElementsParams) -> Outcome {
    find(graphs, params, ElementKind::Edge)
}

fn style(
    graphs: &GraphSessions,
    caller: Caller,
    params: StyleElementsParams,
    kind: ElementKind,
) -> Outcome {
    (|| {
        let session = session(graphs, params.source.as_deref())?;
        let data = session.data();
        if let Some(ids) = &params.ids {
            let index = data.id_index(kind);
            if let Some(unknown) = ids.iter().find(|id| !index.contains_key(*id)) {
                let hint = schemascope_core::suggest::did_you_mean(
                    unknown,
                    index.keys().map(String::as_str),
                );
                return Err(GraphSessionError::InvalidParams(format!(
                    "`ids`: no {} has id `{unknown}`.{hint}",
                    if kind == ElementKind::Node { "node" } else { "edge" }
                )));
            }
        }
        let rule = StyleRule {
            selector: params.selector.clone(),
            ids: params.ids.clone(),
            style: Value::Null,
            mappings: Vec::new(),
        };
        let matches = data.rule_matches(kind, &rule)?;
        let ids = matched_ids(&data, kind, &matches);
        let unevaluated = data.unevaluated(kind, &params.selector);
        let (one, many) = nouns(kind);
        if ids.is_empty() {
            let hints = empty_match_hints(&data, &session.state().history, kind, &params.selector);
            let mut message =
                format!("No {many} match {}, so no style layer was added.", code(&params.selector));
            message.push_str(&unevaluated.sentence(one, many));
            for hint in &hints {
                message.push_str(&format!(" {hint}"));
            }
            return Ok(Answer::failed(
                message,
                json!({"error": "no_match", "selector": params.selector, "matchedCount": 0, "unevaluated": unevaluated, "hints": hints}),
            ));
        }
        // The style is checked once the selector is known to match (a bad selector, then no
        // match, are said first); mappings are resolved against the data.
        let mut flat = params.style.clone();
        if let (ElementKind::Node, Some(label)) = (kind, &flat.label_by) {
            flat.label_by = Some(
                data.resolve_property(kind, label)
                    .map_err(|e| GraphSessionError::InvalidParams(format!("`label_by`: {e}")))?,
            );
        }
        let nested = flat.nest(kind)?;
        let mut mappings = params.style.mappings(kind)?;
        let mut legends = Vec::new();
        let mut mapped_sentences = String::new();
        for mapping in &mut mappings {
            mapping.property = data.resolve_property(kind, &mapping.property).map_err(|e| {
                GraphSessionError::InvalidParams(format!("`{}`: {e}", mapping.parameter()))
            })?;
            let mapped = data.mapped(kind, mapping)?;
            legends.push(mapped.resolved.legend());
            // The layer's own value of the mapped channel is what the unmapped elements take.
            let fixed = format!("/{}", mapping.style_path(kind).replace('.', "/"));
            mapped_sentences.push_str(&mapped.resolved.sentence(nested.pointer(&fixed)));
        }
        let (added, _) = session.change(|state, _| {
            let added = state
                .layers
                .add_rule(
                    params.layer_name.as_deref(),
                    caller.layer_source(),
                    kind,
                    &params.selector,
                    params.ids.clone(),
                    RuleStyle { style: nested.clone(), mappings: mappings.clone() },
                    now_ms(),
                )
                .map_err(|e| GraphSessionError::InvalidParams(e.to_string()))?;
            Ok((added, vec![Part::Layers]))
        })?;
        let name = added.name;
        let state = session.state();
        let layer = state.layers.layers.iter().find(|l| l.name == name);
        let nested = layer.and_then(|l| l.rule(kind)).map(|r| r.style.clone()).unwrap_or_default();
        // Styled by ids alone, there is no selector to quote.
        let matching = if params.selector.trim().is_empty() && params.ids.is_some() {
            "by id".to_string()
        } else if params.selector.trim().is_empty() {
            "(all of them)".to_string()
        } else {
            format!("matching {}", code(&params.selector))
        };
        let mut message =
            format!("Styled {} {matching} (layer {}).", kind_noun(kind, ids.len()), code(&name));
        if let Some(old) = &added.gave_way {
            message.push_str(&format!(
                " The session keeps at most {MAX_LAYERS} style layers, so the oldest unnamed layer of the same source, {}, was removed.",
                code(old)
            ));
        }
        message.push_str(&mapped_sentences);
        message.push_str(&unevaluated.sentence(one, many));
        let mut data_out = json!({"layerName": name, "selector": params.selector, "matchedCount": ids.len(), "unevaluated": unevaluated, "style": nested, "summary": layer.map(|l| l.summary()), "removedLayer": added.gave_way});
        if !legends.is_empty() {
            data_out["mappings"] = json!(legends);
        }
        let result = Answer::ok(message, data_out);
        Ok(affecting_kind(result, kind, ids))
    })()
}

/// `find_and_style_nodes`: adds a style layer for the nodes a selector matches, recorded as
/// added by `caller`.
pub fn find_and_style_nodes(
    graphs: &GraphSessions,
    caller: Caller,
    params: StyleElementsParams,
) -> Outcome {
    style(graphs, caller, params, ElementKind::Node)
}

/// `find_and_style_edges`: adds a style layer for the edges a selector matches, recorded as
/// added by `caller`.
pub fn find_and_style_edges(
    graphs: &GraphSessions,
    caller: Caller,
    params: StyleElementsParams,
) -> Outcome {
    style(graphs, caller, params, ElementKind::Edge)
}

/// `clear_styles`: removes a layer by name, or every layer of the asked source (AI by default).
pub fn clear_styles(graphs: &GraphSessions, params: ClearStylesParams) -> Outcome {
    (|| {
        let session = session(graphs, params.source.as_deref())?;
        let (removed, _) = session.change(|state, _| {
            let removed = state
                .layers
                .clear(params.layer_name.as_deref(), params.layers)
                .map_err(|e| GraphSessionError::InvalidParams(e.to_string()))?;
            let parts = if removed.is_empty() { vec![] } else { vec![Part::Layers] };
            Ok((removed, parts))
        })?;
        let whose = match params.layers {
            ClearScope::Ai => "AI",
            ClearScope::User => "user",
            ClearScope::All => "added",
        };
        let state = session.state();
        let kept_user =
            state.layers.layers.iter().filter(|l| l.source == LayerSource::User).count();
        let kept = if params.layer_name.is_none()
            && params.layers == ClearScope::Ai
            && kept_user > 0
        {
            format!(
                " {kept_user} user layer(s) were kept (remove them with `layers: \"user\"` or by name)."
            )
        } else {
            String::new()
        };
        let message = match (removed.len(), &params.layer_name) {
            (0, _) => format!("There were no {whose} style layers to remove.{kept}"),
            (_, Some(name)) => format!("Removed style layer `{name}`."),
            (n, None) => format!(
                "Removed {n} {whose} style layer{}: {}.{kept}",
                if n == 1 { "" } else { "s" },
                removed.join(", ")
            ),
        };
        Ok(Answer::ok(
            message,
            json!({"removed": removed, "remainingLayers": state.layers.layers.len()}),
        ))
    })()
}

/// `describe_styles`: the layers in order, one layer, or an element's computed style.
pub fn describe_styles(graphs: &GraphSessions, params: DescribeStylesParams) -> Outcome {
    (|| {
        let session = session(graphs, params.source.as_deref())?;
        let state = session.state();
        if let Some(id) = &params.compute_for {
            return compute_for(&session.data(), &state.layers, id);
        }
        let mut described = state
            .layers
            .describe(params.verbose, params.layer_name.as_deref())
            .map_err(|e| GraphSessionError::InvalidParams(e.to_string()))?;
        // Each mapped layer's scale, domain or categories, resolved against the data now.
        let data = session.data();
        if let Some(entries) = described.get_mut("layers").and_then(Value::as_array_mut) {
            for entry in entries {
                let at = entry.get("index").and_then(Value::as_u64).map(|i| i as usize);
                let Some(layer) = at.and_then(|i| state.layers.layers.get(i)) else { continue };
                let legends = crate::legend::mapping_legends(&data, layer);
                if !legends.is_empty() {
                    entry["mappings"] = json!(legends);
                }
            }
        }
        let n = state.layers.layers.len();
        let message = match &params.layer_name {
            Some(name) => format!("Style layer `{name}`."),
            None if params.verbose => format!("Found {n} style layers (verbose)."),
            None => format!("Found {n} style layers."),
        };
        Ok(Answer::ok(message, described))
    })()
}

fn compute_for(
    data: &SessionData,
    layers: &StyleLayers,
    id: &str,
) -> Result<Answer, GraphSessionError> {
    let found = [ElementKind::Node, ElementKind::Edge]
        .into_iter()
        .find_map(|kind| data.id_index(kind).get(id).map(|&i| (kind, i)));
    let Some((kind, index)) = found else {
        let ids = data
            .id_index(ElementKind::Node)
            .keys()
            .chain(data.id_index(ElementKind::Edge).keys())
            .map(String::as_str);
        let hint =
            closest(id, ids, 3).iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", ");
        let hint = if hint.is_empty() { String::new() } else { format!(" Did you mean {hint}?") };
        return Err(GraphSessionError::InvalidParams(format!(
            "No node or edge has id `{id}`.{hint}"
        )));
    };
    let matching: Vec<usize> = layers
        .layers
        .iter()
        .enumerate()
        .filter(|(_, l)| l.applied_rule(kind).is_some_and(|r| data.element_matches(kind, index, r)))
        .map(|(i, _)| i)
        .collect();
    let mut mapped = Vec::new();
    for &i in &matching {
        let Some(rule) = layers.layers[i].applied_rule(kind) else { continue };
        for mapping in &rule.mappings {
            let path = mapping.style_path(kind).to_string();
            let value = data.mapped_value(kind, index, &mapping.property);
            let (explanation, output) = match data.mapped(kind, mapping) {
                Ok(m) => (m.resolved.explain(value.as_ref()), m.output(index).cloned()),
                Err(e) => (
                    json!({"field": path, "property": mapping.property, "value": value, "result": null, "note": format!("the mapping cannot be applied to the data now: {e}")}),
                    None,
                ),
            };
            mapped.push(MappedLeaf { layer: i, path, value: output, explanation });
        }
    }
    let computed = compute(&layers.layers, kind, &matching, &mapped);
    let noun = if kind == ElementKind::Node { "node" } else { "edge" };
    let result = Answer::ok(
        format!("Computed style for {noun} '{id}'."),
        json!({"elementId": id, "elementType": noun, "computedStyle": computed.computed_style, "contributingLayers": computed.contributing_layers}),
    );
    Ok(affecting_kind(result, kind, vec![id.to_string()]))
}

/// `describe_selection`: what is selected, optionally with data; long lists are cut with counts.
pub fn describe_selection(graphs: &GraphSessions, params: DescribeSelectionParams) -> Outcome {
    (|| {
        let session = session(graphs, params.source.as_deref())?;
        let selection = session.state().selection;
        let (n, e) = (selection.nodes.len(), selection.edges.len());
        let message = if selection.is_empty() {
            "Nothing is currently selected.".to_string()
        } else {
            format!(
                "{} and {} selected.",
                kind_noun(ElementKind::Node, n),
                kind_noun(ElementKind::Edge, e)
            )
        };
        let hover = session.hover();
        let message = match &hover {
            Some(h) => format!(
                "{message} The pointer is on {} {}.",
                if h.element_type == ElementKind::Node { "node" } else { "edge" },
                code(&h.id)
            ),
            None => message,
        };
        let mut out = json!({"hasSelection": !selection.is_empty(), "nodeCount": n, "edgeCount": e, "hover": hover});
        let truncated = n > MAX_SELECTION_LISTED || e > MAX_SELECTION_LISTED;
        if params.include_data {
            let data = session.data();
            let render = |kind: ElementKind, ids: &[String]| -> Vec<Value> {
                let collection = data.collection(kind);
                let index = data.id_index(kind);
                ids.iter()
                    .take(MAX_SELECTION_LISTED)
                    .filter_map(|id| {
                        let item = collection.item(*index.get(id)?)?;
                        let value = collection.parse_item(&item).ok()?;
                        let mut cuts = schemascope_core::display::Cuts::default();
                        let shown = schemascope_core::display::shorten(&value, &DisplayLimits::default(), &mut cuts);
                        Some(match item.ends {
                            Some(ends) => json!({"id": id, "source": ends.source, "target": ends.target, "data": shown}),
                            None => json!({"id": id, "data": shown}),
                        })
                    })
                    .collect()
            };
            out["nodes"] = json!(render(ElementKind::Node, &selection.nodes));
            out["edges"] = json!(render(ElementKind::Edge, &selection.edges));
        } else {
            out["nodeIds"] =
                json!(selection.nodes.iter().take(MAX_SELECTION_LISTED).collect::<Vec<_>>());
            out["edgeIds"] =
                json!(selection.edges.iter().take(MAX_SELECTION_LISTED).collect::<Vec<_>>());
        }
        if truncated {
            out["truncated"] = json!(true);
            out["listedLimit"] = json!(MAX_SELECTION_LISTED);
        }
        Ok(Answer::ok(message, out)
            .affecting(Some(selection.nodes.clone()), Some(selection.edges.clone())))
    })()
}

/// `select`: changes the selection by ids or selector.
pub fn select(graphs: &GraphSessions, params: SelectParams) -> Outcome {
    (|| {
        let session = session(graphs, params.source.as_deref())?;
        let data = session.data();
        let (mut nodes, mut edges) = (Vec::new(), Vec::new());
        let mut unknown = Vec::new();
        for id in &params.ids {
            if data.id_index(ElementKind::Node).contains_key(id) {
                nodes.push(id.clone());
            } else if data.id_index(ElementKind::Edge).contains_key(id) {
                edges.push(id.clone());
            } else {
                unknown.push(id.as_str());
            }
        }
        if !unknown.is_empty() {
            let all = data.id_index(ElementKind::Node).keys().map(String::as_str);
            let hint = schemascope_core::suggest::did_you_mean(unknown[0], all);
            return Err(GraphSessionError::InvalidParams(format!(
                "No node or edge has id {}.{hint}",
                unknown.iter().map(|u| format!("`{u}`")).collect::<Vec<_>>().join(", ")
            )));
        }
        if let Some(selector) = &params.selector {
            let kind = if params.elements == ElementsParam::Edges {
                ElementKind::Edge
            } else {
                ElementKind::Node
            };
            let ids = matched_ids(&data, kind, &data.matches(kind, selector)?);
            if ids.is_empty() && params.mode != SelectMode::Clear {
                return Ok(Answer::failed(
                    format!("Nothing matches {}; the selection is unchanged.", code(selector)),
                    json!({"error": "no_match", "selector": selector}),
                ));
            }
            match kind {
                ElementKind::Node => nodes.extend(ids),
                ElementKind::Edge => edges.extend(ids),
            }
        }
        if params.mode != SelectMode::Clear && nodes.is_empty() && edges.is_empty() {
            return Err(GraphSessionError::InvalidParams(
                "give `ids` or a `selector` (or mode `clear`)".into(),
            ));
        }
        let (selection, _) = session.change(|state, _| {
            let before = state.selection.clone();
            state.selection.change(&nodes, &edges, params.mode);
            let parts = if state.selection == before { vec![] } else { vec![Part::Selection] };
            Ok((state.selection.clone(), parts))
        })?;
        let message = if selection.is_empty() {
            "Nothing is selected now.".to_string()
        } else {
            format!(
                "{} and {} selected now.",
                kind_noun(ElementKind::Node, selection.nodes.len()),
                kind_noun(ElementKind::Edge, selection.edges.len())
            )
        };
        Ok(Answer::ok(message, json!({"nodeCount": selection.nodes.len(), "edgeCount": selection.edges.len(), "mode": params.mode}))
            .affecting(Some(nodes), Some(edges)))
    })()
}

/// Refuses a force-directed layout's `iterations` past the operator's ceiling, before any
/// work (other values are checked where the layout reads them).
fn iterations_within_ceiling(options: &Value) -> Result<(), GraphSessionError> {
    let Some(asked) = options.get("iterations").filter(|v| v.is_number()) else {
        return Ok(());
    };
    let ceiling = Ceiling::Iterations.get();
    match asked.as_f64() {
        Some(n) if n.fract() != 0.0 || n < 0.0 => Err(GraphSessionError::InvalidParams(format!(
            "layout option `iterations` is a whole number of steps, not {asked}"
        ))),
        Some(n) if n <= ceiling as f64 => Ok(()),
        _ => Err(CoreError::from(Ceiling::Iterations.past(asked.to_string())).into()),
    }
}

/// `set_layout`: lays the graph out again.
pub fn set_layout(graphs: &GraphSessions, params: SetLayoutParams) -> Outcome {
    (|| {
        iterations_within_ceiling(&params.options)?;
        let session = session(graphs, params.source.as_deref())?;
        // Laid out outside the session lock (change_computed): a long layout keeps no reader
        // waiting, and its call's cancellation stops it.
        let ((layout, iterations), _) = session.change_computed(
            "the layout",
            |snapshot, data| {
                crate::layout::compute(
                    data,
                    params.layout_type,
                    &params.options,
                    snapshot.view.dimension,
                )
            },
            |snapshot, state, _, (positions, settled, options)| {
                if state.view.dimension != snapshot.view.dimension {
                    return Err(GraphSessionError::InvalidParams(format!(
                        "the view switched to {} while the layout was computed for {}; call set_layout again",
                        mode_label(state.view.dimension),
                        mode_label(snapshot.view.dimension)
                    )));
                }
                state.layout = Layout { layout_type: params.layout_type, options, settled };
                state.positions = Arc::new(positions);
                state.view.camera = Camera::preset(
                    crate::view::CameraPreset::FitToGraph,
                    &state.positions.positions,
                    state.view.dimension,
                );
                Ok(((state.layout.clone(), state.positions.iterations), vec![Part::Layout, Part::View]))
            },
        )?;
        let name = serde_json::to_value(layout.layout_type).unwrap_or_default();
        Ok(Answer::ok(
            format!(
                "Layout set to {} ({}).",
                name.as_str().unwrap_or_default(),
                if layout.settled { "settled" } else { "stopped before settling" }
            ),
            json!({"type": layout.layout_type, "options": layout.options, "settled": layout.settled, "iterations": iterations}),
        ))
    })()
}

/// `set_dimension`: 2D or 3D; says so when it already is.
pub fn set_dimension(graphs: &GraphSessions, params: SetDimensionParams) -> Outcome {
    (|| {
        let session = session(graphs, params.source.as_deref())?;
        // Force-directed positions depend on the dimension; the static layouts do not. The new
        // positions are computed outside the session lock (change_computed).
        let (changed, _) = session.change_computed(
            "the layout",
            |snapshot, data| {
                if snapshot.view.dimension == params.dimension {
                    return Ok(None);
                }
                let mut next = snapshot.clone();
                next.view.dimension = params.dimension;
                let relaid = next.layout.layout_type == crate::view::LayoutType::ForceDirected
                    || params.dimension == Dimension::TwoD;
                if relaid {
                    relayout(&mut next, data)?;
                }
                Ok(Some((relaid, next.layout, next.positions)))
            },
            |snapshot, state, _, computed| {
                let Some((relaid, layout, positions)) = computed else {
                    return Ok((false, vec![]));
                };
                if state.view.dimension == params.dimension {
                    return Ok((false, vec![]));
                }
                if state.layout != snapshot.layout {
                    return Err(GraphSessionError::InvalidParams(
                        "the layout was changed while the positions for the new dimension were computed; call set_dimension again".into(),
                    ));
                }
                state.view.dimension = params.dimension;
                let mut parts = vec![Part::View];
                if relaid {
                    state.layout = layout;
                    state.positions = positions;
                    parts.push(Part::Layout);
                }
                state.view.camera = Camera::preset(
                    crate::view::CameraPreset::FitToGraph,
                    &state.positions.positions,
                    state.view.dimension,
                );
                Ok((true, parts))
            },
        )?;
        let mode = mode_label(params.dimension);
        let message = if changed {
            format!("Switched to {mode} mode.")
        } else {
            format!("The graph is already in {mode} mode; nothing changed.")
        };
        Ok(Answer::ok(message, json!({"mode": mode, "changed": changed})))
    })()
}

/// `set_camera`: a preset, or a position and target.
pub fn set_camera(graphs: &GraphSessions, params: SetCameraParams) -> Outcome {
    (|| {
        let session = session(graphs, params.source.as_deref())?;
        if params.preset.is_none() && params.position.is_none() && params.target.is_none() {
            return Err(GraphSessionError::InvalidParams(
                "give a `preset` (fitToGraph, topView, sideView, frontView, isometric) or a `position` and/or `target`".into(),
            ));
        }
        // Bounded, not only finite: the distance between two points near f64::MAX overflows to
        // infinity, and every later camera computation (zoom_to_nodes) to NaN.
        if params
            .position
            .iter()
            .chain(params.target.iter())
            .flatten()
            .any(|x| !x.is_finite() || x.abs() > MAX_COORDINATE)
        {
            return Err(GraphSessionError::InvalidParams(format!(
                "camera coordinates must be finite numbers within ±{MAX_COORDINATE:e}"
            )));
        }
        let (camera, _) = session.change(|state, _| {
            let mut camera = match params.preset {
                Some(preset) => {
                    Camera::preset(preset, &state.positions.positions, state.view.dimension)
                }
                None => Camera { preset: None, ..state.view.camera.clone() },
            };
            if let Some(position) = params.position {
                camera.position = position;
                camera.preset = None;
            }
            if let Some(target) = params.target {
                camera.target = target;
                camera.preset = None;
            }
            state.view.camera = camera.clone();
            Ok((camera, vec![Part::View]))
        })?;
        let what = match camera.preset {
            Some(preset) => format!(
                "preset {}",
                serde_json::to_value(preset).unwrap_or_default().as_str().unwrap_or_default()
            ),
            None => "the given position".to_string(),
        };
        Ok(Answer::ok(
            format!("Camera set to {what}."),
            json!({"position": point(camera.position), "target": point(camera.target), "distance": camera.distance(), "activePreset": camera.preset}),
        ))
    })()
}

/// `zoom_to_nodes`: frames the given nodes.
pub fn zoom_to_nodes(graphs: &GraphSessions, params: ZoomToNodesParams) -> Outcome {
    (|| {
        let session = session(graphs, params.source.as_deref())?;
        let data = session.data();
        let mut ids = params.ids.clone();
        if let Some(selector) = &params.selector {
            ids.extend(matched_ids(
                &data,
                ElementKind::Node,
                &data.matches(ElementKind::Node, selector)?,
            ));
        }
        if ids.is_empty() {
            return Ok(Answer::failed(
                "No nodes to zoom to: give `ids` or a `selector` that matches nodes.",
                json!({"error": "no_match"}),
            ));
        }
        let (camera, _) = session.change(|state, _| {
            let by_id = state.positions.by_id();
            let mut unknown = Vec::new();
            let points: Vec<[f64; 3]> = ids
                .iter()
                .filter_map(|id| {
                    let p = by_id.get(id.as_str()).copied();
                    if p.is_none() {
                        unknown.push(id.clone());
                    }
                    p
                })
                .collect();
            if !unknown.is_empty() {
                let hint =
                    schemascope_core::suggest::did_you_mean(&unknown[0], by_id.keys().copied());
                return Err(GraphSessionError::InvalidParams(format!(
                    "No node has id `{}`.{hint}",
                    unknown[0]
                )));
            }
            state.view.camera = state.view.camera.framing(&points);
            Ok((state.view.camera.clone(), vec![Part::View]))
        })?;
        Ok(Answer::ok(
            format!("Zoomed to {}.", kind_noun(ElementKind::Node, ids.len())),
            json!({"position": point(camera.position), "target": point(camera.target), "distance": camera.distance()}),
        )
        .affecting(Some(ids), None))
    })()
}

/// `list_algorithms`: what can run, what has run, and the properties runs added.
pub fn list_algorithms(graphs: &GraphSessions, params: ListAlgorithmsParams) -> Outcome {
    (|| {
        let session = session(graphs, params.source.as_deref())?;
        let state = session.state();
        let algorithms: Vec<Value> = ALGORITHMS
            .iter()
            .map(|a| {
                json!({
                    "name": format!("{NAMESPACE}:{}", a.algorithm_type), "namespace": NAMESPACE, "type": a.algorithm_type,
                    "description": a.description, "options": a.options,
                    "nodeProperties": a.node_properties.iter().map(|p| algorithms::property_path(a.algorithm_type, p)).collect::<Vec<_>>(),
                    "edgeProperties": a.edge_properties.iter().map(|p| algorithms::property_path(a.algorithm_type, p)).collect::<Vec<_>>(),
                    "graphProperties": a.graph_properties,
                })
            })
            .collect();
        let mut available = AddedProperties::default();
        for output in state.results.values() {
            let (nodes, edges) = algorithms::added_paths(output);
            available.nodes.extend(nodes);
            available.edges.extend(edges);
        }
        let run = state.results.len();
        let stale = state.history.iter().filter(|r| r.stale).count();
        let stale_note = if stale > 0 {
            format!(
                " {stale} earlier run(s) are stale (the data changed since; see `staleReason`): their results are no longer on the elements."
            )
        } else {
            String::new()
        };
        Ok(Answer::ok(
            format!(
                "Found {} available algorithm(s). {run} have current results.{stale_note}",
                ALGORITHMS.len()
            ),
            json!({
                "algorithms": algorithms, "count": ALGORITHMS.len(), "graphDirection": session.data().direction(),
                "history": state.history, "availableDataProperties": available,
            }),
        ))
    })()
}

/// `run_algorithm`: runs an algorithm and writes its results into the graph's elements.
pub fn run_algorithm(graphs: &GraphSessions, params: RunAlgorithmParams) -> Outcome {
    (|| {
        let session = session(graphs, params.source.as_deref())?;
        let namespace = params.namespace.clone().unwrap_or_else(|| NAMESPACE.to_string());
        let info = algorithms::find(&namespace, &params.algorithm_type)?;
        // Run outside the session lock: other clients keep working during a long run.
        let data = session.data();
        let started = std::time::Instant::now();
        let (output, graph_results) = algorithms::run(&data, info, &params.options)?;
        let duration_ms = schemascope_core::figure::millis(started.elapsed());
        let (node_paths, edge_paths) = algorithms::added_paths(&output);
        let run = AlgorithmRun {
            algorithm: format!("{NAMESPACE}:{}", info.algorithm_type),
            namespace: NAMESPACE.into(),
            algorithm_type: info.algorithm_type.into(),
            run_at: now_rfc3339(),
            duration_ms,
            options: if params.options.is_null() { json!({}) } else { params.options.clone() },
            added_properties: AddedProperties {
                nodes: node_paths.clone(),
                edges: edge_paths.clone(),
            },
            graph_results: graph_results.clone(),
            data_fingerprint: output.data_fingerprint.clone(),
            stale: false,
            stale_reason: None,
        };
        let key = output.key();
        // The answer lists at most MAX_AFFECTED of them (`Answer::affecting`).
        let node_ids: Vec<String> = output.node_ids.iter().take(MAX_AFFECTED).cloned().collect();
        let edge_ids: Vec<String> = output.edge_ids.iter().take(MAX_AFFECTED).cloned().collect();
        let output = Arc::new(output);
        let ((), served) = session.change(|state, current| {
            // The file may have been reloaded while the algorithm ran: never store results of
            // data that is no longer served.
            if output.data_fingerprint.as_deref() != Some(current.fingerprint()?.as_str()) {
                return Err(GraphSessionError::InvalidParams(format!(
                    "the graph was reloaded while {} ran, so its results describe data that is gone; run it again",
                    run.algorithm
                )));
            }
            state.results.insert(key.clone(), output.clone());
            state.history.push(run.clone());
            // The oldest runs give way: every list_algorithms answer carries the history.
            let over = state.history.len().saturating_sub(crate::state::MAX_HISTORY);
            state.history.drain(..over);
            Ok(((), vec![Part::Results(key.clone()), Part::History]))
        })?;
        if let Some(source) = served {
            graphs.serve_session_source(source);
        }
        // Nodes and edges can carry a property of the same name (isInPath): say which is which.
        let listed = |kind: &str, paths: &[String]| {
            (!paths.is_empty()).then(|| {
                format!(
                    "{kind} by {}",
                    paths.iter().map(|p| code(p)).collect::<Vec<_>>().join(", ")
                )
            })
        };
        let by: Vec<String> = [listed("nodes", &node_paths), listed("edges", &edge_paths)]
            .into_iter()
            .flatten()
            .collect();
        Ok(Answer::ok(
            format!(
                "Ran {NAMESPACE}:{} ({}) in {} ms; style or select {}.{}{}",
                info.algorithm_type,
                algorithms::direction_phrase(&graph_results),
                schemascope_core::figure::text(duration_ms),
                by.join(" and "),
                algorithms::weight_phrase(&graph_results)
                    + &algorithms::sampling_phrase(&graph_results)
                    + &algorithms::parallel_phrase(&graph_results),
                algorithms::outcome_sentence(&graph_results).unwrap_or_default()
            ),
            json!({"algorithm": run.algorithm, "durationMs": duration_ms, "directed": graph_results.get("directed"), "addedProperties": run.added_properties, "graphResults": graph_results}),
        )
        .affecting((!node_ids.is_empty()).then_some(node_ids), (!edge_ids.is_empty()).then_some(edge_ids)))
    })()
}

/// `arrange_layer`: a person hides, shows or moves a layer in the web view's layer list.
pub fn arrange_layer(graphs: &GraphSessions, params: ArrangeLayerParams) -> Outcome {
    (|| {
        let session = session(graphs, params.source.as_deref())?;
        let (changed, _) = session.change(|state, _| {
            let changed = state.layers.arrange(&params.layer_name, params.action)?;
            Ok((changed, if changed { vec![Part::Layers] } else { vec![] }))
        })?;
        let name = code(&params.layer_name);
        let message = match (changed, params.action) {
            (false, _) => format!("Layer {name} is already so; nothing changed."),
            (true, Arrange::Hide) => {
                format!("Layer {name} is hidden: it styles nothing until shown.")
            }
            (true, Arrange::Show) => format!("Layer {name} is shown again."),
            (true, Arrange::Later) => {
                format!("Layer {name} applies later: it wins over one more layer.")
            }
            (true, Arrange::Earlier) => {
                format!("Layer {name} applies earlier: one more layer wins over it.")
            }
        };
        let state = session.state();
        let order: Vec<&str> = state.layers.layers.iter().map(|l| l.name.as_str()).collect();
        Ok(Answer::ok(message, json!({"changed": changed, "layers": order})))
    })()
}

/// `report_hover`: the web view reports the element under the pointer (describe_selection's
/// `hover`); an id that is no element is refused.
pub fn report_hover(graphs: &GraphSessions, params: ReportHoverParams) -> Outcome {
    (|| {
        let session = session(graphs, params.source.as_deref())?;
        let hover = match params.id {
            None => None,
            Some(id) => {
                let data = session.data();
                let kind = [ElementKind::Node, ElementKind::Edge]
                    .into_iter()
                    .find(|kind| data.id_index(*kind).contains_key(&id))
                    .ok_or_else(|| {
                        GraphSessionError::InvalidParams(format!(
                            "no node or edge has id {}",
                            code(&id.chars().take(100).collect::<String>())
                        ))
                    })?;
                Some(crate::session::Hover { id, element_type: kind })
            }
        };
        let message = match &hover {
            Some(h) => format!("The pointer is on {}.", code(&h.id)),
            None => "The pointer is on no element.".to_string(),
        };
        session.set_hover(hover.clone());
        Ok(Answer::ok(message, json!({"hover": hover})))
    })()
}

/// Longest a `read_scene` call waits for a change (hosts bound an app's calls; 25 s stays well
/// under the usual 60 s).
pub const MAX_SCENE_WAIT_SECONDS: f64 = 25.0;

/// How often a waiting `read_scene` looks at the session's version.
const SCENE_POLL: std::time::Duration = std::time::Duration::from_millis(50);

/// `read_scene`: the scene (what the web view draws), at once, or — given the version the view
/// drew last — when the session next changes, waiting at most `wait_seconds` (then `unchanged`).
/// This is how a view inside a chat client, which reaches the server only through the host's
/// tool calls, stays live.
pub fn read_scene(graphs: &GraphSessions, params: ReadSceneParams) -> Outcome {
    (|| {
        let session = session(graphs, params.source.as_deref())?;
        let wait = params.wait_seconds.unwrap_or(20.0);
        if !(0.0..=MAX_SCENE_WAIT_SECONDS).contains(&wait) {
            return Err(GraphSessionError::InvalidParams(format!(
                "wait_seconds must be between 0 and {MAX_SCENE_WAIT_SECONDS}, not {}",
                schemascope_core::figure::text(wait)
            )));
        }
        if let Some(drawn) = params.since_version {
            let cancel = schemascope_core::cancel::current();
            let until = std::time::Instant::now() + std::time::Duration::from_secs_f64(wait);
            while session.version() == drawn
                && std::time::Instant::now() < until
                && !cancel.is_cancelled()
            {
                std::thread::sleep(SCENE_POLL);
            }
            if session.version() == drawn {
                return Ok(Answer::ok(
                    format!("Unchanged since version {drawn}."),
                    json!({"unchanged": true, "version": drawn}),
                ));
            }
        }
        let scene = crate::scene::scene(&session)?;
        let version = scene.get("version").cloned().unwrap_or(Value::Null);
        Ok(Answer::ok(format!("The scene at version {version}."), scene))
    })()
}

/// `report_viewport`: the web view reports its canvas size (query_graph's `view.viewport`).
pub fn report_viewport(graphs: &GraphSessions, params: ReportViewportParams) -> Outcome {
    (|| {
        if params.width == 0
            || params.height == 0
            || params.width > MAX_VIEWPORT_SIDE
            || params.height > MAX_VIEWPORT_SIDE
        {
            return Err(GraphSessionError::InvalidParams(format!(
                "viewport {}x{} is not a canvas size",
                params.width, params.height
            )));
        }
        let session = session(graphs, params.source.as_deref())?;
        session.change(|state, _| {
            let size = [params.width, params.height];
            if state.view.viewport == Some(size) {
                return Ok(((), vec![]));
            }
            state.view.viewport = Some(size);
            Ok(((), vec![Part::View]))
        })?;
        Ok(Answer::ok(
            format!("Viewport {}x{}.", params.width, params.height),
            json!({"width": params.width, "height": params.height}),
        ))
    })()
}
