//! What print mode reads from standard input: the prompt itself (`git diff | mypi -p`), or
//! text piped in next to a prompt given on the command line (`git diff | mypi -p "review
//! this"`), which is sent after it. Only a pipe, a socket or a file is read: a terminal or
//! `/dev/null` is left alone, so `mypi -p "hi"` typed at a shell never waits for input. Next
//! to a prompt, a pipe that stays open and silent for [`PIPE_GRACE`] (a parent process that
//! never closes it) is not waited for: mypi says so and goes on. At most [`MAX_PIPED`] bytes
//! are taken; the rest is cut with a note saying so.

use std::time::Duration;

use std::io::Read;

/// Most bytes of piped input kept.
pub const MAX_PIPED: usize = 4 * 1024 * 1024;

/// How long a pipe next to a prompt may stay silent before mypi stops waiting for it.
pub const PIPE_GRACE: Duration = Duration::from_secs(2);

/// What standard input holds for print mode.
pub enum Stdin {
    /// Nothing piped (a terminal, `/dev/null`).
    None,
    /// A regular file, or a pipe that has data or is closed: read it.
    Ready,
    /// A pipe that sent nothing and stayed open for `waited`.
    Silent { waited: Duration },
}

/// Looks at standard input, waiting at most `grace` for a pipe to send something or close.
pub fn stdin_state(grace: Duration) -> Stdin {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    use nix::sys::stat::{fstat, SFlag};
    use std::os::fd::AsFd;
    let stdin = std::io::stdin();
    let Ok(st) = fstat(stdin.as_fd()) else {
        return Stdin::None;
    };
    let kind = SFlag::from_bits_truncate(st.st_mode & SFlag::S_IFMT.bits());
    if kind == SFlag::S_IFREG {
        return Stdin::Ready;
    }
    if kind != SFlag::S_IFIFO && kind != SFlag::S_IFSOCK {
        return Stdin::None;
    }
    let mut fds = [PollFd::new(stdin.as_fd(), PollFlags::POLLIN)];
    let timeout = PollTimeout::try_from(grace).unwrap_or(PollTimeout::MAX);
    match poll(&mut fds, timeout) {
        Ok(ready) if ready > 0 => Stdin::Ready,
        _ => Stdin::Silent { waited: grace },
    }
}

/// Reads standard input up to [`MAX_PIPED`] bytes (invalid UTF-8 replaced); the error is the
/// line to show.
pub fn read_stdin() -> Result<String, String> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(MAX_PIPED as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read standard input: {e}"))?;
    let cut = bytes.len() > MAX_PIPED;
    bytes.truncate(MAX_PIPED);
    let mut text = String::from_utf8_lossy(&bytes).into_owned();
    if cut {
        text.push_str(&format!(
            "\n[standard input was cut here: only its first {} MiB are sent]",
            MAX_PIPED / (1024 * 1024)
        ));
    }
    Ok(text)
}

/// The prompt with piped text after it.
pub fn with_piped(prompt: &str, piped: &str) -> String {
    if piped.trim().is_empty() {
        return prompt.to_string();
    }
    format!("{prompt}\n\n{}", piped.trim_end())
}
