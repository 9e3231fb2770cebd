//! Integer arithmetic that fails on overflow instead of wrapping, and sums and means that are
//! exact. DataFusion adds, subtracts, multiplies and negates integers with wrap-around and sums
//! them so too (`9223372036854775807 + 1` is `-9223372036854775808`), sums 38-digit decimals
//! in 128 bits that wrap, and averages 64-bit integers as doubles: wrong numbers shown as right
//! ones. Here `+`, `-`, `*` and unary minus on integers run checked (an overflow is an error
//! naming it); `SUM` of 64-bit integers adds exactly in `DECIMAL(38,0)` (as PostgreSQL's
//! `SUM(bigint)` returns `numeric`), `SUM` of a `DECIMAL` in 76 digits, and `AVG` of integers
//! is a decimal too — as aggregates or over windows.

use std::sync::Arc;

use datafusion::arrow::compute::kernels::numeric;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{DFSchema, Result, ScalarValue, exec_err};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::expr_rewriter::{FunctionRewrite, NamePreserver};
use datafusion::logical_expr::utils::merge_schema;
use datafusion::logical_expr::{
    BinaryExpr, ColumnarValue, Expr, ExprSchemable, LogicalPlan, Operator, ScalarFunctionArgs,
    ScalarUDF, ScalarUDFImpl, Signature, Volatility, WindowFunctionDefinition,
};
use datafusion::optimizer::AnalyzerRule;

/// `SUM` and `AVG` whose argument is cast to a type they are exact in (see the module docs):
/// runs before type coercion, which then types every expression above them.
#[derive(Debug)]
pub(crate) struct ExactSums;

impl FunctionRewrite for ExactSums {
    fn name(&self) -> &str {
        "schemascope_exact_sums"
    }

    fn rewrite(
        &self,
        expr: Expr,
        schema: &DFSchema,
        _config: &ConfigOptions,
    ) -> Result<Transformed<Expr>> {
        match expr {
            Expr::AggregateFunction(mut call) => {
                match exact_type(call.func.name(), &call.params.args, schema)? {
                    Some(exact) => {
                        call.params.args =
                            cast_all(std::mem::take(&mut call.params.args), &exact, schema)?;
                        Ok(Transformed::yes(Expr::AggregateFunction(call)))
                    }
                    None => Ok(Transformed::no(Expr::AggregateFunction(call))),
                }
            }
            Expr::WindowFunction(mut window) => {
                let exact = match &window.fun {
                    WindowFunctionDefinition::AggregateUDF(f) => {
                        exact_type(f.name(), &window.params.args, schema)?
                    }
                    WindowFunctionDefinition::WindowUDF(_) => None,
                };
                let Some(exact) = exact else {
                    return Ok(Transformed::no(Expr::WindowFunction(window)));
                };
                window.params.args =
                    cast_all(std::mem::take(&mut window.params.args), &exact, schema)?;
                Ok(Transformed::yes(Expr::WindowFunction(window)))
            }
            other => Ok(Transformed::no(other)),
        }
    }
}

/// The type a call of `name` on `args` must read its argument as to be exact, when it is a
/// `SUM` or `AVG` DataFusion would compute inexactly.
fn exact_type(name: &str, args: &[Expr], schema: &DFSchema) -> Result<Option<DataType>> {
    let [arg] = args else { return Ok(None) };
    let name = name.to_ascii_lowercase();
    let exact = match (name.as_str(), arg.get_type(schema)?) {
        ("sum", DataType::Int64 | DataType::UInt64) => Some(DataType::Decimal128(38, 0)),
        ("sum", DataType::Decimal128(_, scale)) => Some(DataType::Decimal256(76, scale)),
        // DataFusion's mean of a `DECIMAL(p,s)` is a `DECIMAL(p+4,s+4)`: read as
        // `DECIMAL(34,15)` (every 64-bit signed integer), a mean has 19 exact decimals.
        ("avg" | "mean", DataType::UInt64) => Some(DataType::Decimal128(38, 0)),
        ("avg" | "mean", t) if t.is_integer() => Some(DataType::Decimal128(34, 15)),
        _ => None,
    };
    Ok(exact)
}

fn cast_all(args: Vec<Expr>, to: &DataType, schema: &DFSchema) -> Result<Vec<Expr>> {
    args.into_iter().map(|a| a.cast_to(to, schema)).collect()
}

/// `+`, `-`, `*` and unary minus on integers replaced by their checked forms, after type
/// coercion (a binary operation's operands then have one type, the result's).
#[derive(Debug)]
pub(crate) struct CheckedIntegerArithmetic;

impl AnalyzerRule for CheckedIntegerArithmetic {
    fn name(&self) -> &str {
        "schemascope_checked_integer_arithmetic"
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(|plan| {
            let mut schema = merge_schema(&plan.inputs());
            if plan.inputs().is_empty() {
                schema.merge(plan.schema());
            }
            let names = NamePreserver::new(&plan);
            plan.map_expressions(|expr| {
                let name = names.save(&expr);
                let checked = expr.transform_up(|e| checked(e, &schema))?;
                Ok(checked.update_data(|e| name.restore(e)))
            })
        })
        .map(|t| t.data)
    }
}

fn checked(expr: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let call = |op: CheckedOp, args: Vec<Expr>| {
        let udf = Arc::new(ScalarUDF::new_from_impl(Checked::new(op)));
        Transformed::yes(Expr::ScalarFunction(ScalarFunction::new_udf(udf, args)))
    };
    match expr {
        Expr::Negative(operand) => match operand.get_type(schema) {
            Ok(t) if t.is_signed_integer() => Ok(call(CheckedOp::Negate, vec![*operand])),
            _ => Ok(Transformed::no(Expr::Negative(operand))),
        },
        Expr::BinaryExpr(BinaryExpr { left, op, right }) => {
            let checked_op = match op {
                Operator::Plus => Some(CheckedOp::Add),
                Operator::Minus => Some(CheckedOp::Subtract),
                Operator::Multiply => Some(CheckedOp::Multiply),
                _ => None,
            };
            let integers = match (left.get_type(schema), right.get_type(schema)) {
                (Ok(l), Ok(r)) => l == r && l.is_integer(),
                _ => false,
            };
            match checked_op {
                Some(checked_op) if integers => Ok(call(checked_op, vec![*left, *right])),
                _ => Ok(Transformed::no(Expr::BinaryExpr(BinaryExpr { left, op, right }))),
            }
        }
        other => Ok(Transformed::no(other)),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum CheckedOp {
    Add,
    Subtract,
    Multiply,
    Negate,
}

/// One checked operation on integers of one type.
#[derive(Debug, PartialEq, Eq, Hash)]
struct Checked {
    op: CheckedOp,
    signature: Signature,
}

impl Checked {
    fn new(op: CheckedOp) -> Self {
        let arity = if op == CheckedOp::Negate { 1 } else { 2 };
        Self { op, signature: Signature::any(arity, Volatility::Immutable) }
    }
}

impl ScalarUDFImpl for Checked {
    fn name(&self) -> &str {
        match self.op {
            CheckedOp::Add => "checked_add",
            CheckedOp::Subtract => "checked_subtract",
            CheckedOp::Multiply => "checked_multiply",
            CheckedOp::Negate => "checked_negate",
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        Ok(arg_types.first().cloned().unwrap_or(DataType::Int64))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let scalars = args.args.iter().all(|a| matches!(a, ColumnarValue::Scalar(_)));
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        let result = match (self.op, arrays.as_slice()) {
            (CheckedOp::Negate, [operand]) => numeric::neg(operand),
            (CheckedOp::Add, [left, right]) => numeric::add(left, right),
            (CheckedOp::Subtract, [left, right]) => numeric::sub(left, right),
            (CheckedOp::Multiply, [left, right]) => numeric::mul(left, right),
            _ => return exec_err!("{}: wrong number of arguments", self.name()),
        }?;
        if scalars {
            return Ok(ColumnarValue::Scalar(ScalarValue::try_from_array(&result, 0)?));
        }
        Ok(ColumnarValue::Array(result))
    }
}
