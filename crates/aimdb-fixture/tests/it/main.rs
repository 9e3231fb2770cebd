//! The AimDB fixture's integration tests, linked as one binary (a module per former test file).

mod live;
