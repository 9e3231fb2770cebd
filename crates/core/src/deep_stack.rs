//! Running recursive work on a thread whose stack size is known. Parsers and visitors here bound
//! their depth before they recurse, but a few recursions belong to other crates and cannot be
//! bounded from outside — sqlparser's parser and the `Drop` of its trees, the jmespath crate's
//! parser on a long selector. Those run here, on a stack far larger than the depth bounds can
//! use, instead of on whatever thread called (a tokio worker has 2 MiB; a stack overflow aborts
//! the whole process, never just the call).

/// The stack of a deep-stack thread: 256 MiB of address space, of which only the pages touched
/// are ever backed by memory.
pub const DEEP_STACK_BYTES: usize = 256 << 20;

/// Runs `work` on a new thread with a [`DEEP_STACK_BYTES`] stack and returns its result; a panic
/// in `work` is resumed on the caller. `Err` when the thread could not be started (the system
/// is out of threads or address space): the work was not run.
pub fn on_deep_stack<T: Send>(work: impl FnOnce() -> T + Send) -> Result<T, String> {
    // The caller's cancellation token follows the work onto the new thread.
    let cancel = crate::cancel::current();
    std::thread::scope(|scope| {
        let handle = std::thread::Builder::new()
            .name("schemascope-deep".into())
            .stack_size(DEEP_STACK_BYTES)
            .spawn_scoped(scope, move || crate::cancel::with(&cancel, work))
            .map_err(|e| format!("could not start a thread for deeply nested input: {e}"))?;
        Ok(crate::sync::joined(handle.join()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth(n: usize) -> usize {
        // Enough locals per frame that a 2 MiB stack would not hold 100,000 of them.
        let pad = std::hint::black_box([n as u8; 64]);
        if n == 0 { usize::from(pad[0]) } else { 1 + depth(std::hint::black_box(n - 1)) }
    }

    #[test]
    fn recursion_that_a_default_stack_cannot_hold_runs_on_the_deep_stack() {
        assert_eq!(on_deep_stack(|| depth(100_000)), Ok(100_000));
    }

    #[test]
    fn the_callers_cancellation_follows_the_work() {
        let token = crate::cancel::Cancel::new();
        token.cancel();
        let seen = crate::cancel::with(&token, || {
            on_deep_stack(|| crate::cancel::current().is_cancelled())
        });
        assert_eq!(seen, Ok(true));
    }
}
