//! The workspace's one policy for lock poisoning and worker panics.
//!
//! - **A panic is propagated to the call that caused it.** A worker thread's panic is resumed,
//!   with its own payload, on the thread that joins it ([`joined`]); it is never turned into a
//!   default result, an error of another kind, or dropped.
//! - **A lock whose holder panicked is used on.** [`lock`], [`read`] and [`write()`] take the guard
//!   even from a poisoned lock. That is sound because every critical section in this workspace
//!   only replaces whole values — sets or takes a slot, pushes or pops one element, counts one up
//!   or down — so none leaves a multi-step invariant half-done when it unwinds: what a poisoned
//!   lock holds is as valid as before the panic. A critical section that would have to keep two
//!   things in step is restructured until it does not, rather than relying on poisoning.
//!
//! Poisoning would otherwise turn one panic into a failure of every later call that touches the
//! same lock, or — as `if let Ok(guard) = m.lock()` did — into writes silently dropped.

use std::sync::{
    Condvar, Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard,
};
use std::time::Duration;

/// Locks `mutex`, also when a holder panicked (see the module's policy).
pub fn lock<T: ?Sized>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Read-locks `lock`, also when a writer panicked (see the module's policy).
pub fn read<T: ?Sized>(lock: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(PoisonError::into_inner)
}

/// Write-locks `lock`, also when a writer panicked (see the module's policy).
pub fn write<T: ?Sized>(lock: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(PoisonError::into_inner)
}

/// The value `mutex` holds, also when a holder panicked (see the module's policy).
pub fn into_inner<T>(mutex: Mutex<T>) -> T {
    mutex.into_inner().unwrap_or_else(PoisonError::into_inner)
}

/// The value `mutex` holds, borrowed mutably, also when a holder panicked.
pub fn get_mut<T: ?Sized>(mutex: &mut Mutex<T>) -> &mut T {
    mutex.get_mut().unwrap_or_else(PoisonError::into_inner)
}

/// [`Condvar::wait_timeout`] on `guard`, taking the guard back also when another holder
/// panicked; `true` when the wait timed out.
pub fn wait_timeout<'a, T>(
    condvar: &Condvar,
    guard: MutexGuard<'a, T>,
    timeout: Duration,
) -> (MutexGuard<'a, T>, bool) {
    let (guard, result) =
        condvar.wait_timeout(guard, timeout).unwrap_or_else(PoisonError::into_inner);
    (guard, result.timed_out())
}

/// The result of a joined worker thread (`handle.join()`); a worker's panic is resumed here,
/// with its payload, so it reaches the call that started the work.
pub fn joined<T>(result: std::thread::Result<T>) -> T {
    result.unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// [`joined`] for a `Drop`: the worker's panic is resumed unless this thread is already
/// unwinding, where a second panic would abort the process and hide the first; then `None`.
pub fn joined_in_drop<T>(result: std::thread::Result<T>) -> Option<T> {
    match result {
        Ok(value) => Some(value),
        Err(_) if std::thread::panicking() => None,
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

#[cfg(test)]
mod tests {
    use std::panic::{AssertUnwindSafe, catch_unwind};
    use std::sync::{Condvar, Mutex, RwLock};
    use std::time::Duration;

    use super::*;

    /// Runs `critical`, which takes a lock, changes what it holds and panics holding it.
    fn poison(critical: impl FnOnce()) {
        assert!(catch_unwind(AssertUnwindSafe(critical)).is_err());
    }

    #[test]
    fn a_poisoned_mutex_is_used_on_with_the_value_its_holder_left() {
        let mut mutex = Mutex::new(vec![1]);
        poison(|| {
            let mut guard = lock(&mutex);
            guard.push(2);
            panic!("the holder panicked");
        });
        assert!(mutex.is_poisoned());
        assert_eq!(*lock(&mutex), [1, 2], "the whole value the holder wrote is kept");
        lock(&mutex).push(3);
        get_mut(&mut mutex).push(4);
        let (guard, timed_out) =
            wait_timeout(&Condvar::new(), lock(&mutex), Duration::from_millis(1));
        assert!(timed_out);
        drop(guard);
        assert_eq!(into_inner(mutex), [1, 2, 3, 4]);
    }

    #[test]
    fn a_poisoned_rwlock_is_read_and_written_on() {
        let rwlock = RwLock::new(String::from("before"));
        poison(|| {
            let mut guard = write(&rwlock);
            *guard = "written by the holder".into();
            panic!("the holder panicked");
        });
        assert!(rwlock.is_poisoned());
        assert_eq!(*read(&rwlock), "written by the holder");
        *write(&rwlock) = "after".into();
        assert_eq!(*read(&rwlock), "after");
    }

    #[test]
    fn a_joined_workers_panic_is_resumed_with_its_own_payload() {
        let result = std::thread::spawn(|| -> u32 { panic!("the worker's own message") }).join();
        let payload =
            catch_unwind(AssertUnwindSafe(|| joined(result))).expect_err("the panic propagates");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"the worker's own message"));
        assert_eq!(joined(std::thread::spawn(|| 7).join()), 7);
    }

    /// Joins its worker when dropped, as a server's background threads are.
    struct JoinsOnDrop(Option<std::thread::JoinHandle<()>>);

    impl Drop for JoinsOnDrop {
        fn drop(&mut self) {
            if let Some(worker) = self.0.take() {
                joined_in_drop(worker.join());
            }
        }
    }

    #[test]
    fn a_drop_resumes_its_workers_panic_unless_already_unwinding() {
        let worker = std::thread::spawn(|| panic!("the worker panicked"));
        let payload = catch_unwind(AssertUnwindSafe(|| drop(JoinsOnDrop(Some(worker)))))
            .expect_err("the panic propagates");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"the worker panicked"));
        // Dropped while a first panic unwinds: resuming the worker's would abort the process.
        let worker = std::thread::spawn(|| panic!("the worker panicked"));
        let payload = catch_unwind(AssertUnwindSafe(|| {
            let _joins = JoinsOnDrop(Some(worker));
            panic!("the first panic");
        }))
        .expect_err("the first panic propagates");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"the first panic"));
    }
}
