//! sample_data: a few real items per collection.

use schemascope_core::suggest::did_you_mean;
use serde_json::{Map, Value, json};

use schemascope_core::PropertyPath;
use schemascope_core::ceilings::Ceiling;
use schemascope_core::display::DisplayLimits;
use schemascope_core::sample::{SampleOptions, SampleStrategy, sample};
use schemascope_sources::sql::rows;

use crate::params::{SampleDataParams, StrategyParam};
use crate::resolve;
use crate::result::{ToolError, ToolResult, envelope};
use crate::sources::Sources;

/// sample_data.
pub fn sample_data(sources: &Sources, params: SampleDataParams) -> ToolResult {
    envelope(run(sources, params))
}

fn run(sources: &Sources, params: SampleDataParams) -> Result<ToolResult, ToolError> {
    let source = sources.get(params.source.as_deref())?;
    let mut collections = resolve::many(&source, params.collection.as_deref())?;
    let mut only_id = None;
    if let Some(name) = params.record_name.as_deref() {
        // A record that does not exist is an error with did-you-mean, as in every other tool,
        // never "0 values sampled".
        let within = params.collection.as_ref().and_then(|_| collections.first().cloned());
        let found = resolve::record(&source, within.as_ref(), name)?;
        let (collection, key) = (found.collection.clone(), found.key);
        collections = vec![collection];
        only_id = Some(key);
    } else if let Some(name) = params.collection.as_deref()
        && let Ok((c, Some(record))) = resolve::one(&source, Some(name))
    {
        collections = vec![c.clone()];
        only_id = Some(record);
    }
    let stratify_by: Option<PropertyPath> =
        params.stratify_by.as_deref().map(str::parse).transpose()?;
    let strategy = match (params.strategy, &stratify_by) {
        (Some(StrategyParam::Stratified), None) => {
            return Err(ToolError::InvalidParams(
                "the stratified strategy needs `stratify_by`, e.g. \"type\"".into(),
            ));
        }
        (None | Some(StrategyParam::Stratified), Some(_)) => SampleStrategy::Stratified,
        (Some(StrategyParam::Representative), _) => SampleStrategy::Representative,
        _ => SampleStrategy::Random,
    };
    let count = Ceiling::Count.admit_usize(params.count, 3)?;
    if count == 0 {
        return Err(ToolError::InvalidParams("`count` must be at least 1".into()));
    }
    let limits = DisplayLimits {
        max_string: Ceiling::MaxStringLength.admit_usize(params.max_string_length, 100)?.max(1),
        ..DisplayLimits::default()
    };
    let mut data = Map::new();
    let mut parts = Vec::new();
    let mut info = Map::new();
    let mut depth_limited = 0;
    let every_table = params.collection.is_none() && params.record_name.is_none();
    for collection in &collections {
        // Strata are a property's values: only a stratified sample needs the whole profile.
        let profile = match &stratify_by {
            Some(_) => Some(sources.ready_profile(&source, collection)?),
            None => None,
        };
        if let (Some(path), Some(profile)) = (&stratify_by, profile)
            && profile.property(path).is_none()
        {
            let available: Vec<String> =
                profile.properties().iter().map(|p| p.path.to_string()).collect();
            let hint = did_you_mean(&path.to_string(), available.iter().map(String::as_str));
            return Err(ToolError::InvalidParams(format!(
                "cannot stratify {} by `{path}`: no such property.{hint} Available: {}",
                collection.name(),
                available.into_iter().take(40).collect::<Vec<_>>().join(", ")
            )));
        }
        let seed = params.seed.unwrap_or_else(|| fastrand::u64(..));
        let options = SampleOptions {
            count,
            strategy,
            stratify_by: stratify_by.clone(),
            seed: Some(seed),
            limits,
            only_id: only_id.clone(),
        };
        let sampled = match (collection.table(), &source.database) {
            // A table's rows stay in its database: sample from a bounded pool of them.
            (Some(table), Some(db)) => {
                let strata: Option<(String, Vec<Value>)> = stratify_by.as_ref().and_then(|path| {
                    let top = profile?.property(path)?;
                    let values = top
                        .strings
                        .iter()
                        .flat_map(|s| &s.top)
                        .chain(top.numbers.iter().flat_map(|n| &n.top))
                        .map(|v| v.value.clone())
                        .collect();
                    Some((path.last_key()?.to_string(), values))
                });
                let pool = match rows::sample_pool(
                    &**db,
                    table,
                    collection.len() as u64,
                    seed,
                    strata.as_ref().map(|(c, v)| (c.as_str(), v.as_slice())),
                ) {
                    Ok(pool) => pool,
                    // Sampling every table: one this connection cannot read (a view calling a
                    // function of the application that made the file) is named with its
                    // reason, and the others are sampled.
                    Err(error) if every_table && error.class().is_lasting() => {
                        let reason = error.to_string();
                        parts.push(format!("no rows of {} ({reason})", collection.name()));
                        info.insert(collection.name().to_string(), json!({ "error": reason }));
                        continue;
                    }
                    Err(error) => return Err(error.into()),
                };
                sample(&pool, &options)?
            }
            _ => sample(collection, &options)?,
        };
        parts.push(match collection.sample_of() {
            // A file profiled by streaming: say the documents come from its kept sample.
            Some(total) => format!(
                "{} (from a uniform sample of {} kept of the file's {})",
                collection.kind().counted(sampled.items.len() as u64),
                collection.len(),
                total
            ),
            None => collection.kind().counted(sampled.items.len() as u64),
        });
        depth_limited += sampled.depth_limited;
        info.insert(
            collection.name().to_string(),
            json!({
                "strategy": sampled.strategy,
                "seed": sampled.seed,
                "strata": sampled.strata,
                "pathsCovered": sampled.paths_covered.map(|(c, t)| json!({"covered": c, "total": t})),
                "truncatedStrings": sampled.truncated_strings,
                "depthLimited": sampled.depth_limited,
                "of": collection.item_count(),
                // A file profiled by streaming holds a uniform sample: this one is drawn from it.
                "drawnFrom": collection.sample_of().map(|_| collection.len()),
            }),
        );
        data.insert(collection.name().to_string(), Value::Array(sampled.items));
    }
    data.insert("sampling".into(), Value::Object(info));
    Ok(ToolResult::ok(
        format!(
            "Sampled {}.{}",
            parts.join(" and "),
            schemascope_core::display::depth_cut_sentence(depth_limited)
        ),
        Value::Object(data),
    ))
}
