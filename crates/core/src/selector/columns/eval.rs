//! Evaluating fast-path selectors on columns, a chunk of items at a time.

use jmespath::ast::Comparator;

use super::{CHUNK_ROWS, ColumnRow, PathColumn, chunk_rows};
use crate::parallel::on_all_cores;
use crate::selector::fast::Fast;
use crate::selector::parse::Selector;
use crate::selector::semantics::{compare, contains, float_eq, truthy};
use crate::selector::value::{Cell, ChunkCells, Row, Step, V};

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
    fn compare(
        &self,
        comparator: &Comparator,
        constant: V<'_>,
        flipped: bool,
    ) -> Option<Vec<Truth>> {
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
                                len as usize == s.len()
                                    && self
                                        .text
                                        .as_bytes()
                                        .get(at as usize..at as usize + len as usize)
                                        == Some(s.as_bytes())
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

/// Evaluates fast-path selectors on their columns on all cores: `inputs[s]` holds selector
/// `s`'s columns in the order of its [`Selector::column_paths`]. Per selector and item: `Some`
/// whether it matches, or `None` where the fast path cannot decide and the jmespath crate must
/// ([`Selector::matches_json`]). Selectors not on the fast path get `None` everywhere.
pub fn evaluate(
    selectors: &[&Selector],
    inputs: &[Vec<&PathColumn>],
    n: usize,
) -> Vec<Vec<Option<bool>>> {
    let chunks = on_all_cores(n.div_ceil(CHUNK_ROWS), |k| {
        let rows = chunk_rows(k, n);
        selectors
            .iter()
            .zip(inputs)
            .map(|(selector, columns)| {
                let Some(fast) = selector.fast_form() else { return vec![None; rows.len()] };
                let chunk =
                    ChunkEval { columns, chunk: k, first_row: rows.start, rows: rows.len() };
                let mut truths = chunk.truths(fast);
                // An item whose text did not parse (or is nested past the parser's limit) is left
                // to the jmespath crate, which reports why: it is counted as not evaluated, never
                // a silent miss.
                for column in columns.iter() {
                    for row in column.unreadable.iter().filter(|row| rows.contains(row)) {
                        truths[row - rows.start] = Truth::Undecided;
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
            Operand::Rows { id, steps } => {
                ColumnRow { columns: self.columns, row: self.first_row + offset }.path(*id, steps)
            }
        }
    }

    fn truths(&self, node: &'a Fast) -> Vec<Truth> {
        let both = |l: &'a Fast, r: &'a Fast, f: fn(Truth, Truth) -> Truth| {
            self.truths(l).into_iter().zip(self.truths(r)).map(|(a, b)| f(a, b)).collect()
        };
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
                (Some(Operand::Cells(chunk)), Some(Operand::Constant(constant)))
                    if let Some(truths) = chunk.compare(comparator, constant, false) =>
                {
                    truths
                }
                (Some(Operand::Constant(constant)), Some(Operand::Cells(chunk)))
                    if let Some(truths) = chunk.compare(comparator, constant, true) =>
                {
                    truths
                }
                (Some(l), Some(r)) => (0..self.rows)
                    .map(|i| Truth::of(compare(comparator, self.at(&l, i), self.at(&r, i))))
                    .collect(),
                _ => self.row_by_row(node),
            },
            Fast::Contains(subject, search) => {
                match (self.operand(subject), self.operand(search)) {
                    (Some(s), Some(n)) => (0..self.rows)
                        .map(|i| {
                            contains(self.at(&s, i), self.at(&n, i))
                                .map_or(Truth::Undecided, Truth::of)
                        })
                        .collect(),
                    _ => self.row_by_row(node),
                }
            }
        }
    }

    /// Any other node: the general evaluator, row by row.
    fn row_by_row(&self, node: &'a Fast) -> Vec<Truth> {
        (0..self.rows)
            .map(|i| {
                node.eval(&ColumnRow { columns: self.columns, row: self.first_row + i })
                    .map_or(Truth::Undecided, Truth::of)
            })
            .collect()
    }
}
