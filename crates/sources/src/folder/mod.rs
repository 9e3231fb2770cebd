//! A directory or a glob of data files (`data/`, `data/*.parquet`) served as one source: each
//! file is loaded as it would be alone (a CSV or Parquet file's rows, a JSON or NDJSON file's
//! documents or records) into one collection named by the file's stem, and the source's SQL is
//! one DataFusion session whose tables are those collections, so that statements join files.
//!
//! A directory is read in name order; only files of a data extension are taken (`.csv`, `.tsv`,
//! `.tab`, `.parquet`, `.pq`, `.json`, `.ndjson`, `.jsonl`). A subdirectory is one table of
//! many files, named by it: the CSV or Parquet files in it or under Hive-style `key=value`
//! directories, whose keys become columns (`partitions.rs`, `tabular/file_set.rs`); a directory
//! that itself holds `key=value` directories is one such table. A file that fails to load is
//! left out with a warning naming it, so one bad file does not take the others down; so is a
//! graph (a graph is a source of its own), a second table of a name already taken, and a link
//! to a file outside the folder.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{LoadWarning, SourceError};
use crate::read::ReadMode;
use crate::source::{Progress, Source};
use crate::spec::{Format, Location, SourceSpec};
use crate::sql::{DataFusionDatabase, ServedTable};

pub(crate) mod partitions;

/// The most files one folder source serves: past it the rest are left out, with a warning.
pub(crate) const MAX_FOLDER_FILES: usize = 1_000;

/// The most files the tables of many files in one folder are made of, together: past it a
/// table is left out whole, with a warning (part of a table would answer for all of it).
pub(crate) const MAX_TABLE_FILES: usize = 10_000;

/// Extensions of the files a directory source takes.
const DATA_EXTENSIONS: &[&str] = &["csv", "tsv", "tab", "parquet", "pq", "json", "ndjson", "jsonl"];

/// Whether `path` names a folder source: an existing directory, or a pattern (`*`, `?`, `[`)
/// in its last part that is not itself an existing file.
pub(crate) fn is_folder(path: &Path) -> bool {
    if path.is_dir() {
        return true;
    }
    let last = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    last.contains(['*', '?', '[']) && !path.exists()
}

fn has_data_extension(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| DATA_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
}

/// The regular files the folder names, in name order, at most [`MAX_FOLDER_FILES`], and the
/// tables of many files its subdirectories hold.
fn files(path: &Path) -> Result<Listed, SourceError> {
    let io = |cause: std::io::Error| SourceError::Io { path: path.to_path_buf(), cause };
    if path.is_dir() && partitions::has_partitions(path) {
        // A partitioned table served by its own directory: one table, named by it.
        let base = std::fs::canonicalize(path).map_err(io)?;
        let name =
            base.file_name().map_or_else(|| "table".into(), |n| n.to_string_lossy().into_owned());
        let set = partitions::file_set(path, name, &base, MAX_TABLE_FILES, &has_data_extension);
        return Ok(Listed { files: Vec::new(), sets: vec![set], more: false, outside: Vec::new() });
    }
    let mut sets = Vec::new();
    let mut linked_dirs = Vec::new();
    let mut found: Vec<PathBuf> = if path.is_dir() {
        let base = std::fs::canonicalize(path).map_err(io)?;
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(io)?
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .collect();
        entries.sort();
        for link in entries.iter().filter(|p| {
            std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink()) && p.is_dir()
        }) {
            linked_dirs.push(link.clone());
        }
        let mut budget = MAX_TABLE_FILES;
        for dir in entries.iter().filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir()))
        {
            let name =
                dir.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            if partitions::is_hidden(&name) {
                continue;
            }
            let set = partitions::file_set(dir, name, &base, budget, &has_data_extension);
            budget = budget.saturating_sub(set.files.len());
            // A directory with nothing of a table in it, and nothing to say, is not one.
            if !set.files.is_empty() || !set.left_out.is_empty() {
                sets.push(set);
            }
        }
        entries.into_iter().filter(|p| has_data_extension(p)).collect()
    } else {
        let pattern = path.to_str().ok_or_else(|| SourceError::InvalidSpec {
            spec: path.display().to_string(),
            reason: "a file pattern must be UTF-8".into(),
        })?;
        glob::glob(pattern)
            .map_err(|e| SourceError::InvalidSpec {
                spec: pattern.to_string(),
                reason: format!("not a file pattern: {e}"),
            })?
            .filter_map(Result::ok)
            .take(MAX_FOLDER_FILES * 4)
            .collect()
    };
    // Regular files only, within the folder: a link is followed only to a file inside it, so a
    // link planted in a served folder cannot serve what lies elsewhere (`pw.csv -> /etc/passwd`).
    let base = if path.is_dir() { path } else { path.parent().unwrap_or(Path::new(".")) };
    let base = std::fs::canonicalize(base).map_err(io)?;
    let mut outside: Vec<(PathBuf, &str)> = linked_dirs
        .into_iter()
        .map(|p| (p, "it is a link to a directory, which is not followed"))
        .collect();
    found.retain(|p| {
        let is_link = std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink());
        if is_link && !std::fs::canonicalize(p).is_ok_and(|target| target.starts_with(&base)) {
            let why = if p.exists() {
                "it is a link to a file outside the folder"
            } else {
                "it is a link to nothing (its target does not exist)"
            };
            outside.push((p.clone(), why));
            return false;
        }
        std::fs::metadata(p).is_ok_and(|m| m.is_file())
    });
    found.sort();
    let more = found.len() > MAX_FOLDER_FILES;
    found.truncate(MAX_FOLDER_FILES);
    Ok(Listed { files: found, sets, more, outside })
}

/// The files a folder serves, and what was left out.
struct Listed {
    files: Vec<PathBuf>,
    /// Its subdirectories' tables of many files.
    sets: Vec<partitions::FileSet>,
    /// More files than [`MAX_FOLDER_FILES`] matched.
    more: bool,
    /// Links left out (outside the folder, to nothing, to a directory), and why.
    outside: Vec<(PathBuf, &'static str)>,
}

/// The table name of a file: its stem, as written.
fn stem(path: &Path) -> String {
    path.file_stem().map_or_else(|| "file".to_string(), |s| s.to_string_lossy().into_owned())
}

/// Loads the folder source `spec` names at `path`: see the module docs.
pub(crate) fn load_folder(
    spec: &SourceSpec,
    path: &Path,
    mode: ReadMode,
    progress: &dyn Progress,
) -> Result<Source, SourceError> {
    let Listed { files, sets, more, outside } = files(path)?;
    if files.is_empty() && sets.is_empty() {
        return Err(SourceError::InvalidSpec {
            spec: spec.text.clone(),
            reason: format!(
                "{} holds no data file ({})",
                path.display(),
                DATA_EXTENSIONS.iter().map(|e| format!(".{e}")).collect::<Vec<_>>().join(", ")
            ),
        });
    }
    let mut collections = Vec::new();
    let mut tables: Vec<ServedTable> = Vec::new();
    let mut warnings: Vec<LoadWarning> = outside
        .iter()
        .map(|(link, why)| LoadWarning::new(format!("{} is left out: {why}", link.display())))
        .collect();
    let mut bytes = 0u64;
    for set in &sets {
        let shown = format!("{}/", set.name);
        if set.files.is_empty() {
            let why = if set.left_out.is_empty() {
                "it holds no data file".to_string()
            } else {
                set.left_out.join("; ")
            };
            warnings.push(LoadWarning::new(format!("{shown} is left out: {why}")));
            continue;
        }
        if tables.iter().any(|t| t.name == set.name) {
            warnings.push(LoadWarning::new(format!(
                "{shown} is left out: a table is already named `{}`",
                set.name
            )));
            continue;
        }
        let sub = SourceSpec { name: set.name.clone(), ..spec.clone() };
        match crate::tabular::read_file_set(&sub, set, mode, progress) {
            Ok(read) => {
                bytes += read.bytes;
                warnings.extend(
                    read.warnings
                        .into_iter()
                        .map(|w| LoadWarning { message: format!("{shown}: {}", w.message), ..w }),
                );
                collections.push(Arc::new(read.collection));
                tables.push(read.table);
            }
            Err(e) => warnings.push(LoadWarning::new(format!("{shown} is left out: {e}"))),
        }
    }
    for file in &files {
        let name = stem(file);
        let shown = file.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        if tables.iter().any(|t| t.name == name) {
            warnings.push(LoadWarning::new(format!(
                "{shown} is left out: a table is already named `{name}`"
            )));
            continue;
        }
        let sub = SourceSpec {
            name: name.clone(),
            location: Location::File { path: file.clone(), format: None },
            text: file.display().to_string(),
            description: None,
            limits: spec.limits,
            ssh: None,
        };
        let loaded = match crate::load::table_format(file, None) {
            Some(format) => crate::tabular::read_table(&sub, file, format, mode, progress)
                .map(|(source, table)| (source, vec![table])),
            None => crate::load::load_with(&sub, progress, mode, None).map(|source| {
                let served =
                    source.collections.iter().filter_map(crate::sql::items_table).collect();
                (source, served)
            }),
        };
        let (source, served) = match loaded {
            Ok(loaded) => loaded,
            Err(e) => {
                warnings.push(LoadWarning::new(format!("{shown} is left out: {e}")));
                continue;
            }
        };
        if source.format == Format::Graph || source.collections.len() != 1 {
            warnings.push(LoadWarning::new(format!(
                "{shown} is left out: it is a graph (serve it as a source of its own)"
            )));
            continue;
        }
        if served.is_empty() {
            warnings.push(LoadWarning::new(format!(
                "{shown} is served without SQL: its items are a sample of a file too large to hold"
            )));
        }
        bytes += source.bytes;
        warnings.extend(
            source
                .warnings
                .into_iter()
                .map(|w| LoadWarning { message: format!("{shown}: {}", w.message), ..w }),
        );
        collections.extend(source.collections);
        tables.extend(served);
    }
    if more {
        warnings.push(LoadWarning::new(format!(
            "only the first {MAX_FOLDER_FILES} files (in name order) are served"
        )));
    }
    if collections.is_empty() {
        return Err(SourceError::InvalidSpec {
            spec: spec.text.clone(),
            reason: format!(
                "no file of {} could be loaded: {}",
                path.display(),
                warnings.iter().map(|w| w.message.as_str()).collect::<Vec<_>>().join("; ")
            ),
        });
    }
    let database = DataFusionDatabase::new(path.display().to_string(), tables)?;
    Ok(Source {
        spec: spec.clone(),
        format: Format::Folder,
        collections,
        warnings,
        // A folder is not watched as one file: each table checks its file when read.
        path: None,
        bytes,
        database: Some(Arc::new(database)),
        aimdb: None,
        direction: None,
    })
}
