//! A long call's progress, as lines a person reads ("betweenness: 12,000 of 50,000 sources
//! searched"). A surface that shows progress runs the call inside [`with`] with a sink; long
//! work says how far it got with [`report`]. Ambient, like [`crate::cancel`]: the functions
//! between the surface and the work need no extra parameter, and without a sink a report is
//! dropped.

use std::cell::RefCell;
use std::sync::Arc;

/// Where progress lines go (a surface's channel to its client).
pub type Sink = Arc<dyn Fn(String) + Send + Sync>;

thread_local! {
    static CURRENT: RefCell<Option<Sink>> = const { RefCell::new(None) };
}

/// Runs `work` with `sink` receiving this thread's progress lines, then restores the previous.
pub fn with<T>(sink: Sink, work: impl FnOnce() -> T) -> T {
    /// Restores the previous sink even when `work` panics.
    struct Restore(Option<Sink>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            CURRENT.with(|current| *current.borrow_mut() = previous);
        }
    }
    let previous = CURRENT.with(|current| current.borrow_mut().replace(sink));
    let _restore = Restore(previous);
    work()
}

/// Sends `line` to this thread's sink, if any.
pub fn report(line: impl Into<String>) {
    if let Some(sink) = current() {
        sink(line.into());
    }
}

/// This thread's sink, to hand to a thread the work spawns.
pub fn current() -> Option<Sink> {
    CURRENT.with(|current| current.borrow().clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn lines_reach_the_sink_only_inside_with() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&seen);
        report("before: dropped");
        with(Arc::new(move |line| crate::sync::lock(&kept).push(line)), || {
            report("one");
            report(String::from("two"));
        });
        report("after: dropped");
        assert_eq!(*crate::sync::lock(&seen), vec!["one".to_string(), "two".to_string()]);
        assert!(current().is_none());
    }
}
