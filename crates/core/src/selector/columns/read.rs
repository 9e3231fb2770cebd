//! Reading columns from the items' JSON text: a serde visitor walks each item once, descends
//! only into the fields on a wanted path, skips the rest without allocating, and stores each
//! value as a cell.

use serde::Deserialize;
use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::selector::value::{Cell, ChunkCells, V};

/// The paths to extract as a tree of fields; a node may end a path and lead on to others.
#[derive(Debug, Default)]
pub(super) struct FieldTree {
    children: Vec<(String, FieldTree)>,
    column: Option<usize>,
    /// Every column at or below this node, reset when the node's field is seen (again).
    below: Vec<usize>,
}

impl FieldTree {
    pub(super) fn new(paths: &[super::FieldPath]) -> Self {
        let mut root = FieldTree::default();
        for (column, path) in paths.iter().enumerate() {
            let mut node = &mut root;
            node.below.push(column);
            for field in path {
                let at = match node.children.iter().position(|(name, _)| name == field) {
                    Some(at) => at,
                    None => {
                        node.children.push((field.clone(), FieldTree::default()));
                        node.children.len() - 1
                    }
                };
                node = &mut node.children[at].1;
                node.below.push(column);
            }
            node.column = Some(column);
        }
        root
    }
}

/// The row being filled and the chunk arenas of every column.
struct RowCells {
    row: Vec<Cell>,
    chunks: Vec<ChunkCells>,
}

impl RowCells {
    /// Fills the columns at and below `node` from an already parsed value.
    fn fill_from_value(&mut self, node: &FieldTree, value: &Value) {
        if let Some(column) = node.column {
            self.row[column] = self.chunks[column].cell_of(value);
        }
        for (field, child) in &node.children {
            if let Some(inner) = value.as_object().and_then(|o| o.get(field)) {
                self.fill_from_value(child, inner);
            }
        }
    }
}

/// Fills the columns at and below `node` from the value the deserializer holds.
struct Fill<'t, 'r> {
    node: &'t FieldTree,
    out: &'r mut RowCells,
}

impl<'de> DeserializeSeed<'de> for Fill<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        // A repeated key replaces the earlier value, as in a parsed tree.
        for &column in &self.node.below {
            self.out.row[column] = Cell::Null;
        }
        match self.node.column {
            Some(column) if self.node.children.is_empty() => {
                self.out.row[column] = CellOf { chunk: &mut self.out.chunks[column], lists: true }
                    .deserialize(deserializer)?;
                Ok(())
            }
            // A path and paths below it: parse the value once and read both from it.
            Some(_) => {
                let value = Value::deserialize(deserializer)?;
                self.out.fill_from_value(self.node, &value);
                Ok(())
            }
            None => deserializer.deserialize_any(FieldsVisitor { node: self.node, out: self.out }),
        }
    }
}

/// Reads one value as a cell: scalars inline, strings into the chunk's text; an array as a list
/// of cells at the top (`lists`), as a value when nested (so a list's cells stay contiguous);
/// objects as values.
struct CellOf<'c> {
    chunk: &'c mut ChunkCells,
    lists: bool,
}

impl<'de> DeserializeSeed<'de> for CellOf<'_> {
    type Value = Cell;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Cell, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for CellOf<'_> {
    type Value = Cell;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Cell, E> {
        Ok(Cell::Bool(v))
    }
    // As serde_json's `as_f64`, which the fast path compares with.
    #[allow(clippy::cast_precision_loss)]
    fn visit_i64<E>(self, v: i64) -> Result<Cell, E> {
        Ok(Cell::Num(v as f64))
    }
    #[allow(clippy::cast_precision_loss)]
    fn visit_u64<E>(self, v: u64) -> Result<Cell, E> {
        Ok(Cell::Num(v as f64))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Cell, E> {
        Ok(Cell::Num(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Cell, E> {
        Ok(self.chunk.string(v))
    }
    fn visit_unit<E>(self) -> Result<Cell, E> {
        Ok(Cell::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Cell, A::Error> {
        let chunk = self.chunk;
        if !self.lists {
            let value = Value::deserialize(SeqAccessDeserializer::new(seq))?;
            return Ok(chunk.container(value));
        }
        let at = chunk.elements.len();
        while let Some(cell) = seq.next_element_seed(CellOf { chunk: &mut *chunk, lists: false })? {
            chunk.elements.push(cell);
        }
        Ok(match (u32::try_from(at), u32::try_from(chunk.elements.len() - at)) {
            (Ok(at), Ok(len)) => Cell::List { at, len },
            _ => {
                let items: Vec<Value> = chunk.elements[at..]
                    .iter()
                    .map(|cell| view_value(chunk.cell_view(Some(cell))))
                    .collect();
                chunk.elements.truncate(at);
                chunk.container(Value::Array(items))
            }
        })
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Cell, A::Error> {
        let value = Value::deserialize(MapAccessDeserializer::new(map))?;
        Ok(self.chunk.container(value))
    }
}

/// The value a view shows, rebuilt (only for lists too long for `u32` offsets).
fn view_value(view: V<'_>) -> Value {
    match view {
        V::Null => Value::Null,
        V::Bool(b) => Value::Bool(b),
        V::Num(x) => serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number),
        V::Str(s) => Value::String(s.to_string()),
        V::Container(value) => value.clone(),
        V::List(list) => Value::Array((0..list.len()).map(|i| view_value(list.get(i))).collect()),
    }
}

/// Walks an object's fields, descending into those on a path and skipping the rest.
struct FieldsVisitor<'t, 'r> {
    node: &'t FieldTree,
    out: &'r mut RowCells,
}

impl<'de> Visitor<'de> for FieldsVisitor<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    // Not an object: every path below reads null (already reset).
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(child) = map.next_key_seed(ChildOf(self.node))? {
            match child {
                Some(at) => {
                    map.next_value_seed(Fill { node: &self.node.children[at].1, out: self.out })?
                }
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// Reads an object key as the position of the child it names, without allocating.
struct ChildOf<'t>(&'t FieldTree);

impl<'de> DeserializeSeed<'de> for ChildOf<'_> {
    type Value = Option<usize>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Option<usize>, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for ChildOf<'_> {
    type Value = Option<usize>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an object key")
    }
    fn visit_str<E>(self, key: &str) -> Result<Option<usize>, E> {
        // Keys are short: a byte loop beats a memcmp call per candidate.
        let (key, len) = (key.as_bytes(), key.len());
        Ok(self
            .0
            .children
            .iter()
            .position(|(name, _)| name.len() == len && name.bytes().zip(key).all(|(a, b)| a == *b)))
    }
}

/// One chunk of every column, and the rows of it that did not parse.
pub(super) type BuiltChunk = (Vec<ChunkCells>, Vec<usize>);

pub(super) fn build_chunk<'a>(
    tree: &FieldTree,
    width: usize,
    rows: std::ops::Range<usize>,
    json: &impl Fn(usize) -> &'a str,
) -> BuiltChunk {
    let mut out = RowCells {
        row: vec![Cell::Null; width],
        chunks: (0..width).map(|_| ChunkCells::default()).collect(),
    };
    for chunk in &mut out.chunks {
        chunk.cells.reserve(rows.len());
    }
    let mut unreadable = Vec::new();
    for i in rows {
        let mut deserializer = serde_json::Deserializer::from_str(json(i));
        let read = Fill { node: tree, out: &mut out }
            .deserialize(&mut deserializer)
            .and_then(|()| deserializer.end());
        if read.is_err() {
            unreadable.push(i);
            out.row.fill(Cell::Null);
        }
        for (chunk, cell) in out.chunks.iter_mut().zip(&out.row) {
            chunk.cells.push(*cell);
        }
    }
    (out.chunks, unreadable)
}
