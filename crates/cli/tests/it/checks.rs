//! The summary line the end-to-end scripts print ("N passed, M failed"), read the one way.

/// Asserts that `stdout`'s summary says no check failed and at least `at_least` passed;
/// `report` is shown on failure.
pub(crate) fn all_passed(stdout: &str, at_least: usize, report: &str) {
    let summary = stdout.lines().rev().find(|l| l.contains(" passed, ")).unwrap_or_default();
    assert!(summary.ends_with(" 0 failed"), "{summary}\n{report}");
    let passed: usize = summary.split_whitespace().next().and_then(|n| n.parse().ok()).unwrap_or(0);
    assert!(passed >= at_least, "only {passed} of at least {at_least} checks ran:\n{report}");
}
