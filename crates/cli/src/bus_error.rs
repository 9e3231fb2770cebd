//! A clear message instead of a bare "Bus error" when a source file that a one-shot command
//! mapped into memory is cut short by another process while the command runs.

// A signal handler is unsafe by nature; it calls only async-signal-safe functions.
#![allow(unsafe_code)]

/// Installs the SIGBUS handler; called once, before a one-shot command maps its source.
pub(crate) fn report_truncated_sources() {
    extern "C" fn on_bus_error(_: libc::c_int) {
        const MESSAGE: &[u8] = b"schemascope: error: a source file was truncated or rewritten by another process while it was being read; run the command again once the file is complete\n";
        // SAFETY: write(2) and _exit(2) are async-signal-safe; nothing else runs here.
        unsafe {
            libc::write(2, MESSAGE.as_ptr().cast(), MESSAGE.len());
            libc::_exit(1);
        }
    }
    #[cfg(unix)]
    // SAFETY: installs a handler that only calls async-signal-safe functions.
    unsafe {
        libc::signal(libc::SIGBUS, on_bus_error as *const () as libc::sighandler_t);
    }
}
