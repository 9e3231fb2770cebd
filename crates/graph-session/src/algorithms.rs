//! The algorithms a session can run, what each writes (`algorithmResults.<namespace>.<type>.<name>`
//! on nodes and edges, plus graph-level values), and running one over the session's graph.

use crate::style::ElementKind;
use schemascope_graph::{
    GraphData, LouvainMethod, LouvainOptions, PageRankOptions, betweenness_centrality,
    betweenness_centrality_sampled, closeness_centrality, clustering, connected_components,
    degrees, louvain_communities, minimum_spanning_tree, pagerank, shortest_path,
    strongly_connected_components,
};
use serde_json::{Map, Value, json};
use std::collections::HashMap;

use schemascope_core::figure;

use crate::data::{RESULTS_ROOT, SessionData};
use crate::error::GraphSessionError;
use crate::state::AlgorithmOutput;

/// The namespace of the built-in algorithms.
pub const NAMESPACE: &str = "schemascope";

/// One algorithm: its type name, what it does, what it writes, the options it takes.
#[derive(Debug, Clone, Copy)]
pub struct AlgorithmInfo {
    /// Type name (`pagerank`).
    pub algorithm_type: &'static str,
    /// One line for the LLM.
    pub description: &'static str,
    /// Names written on every node.
    pub node_properties: &'static [&'static str],
    /// Names written on every edge.
    pub edge_properties: &'static [&'static str],
    /// Graph-level values.
    pub graph_properties: &'static [&'static str],
    /// Options it accepts.
    pub options: &'static [&'static str],
    /// Whether edge direction changes its results (then it follows the graph's own direction
    /// unless the `directed` option says otherwise).
    pub direction_matters: bool,
}

/// Every algorithm, in the order list_algorithms shows them.
pub const ALGORITHMS: &[AlgorithmInfo] = &[
    AlgorithmInfo {
        algorithm_type: "degree",
        description: "Edges per node (in, out, total) and each as a percentage of the maximum; in and out follow the graph's direction (equal to degree when undirected).",
        node_properties: &[
            "degree",
            "inDegree",
            "outDegree",
            "degreePct",
            "inDegreePct",
            "outDegreePct",
        ],
        edge_properties: &[],
        graph_properties: &["maxDegree"],
        options: &["directed"],
        direction_matters: true,
    },
    AlgorithmInfo {
        algorithm_type: "pagerank",
        description: "Importance by PageRank (sums to 1) and as a percentage of the highest.",
        node_properties: &["rank", "rankPct"],
        edge_properties: &[],
        graph_properties: &["iterations", "converged"],
        options: &["directed", "weight", "alpha"],
        direction_matters: true,
    },
    AlgorithmInfo {
        algorithm_type: "betweenness",
        description: "How often a node lies on shortest paths between others (normalised), and as a percentage of the highest. Exact by default (a BFS from every node); on a large graph {\"k\": 500} estimates it from 500 random sources (pivots) in a fraction of the time, with the estimates' standard errors stated (seed: which pivots).",
        node_properties: &["score", "scorePct"],
        edge_properties: &[],
        graph_properties: &["sampled", "pivots", "seed", "standardErrorMax", "standardErrorMean"],
        options: &["directed", "weight", "k", "seed"],
        direction_matters: true,
    },
    AlgorithmInfo {
        algorithm_type: "closeness",
        description: "Inverse mean distance to the reachable nodes, and as a percentage of the highest.",
        node_properties: &["score", "scorePct"],
        edge_properties: &[],
        graph_properties: &[],
        options: &["directed", "weight"],
        direction_matters: true,
    },
    AlgorithmInfo {
        algorithm_type: "components",
        description: "Connected components numbered from 0 by first node (weakly connected if directed), and when directed also strongly connected components.",
        node_properties: &["componentId", "strongComponentId"],
        edge_properties: &[],
        graph_properties: &["componentCount", "strongComponentCount"],
        options: &["directed"],
        direction_matters: true,
    },
    AlgorithmInfo {
        algorithm_type: "louvain",
        description: "Communities by Louvain modularity optimisation. By default refined (networkit's PLM with Leiden's split of communities, repeated while it gains): on large graphs a higher modularity than networkx's louvain_communities (0.30 against 0.244 on 100k nodes), on small ones about the same (either may win by a little), and fast. {\"method\": \"networkx\"} runs networkx's method instead (local moves until none, no refinement). Options seed (the visiting order; default 0), resolution (default 1).",
        node_properties: &["communityId"],
        edge_properties: &[],
        graph_properties: &["communityCount", "modularity", "method"],
        options: &["directed", "weight", "seed", "resolution", "method"],
        direction_matters: true,
    },
    AlgorithmInfo {
        algorithm_type: "clustering",
        description: "Local clustering coefficient (share of a node's neighbour pairs that are linked).",
        node_properties: &["coefficient"],
        edge_properties: &[],
        graph_properties: &["averageClustering"],
        options: &["directed"],
        direction_matters: true,
    },
    AlgorithmInfo {
        algorithm_type: "shortestPath",
        description: "Dijkstra from `source`: distance of every node, and the nodes and edges on one shortest path to `target`.",
        node_properties: &["distance", "isInPath"],
        edge_properties: &["isInPath"],
        graph_properties: &["reachable", "pathLength", "hops"],
        options: &["source", "target", "directed", "weight"],
        direction_matters: true,
    },
    AlgorithmInfo {
        algorithm_type: "minimumSpanningTree",
        description: "Kruskal's minimum spanning forest: which edges are in it.",
        node_properties: &[],
        edge_properties: &["inMST"],
        graph_properties: &["totalWeight"],
        options: &["weight"],
        direction_matters: false,
    },
];

/// The algorithm called `namespace:type`, or an error listing what exists.
pub fn find(
    namespace: &str,
    algorithm_type: &str,
) -> Result<&'static AlgorithmInfo, GraphSessionError> {
    let all = || {
        ALGORITHMS
            .iter()
            .map(|a| format!("{NAMESPACE}:{}", a.algorithm_type))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if namespace != NAMESPACE {
        return Err(GraphSessionError::InvalidParams(format!(
            "unknown algorithm namespace `{namespace}`; the algorithms are: {}",
            all()
        )));
    }
    ALGORITHMS.iter().find(|a| a.algorithm_type.eq_ignore_ascii_case(algorithm_type)).ok_or_else(
        || {
            let hint = schemascope_core::suggest::did_you_mean(
                algorithm_type,
                ALGORITHMS.iter().map(|a| a.algorithm_type),
            );
            GraphSessionError::InvalidParams(format!(
                "unknown algorithm `{namespace}:{algorithm_type}`.{hint} The algorithms are: {}",
                all()
            ))
        },
    )
}

/// The property path an algorithm's value `name` is written at.
pub fn property_path(algorithm_type: &str, name: &str) -> String {
    format!("{RESULTS_ROOT}.{NAMESPACE}.{algorithm_type}.{name}")
}

fn option_str<'a>(
    options: &'a Map<String, Value>,
    key: &str,
) -> Result<Option<&'a str>, GraphSessionError> {
    match options.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(GraphSessionError::InvalidParams(format!(
            "option `{key}` must be a string, not {other}"
        ))),
    }
}

fn option_f64(options: &Map<String, Value>, key: &str) -> Result<Option<f64>, GraphSessionError> {
    match options.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v.as_f64().filter(|f| f.is_finite()).map(Some).ok_or_else(|| {
            GraphSessionError::InvalidParams(format!("option `{key}` must be a number, not {v}"))
        }),
    }
}

/// Each value as a percentage of the highest, to 6 significant digits (a computed share, as
/// every percentage shown).
fn pct(values: &[f64]) -> Vec<Value> {
    let max = values.iter().copied().fold(0.0f64, f64::max);
    crate::data::parallel_map(values.len(), |i| {
        figure::exact_json(figure::percent_of(values[i], max))
    })
}

/// Percentages computed elsewhere (of a maximum, so 100 is exact) to 6 significant digits.
fn shares(percentages: &[f64]) -> Vec<Value> {
    percentages.iter().map(|&p| figure::exact_json(figure::percent_of(p, 100.0))).collect()
}

/// Computed scores (ranks, centralities, distances) without their float noise: the sums and
/// quotients behind them end in digits no input had (`0.30000000000000004`), which a model
/// would read as data (see `figure::STAT_DIGITS`).
fn numbers(values: &[f64]) -> Vec<Value> {
    crate::data::parallel_map(values.len(), |i| figure::stat_json(values[i]))
}

/// Runs `info` with `options` over the session's graph; returns the per-element values and the
/// graph-level ones.
pub fn run(
    data: &SessionData,
    info: &AlgorithmInfo,
    options: &Value,
) -> Result<(AlgorithmOutput, Value), GraphSessionError> {
    let options = match options {
        Value::Null => Map::new(),
        Value::Object(map) => map.clone(),
        other => {
            return Err(GraphSessionError::InvalidParams(format!(
                "`options` must be an object, not {other}"
            )));
        }
    };
    if let Some(unknown) = options.keys().find(|k| !info.options.contains(&k.as_str())) {
        let accepted =
            if info.options.is_empty() { "none".to_string() } else { info.options.join(", ") };
        return Err(GraphSessionError::InvalidParams(format!(
            "`{}` takes no option `{unknown}`; its options: {accepted}",
            info.algorithm_type
        )));
    }
    let (directed, basis) = match options.get("directed") {
        None | Some(Value::Null) => match data.direction() {
            Some(d) => (d.directed, DirectedBasis::Graph(d.basis)),
            None => (false, DirectedBasis::Unknown),
        },
        Some(Value::Bool(b)) => (*b, DirectedBasis::Option),
        Some(other) => {
            return Err(GraphSessionError::InvalidParams(format!(
                "option `directed` must be true or false, not {other}"
            )));
        }
    };
    // Direction is meaningless to an algorithm that ignores it; saying "directed" there would be false.
    let (directed, basis) =
        if info.direction_matters { (directed, basis) } else { (false, DirectedBasis::Ignored) };
    let weight = option_str(&options, "weight")?;
    if let Some(weight) = weight {
        check_weight(data, info, weight)?;
    }
    let (output, mut graph) = if weight.is_some() {
        interruptible(info.algorithm_type, || {
            run_on(data, info, &options, &data.build_graph(weight, directed), true)
        })??
    } else {
        interruptible(info.algorithm_type, || {
            run_on(data, info, &options, &data.graph_as(directed), false)
        })??
    };
    if let Value::Object(map) = &mut graph {
        map.insert("directed".into(), json!(directed));
        map.insert("directedBasis".into(), json!(basis.label()));
        // Which weight was used, or none: a weighted graph run unweighted must say so.
        if info.options.contains(&"weight") {
            map.insert("weight".into(), json!(weight));
            if weight.is_none()
                && let Some(unused) = weight_like_property(data)
            {
                map.insert("unusedWeight".into(), json!(unused));
            }
        }
    }
    Ok((output, graph))
}

/// An edge property holding numbers and named like a weight (`weight`, `Weight`), which an
/// unweighted run leaves out.
fn weight_like_property(data: &SessionData) -> Option<String> {
    let profile = data.collection(ElementKind::Edge).profile();
    profile
        .properties()
        .into_iter()
        .filter(|p| p.numbers.is_some() && !p.path.is_under_array())
        .map(|p| p.path.to_string())
        .find(|path| {
            let last = path.rsplit('.').next().unwrap_or(path).to_ascii_lowercase();
            matches!(last.as_str(), "weight" | "weights" | "w" | "strength" | "capacity")
        })
}

/// What a sampled run estimated, for its message: how many sources, and the stated error.
pub fn sampling_phrase(graph_results: &Value) -> String {
    if graph_results.get("sampled") != Some(&Value::Bool(true)) {
        return String::new();
    }
    let figure = |key: &str| {
        graph_results.get(key).and_then(Value::as_f64).map_or("unknown".into(), figure::text)
    };
    format!(
        " Estimated from {} sampled source nodes (seed {}): standard error of a score at most {} (mean {}); run without `k` for exact scores.",
        graph_results.get("pivots").and_then(Value::as_u64).unwrap_or(0),
        graph_results.get("seed").and_then(Value::as_u64).unwrap_or(0),
        figure("standardErrorMax"),
        figure("standardErrorMean"),
    )
}

/// How a run's graph results say it treated edge weights, for its message: ` Weighted by
/// `weight`.`, or that an edge property like a weight was not used.
pub fn weight_phrase(graph_results: &Value) -> String {
    match (graph_results.get("weight"), graph_results.get("unusedWeight").and_then(Value::as_str)) {
        (Some(Value::String(w)), _) => {
            format!(" Weighted by {}.", schemascope_core::display::code(w))
        }
        (Some(Value::Null), Some(unused)) => format!(
            " Unweighted: the edges' {} was not used (pass {{\"weight\": \"{unused}\"}} to use it).",
            schemascope_core::display::code(unused)
        ),
        (Some(Value::Null), None) => " Unweighted.".to_string(),
        _ => String::new(),
    }
}

/// How often a long run says how far it got.
const REPORT_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// Runs `work` (graph algorithms; `what` names it in progress lines) with the call's
/// cancellation token as their stop flag: a cancelled call stops them between steps, and their
/// results, cut short, are dropped here. While it runs — on a thread of its own — this thread
/// reports how far it got every second (`schemascope_core::progress`).
pub fn interruptible<T: Send>(
    what: &str,
    work: impl FnOnce() -> T + Send,
) -> Result<T, GraphSessionError> {
    use schemascope_graph::interrupt;
    use std::sync::mpsc::RecvTimeoutError;
    let cancel = schemascope_core::cancel::current();
    let steps = std::sync::Arc::new(interrupt::Steps::default());
    let started = std::time::Instant::now();
    let result = std::thread::scope(|scope| {
        let (done, finished) = std::sync::mpsc::sync_channel(1);
        let (flag, counted) = (cancel.flag(), std::sync::Arc::clone(&steps));
        let worker = scope.spawn(move || {
            let _ = done.send(interrupt::with(flag, || interrupt::with_steps(counted, work)));
        });
        loop {
            match finished.recv_timeout(REPORT_EVERY) {
                Ok(result) => break result,
                Err(RecvTimeoutError::Timeout) => {
                    schemascope_core::progress::report(progress_line(what, &steps, started));
                }
                // The worker ended without a result: it panicked; its panic goes on here.
                Err(RecvTimeoutError::Disconnected) => {
                    std::panic::resume_unwind(worker.join().err().unwrap_or_else(|| {
                        Box::new("the algorithm's thread ended without a result")
                    }))
                }
            }
        }
    });
    cancel.check().map_err(|cancelled| {
        GraphSessionError::Core(schemascope_core::CoreError::Cancelled {
            reason: cancelled.reason,
            done: format!(
                "{what} was cut short after {}; nothing was saved. A client that takes long calls as tasks waits for it to finish; on a large graph, betweenness takes `k` to sample that many sources",
                how_far(&steps, started)
            ),
        })
    })?;
    Ok(result)
}

/// Fails unless the edges' `weight` is a number wherever it is set (an edge without one weighs
/// 1, as in networkx) and, but for the spanning tree, never negative: a text weight would
/// otherwise weigh 1 everywhere and a negative one break the algorithms' sums and searches.
fn check_weight(
    data: &SessionData,
    info: &AlgorithmInfo,
    weight: &str,
) -> Result<(), GraphSessionError> {
    let edges = data.collection(ElementKind::Edge);
    let profile = edges.profile();
    let path = weight.parse().unwrap_or_default();
    let Some(property) = profile.property(&path) else {
        let known: Vec<String> = profile.properties().iter().map(|p| p.path.to_string()).collect();
        let hint =
            schemascope_core::suggest::did_you_mean(weight, known.iter().map(String::as_str));
        return Err(GraphSessionError::InvalidParams(format!(
            "option `weight`: the edges have no property `{weight}`.{hint} (see describe_schema for edges)"
        )));
    };
    let numbers = property.numbers.as_ref().map_or(0, |n| n.count);
    let set = property.non_null();
    if numbers < set {
        return Err(GraphSessionError::InvalidParams(format!(
            "option `weight`: {} of the {set} edges with a `{weight}` have one that is not a number (it is {}); a weight must be a number",
            set - numbers,
            property.data_type().name()
        )));
    }
    if let Some(n) = &property.numbers
        && n.min < 0.0
        && info.algorithm_type != "minimumSpanningTree"
    {
        return Err(GraphSessionError::InvalidParams(format!(
            "option `weight`: {} needs weights of 0 or more, and the least `{weight}` is {}",
            info.algorithm_type,
            figure::text(n.min)
        )));
    }
    Ok(())
}

/// " 3 edges repeat the ends of an earlier edge: …" when the graph merged a multigraph's edges.
pub fn parallel_phrase(graph_results: &Value) -> String {
    match graph_results.get("parallelEdges").and_then(Value::as_u64) {
        Some(n) if n > 0 => format!(
            " {n} edge(s) repeat the ends of an earlier edge: as in networkx's Graph, each pair of ends is one edge, with the last one's weight (marks go to that one)."
        ),
        _ => String::new(),
    }
}

/// "betweenness: 12000 of 50000 sources searched (24%), 9 s".
fn progress_line(
    what: &str,
    steps: &schemascope_graph::interrupt::Steps,
    started: std::time::Instant,
) -> String {
    format!("{what}: {}", how_far(steps, started))
}

/// "12000 of 50000 sources searched (24%), 9 s": how far a run got since `started`.
fn how_far(steps: &schemascope_graph::interrupt::Steps, started: std::time::Instant) -> String {
    let seconds = started.elapsed().as_secs();
    match steps.now() {
        (_, _, "") => format!("running, {seconds} s"),
        (done, 0, unit) => format!("{done} {unit}, {seconds} s"),
        (done, total, unit) => {
            let percent = (done as f64 / total as f64 * 100.0).floor();
            format!("{done} of {total} {unit} ({percent}%), {seconds} s")
        }
    }
}

/// What decided whether an algorithm ran directed.
#[derive(Debug, Clone, Copy)]
enum DirectedBasis {
    /// The `directed` option.
    Option,
    /// The graph's own direction.
    Graph(schemascope_sources::DirectionBasis),
    /// The source carries no direction.
    Unknown,
    /// The algorithm ignores direction.
    Ignored,
}

/// What a run found that its figures alone would not say: a shortest path that does not exist.
pub fn outcome_sentence(graph_results: &Value) -> Option<String> {
    if graph_results.get("reachable") != Some(&Value::Bool(false)) {
        return None;
    }
    let id =
        |key: &str| graph_results.get(key).and_then(Value::as_str).unwrap_or_default().to_string();
    Some(format!(
        " There is no path from {} to {}: no node is on a path (`isInPath` is false everywhere), and `distance` is null for every node {} cannot reach.",
        schemascope_core::display::code(&id("source")),
        schemascope_core::display::code(&id("target")),
        schemascope_core::display::code(&id("source")),
    ))
}

/// How a run's graph results say it treated direction, for its message: `directed, from the
/// file's `directed` flag`.
pub fn direction_phrase(graph_results: &Value) -> String {
    let directed = graph_results.get("directed").and_then(Value::as_bool).unwrap_or(false);
    let why = match graph_results.get("directedBasis").and_then(Value::as_str).unwrap_or_default() {
        "option" => "as the `directed` option asked",
        "fileFlag" => "from the file's `directed` flag",
        "nodeLinkDefault" => "a node-link file without a `directed` flag, read as networkx does",
        "edgeEnds" => "the file has no `directed` flag; each edge goes from source to target",
        "ignoredByAlgorithm" => "this algorithm ignores direction",
        _ => "the source does not say",
    };
    format!("{}, {why}", if directed { "directed" } else { "undirected" })
}

impl DirectedBasis {
    fn label(self) -> &'static str {
        match self {
            Self::Option => "option",
            Self::Graph(schemascope_sources::DirectionBasis::FileFlag) => "fileFlag",
            Self::Graph(schemascope_sources::DirectionBasis::NodeLinkDefault) => "nodeLinkDefault",
            Self::Graph(schemascope_sources::DirectionBasis::EdgeEnds) => "edgeEnds",
            Self::Unknown => "unknown",
            Self::Ignored => "ignoredByAlgorithm",
        }
    }
}

fn run_on(
    data: &SessionData,
    info: &AlgorithmInfo,
    options: &Map<String, Value>,
    g: &GraphData,
    weighted: bool,
) -> Result<(AlgorithmOutput, Value), GraphSessionError> {
    let mut nodes: Vec<(String, Vec<Value>)> = Vec::new();
    let mut edges: Vec<(String, Vec<Value>)> = Vec::new();
    let mut graph = json!({});
    match info.algorithm_type {
        "degree" => {
            let d = degrees(g);
            let ints = |v: &[usize]| v.iter().map(|&x| json!(x)).collect::<Vec<_>>();
            let max = d.degree.iter().copied().max().unwrap_or(0);
            nodes = vec![
                ("degree".into(), ints(&d.degree)),
                ("inDegree".into(), ints(&d.in_degree)),
                ("outDegree".into(), ints(&d.out_degree)),
                // Shares of the maximum, shown as every percentage is (6 significant digits).
                ("degreePct".into(), shares(&d.degree_pct)),
                ("inDegreePct".into(), shares(&d.in_degree_pct)),
                ("outDegreePct".into(), shares(&d.out_degree_pct)),
            ];
            graph = json!({"maxDegree": max});
        }
        "pagerank" => {
            let alpha = option_f64(options, "alpha")?.unwrap_or(0.85);
            if !(0.0..1.0).contains(&alpha) {
                return Err(GraphSessionError::InvalidParams(format!(
                    "option `alpha` must be in [0, 1), not {alpha}"
                )));
            }
            let pr =
                pagerank(g, &PageRankOptions { alpha, weighted, ..PageRankOptions::default() });
            nodes = vec![("rank".into(), numbers(&pr.scores)), ("rankPct".into(), pct(&pr.scores))];
            graph = json!({"iterations": pr.iterations, "converged": pr.converged});
        }
        "betweenness" => {
            let n = g.node_count();
            let k = match option_f64(options, "k")? {
                None => None,
                Some(k) if k >= 1.0 && k.fract() == 0.0 => Some(k as usize),
                Some(k) => {
                    return Err(GraphSessionError::InvalidParams(format!(
                        "option `k` is the number of source nodes to sample, a whole number of at least 1, not {k}"
                    )));
                }
            };
            let seed = option_f64(options, "seed")?.map_or(0, |s| s.abs() as u64);
            let scores = match k {
                Some(k) if k < n => {
                    let sampled = betweenness_centrality_sampled(g, weighted, k, seed);
                    let errors: Vec<f64> =
                        sampled.standard_errors.iter().copied().filter(|e| e.is_finite()).collect();
                    let max = errors.iter().copied().fold(0.0, f64::max);
                    let mean = errors.iter().sum::<f64>() / errors.len().max(1) as f64;
                    graph = json!({
                        "sampled": true, "pivots": k, "seed": seed,
                        "standardErrorMax": if errors.is_empty() { Value::Null } else { figure::stat_json(max) },
                        "standardErrorMean": if errors.is_empty() { Value::Null } else { figure::stat_json(mean) },
                    });
                    sampled.scores
                }
                _ => {
                    graph = json!({"sampled": false});
                    betweenness_centrality(g, weighted)
                }
            };
            nodes = vec![("score".into(), numbers(&scores)), ("scorePct".into(), pct(&scores))];
        }
        "closeness" => {
            let scores = closeness_centrality(g, weighted);
            nodes = vec![("score".into(), numbers(&scores)), ("scorePct".into(), pct(&scores))];
        }
        "components" => {
            let c = connected_components(g);
            nodes =
                vec![("componentId".into(), c.component_id.iter().map(|&x| json!(x)).collect())];
            graph = json!({"componentCount": c.component_count});
            // Undirected, strong and weak are the same partition; writing both would only repeat it.
            if g.directed {
                let strong = strongly_connected_components(g);
                nodes.push((
                    "strongComponentId".into(),
                    strong.component_id.iter().map(|&x| json!(x)).collect(),
                ));
                graph["strongComponentCount"] = json!(strong.component_count);
            }
        }
        "louvain" => {
            let seed = option_f64(options, "seed")?.map(|s| s as u64);
            let resolution = option_f64(options, "resolution")?;
            let mut opts = LouvainOptions { weighted, ..LouvainOptions::default() };
            if let Some(seed) = seed {
                opts.seed = seed;
            }
            if let Some(resolution) = resolution {
                opts.resolution = resolution;
            }
            let method = option_str(options, "method")?.unwrap_or("refined");
            opts.method = match method {
                "refined" => LouvainMethod::Refined,
                "networkx" => LouvainMethod::Networkx,
                other => {
                    return Err(GraphSessionError::InvalidParams(format!(
                        "option `method` must be \"refined\" or \"networkx\", not \"{other}\""
                    )));
                }
            };
            let c = louvain_communities(g, &opts);
            nodes =
                vec![("communityId".into(), c.community_id.iter().map(|&x| json!(x)).collect())];
            graph = json!({"communityCount": c.community_count, "modularity": figure::stat_json(c.modularity), "method": method});
        }
        "clustering" => {
            let c = clustering(g);
            nodes = vec![("coefficient".into(), numbers(&c.coefficient))];
            graph = json!({"averageClustering": figure::stat_json(c.average)});
        }
        "shortestPath" => {
            let (Some(from), Some(to)) =
                (option_str(options, "source")?, option_str(options, "target")?)
            else {
                return Err(GraphSessionError::InvalidParams(
                    "`shortestPath` needs options `source` and `target` (node ids)".into(),
                ));
            };
            let path = shortest_path(g, from, to).map_err(|e| {
                let hint = match &e {
                    schemascope_graph::GraphError::UnknownNode(id) => {
                        schemascope_core::suggest::did_you_mean(
                            id,
                            g.node_ids.iter().map(String::as_str),
                        )
                    }
                    _ => String::new(),
                };
                GraphSessionError::InvalidParams(format!("shortestPath: {e}.{hint}"))
            })?;
            nodes = vec![
                (
                    "distance".into(),
                    path.distance
                        .iter()
                        .map(|d| d.map_or(Value::Null, figure::stat_json))
                        .collect(),
                ),
                ("isInPath".into(), path.is_in_path.iter().map(|&b| json!(b)).collect()),
            ];
            let on_path: std::collections::HashSet<(usize, usize)> = path
                .path
                .windows(2)
                .map(|w| if g.directed || w[0] <= w[1] { (w[0], w[1]) } else { (w[1], w[0]) })
                .collect();
            edges = vec![(
                "isInPath".into(),
                edge_flags(data, g, g.directed, |u, v| on_path.contains(&(u, v))),
            )];
            // Without a path there are no hops: `null`, not 0, which would read as a path of
            // one node.
            let reachable = path.total.is_some();
            graph = json!({
                "source": from,
                "target": to,
                "reachable": reachable,
                "pathLength": path.total.map(figure::stat_json),
                "hops": reachable.then(|| path.path.len().saturating_sub(1)),
                "path": path.path.iter().map(|&i| &g.node_ids[i]).collect::<Vec<_>>(),
            });
        }
        "minimumSpanningTree" => {
            let mst = minimum_spanning_tree(g);
            let chosen: std::collections::HashSet<(usize, usize)> = g
                .edges
                .iter()
                .zip(&mst.in_mst)
                .filter(|(_, in_mst)| **in_mst)
                .map(|(&(u, v, _), _)| if u <= v { (u, v) } else { (v, u) })
                .collect();
            edges =
                vec![("inMST".into(), edge_flags(data, g, false, |u, v| chosen.contains(&(u, v))))];
            graph = json!({"totalWeight": figure::stat_json(mst.total_weight)});
        }
        other => {
            return Err(GraphSessionError::InvalidParams(format!(
                "algorithm `{other}` has no implementation"
            )));
        }
    }
    let node_ids = if nodes.is_empty() { Vec::new() } else { g.node_ids.clone() };
    if g.stats.duplicate_edges > 0
        && let Value::Object(map) = &mut graph
    {
        // A multigraph's repeated edges are one edge here, as in networkx's Graph: say so.
        map.insert("parallelEdges".into(), json!(g.stats.duplicate_edges));
    }
    let edge_ids = if edges.is_empty() {
        Vec::new()
    } else {
        data.collection(ElementKind::Edge).items().map(|i| i.id.to_string()).collect()
    };
    Ok((
        AlgorithmOutput {
            namespace: NAMESPACE.into(),
            algorithm_type: info.algorithm_type.into(),
            node_ids,
            node_columns: nodes,
            edge_ids,
            edge_columns: edges,
            data_fingerprint: Some(data.fingerprint()?),
        },
        graph,
    ))
}

/// One flag per edge item (in item order), asking `on(u, v)` with the endpoints' node indices,
/// smaller first unless `directed`.
fn edge_flags(
    data: &SessionData,
    g: &GraphData,
    directed: bool,
    on: impl Fn(usize, usize) -> bool,
) -> Vec<Value> {
    let ends: Vec<Option<(usize, usize)>> = data
        .collection(ElementKind::Edge)
        .items()
        .map(|item| {
            let (u, v) =
                item.ends.and_then(|e| Some((g.index_of(e.source)?, g.index_of(e.target)?)))?;
            Some(if directed { (u, v) } else { (u.min(v), u.max(v)) })
        })
        .collect();
    // Of edges with the same ends (a multigraph's), the graph kept the last one's weight: only
    // that one is the edge the algorithm used.
    let mut last: HashMap<(usize, usize), usize> = HashMap::new();
    for (index, pair) in ends.iter().enumerate() {
        if let Some(pair) = pair {
            last.insert(*pair, index);
        }
    }
    ends.iter()
        .enumerate()
        .map(|(index, pair)| {
            json!(pair.is_some_and(|(u, v)| last.get(&(u, v)) == Some(&index) && on(u, v)))
        })
        .collect()
}

/// The property paths an output adds, for list_algorithms.
pub fn added_paths(output: &AlgorithmOutput) -> (Vec<String>, Vec<String>) {
    let paths = |columns: &[(String, Vec<Value>)]| {
        columns.iter().map(|(name, _)| property_path(&output.algorithm_type, name)).collect()
    };
    (paths(&output.node_columns), paths(&output.edge_columns))
}
