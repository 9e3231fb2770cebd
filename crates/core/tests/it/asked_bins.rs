//! An asked bin count fixes the number of bins, never the scale: skewed data gets log-scale or
//! outlier bins whether the count is automatic or asked, by one rule, and `histogramScale` says
//! which. Computed edges keep six significant digits and no float noise.

use schemascope_core::ProfileBuilder;
use schemascope_core::property::{PropertyOptions, describe_property};
use serde_json::{Value, json};

fn describe(values: &[Value], bins: Option<usize>) -> Value {
    let mut builder = ProfileBuilder::new();
    for v in values {
        builder.add_value(&json!({ "v": v }));
    }
    let profile = builder.finish(values.len() as u64);
    describe_property(
        &profile,
        "items",
        &"v".parse().expect("path"),
        PropertyOptions { limit: 20, bins },
    )
    .data
}

fn counts(d: &Value) -> Vec<u64> {
    d["histogram"]
        .as_array()
        .expect("bins")
        .iter()
        .map(|b| b["count"].as_u64().unwrap_or(0))
        .collect()
}

/// 1000 positive values over five orders of magnitude, log-uniform from 0.01 to 10 but for seven
/// up to 1000: equal-width bins put almost all of them in the first bin.
pub(crate) fn skewed() -> Vec<Value> {
    let mut values: Vec<Value> =
        (0..993).map(|i| json!(10f64.powf(-2.0 + 3.0 * f64::from(i) / 992.0))).collect();
    values.extend([20.0, 50.0, 100.0, 200.0, 500.0, 800.0, 1000.0].map(|v| json!(v)));
    values
}

#[test]
fn an_asked_bin_count_on_skewed_data_keeps_the_log_scale() {
    let values = skewed();
    assert_eq!(describe(&values, None)["histogramScale"], "log");
    for bins in [4, 5, 6, 7, 10, 12, 20, 37] {
        let d = describe(&values, Some(bins));
        assert_eq!(d["histogramScale"], "log", "{bins} bins");
        let counts = counts(&d);
        assert_eq!(counts.len(), bins);
        assert_eq!(counts.iter().sum::<u64>(), 1000);
        // Before, 6 equal-width bins put 996 of 1000 values in the first.
        assert!(counts.iter().all(|&n| n < 500), "{bins} bins: {counts:?}");
    }
    // Six bins from 0.01 to 1000 grow tenfold every 5/6 of a decade, with six digits.
    let six = describe(&values, Some(6));
    let ranges: Vec<&str> = six["histogram"]
        .as_array()
        .expect("bins")
        .iter()
        .filter_map(|b| b["range"].as_str())
        .collect();
    assert_eq!(
        ranges,
        [
            "0.01-0.0681292",
            "0.0681292-0.464159",
            "0.464159-3.16228",
            "3.16228-21.5443",
            "21.5443-146.780",
            "146.780-1000"
        ]
        .map(|r| r.replace("146.780", "146.78"))
    );
    // Round ticks when they give the count asked: 1-3 ticks over 0.01..1000 are 10 bins.
    let ten = describe(&values, Some(10));
    assert_eq!(ten["histogram"][0]["range"], "0.01-0.03");
}

#[test]
fn an_asked_bin_count_on_skewed_data_without_a_log_range_gets_outlier_bins() {
    // Zeros rule out a log scale.
    let mut values: Vec<Value> = (0..400).map(|i| json!(i % 10)).collect();
    values.extend([json!(5_000), json!(10_000)]);
    assert_eq!(describe(&values, None)["histogramScale"], "linearWithOutlierBins");
    for bins in [4, 6, 9] {
        let d = describe(&values, Some(bins));
        assert_eq!(d["histogramScale"], "linearWithOutlierBins", "{bins} bins: {d}");
        let counts = counts(&d);
        assert_eq!(counts.len(), bins, "{d}");
        assert_eq!(counts.iter().sum::<u64>(), 402);
        assert_eq!(counts.last(), Some(&2), "{d}");
    }
}

#[test]
fn skewed_integers_get_log_bins_that_name_whole_numbers() {
    let values: Vec<Value> =
        (0..1000).map(|i| json!(10f64.powf(4.0 * f64::from(i) / 999.0).floor() as i64)).collect();
    let d = describe(&values, Some(6));
    assert_eq!(d["histogramScale"], "log");
    assert_eq!(counts(&d).len(), 6);
    assert_eq!(counts(&d).iter().sum::<u64>(), 1000);
    let bins = d["histogram"].as_array().expect("bins");
    for pair in bins.windows(2) {
        // Integer bins are half-open: each starts at the previous top edge.
        assert_eq!(pair[0]["max"], pair[1]["min"]);
    }
    for bin in bins {
        let range = bin["range"].as_str().unwrap_or_default();
        assert!(!range.contains('.'), "{range}");
    }
    assert_eq!(bins[0]["range"], "1-4");
    assert_eq!(bins[5]["range"].as_str().map(|r| r.ends_with("-10000")), Some(true), "{}", bins[5]);
}

#[test]
fn data_that_is_not_skewed_keeps_equal_width_bins_with_six_digit_edges() {
    let values: Vec<Value> = (0..=300).map(|i| json!(f64::from(i) / 300.0)).collect();
    let d = describe(&values, Some(7));
    assert_eq!(d["histogramScale"], "linear");
    let edges: Vec<f64> =
        d["histogram"].as_array().expect("bins").iter().filter_map(|b| b["min"].as_f64()).collect();
    assert_eq!(edges, [0.0, 0.142857, 0.285714, 0.428571, 0.571429, 0.714286, 0.857143]);
    // Fewer than four bins are never judged skewed (as the automatic rule).
    assert_eq!(describe(&skewed(), Some(3))["histogramScale"], "linear");
}
