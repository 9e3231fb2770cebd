//! Who asked for the call running on this thread — an MCP session, an HTTP caller, the command
//! line — as the surface that took the request says it. Ambient per call, like cancellation and
//! progress, because only a write records it (`set_record`'s log) and every surface already runs
//! each call in one closure; a call made outside a surface is "unknown".

use std::cell::RefCell;

thread_local! {
    static REQUESTER: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Runs `work` with `who` as the requester of the calls it makes on this thread.
pub fn with<T>(who: String, work: impl FnOnce() -> T) -> T {
    let before = REQUESTER.with(|r| r.replace(Some(who)));
    // Restored on unwind too, so a panicking call leaves no requester behind on a pooled thread.
    struct Restore(Option<String>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let before = self.0.take();
            REQUESTER.with(|r| *r.borrow_mut() = before);
        }
    }
    let _restore = Restore(before);
    work()
}

/// The requester of the call running on this thread.
pub fn current() -> String {
    REQUESTER.with(|r| r.borrow().clone()).unwrap_or_else(|| "unknown".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_for_the_call_and_restored_after() {
        assert_eq!(current(), "unknown");
        let inner =
            with("MCP session abc".into(), || with("nested".into(), current) + "/" + &current());
        assert_eq!(inner, "nested/MCP session abc");
        assert_eq!(current(), "unknown");
    }
}
