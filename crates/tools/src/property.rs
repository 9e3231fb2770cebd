//! describe_property: one property in depth, for a collection or one record's values.

use std::cell::Cell;
use std::sync::Arc;

use schemascope_core::ceilings::Ceiling;
use schemascope_core::property::{
    BinCounter, MAX_LIMIT, PropertyOptions, describe_property_with as describe,
};
use schemascope_core::{CollectionProfile, PropertyPath};
use schemascope_sources::sql::pushdown::{self, TableBins};

use crate::params::DescribePropertyParams;
use crate::resolve;
use crate::result::{ToolError, ToolResult, envelope};
use crate::services::Services;
use crate::sources::CacheKey;

/// A [`BinCounter`] that notes whether its counter failed.
struct FailureWatch<'a> {
    inner: &'a dyn BinCounter,
    failed: Cell<bool>,
}

impl BinCounter for FailureWatch<'_> {
    fn count_bins(
        &self,
        path: &PropertyPath,
        layout: &schemascope_core::profile::numeric::HistogramLayout,
    ) -> Option<Vec<u64>> {
        let counts = self.inner.count_bins(path, layout);
        // A table counts its columns' bins (a path inside a column's documents has none).
        self.failed.set(counts.is_none() && path.depth() == 1);
        counts
    }
}

/// describe_property.
pub fn describe_property(services: &Services, params: DescribePropertyParams) -> ToolResult {
    let key = CacheKey::new(
        "describe_property",
        params.source.as_deref(),
        &[
            &params.property,
            &params.collection,
            &params.record_name,
            &params.limit,
            &params.bins,
            &params.value,
        ],
    );
    services.sources.cached(key, || envelope(run(services, &params)))
}

fn run(services: &Services, params: &DescribePropertyParams) -> Result<ToolResult, ToolError> {
    let source = services.sources.get(params.source.as_deref())?;
    let (collection, implied_record) = resolve::one(&source, params.collection.as_deref())?;
    let record = params.record_name.clone().or(implied_record);
    let path: PropertyPath =
        params.property.parse().map_err(|e: schemascope_core::CoreError| {
            // Written as the data spells a key (`br[0]`, `q"t`): point at the path that names it.
            let names: Vec<String> = collection
                .profile_ready()
                .map(|p| p.properties().iter().map(|p| p.path.to_string()).collect())
                .unwrap_or_default();
            ToolError::InvalidParams(format!(
                "{e}.{}",
                schemascope_core::suggest::did_you_mean(
                    &params.property,
                    names.iter().map(String::as_str)
                )
            ))
        })?;
    if params.bins == Some(0) {
        return Err(ToolError::InvalidParams("`bins` must be at least 1".into()));
    }
    // Chosen bins (at most AUTO_MAX_BINS) are fixed to a lower ceiling instead.
    let ceiling = usize::try_from(Ceiling::Bins.get()).unwrap_or(usize::MAX);
    let bins = match params.bins {
        Some(bins) => Some(Ceiling::Bins.admit_usize(Some(bins), bins)?),
        None if ceiling < schemascope_core::profile::numeric::AUTO_MAX_BINS => Some(ceiling),
        None => None,
    };
    let options = PropertyOptions {
        limit: Ceiling::Limit.admit_usize(params.limit, 20)?.clamp(1, MAX_LIMIT),
        bins,
    };
    // A table the database cannot read here (a SQLite view calling a function of the
    // application that made the file) has no columns to look in: saying a property is not
    // found there would be a guess. With no columns its profile only asks the database for the
    // relation, and a failed one answers why.
    if collection.table().is_some_and(|t| t.columns.is_empty()) {
        services.sources.ready_profile(&source, collection)?;
    }
    // A table not profiled yet: the column as the table's computation finished it already, else
    // profiled just now, alone, inside the database.
    let column_profile: Option<Arc<CollectionProfile>> =
        match (collection.table(), &source.database, collection.profile_ready(), path.last_key()) {
            (Some(table), Some(db), None, Some(column))
                if path.depth() == 1
                    && record.is_none()
                    && table.columns.iter().any(|c| c.name == column) =>
            {
                let finished = collection.profile_progress().partial;
                let column = match finished.filter(|partial| partial.property(&path).is_some()) {
                    Some(partial) => partial,
                    None => Arc::new(pushdown::profile_columns(&**db, table, Some(&[column]))?),
                };
                // The table's profile goes on in the background (once this call's own work was
                // not cancelled): the next call on this table reads its finished columns.
                services.sources.profile_in_background(&source, collection);
                Some(column)
            }
            _ => None,
        };
    let (profile, scope) = match &record {
        Some(name) => {
            let found = resolve::record(&source, Some(collection), name)?;
            (found.profile, format!("{} values", found.key))
        }
        None => (
            column_profile.as_deref().unwrap_or_else(|| collection.profile()),
            collection.name().to_string(),
        ),
    };
    // A table's histogram is counted by its database; items in memory are counted here.
    let bins = match (collection.table(), &source.database) {
        (Some(table), Some(db)) => Some(TableBins { db: &**db, table }),
        _ => None,
    };
    // Counted once for the table's profile (a scan of the whole table each): the next call on
    // the same property — another value looked up, another limit — reuses them. Bins counted
    // for a column profiled just now are not kept, as they describe no kept profile.
    let remembering = match (&bins, column_profile.is_none() && record.is_none()) {
        (Some(bins), true) => Some(collection.bin_memo().remembering(bins)),
        _ => None,
    };
    let counter = match (&remembering, &bins) {
        (Some(remembering), _) => Some(remembering as &dyn BinCounter),
        (None, bins) => bins.as_ref().map(|b| b as &dyn BinCounter),
    };
    let watched = counter.map(|inner| FailureWatch { inner, failed: Cell::new(false) });
    let mut answer =
        describe(profile, &scope, &path, options, watched.as_ref().map(|w| w as &dyn BinCounter));
    // A histogram left out because the database could not count it (unreachable, locked, the
    // file broken since it was profiled) is said to be missing, not silently absent.
    if watched.as_ref().is_some_and(|w| w.failed.get()) {
        answer.data["histogramError"] =
            "the database could not count the histogram just now; try again".into();
        answer.message.push_str(" Its histogram could not be counted in the database just now.");
    }
    // Not here (and not kept out by the path limit): say where it is, so the model can retry.
    if !answer.exists && answer.data.get("profiled").is_none() {
        // A graph's session knows which algorithms ran and whose results were removed since.
        let history = match collection.kind() {
            schemascope_core::CollectionKind::Nodes | schemascope_core::CollectionKind::Edges => {
                services.graphs.history(source.name())
            }
            _ => Vec::new(),
        };
        let found = crate::elsewhere::find(&source, collection, record.as_deref(), &path, &history);
        if !found.places.is_empty() {
            answer.data["elsewhere"] = found.places.into();
        }
        for sentence in found.sentences {
            answer.message.push(' ');
            answer.message.push_str(&sentence);
        }
    }
    if let Some(value) = &params.value {
        let property = profile.property(&path);
        let (found, sentence) = crate::value_lookup::lookup(
            &services.docs,
            &source,
            collection,
            &path,
            property,
            value,
        )?;
        answer.data["valueLookup"] = found;
        answer.message.push(' ');
        answer.message.push_str(&sentence);
    }
    if let Some(name) = &record {
        answer.data["record_name"] = name.clone().into();
        answer.data["collection"] = collection.name().into();
    }
    Ok(ToolResult::ok(answer.message, answer.data))
}
