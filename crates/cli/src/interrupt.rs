//! Ctrl-C during a one-shot command: the command's work is cancelled, so that a statement
//! running on a database server is stopped there (PostgreSQL's cancel request, MySQL's
//! `KILL QUERY`, ClickHouse's `KILL QUERY`) instead of running on after the process is gone.
//! The process exits once the work has unwound, or after a short grace; a second Ctrl-C exits
//! at once.

use std::time::Duration;

use schemascope_core::cancel::Cancel;

/// How long the work may take to stop after Ctrl-C before the process exits anyway.
const GRACE: Duration = Duration::from_secs(3);

/// The exit status of a process ended by SIGINT, as shells report it.
const INTERRUPTED: i32 = 130;

/// Cancels `work` when the user presses Ctrl-C (from a thread of its own, which waits for the
/// signal on a small runtime).
pub(crate) fn cancel_on_ctrl_c(work: &Cancel) {
    let work = work.clone();
    let _ = std::thread::Builder::new().name("ctrl-c".into()).spawn(move || {
        let Ok(runtime) = tokio::runtime::Builder::new_current_thread().enable_all().build()
        else {
            return;
        };
        runtime.block_on(async {
            if tokio::signal::ctrl_c().await.is_err() {
                return;
            }
            work.cancel_because("interrupted (Ctrl-C)");
            eprintln!("\nschemascope: interrupted; stopping the running statement (Ctrl-C again to quit at once)");
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                () = tokio::time::sleep(GRACE) => {}
            }
            std::process::exit(INTERRUPTED);
        });
    });
}
