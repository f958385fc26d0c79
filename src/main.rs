fn main() {
    // Behave like other Unix filters when the reader goes away (`| head`).
    // SAFETY: restoring the default disposition of SIGPIPE before any threads start.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    warpcheck::temp::exit(warpcheck::cli::main());
}
