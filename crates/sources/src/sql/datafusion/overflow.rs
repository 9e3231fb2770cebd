//! Integer arithmetic that fails on overflow instead of wrapping. DataFusion adds, subtracts
//! and multiplies integers with wrap-around and sums them so too (`9223372036854775807 + 1` is
//! `-9223372036854775808`): a wrong number shown as a right one. Here `+`, `-` and `*` on
//! integers run checked (an overflow is an error naming it), and `SUM` of 64-bit integers adds
//! exactly in `DECIMAL(38,0)`, as PostgreSQL's `SUM(bigint)` returns `numeric`.

use std::sync::Arc;

use datafusion::arrow::compute::kernels::numeric;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{DFSchema, Result};
use datafusion::logical_expr::expr::{AggregateFunction, ScalarFunction};
use datafusion::logical_expr::expr_rewriter::{FunctionRewrite, NamePreserver};
use datafusion::logical_expr::utils::merge_schema;
use datafusion::logical_expr::{
    BinaryExpr, ColumnarValue, Expr, ExprSchemable, LogicalPlan, Operator, ScalarFunctionArgs,
    ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use datafusion::optimizer::AnalyzerRule;

/// Exact type of `SUM` over 64-bit integers.
const SUM_TYPE: DataType = DataType::Decimal128(38, 0);

/// `SUM` of a 64-bit integer column, summed as `DECIMAL(38,0)`: runs before type coercion,
/// which then types every expression above it.
#[derive(Debug)]
pub(crate) struct ExactIntegerSums;

impl FunctionRewrite for ExactIntegerSums {
    fn name(&self) -> &str {
        "schemascope_exact_integer_sums"
    }

    fn rewrite(
        &self,
        expr: Expr,
        schema: &DFSchema,
        _config: &ConfigOptions,
    ) -> Result<Transformed<Expr>> {
        let Expr::AggregateFunction(mut call) = expr else { return Ok(Transformed::no(expr)) };
        let is_sum = call.func.name().eq_ignore_ascii_case("sum");
        let wide = match call.params.args.first() {
            Some(arg) if is_sum && call.params.args.len() == 1 => {
                matches!(arg.get_type(schema)?, DataType::Int64 | DataType::UInt64)
            }
            _ => false,
        };
        if !wide {
            return Ok(Transformed::no(Expr::AggregateFunction(call)));
        }
        call.params.args = call
            .params
            .args
            .into_iter()
            .map(|a| a.cast_to(&SUM_TYPE, schema))
            .collect::<Result<_>>()?;
        Ok(Transformed::yes(Expr::AggregateFunction(AggregateFunction { ..call })))
    }
}

/// `+`, `-` and `*` between integers replaced by their checked forms, after type coercion (the
/// operands then have one type, the result's).
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
    let Expr::BinaryExpr(BinaryExpr { left, op, right }) = expr else {
        return Ok(Transformed::no(expr));
    };
    let function = match op {
        Operator::Plus => CheckedOp::Add,
        Operator::Minus => CheckedOp::Subtract,
        Operator::Multiply => CheckedOp::Multiply,
        _ => return Ok(Transformed::no(Expr::BinaryExpr(BinaryExpr { left, op, right }))),
    };
    let (l, r) = (left.get_type(schema), right.get_type(schema));
    match (l, r) {
        (Ok(l), Ok(r)) if l == r && l.is_integer() => {
            let udf = Arc::new(ScalarUDF::new_from_impl(Checked::new(function)));
            Ok(Transformed::yes(Expr::ScalarFunction(ScalarFunction::new_udf(
                udf,
                vec![*left, *right],
            ))))
        }
        _ => Ok(Transformed::no(Expr::BinaryExpr(BinaryExpr { left, op, right }))),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum CheckedOp {
    Add,
    Subtract,
    Multiply,
}

/// One checked operation on two integers of one type.
#[derive(Debug, PartialEq, Eq, Hash)]
struct Checked {
    op: CheckedOp,
    signature: Signature,
}

impl Checked {
    fn new(op: CheckedOp) -> Self {
        Self { op, signature: Signature::any(2, Volatility::Immutable) }
    }
}

impl ScalarUDFImpl for Checked {
    fn name(&self) -> &str {
        match self.op {
            CheckedOp::Add => "checked_add",
            CheckedOp::Subtract => "checked_subtract",
            CheckedOp::Multiply => "checked_multiply",
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
        let [left, right] = arrays.as_slice() else {
            return datafusion::common::exec_err!("{} takes two arguments", self.name());
        };
        let result = match self.op {
            CheckedOp::Add => numeric::add(left, right),
            CheckedOp::Subtract => numeric::sub(left, right),
            CheckedOp::Multiply => numeric::mul(left, right),
        }?;
        if scalars {
            return Ok(ColumnarValue::Scalar(datafusion::common::ScalarValue::try_from_array(
                &result, 0,
            )?));
        }
        Ok(ColumnarValue::Array(result))
    }
}
