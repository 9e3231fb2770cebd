//! Functions whose one call makes a value of any size from small arguments: `repeat('x', 2e9)`
//! allocates 2 GB at once, outside the memory pool, and an allocation that fails ends the
//! process. Such functions are wrapped so that a call first adds up what its rows would make and
//! fails with a clear error past [`MAX_CALL_OUTPUT_BYTES`]; the scalar list generators
//! (`range`, `generate_series`) are left out of the registry, as their table forms are.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray};
use datafusion::arrow::datatypes::{DataType, FieldRef, Int64Type};
use datafusion::common::{DataFusionError, Result, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, Documentation, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl,
    Signature,
};

/// The most bytes one call of a growing function may make for one batch of rows.
pub(super) const MAX_CALL_OUTPUT_BYTES: i64 = 64 << 20;

/// Scalar functions left out: they make lists of any length from two numbers.
const LEFT_OUT: &[&str] = &["range", "generate_series"];

/// How a function's output grows with its arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Growth {
    /// `repeat(text, n)`: the text's bytes times `n`.
    Repeat,
    /// `lpad`/`rpad(text, n, …)`: `n` characters, each up to 4 bytes.
    Pad,
    /// `array_repeat(value, n)`: `n` elements, each at least 8 bytes.
    ArrayRepeat,
}

fn growth(name: &str) -> Option<Growth> {
    match name {
        "repeat" => Some(Growth::Repeat),
        "lpad" | "rpad" => Some(Growth::Pad),
        "array_repeat" => Some(Growth::ArrayRepeat),
        _ => None,
    }
}

/// The registry's scalar functions with the growing ones bounded and the generators left out.
pub(crate) fn bounded(functions: Vec<Arc<ScalarUDF>>) -> Vec<Arc<ScalarUDF>> {
    functions
        .into_iter()
        .filter(|f| !LEFT_OUT.contains(&f.name()))
        .map(|f| match growth(f.name()) {
            Some(growth) => {
                Arc::new(ScalarUDF::new_from_impl(Bounded { inner: Arc::clone(f.inner()), growth }))
            }
            None => f,
        })
        .collect()
}

/// A growing function, checked before each call.
#[derive(Debug)]
struct Bounded {
    inner: Arc<dyn ScalarUDFImpl>,
    growth: Growth,
}

impl PartialEq for Bounded {
    fn eq(&self, other: &Self) -> bool {
        self.growth == other.growth && self.inner.name() == other.inner.name()
    }
}

impl Eq for Bounded {}

impl Hash for Bounded {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.growth.hash(state);
        self.inner.name().hash(state);
    }
}

/// A value of the call as an array of `rows` (a scalar repeated).
fn as_array(value: &ColumnarValue, rows: usize) -> Result<ArrayRef> {
    match value {
        ColumnarValue::Array(array) => Ok(Arc::clone(array)),
        ColumnarValue::Scalar(scalar) => scalar.to_array_of_size(rows.max(1)),
    }
}

/// Per row, the value as an `i64` (null: 0).
fn counts(value: &ColumnarValue, rows: usize) -> Result<Vec<i64>> {
    let array = as_array(value, rows)?;
    let array = datafusion::arrow::compute::cast(&array, &DataType::Int64)?;
    let array = array.as_primitive::<Int64Type>();
    Ok((0..array.len()).map(|i| if array.is_null(i) { 0 } else { array.value(i).max(0) }).collect())
}

/// Per row, the byte length of a text value (null: 0).
fn text_bytes(value: &ColumnarValue, rows: usize) -> Result<Vec<i64>> {
    if let ColumnarValue::Scalar(
        ScalarValue::Utf8(s) | ScalarValue::LargeUtf8(s) | ScalarValue::Utf8View(s),
    ) = value
    {
        let bytes = s.as_ref().map_or(0, |s| s.len() as i64);
        return Ok(vec![bytes; rows.max(1)]);
    }
    let array = as_array(value, rows)?;
    let lengths = datafusion::arrow::compute::kernels::length::length(&array)?;
    let lengths = datafusion::arrow::compute::cast(&lengths, &DataType::Int64)?;
    let lengths = lengths.as_primitive::<Int64Type>();
    Ok((0..lengths.len()).map(|i| if lengths.is_null(i) { 0 } else { lengths.value(i) }).collect())
}

impl Bounded {
    /// Fails when the call's rows would make more than [`MAX_CALL_OUTPUT_BYTES`].
    fn check(&self, args: &ScalarFunctionArgs) -> Result<()> {
        let rows = args.number_rows;
        let (Some(first), Some(count)) = (args.args.first(), args.args.get(1)) else {
            return Ok(());
        };
        let counts = counts(count, rows)?;
        let per_row: Vec<i64> = match self.growth {
            Growth::Repeat => {
                let bytes = text_bytes(first, rows)?;
                let broadcast = |v: &[i64], i: usize| v.get(i).or(v.first()).copied().unwrap_or(0);
                (0..counts.len().max(bytes.len()))
                    .map(|i| broadcast(&bytes, i).saturating_mul(broadcast(&counts, i)))
                    .collect()
            }
            Growth::Pad => counts.iter().map(|n| n.saturating_mul(4)).collect(),
            Growth::ArrayRepeat => counts.iter().map(|n| n.saturating_mul(8)).collect(),
        };
        // A scalar call stands for every row.
        let scale = if per_row.len() == 1 { rows.max(1) as i64 } else { 1 };
        let total =
            per_row.iter().fold(0i64, |sum, n| sum.saturating_add(*n)).saturating_mul(scale);
        if total > MAX_CALL_OUTPUT_BYTES {
            return Err(DataFusionError::ResourcesExhausted(format!(
                "{}() would make about {} MiB for {} row(s); one call may make at most {} MiB",
                self.inner.name(),
                total >> 20,
                rows,
                MAX_CALL_OUTPUT_BYTES >> 20
            )));
        }
        Ok(())
    }
}

impl ScalarUDFImpl for Bounded {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn aliases(&self) -> &[String] {
        self.inner.aliases()
    }

    fn signature(&self) -> &Signature {
        self.inner.signature()
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        self.inner.return_type(arg_types)
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs<'_>) -> Result<FieldRef> {
        self.inner.return_field_from_args(args)
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        self.inner.coerce_types(arg_types)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        self.check(&args)?;
        self.inner.invoke_with_args(args)
    }

    fn documentation(&self) -> Option<&Documentation> {
        self.inner.documentation()
    }
}
