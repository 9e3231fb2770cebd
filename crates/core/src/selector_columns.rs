//! Selector columns: the values fast-path selectors read, extracted once per property path
//! straight from the items' JSON text into compact cells. Evaluating many selectors over a large
//! collection then reads a few contiguous arrays per item instead of building and walking a
//! parsed tree per item, and a path read by several selectors (or by a later one) is extracted
//! once. Only the paths' own values are materialised; everything else in an item is skipped by
//! the parser without allocating.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::Deserialize;
use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use jmespath::ast::Comparator;

use crate::fast_selector::{Fast, Row, Step, V, compare, contains, float_eq, truthy, walk};
use crate::selector::Selector;

/// Rows per chunk: columns are built a chunk per task and stored chunk by chunk.
const CHUNK_SHIFT: u32 = 12;
const CHUNK_ROWS: usize = 1 << CHUNK_SHIFT;

/// The object fields a column holds, from the item's root (`["metrics", "latency"]`); a
/// selector path's index steps (`tags[0]`) are applied to the column's values when it is read.
pub type FieldPath = Vec<String>;

/// One item's value at a path: scalars inline, strings and containers in the chunk's arenas.
#[derive(Debug, Clone, Copy)]
enum Cell {
    Null,
    Bool(bool),
    Num(f64),
    Str {
        at: u32,
        len: u32,
    },
    Container(u32),
    /// An array of scalars and containers: `len` cells from `at` in the chunk's `elements`, so
    /// the usual small arrays (`tags`) cost no allocation per item.
    List {
        at: u32,
        len: u32,
    },
}

/// One chunk of one column.
#[derive(Debug, Default)]
struct ChunkCells {
    cells: Vec<Cell>,
    text: String,
    containers: Vec<Value>,
    elements: Vec<Cell>,
}

/// An array held as cells, as a selector sees it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ListView<'a> {
    chunk: &'a ChunkCells,
    at: usize,
    len: usize,
}

impl<'a> ListView<'a> {
    /// How many elements.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Whether it has no elements.
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Element `i` (null past the end).
    pub(crate) fn get(&self, i: usize) -> V<'a> {
        if i >= self.len { V::Null } else { self.chunk.cell_view(self.chunk.elements.get(self.at + i)) }
    }

    /// The element a JMESPath index names (negative from the end).
    fn index(&self, i: i32) -> Option<V<'a>> {
        let i = if i >= 0 { usize::try_from(i).ok()? } else { self.len.checked_sub(i.unsigned_abs() as usize)? };
        (i < self.len).then(|| self.get(i))
    }
}

impl ChunkCells {
    fn string(&mut self, s: &str) -> Cell {
        // Chunks are bounded by rows, not bytes: a chunk holding more than 4 GiB of strings keeps
        // the rest as containers' worth of owned values instead of overflowing the offsets.
        match (u32::try_from(self.text.len()), u32::try_from(s.len())) {
            (Ok(at), Ok(len)) if self.text.len().checked_add(s.len()).is_some_and(|end| u32::try_from(end).is_ok()) => {
                self.text.push_str(s);
                Cell::Str { at, len }
            }
            _ => self.container(Value::String(s.to_string())),
        }
    }

    fn container(&mut self, value: Value) -> Cell {
        self.containers.push(value);
        Cell::Container(u32::try_from(self.containers.len() - 1).unwrap_or(u32::MAX))
    }

    fn cell_of(&mut self, value: &Value) -> Cell {
        match value {
            Value::Null => Cell::Null,
            Value::Bool(b) => Cell::Bool(*b),
            Value::Number(n) => n.as_f64().map_or(Cell::Null, Cell::Num),
            Value::String(s) => self.string(s),
            Value::Array(_) | Value::Object(_) => self.container(value.clone()),
        }
    }

    fn view(&self, offset: usize) -> V<'_> {
        self.cell_view(self.cells.get(offset))
    }

    fn cell_view(&self, cell: Option<&Cell>) -> V<'_> {
        match cell {
            None | Some(Cell::Null) => V::Null,
            Some(Cell::Bool(b)) => V::Bool(*b),
            Some(Cell::Num(x)) => V::Num(*x),
            Some(Cell::Str { at, len }) => V::Str(self.text.get(*at as usize..*at as usize + *len as usize).unwrap_or_default()),
            Some(Cell::Container(i)) => {
                self.containers.get(*i as usize).map_or(V::Null, |value| if value.is_string() { V::of(value) } else { V::Container(value) })
            }
            Some(Cell::List { at, len }) => V::List(ListView { chunk: self, at: *at as usize, len: *len as usize }),
        }
    }
}

impl ChunkCells {
    /// Whether the cell at `offset` is truthy.
    fn truth(&self, offset: usize) -> Truth {
        match self.cells.get(offset) {
            None | Some(Cell::Null | Cell::Bool(false)) => Truth::False,
            Some(Cell::Str { len, .. } | Cell::List { len, .. }) => Truth::from(*len > 0),
            Some(Cell::Container(_)) => Truth::of(self.view(offset)),
            Some(_) => Truth::True,
        }
    }

    /// `cell <comparator> constant` (`constant <comparator> cell` when `flipped`) for every
    /// cell, in one tight loop, for number and string constants; `None` for other constants.
    fn compare(&self, comparator: &Comparator, constant: V<'_>, flipped: bool) -> Option<Vec<Truth>> {
        let equality = matches!(comparator, Comparator::Equal | Comparator::NotEqual);
        match constant {
            V::Num(x) => Some(
                self.cells
                    .iter()
                    .map(|cell| match cell {
                        Cell::Num(v) => {
                            let (a, b) = if flipped { (x, *v) } else { (*v, x) };
                            Truth::from(match comparator {
                                Comparator::Equal => float_eq(a, b),
                                Comparator::NotEqual => !float_eq(a, b),
                                Comparator::LessThan => a < b,
                                Comparator::LessThanEqual => a <= b,
                                Comparator::GreaterThan => a > b,
                                Comparator::GreaterThanEqual => a >= b,
                            })
                        }
                        // Not a number: never equal, and unordered (null, which is falsy).
                        _ => Truth::from(matches!(comparator, Comparator::NotEqual)),
                    })
                    .collect(),
            ),
            V::Str(s) if equality => Some(
                (0..self.cells.len())
                    .map(|i| {
                        let same = match self.cells[i] {
                            Cell::Str { at, len } => {
                                len as usize == s.len() && self.text.as_bytes().get(at as usize..at as usize + len as usize) == Some(s.as_bytes())
                            }
                            Cell::Container(_) => matches!(self.view(i), V::Str(t) if t == s),
                            _ => false,
                        };
                        Truth::from(same == matches!(comparator, Comparator::Equal))
                    })
                    .collect(),
            ),
            _ => None,
        }
    }
}

/// One field path's values for every item of a collection, as the item's JSON text gives them.
#[derive(Debug)]
pub struct PathColumn {
    path: FieldPath,
    chunks: Vec<ChunkCells>,
    /// Items whose JSON text did not parse (sorted); they match no selector, as with parsed items.
    unreadable: Vec<usize>,
}

/// The paths to extract as a tree of fields; a node may end a path and lead on to others.
#[derive(Debug, Default)]
struct FieldTree {
    children: Vec<(String, FieldTree)>,
    column: Option<usize>,
    /// Every column at or below this node, reset when the node's field is seen (again).
    below: Vec<usize>,
}

impl FieldTree {
    fn new(paths: &[FieldPath]) -> Self {
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
                self.out.row[column] = CellOf { chunk: &mut self.out.chunks[column], lists: true }.deserialize(deserializer)?;
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

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
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
                let items: Vec<Value> = chunk.elements[at..].iter().map(|cell| view_value(chunk.cell_view(Some(cell)))).collect();
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

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
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
                Some(at) => map.next_value_seed(Fill { node: &self.node.children[at].1, out: self.out })?,
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

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an object key")
    }
    fn visit_str<E>(self, key: &str) -> Result<Option<usize>, E> {
        // Keys are short: a byte loop beats a memcmp call per candidate.
        let (key, len) = (key.as_bytes(), key.len());
        Ok(self.0.children.iter().position(|(name, _)| name.len() == len && name.bytes().zip(key).all(|(a, b)| a == *b)))
    }
}

/// One chunk of every column, and the rows of it that did not parse.
type BuiltChunk = (Vec<ChunkCells>, Vec<usize>);

fn build_chunk<'a>(tree: &FieldTree, width: usize, rows: std::ops::Range<usize>, json: &impl Fn(usize) -> &'a str) -> BuiltChunk {
    let mut out = RowCells { row: vec![Cell::Null; width], chunks: (0..width).map(|_| ChunkCells::default()).collect() };
    for chunk in &mut out.chunks {
        chunk.cells.reserve(rows.len());
    }
    let mut unreadable = Vec::new();
    for i in rows {
        let mut deserializer = serde_json::Deserializer::from_str(json(i));
        let read = Fill { node: tree, out: &mut out }.deserialize(&mut deserializer).and_then(|()| deserializer.end());
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

impl PathColumn {
    /// Extracts the columns of `paths` (in that order) for items `0..n`, whose JSON text
    /// `json(i)` gives, on all cores; one parse of each item serves every path.
    pub fn build<'a>(paths: &[FieldPath], n: usize, json: impl Fn(usize) -> &'a str + Sync) -> Vec<PathColumn> {
        let tree = FieldTree::new(paths);
        let built = on_all_cores(n.div_ceil(CHUNK_ROWS), |k| build_chunk(&tree, paths.len(), chunk_rows(k, n), &json));
        let mut columns: Vec<PathColumn> =
            paths.iter().map(|path| PathColumn { path: path.clone(), chunks: Vec::with_capacity(built.len()), unreadable: Vec::new() }).collect();
        for (chunks, unreadable) in built {
            for (column, chunk) in columns.iter_mut().zip(chunks) {
                column.chunks.push(chunk);
                column.unreadable.extend(&unreadable);
            }
        }
        columns
    }

    /// The field path this column holds.
    pub fn path(&self) -> &FieldPath {
        &self.path
    }

    /// How many items the column covers.
    pub fn len(&self) -> usize {
        self.chunks.iter().map(|c| c.cells.len()).sum()
    }

    /// Whether the column covers no items.
    pub fn is_empty(&self) -> bool {
        self.chunks.iter().all(|c| c.cells.is_empty())
    }

    fn view(&self, row: usize) -> V<'_> {
        self.chunks.get(row >> CHUNK_SHIFT).map_or(V::Null, |chunk| chunk.view(row & (CHUNK_ROWS - 1)))
    }
}

/// The rows of chunk `k` of `n` rows.
fn chunk_rows(k: usize, n: usize) -> std::ops::Range<usize> {
    k * CHUNK_ROWS..((k + 1) * CHUNK_ROWS).min(n)
}

/// `task(0..count)` on all cores, results in order; tasks are handed out one at a time so a slow
/// one does not hold up a whole share.
fn on_all_cores<T: Send>(count: usize, task: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let results: Mutex<Vec<Option<T>>> = Mutex::new((0..count).map(|_| None).collect());
    let next = AtomicUsize::new(0);
    let work = || {
        loop {
            let k = next.fetch_add(1, Ordering::Relaxed);
            if k >= count {
                break;
            }
            let result = task(k);
            results.lock().unwrap_or_else(std::sync::PoisonError::into_inner)[k] = Some(result);
        }
    };
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get).min(count);
    if threads <= 1 {
        work();
    } else {
        std::thread::scope(|scope| {
            for _ in 1..threads {
                scope.spawn(work);
            }
            work();
        });
    }
    results.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner).into_iter().flatten().collect()
}

/// Evaluates fast-path selectors on their columns on all cores: `inputs[s]` holds selector
/// `s`'s columns in the order of its [`Selector::column_paths`]. Per selector and item: `Some`
/// whether it matches, or `None` where the fast path cannot decide and the jmespath crate must
/// ([`Selector::matches_json`]). Selectors not on the fast path get `None` everywhere.
pub fn evaluate(selectors: &[&Selector], inputs: &[Vec<&PathColumn>], n: usize) -> Vec<Vec<Option<bool>>> {
    let chunks = on_all_cores(n.div_ceil(CHUNK_ROWS), |k| {
        let rows = chunk_rows(k, n);
        selectors
            .iter()
            .zip(inputs)
            .map(|(selector, columns)| {
                let Some(fast) = selector.fast_form() else { return vec![None; rows.len()] };
                let chunk = ChunkEval { columns, chunk: k, first_row: rows.start, rows: rows.len() };
                let mut truths = chunk.truths(fast);
                // An item whose text did not parse matches nothing, as with parsed items.
                for column in columns.iter() {
                    for row in column.unreadable.iter().filter(|row| rows.contains(row)) {
                        truths[row - rows.start] = Truth::False;
                    }
                }
                truths.into_iter().map(Truth::decided).collect()
            })
            .collect::<Vec<Vec<Option<bool>>>>()
    });
    let mut out: Vec<Vec<Option<bool>>> = selectors.iter().map(|_| Vec::with_capacity(n)).collect();
    for chunk in chunks {
        for (all, part) in out.iter_mut().zip(chunk) {
            all.extend(part);
        }
    }
    out
}

/// A row's answer while a chunk is evaluated.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Truth {
    False,
    True,
    /// The jmespath crate must decide (e.g. it reports an error).
    Undecided,
}

impl From<bool> for Truth {
    fn from(hit: bool) -> Self {
        if hit { Truth::True } else { Truth::False }
    }
}

impl Truth {
    fn of(value: V<'_>) -> Self {
        Truth::from(truthy(value))
    }

    fn decided(self) -> Option<bool> {
        match self {
            Truth::False => Some(false),
            Truth::True => Some(true),
            Truth::Undecided => None,
        }
    }
}

/// An operand of a comparison, resolved for one chunk.
enum Operand<'a> {
    Constant(V<'a>),
    /// A column's cells as they are (the path has no index steps).
    Cells(&'a ChunkCells),
    /// A path read row by row (index steps into a column's values).
    Rows {
        id: usize,
        steps: &'a [Step],
    },
}

/// One chunk of rows, evaluated a node at a time: the boolean structure (`&&`, `||`, `!`) on
/// per-row truths — exact, since a match only asks whether the result is truthy — and
/// comparisons of paths and literals in tight loops over the cells.
struct ChunkEval<'a> {
    columns: &'a [&'a PathColumn],
    chunk: usize,
    first_row: usize,
    rows: usize,
}

impl<'a> ChunkEval<'a> {
    fn operand(&self, node: &'a Fast) -> Option<Operand<'a>> {
        match node {
            Fast::Literal(value) => Some(Operand::Constant(V::of(value))),
            Fast::Path { id, steps } => {
                let column = self.columns.get(*id)?;
                if steps.len() == column.path.len() {
                    column.chunks.get(self.chunk).map(Operand::Cells)
                } else {
                    Some(Operand::Rows { id: *id, steps })
                }
            }
            _ => None,
        }
    }

    fn at(&self, operand: &Operand<'a>, offset: usize) -> V<'a> {
        match operand {
            Operand::Constant(value) => *value,
            Operand::Cells(chunk) => chunk.view(offset),
            Operand::Rows { id, steps } => ColumnRow { columns: self.columns, row: self.first_row + offset }.path(*id, steps),
        }
    }

    fn truths(&self, node: &'a Fast) -> Vec<Truth> {
        let both =
            |l: &'a Fast, r: &'a Fast, f: fn(Truth, Truth) -> Truth| self.truths(l).into_iter().zip(self.truths(r)).map(|(a, b)| f(a, b)).collect();
        match node {
            Fast::And(l, r) => both(l, r, |a, b| if a == Truth::True { b } else { a }),
            Fast::Or(l, r) => both(l, r, |a, b| if a == Truth::False { b } else { a }),
            Fast::Not(inner) => self
                .truths(inner)
                .into_iter()
                .map(|t| match t {
                    Truth::False => Truth::True,
                    Truth::True => Truth::False,
                    Truth::Undecided => Truth::Undecided,
                })
                .collect(),
            Fast::Path { .. } | Fast::Literal(_) => match self.operand(node) {
                Some(Operand::Cells(chunk)) => (0..self.rows).map(|i| chunk.truth(i)).collect(),
                Some(operand) => (0..self.rows).map(|i| Truth::of(self.at(&operand, i))).collect(),
                None => self.row_by_row(node),
            },
            Fast::Compare(comparator, l, r) => match (self.operand(l), self.operand(r)) {
                (Some(Operand::Cells(chunk)), Some(Operand::Constant(constant))) if let Some(truths) = chunk.compare(comparator, constant, false) => {
                    truths
                }
                (Some(Operand::Constant(constant)), Some(Operand::Cells(chunk))) if let Some(truths) = chunk.compare(comparator, constant, true) => {
                    truths
                }
                (Some(l), Some(r)) => (0..self.rows).map(|i| Truth::of(compare(comparator, self.at(&l, i), self.at(&r, i)))).collect(),
                _ => self.row_by_row(node),
            },
            Fast::Contains(subject, search) => match (self.operand(subject), self.operand(search)) {
                (Some(s), Some(n)) => (0..self.rows).map(|i| contains(self.at(&s, i), self.at(&n, i)).map_or(Truth::Undecided, Truth::of)).collect(),
                _ => self.row_by_row(node),
            },
        }
    }

    /// Any other node: the general evaluator, row by row.
    fn row_by_row(&self, node: &'a Fast) -> Vec<Truth> {
        (0..self.rows).map(|i| node.eval(&ColumnRow { columns: self.columns, row: self.first_row + i }).map_or(Truth::Undecided, Truth::of)).collect()
    }
}

/// The field part of a selector path: its leading field steps.
pub(crate) fn field_prefix(steps: &[Step]) -> FieldPath {
    steps
        .iter()
        .map_while(|step| match step {
            Step::Field(name) => Some(name.clone()),
            Step::Index(_) => None,
        })
        .collect()
}

/// One row of a selector's columns (one column per path id).
struct ColumnRow<'a> {
    columns: &'a [&'a PathColumn],
    row: usize,
}

impl<'a> Row<'a> for ColumnRow<'a> {
    fn path(&self, id: usize, steps: &'a [Step]) -> V<'a> {
        let Some(column) = self.columns.get(id) else { return V::Null };
        let value = column.view(self.row);
        match steps.get(column.path.len()..) {
            None | Some([]) => value,
            Some(rest) => match (value, rest) {
                (V::Container(inner), _) => walk(inner, rest).map_or(V::Null, V::of),
                (V::List(list), [Step::Index(i), more @ ..]) => match list.index(*i) {
                    Some(V::Container(inner)) => walk(inner, more).map_or(V::Null, V::of),
                    Some(element) if more.is_empty() => element,
                    _ => V::Null,
                },
                _ => V::Null,
            },
        }
    }
}
