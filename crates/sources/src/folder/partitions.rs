//! Tables of many files in a served folder, as Spark, Hive, DuckDB and pyarrow write them: a
//! directory whose data files lie in it or under `key=value` directories
//! (`orders/year=2024/month=1/part-0.parquet`) is one table, and each key is a column whose
//! value in a row is the one its file's directory names.
//!
//! A value is percent-decoded as Hive escapes it; `__HIVE_DEFAULT_PARTITION__` and an empty
//! value are null. A key's column is an integer when every value is one as JSON writes it
//! (no sign, no leading zero: `month=01` stays the text `01`, a zip code keeps its zero),
//! otherwise text. Names that begin with `.` or `_` (`_SUCCESS`, `_delta_log`, `.crc` files)
//! are a writer's bookkeeping and are skipped, as those tools skip them. A file whose keys are
//! not the table's (another order, one level more or less) is left out with a warning.

use std::path::{Path, PathBuf};

/// Deepest chain of `key=value` directories followed.
const MAX_PARTITION_DEPTH: usize = 16;

/// Most directory entries looked at while finding one table's files.
const MAX_ENTRIES: usize = 100_000;

/// The value Hive writes for a null partition key.
const HIVE_NULL: &str = "__HIVE_DEFAULT_PARTITION__";

/// The `key=value` directories a file lies under, outermost first (a value `None`: null).
type Chain = Vec<(String, Option<String>)>;

/// A table made of the data files under one directory.
#[derive(Debug)]
pub(crate) struct FileSet {
    /// The table's name: the directory's.
    pub name: String,
    /// The directory.
    pub dir: PathBuf,
    /// The partition keys, outermost first (none for a directory of plain files).
    pub keys: Vec<String>,
    /// Their columns' types.
    pub types: Vec<KeyType>,
    /// The files, in path order.
    pub files: Vec<PartFile>,
    /// Why entries were left out, for the load's warnings.
    pub left_out: Vec<String>,
}

/// One file of a [`FileSet`].
#[derive(Debug)]
pub(crate) struct PartFile {
    pub path: PathBuf,
    /// Its path below the table's directory, `/`-separated: part of its rows' ids.
    pub relative: String,
    /// Per key, the decoded value (`None`: null).
    pub values: Vec<Option<String>>,
}

/// The type of a partition key's column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyType {
    Integer,
    Text,
}

/// A partition value as its column holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum KeyValue<'a> {
    Null,
    Integer(i64),
    Text(&'a str),
}

impl KeyType {
    /// The value `raw` in a column of this type (`raw` is an integer when the type is).
    pub(crate) fn value<'a>(self, raw: Option<&'a str>) -> KeyValue<'a> {
        match (self, raw) {
            (_, None) => KeyValue::Null,
            (KeyType::Integer, Some(text)) => {
                integer(text).map_or(KeyValue::Text(text), KeyValue::Integer)
            }
            (KeyType::Text, Some(text)) => KeyValue::Text(text),
        }
    }
}

/// `text` as an integer when JSON would write that integer so and a double holds it exactly.
fn integer(text: &str) -> Option<i64> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    let canonical = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'))
        && text != "-0";
    let value: i64 = if canonical { text.parse().ok()? } else { return None };
    (value.unsigned_abs() <= 1 << 53).then_some(value)
}

/// `name` split as a partition directory's `key=value`, both percent-decoded.
pub(crate) fn key_value(name: &str) -> Option<(String, Option<String>)> {
    let (key, value) = name.split_once('=')?;
    if key.is_empty() {
        return None;
    }
    let value = decode(value);
    let value = (!value.is_empty() && value != HIVE_NULL).then_some(value);
    Some((decode(key), value))
}

/// Hive's escaping undone: `%XX` is the byte XX. Left as written when the bytes are not UTF-8.
fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(high), Some(low)) => {
                out.push((high * 16 + low) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_string())
}

/// A writer's bookkeeping, not data.
pub(crate) fn is_hidden(name: &str) -> bool {
    name.starts_with('.') || name.starts_with('_')
}

/// Whether the directory `dir` holds a partition directory (`key=value`) directly.
pub(crate) fn has_partitions(dir: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else { return false };
    entries.filter_map(Result::ok).take(MAX_ENTRIES).any(|entry| {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        !is_hidden(&name)
            && key_value(&name).is_some()
            && entry.file_type().is_ok_and(|t| t.is_dir())
    })
}

/// The table the directory `dir` holds, named `name`: its data files (those `is_data` takes)
/// directly in it or under `key=value` directories; `base` is the served folder, outside which
/// no link is followed. Its files are none when it holds none, or more than `max_files` (or
/// more than [`MAX_ENTRIES`] entries): part of a table would answer as if for all of it, so
/// such a table is not served at all, and `left_out` says why.
pub(crate) fn file_set(
    dir: &Path,
    name: String,
    base: &Path,
    max_files: usize,
    is_data: &dyn Fn(&Path) -> bool,
) -> FileSet {
    let mut set = FileSet {
        name,
        dir: dir.to_path_buf(),
        keys: Vec::new(),
        types: Vec::new(),
        files: Vec::new(),
        left_out: Vec::new(),
    };
    let mut found: Vec<(PathBuf, Chain)> = Vec::new();
    let mut pending: Vec<(PathBuf, Chain)> = vec![(dir.to_path_buf(), Vec::new())];
    let mut seen = 0usize;
    let mut more = false;
    while let Some((at, chain)) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&at) else {
            set.left_out.push(format!("{} is left out: it cannot be read", relative_to(dir, &at)));
            continue;
        };
        let mut entries: Vec<_> = entries.filter_map(Result::ok).take(MAX_ENTRIES).collect();
        entries.sort_by_key(|e| e.file_name());
        let mut dirs = Vec::new();
        for entry in entries {
            seen += 1;
            if seen > MAX_ENTRIES {
                more = true;
                break;
            }
            let file_name = entry.file_name();
            let entry_name = file_name.to_string_lossy();
            if is_hidden(&entry_name) {
                continue;
            }
            let path = entry.path();
            let Ok(link) = std::fs::symlink_metadata(&path) else { continue };
            if link.file_type().is_symlink() && path.is_dir() {
                set.left_out.push(format!(
                    "{} is left out: a link to a directory is not followed",
                    relative_to(dir, &path)
                ));
                continue;
            }
            if link.is_dir() {
                match key_value(&entry_name) {
                    Some(_) if chain.len() >= MAX_PARTITION_DEPTH => set.left_out.push(format!(
                        "{} is left out: partitions nest at most {MAX_PARTITION_DEPTH} levels deep",
                        relative_to(dir, &path)
                    )),
                    Some(pair) => {
                        let mut deeper = chain.clone();
                        deeper.push(pair);
                        dirs.push((path, deeper));
                    }
                    None => set.left_out.push(format!(
                        "{} is left out: a directory inside a table is read only as a `key=value` partition",
                        relative_to(dir, &path)
                    )),
                }
                continue;
            }
            if !is_data(&path) {
                continue;
            }
            if link.file_type().is_symlink() {
                let inside =
                    std::fs::canonicalize(&path).is_ok_and(|target| target.starts_with(base));
                if !inside || !std::fs::metadata(&path).is_ok_and(|m| m.is_file()) {
                    set.left_out.push(format!(
                        "{} is left out: it is a link to something outside the folder or not a file",
                        relative_to(dir, &path)
                    ));
                    continue;
                }
            } else if !link.is_file() {
                continue;
            }
            if found.len() >= max_files {
                more = true;
                continue;
            }
            found.push((path, chain.clone()));
        }
        // Depth first, in name order: the stack takes the last pushed first.
        pending.extend(dirs.into_iter().rev());
    }
    if more {
        set.left_out.push(format!(
            "it holds more data files than the {max_files} left to read (a folder's tables of many files are read up to {} files together) or more than {MAX_ENTRIES} directory entries, and part of a table would answer as if for all of it: serve its subdirectories as sources of their own",
            super::MAX_TABLE_FILES
        ));
        return set;
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    // The table's keys are those most of its files lie under (the first such, on a tie).
    let chains: Vec<Vec<&str>> =
        found.iter().map(|(_, chain)| chain.iter().map(|(k, _)| k.as_str()).collect()).collect();
    let Some(most) = chains.iter().max_by_key(|c| {
        (
            chains.iter().filter(|other| other == c).count(),
            std::cmp::Reverse(chains.iter().position(|o| o == *c)),
        )
    }) else {
        return set;
    };
    let keys: Vec<String> = most.iter().map(|k| k.to_string()).collect();
    for (path, chain) in found {
        let relative = relative_to(dir, &path);
        let its_keys: Vec<&str> = chain.iter().map(|(k, _)| k.as_str()).collect();
        if its_keys != keys.iter().map(String::as_str).collect::<Vec<_>>() {
            set.left_out.push(format!(
                "{relative} is left out: its partition keys ({}) are not the table's ({})",
                shown(&its_keys),
                shown(&keys.iter().map(String::as_str).collect::<Vec<_>>())
            ));
            continue;
        }
        let mut distinct = its_keys.clone();
        distinct.sort_unstable();
        distinct.dedup();
        if distinct.len() != its_keys.len() {
            set.left_out
                .push(format!("{relative} is left out: a partition key repeats in its path"));
            continue;
        }
        set.files.push(PartFile {
            path,
            relative,
            values: chain.into_iter().map(|(_, v)| v).collect(),
        });
    }
    if set.files.is_empty() {
        return set;
    }
    set.types = (0..keys.len())
        .map(|k| {
            let all_integers = set
                .files
                .iter()
                .filter_map(|f| f.values.get(k).and_then(Option::as_deref))
                .all(|v| integer(v).is_some());
            if all_integers { KeyType::Integer } else { KeyType::Text }
        })
        .collect();
    set.keys = keys;
    set
}

/// `path` below `dir`, `/`-separated, as messages and row ids show it.
fn relative_to(dir: &Path, path: &Path) -> String {
    path.strip_prefix(dir)
        .map_or_else(|_| path.display().to_string(), |r| r.to_string_lossy().replace('\\', "/"))
}

fn shown(keys: &[&str]) -> String {
    if keys.is_empty() { "none".into() } else { keys.join(", ") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_of_more_files_than_it_may_read_is_left_out_whole() {
        let dir = tempfile::tempdir().expect("tempdir");
        for day in 1..=4 {
            let part = dir.path().join(format!("day={day}"));
            std::fs::create_dir(&part).expect("mkdir");
            std::fs::write(part.join("a.csv"), "n\n1\n").expect("write");
        }
        let data = |p: &Path| p.extension().is_some_and(|e| e == "csv");
        let whole = file_set(dir.path(), "t".into(), dir.path(), 4, &data);
        assert_eq!((whole.files.len(), whole.keys.clone()), (4, vec!["day".to_string()]));
        let cut = file_set(dir.path(), "t".into(), dir.path(), 3, &data);
        assert!(cut.files.is_empty());
        assert!(
            cut.left_out[0].contains("part of a table would answer as if for all of it"),
            "{:?}",
            cut.left_out
        );
    }

    #[test]
    fn partition_names_are_decoded_and_typed_as_json_writes_them() {
        assert_eq!(key_value("year=2024"), Some(("year".into(), Some("2024".into()))));
        assert_eq!(
            key_value("city=S%C3%A3o%20Paulo"),
            Some(("city".into(), Some("São Paulo".into())))
        );
        assert_eq!(key_value("a%3Db=x%2Fy"), Some(("a=b".into(), Some("x/y".into()))));
        assert_eq!(key_value("k=__HIVE_DEFAULT_PARTITION__"), Some(("k".into(), None)));
        assert_eq!(key_value("k="), Some(("k".into(), None)));
        assert_eq!(key_value("=v"), None);
        assert_eq!(key_value("plain"), None);
        // A lone or broken escape stays as written.
        assert_eq!(key_value("k=100%"), Some(("k".into(), Some("100%".into()))));
        assert_eq!(key_value("k=%ff"), Some(("k".into(), Some("%ff".into()))));
        assert_eq!(integer("2024"), Some(2024));
        assert_eq!(integer("-7"), Some(-7));
        assert_eq!(integer("0"), Some(0));
        for text in ["01", "+1", "-0", "1.0", "", "-", "1e3", "9007199254740993"] {
            assert_eq!(integer(text), None, "{text}");
        }
        assert_eq!(KeyType::Integer.value(Some("12")), KeyValue::Integer(12));
        assert_eq!(KeyType::Text.value(Some("12")), KeyValue::Text("12"));
        assert_eq!(KeyType::Integer.value(None), KeyValue::Null);
    }
}
