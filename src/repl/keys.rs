//! Keys typed while a prompt runs, on a terminal. The terminal is put in a mode with no echo
//! and no line editing of its own (signals stay on, so Ctrl-C still cancels), and the line
//! is kept here and shown in the printer's status block, never echoed into the reply:
//! Enter submits it, Alt+Enter submits it as a follow-up, Esc cancels the run, Backspace,
//! Ctrl-W and Ctrl-U edit it, a bracketed paste goes in whole (newlines kept), Ctrl-D on an
//! empty line ends input. When the run ends first, what was typed is handed back for the
//! line editor to go on with.
//!
//! The reader sleeps in `poll` on standard input and a pipe that [`Stop`] writes to, so it
//! wakes for a key or for the end of the run and never on a timer.
// `unsafe` here: termios, poll and read on the terminal, key by key.
#![allow(unsafe_code)]

use std::os::fd::AsRawFd;

use super::printer::Printer;

/// What reading a line gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadResult {
    Line(String),
    /// Ctrl-C at the prompt.
    Interrupted,
    /// Ctrl-D or end of input.
    Eof,
    /// A read during a run was given up when the run ended (nothing was typed).
    Nothing,
    /// Alt+Enter during a run: the line is a follow-up.
    FollowUp(String),
    /// Esc during a run.
    Cancel,
    /// The run ended while a line was being typed: the line editor goes on with it.
    Draft(String),
}
/// How long after a lone Esc byte the rest of a key's sequence may still come.
pub const ESC_WAIT_MS: i32 = 30;

/// What the keys typed so far mean.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Key {
    /// The line changed: show it again.
    Edited,
    Submit(String),
    FollowUp(String),
    Cancel,
    Eof,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Seq {
    #[default]
    Normal,
    /// After an Esc byte.
    Esc,
    /// In `ESC [ …` up to its final byte; the parameter bytes so far.
    Csi,
    /// After `ESC O`: one more byte.
    Ss3,
}

/// The line being typed and the escape sequence being read.
#[derive(Debug, Default)]
pub struct Draft {
    bytes: Vec<u8>,
    seq: Seq,
    params: Vec<u8>,
    pasting: bool,
}

impl Draft {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }

    /// Whether an Esc byte came last (a lone Esc, unless more bytes follow soon).
    pub fn after_esc(&self) -> bool {
        self.seq == Seq::Esc
    }

    fn take(&mut self) -> String {
        let text = self.text();
        self.bytes.clear();
        text
    }

    /// Takes bytes from the terminal; what they meant, in order.
    pub fn feed(&mut self, input: &[u8]) -> Vec<Key> {
        let mut keys = Vec::new();
        for &b in input {
            if let Some(key) = self.byte(b) {
                keys.push(key);
            }
        }
        keys
    }

    /// No more bytes came after an Esc: it was the Esc key.
    pub fn lone_esc(&mut self) -> Key {
        self.seq = Seq::Normal;
        Key::Cancel
    }

    fn byte(&mut self, b: u8) -> Option<Key> {
        match self.seq {
            Seq::Esc => {
                self.seq = Seq::Normal;
                return match b {
                    b'[' => {
                        self.seq = Seq::Csi;
                        self.params.clear();
                        None
                    }
                    b'O' => {
                        self.seq = Seq::Ss3;
                        None
                    }
                    b'\r' | b'\n' => Some(Key::FollowUp(self.take())),
                    0x1b => Some(Key::Cancel),
                    // Alt with another key: nothing here.
                    _ => None,
                };
            }
            Seq::Ss3 => {
                self.seq = Seq::Normal;
                return None;
            }
            Seq::Csi => {
                if (0x40..=0x7e).contains(&b) {
                    self.seq = Seq::Normal;
                    match (self.params.as_slice(), b) {
                        (b"200", b'~') => self.pasting = true,
                        (b"201", b'~') => self.pasting = false,
                        _ => {}
                    }
                } else {
                    self.params.push(b);
                }
                return None;
            }
            Seq::Normal => {}
        }
        if b == 0x1b {
            self.seq = Seq::Esc;
            return None;
        }
        if self.pasting {
            // A paste goes in as it is: its newlines are part of the line.
            self.bytes.push(if b == b'\r' { b'\n' } else { b });
            return Some(Key::Edited);
        }
        match b {
            b'\r' | b'\n' => Some(Key::Submit(self.take())),
            0x04 if self.bytes.is_empty() => Some(Key::Eof),
            0x7f | 0x08 => {
                while self.bytes.pop().is_some_and(|c| c & 0xc0 == 0x80) {}
                Some(Key::Edited)
            }
            0x15 => {
                self.bytes.clear();
                Some(Key::Edited)
            }
            0x17 => {
                while self.bytes.last() == Some(&b' ') {
                    self.bytes.pop();
                }
                while self.bytes.last().is_some_and(|c| *c != b' ') {
                    self.bytes.pop();
                }
                Some(Key::Edited)
            }
            b'\t' => {
                self.bytes.push(b' ');
                Some(Key::Edited)
            }
            0..=0x1f => None,
            _ => {
                self.bytes.push(b);
                Some(Key::Edited)
            }
        }
    }
}

/// Ends a key read in progress: [`Stop::stop`] wakes the reader, which gives up.
pub struct Stop {
    read: std::io::PipeReader,
    write: std::io::PipeWriter,
}

impl Stop {
    /// A pipe (close-on-exec, as std makes them) the reader polls beside standard input.
    pub fn new() -> std::io::Result<Stop> {
        let (read, write) = std::io::pipe()?;
        Ok(Stop { read, write })
    }

    pub fn stop(&self) {
        use std::io::Write;
        let _ = (&self.write).write(&[1u8]);
    }
}

/// The terminal in key-at-a-time mode without echo, restored when dropped.
struct RawMode {
    saved: libc::termios,
}

impl RawMode {
    fn enter() -> Option<RawMode> {
        let current = current_mode()?;
        // Back to the settings mypi started with (not the quiet ones `quiet` may have left).
        let saved = crate::platform::stdio::saved_terminal().unwrap_or(current);
        if !set_keys_mode(current) {
            return None;
        }
        // Bracketed paste: a paste arrives marked, so its newlines do not submit it.
        super::printer::write_raw("\x1b[?2004h");
        Some(RawMode { saved })
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        super::printer::write_raw("\x1b[?2004l");
        // SAFETY: restores settings read by tcgetattr.
        unsafe {
            libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, &self.saved);
        }
    }
}

fn current_mode() -> Option<libc::termios> {
    // SAFETY: tcgetattr fills the zeroed struct or fails without touching it.
    unsafe {
        let mut t: libc::termios = std::mem::zeroed();
        (libc::tcgetattr(libc::STDIN_FILENO, &mut t) == 0).then_some(t)
    }
}

/// Keys one at a time, no echo; signals (Ctrl-C) stay on.
fn set_keys_mode(mut t: libc::termios) -> bool {
    t.c_lflag &= !(libc::ECHO | libc::ICANON | libc::IEXTEN);
    t.c_iflag &= !(libc::ICRNL | libc::IXON);
    t.c_cc[libc::VMIN] = 1;
    t.c_cc[libc::VTIME] = 0;
    // SAFETY: tcsetattr reads the struct we own.
    unsafe { libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, &t) == 0 }
}

/// Stops the terminal echoing keys right after a line was read, so keys typed before the
/// run's key reader starts are not echoed into the output either (they wait, unread, for
/// it). The key reader and the line editor put the usual settings back themselves.
pub fn quiet() {
    if let Some(t) = current_mode() {
        set_keys_mode(t);
    }
}

/// Waits for standard input or `stop` (`timeout_ms` -1: no limit). Whether stdin has bytes.
fn wait(stop: &Stop, timeout_ms: i32) -> Option<bool> {
    let mut fds = [
        libc::pollfd {
            fd: libc::STDIN_FILENO,
            events: libc::POLLIN,
            revents: 0,
        },
        libc::pollfd {
            fd: stop.read.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    loop {
        // SAFETY: poll on two valid pollfds we own.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), 2, timeout_ms) };
        if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        if n <= 0 {
            return Some(false);
        }
        if fds[1].revents != 0 {
            return None;
        }
        return Some(fds[0].revents != 0);
    }
}

/// Reads keys until one ends the read (see the module doc). `Nothing`: the run ended with
/// nothing typed; `Draft`: it ended with a line begun. `pending` holds bytes typed ahead:
/// they are taken first, and what comes after the key that ends the read (the next lines of
/// a paste the terminal did not mark, keys typed fast) is left there for the next read.
pub fn read_keys(
    stop: &Stop,
    initial: &str,
    printer: &Printer,
    pending: &mut Vec<u8>,
) -> ReadResult {
    let Some(_raw) = RawMode::enter() else {
        return match initial {
            "" => ReadResult::Nothing,
            text => ReadResult::Draft(text.to_string()),
        };
    };
    let mut draft = Draft {
        bytes: initial.as_bytes().to_vec(),
        ..Draft::default()
    };
    if let Some(done) = take_keys(&mut draft, pending, printer) {
        return done;
    }
    let mut buf = [0u8; 1024];
    loop {
        let timeout = if draft.after_esc() { ESC_WAIT_MS } else { -1 };
        match wait(stop, timeout) {
            None => {
                printer.set_draft(None);
                let text = draft.text();
                return if text.is_empty() {
                    ReadResult::Nothing
                } else {
                    ReadResult::Draft(text)
                };
            }
            Some(false) if draft.after_esc() => {
                if let Some(done) = finished(draft.lone_esc()) {
                    printer.set_draft(None);
                    return done;
                }
            }
            Some(false) => {}
            Some(true) => {
                // SAFETY: reads into a buffer we own, at most its length.
                let n =
                    unsafe { libc::read(libc::STDIN_FILENO, buf.as_mut_ptr().cast(), buf.len()) };
                if n <= 0 {
                    printer.set_draft(None);
                    return ReadResult::Eof;
                }
                pending.extend_from_slice(&buf[..n as usize]);
                if let Some(done) = take_keys(&mut draft, pending, printer) {
                    return done;
                }
            }
        }
    }
}

/// What a key means for the read: `None` while the line is still being typed.
fn finished(key: Key) -> Option<ReadResult> {
    match key {
        Key::Edited => None,
        Key::Submit(text) => Some(ReadResult::Line(text)),
        Key::FollowUp(text) => Some(ReadResult::FollowUp(text)),
        Key::Cancel => Some(ReadResult::Cancel),
        Key::Eof => Some(ReadResult::Eof),
    }
}

/// Feeds `pending` to the draft up to a key that ends the read, which it returns; the bytes
/// after that key stay in `pending`. Shows the line as typed so far.
fn take_keys(draft: &mut Draft, pending: &mut Vec<u8>, printer: &Printer) -> Option<ReadResult> {
    let mut edited = false;
    for (i, &b) in pending.iter().enumerate() {
        match draft.byte(b).map(finished) {
            Some(Some(done)) => {
                pending.drain(..=i);
                printer.set_draft(None);
                return Some(done);
            }
            Some(None) => edited = true,
            None => {}
        }
    }
    pending.clear();
    if edited {
        printer.set_draft(Some(draft.text()));
    }
    None
}

/// The first whole line of `pending` (bytes typed ahead while keys were read), taken out of
/// it; `None` when it holds no whole line (then its text, if any, is the line begun).
pub fn typed_line(pending: &mut Vec<u8>) -> Option<String> {
    let mut draft = Draft::default();
    for (i, &b) in pending.iter().enumerate() {
        if let Some(Key::Submit(text) | Key::FollowUp(text)) = draft.byte(b) {
            pending.drain(..=i);
            return Some(text);
        }
    }
    None
}

/// The text of a line begun in `pending` (no whole line in it), which is emptied.
pub fn typed_draft(pending: &mut Vec<u8>) -> String {
    let mut draft = Draft::default();
    draft.feed(pending);
    pending.clear();
    draft.text()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enter_alt_enter_and_editing() {
        let mut d = Draft::default();
        assert_eq!(d.feed(b"hi\x7f\x7fok"), vec![Key::Edited; 6]);
        assert_eq!(d.text(), "ok");
        assert_eq!(d.feed(b"\r"), [Key::Submit("ok".into())]);
        d.feed("héllo wörld".as_bytes());
        d.feed(b"\x7f\x7f");
        assert_eq!(d.text(), "héllo wör");
        d.feed(b"\x17");
        assert_eq!(d.text(), "héllo ");
        assert_eq!(
            d.feed(b"x\x1b\r").last(),
            Some(&Key::FollowUp("héllo x".into()))
        );
        d.feed(b"abc\x15");
        assert_eq!(d.text(), "");
        assert_eq!(d.feed(b"\x04"), [Key::Eof]);
    }

    #[test]
    fn escape_sequences_are_keys_not_text_and_a_lone_esc_cancels() {
        let mut d = Draft::default();
        assert!(d.feed(b"\x1b[A\x1b[1;5D\x1bOP").is_empty(), "arrows, F1");
        assert_eq!(d.text(), "");
        d.feed(b"\x1b");
        assert!(d.after_esc());
        assert_eq!(d.lone_esc(), Key::Cancel);
        assert_eq!(d.feed(b"\x1b\x1b"), [Key::Cancel]);
    }

    #[test]
    fn a_bracketed_paste_keeps_its_newlines() {
        let mut d = Draft::default();
        d.feed(b"\x1b[200~line one\rline two\x1b[201~");
        assert_eq!(d.text(), "line one\nline two");
        assert_eq!(d.feed(b"\r"), [Key::Submit("line one\nline two".into())]);
    }
}
