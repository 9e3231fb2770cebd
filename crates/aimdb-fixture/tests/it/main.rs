//! The AimDB fixture's integration tests, linked as one binary (a module per former test file).

// Test helpers may unwrap: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

mod fixture;
mod live;
mod writes;
