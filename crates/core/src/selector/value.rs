//! The vocabulary every selector evaluator shares: a value as an evaluator sees it ([`V`]),
//! borrowed from a parsed item or decoded from a column's cells ([`Cell`], [`ChunkCells`],
//! [`ListView`]), the paths a selector reads ([`Step`], [`FieldPath`]) and where they are read
//! from ([`Row`]). It depends on no other part of the selector module; they all depend on it.

use serde_json::Value;

/// A value as the evaluator sees it: scalars by value, strings and containers borrowed from the
/// item (a parsed tree or a column).
#[derive(Debug, Clone, Copy)]
pub(crate) enum V<'a> {
    Null,
    Bool(bool),
    Num(f64),
    Str(&'a str),
    /// An array or an object (scalars are always one of the variants above).
    Container(&'a Value),
    /// An array of a column, its elements kept as cells.
    List(ListView<'a>),
}

impl<'a> V<'a> {
    /// The view of a parsed value.
    pub(crate) fn of(value: &'a Value) -> Self {
        match value {
            Value::Null => V::Null,
            Value::Bool(b) => V::Bool(*b),
            // Without arbitrary precision every JSON number has an f64 view.
            Value::Number(n) => n.as_f64().map_or(V::Null, V::Num),
            Value::String(s) => V::Str(s),
            Value::Array(_) | Value::Object(_) => V::Container(value),
        }
    }
}

/// One item's value at a path: scalars inline, strings and containers in the chunk's arenas.
#[derive(Debug, Clone, Copy)]
pub(super) enum Cell {
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

/// One chunk of one column: its cells and the arenas they point into. It lives here, beside
/// [`V`], because a [`ListView`] borrows it; the columns build it.
#[derive(Debug, Default)]
pub(super) struct ChunkCells {
    pub(super) cells: Vec<Cell>,
    pub(super) text: String,
    pub(super) containers: Vec<Value>,
    pub(super) elements: Vec<Cell>,
}

impl ChunkCells {
    /// The view of the cell at `offset` (null past the end).
    pub(super) fn view(&self, offset: usize) -> V<'_> {
        self.cell_view(self.cells.get(offset))
    }

    /// The view of `cell`, which points into this chunk's arenas.
    pub(super) fn cell_view(&self, cell: Option<&Cell>) -> V<'_> {
        match cell {
            None | Some(Cell::Null) => V::Null,
            Some(Cell::Bool(b)) => V::Bool(*b),
            Some(Cell::Num(x)) => V::Num(*x),
            Some(Cell::Str { at, len }) => V::Str(
                self.text.get(*at as usize..*at as usize + *len as usize).unwrap_or_default(),
            ),
            Some(Cell::Container(i)) => self.containers.get(*i as usize).map_or(V::Null, |value| {
                if value.is_string() { V::of(value) } else { V::Container(value) }
            }),
            Some(Cell::List { at, len }) => {
                V::List(ListView { chunk: self, at: *at as usize, len: *len as usize })
            }
        }
    }
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
        if i >= self.len {
            V::Null
        } else {
            self.chunk.cell_view(self.chunk.elements.get(self.at + i))
        }
    }

    /// The element a JMESPath index names (negative from the end).
    pub(super) fn index(&self, i: i32) -> Option<V<'a>> {
        let i = if i >= 0 {
            usize::try_from(i).ok()?
        } else {
            self.len.checked_sub(i.unsigned_abs() as usize)?
        };
        (i < self.len).then(|| self.get(i))
    }
}

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum Step {
    Field(String),
    Index(i32),
}

/// The object fields a column holds, from the item's root (`["metrics", "latency"]`); a
/// selector path's index steps (`tags[0]`) are applied to the column's values when it is read.
pub type FieldPath = Vec<String>;

/// The field part of a selector path: its leading field steps.
pub(super) fn field_prefix(steps: &[Step]) -> FieldPath {
    steps
        .iter()
        .map_while(|step| match step {
            Step::Field(name) => Some(name.clone()),
            Step::Index(_) => None,
        })
        .collect()
}

/// Where an evaluation reads its paths from: a parsed item, or one row of columns.
pub(super) trait Row<'a> {
    /// The value at path number `id` (whose steps are `steps`), null when absent.
    fn path(&self, id: usize, steps: &'a [Step]) -> V<'a>;
}

impl<'a> Row<'a> for &'a Value {
    fn path(&self, _id: usize, steps: &'a [Step]) -> V<'a> {
        walk(self, steps).map_or(V::Null, V::of)
    }
}

/// Follows `steps` from `at`; `None` when a step finds nothing.
pub(super) fn walk<'a>(mut at: &'a Value, steps: &[Step]) -> Option<&'a Value> {
    for step in steps {
        at = match step {
            // Small objects (most items) are faster to scan than to hash into.
            Step::Field(name) => at.as_object().and_then(|o| {
                if o.len() <= 12 {
                    o.iter().find(|(k, _)| *k == name).map(|(_, v)| v)
                } else {
                    o.get(name)
                }
            })?,
            Step::Index(i) => at.as_array().and_then(|a| {
                let i = if *i >= 0 {
                    usize::try_from(*i).ok()
                } else {
                    a.len().checked_sub(i.unsigned_abs() as usize)
                };
                i.and_then(|i| a.get(i))
            })?,
        };
    }
    Some(at)
}
