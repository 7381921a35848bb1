//! A `mypi` REPL on a real pseudo-terminal, for what only a terminal shows: raw-mode line
//! editing and Ctrl-C typed as a key (the terminal turns it into SIGINT for mypi's process
//! group while no line is being edited).

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

pub struct Pty {
    child: Child,
    master: File,
    seen: Arc<(Mutex<String>, Condvar)>,
}

impl Pty {
    /// Starts `cmd` as a session leader whose controlling terminal is a new pty (of no
    /// known size).
    pub fn spawn(cmd: Command) -> Pty {
        Pty::spawn_sized(cmd, 0)
    }

    /// [`Pty::spawn`] on a terminal `cols` columns wide and 40 rows high.
    pub fn spawn_sized(mut cmd: Command, cols: u16) -> Pty {
        let (mut m, mut s) = (0, 0);
        let size = libc::winsize {
            ws_row: if cols == 0 { 0 } else { 40 },
            ws_col: cols,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: openpty fills two descriptors; null pointers mean default settings.
        let rc = unsafe {
            libc::openpty(
                &mut m,
                &mut s,
                std::ptr::null_mut(),
                std::ptr::null(),
                &size,
            )
        };
        assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
        // SAFETY: both descriptors are fresh and owned here.
        let (master, slave) = unsafe { (OwnedFd::from_raw_fd(m), OwnedFd::from_raw_fd(s)) };
        let io = |fd: &OwnedFd| Stdio::from(fd.try_clone().unwrap());
        cmd.stdin(io(&slave)).stdout(io(&slave)).stderr(io(&slave));
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd.spawn().unwrap();
        drop(slave);
        let master = File::from(master);
        let seen = Arc::new((Mutex::new(String::new()), Condvar::new()));
        let mut reader = master.try_clone().unwrap();
        let sink = seen.clone();
        thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let (lock, cv) = &*sink;
                lock.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
                cv.notify_all();
            }
        });
        Pty {
            child,
            master,
            seen,
        }
    }

    /// Types `text` (use `\r` for Enter, `\x03` for Ctrl-C, `\x04` for Ctrl-D).
    pub fn type_keys(&mut self, text: &str) {
        self.master.write_all(text.as_bytes()).unwrap();
    }

    /// Makes the terminal `cols` columns wide (mypi gets SIGWINCH).
    pub fn resize(&mut self, cols: u16) {
        use std::os::fd::AsRawFd;
        let size = libc::winsize {
            ws_row: 40,
            ws_col: cols,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: TIOCSWINSZ reads the winsize struct we own.
        let rc = unsafe { libc::ioctl(self.master.as_raw_fd(), libc::TIOCSWINSZ, &size) };
        assert_eq!(rc, 0, "TIOCSWINSZ: {}", std::io::Error::last_os_error());
    }

    /// Everything the terminal showed so far.
    pub fn screen(&self) -> String {
        self.seen.0.lock().unwrap().clone()
    }

    /// Waits until the screen, after byte `from`, contains `pattern`; the position after it.
    pub fn wait_for(&self, pattern: &str, from: usize, timeout: Duration) -> usize {
        let deadline = Instant::now() + timeout;
        let (lock, cv) = &*self.seen;
        let mut text = lock.lock().unwrap();
        loop {
            if let Some(at) = text.get(from..).and_then(|t| t.find(pattern)) {
                return from + at + pattern.len();
            }
            let now = Instant::now();
            assert!(
                now < deadline,
                "no {pattern:?} on the terminal within {timeout:?}; it shows:\n{}",
                *text
            );
            text = cv.wait_timeout(text, deadline - now).unwrap().0;
        }
    }

    /// Whether the process is still running.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Waits for the exit code (-1 for a signal); kills the process after `timeout`.
    pub fn wait(&mut self, timeout: Duration) -> i32 {
        let deadline = Instant::now() + timeout;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.code().unwrap_or(-1);
            }
            if Instant::now() >= deadline {
                let _ = self.child.kill();
                panic!("mypi did not exit within {timeout:?}:\n{}", self.screen());
            }
            thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The lines a terminal shows after `screen` was written to it: carriage return, newline,
/// cursor up (`ESC [ n A`) and right (`ESC [ n C`), erase to the end of the line (`ESC [ K`)
/// and of the screen (`ESC [ J`); other escape sequences show nothing.
pub fn visible_lines(screen: &str) -> Vec<String> {
    render_screen(screen, false)
}

/// [`visible_lines`] with the colour codes (`ESC [ … m`) kept before the characters they
/// colour, so a snapshot shows the colours too.
pub fn styled_lines(screen: &str) -> Vec<String> {
    render_screen(screen, true)
}

fn render_screen(screen: &str, keep_sgr: bool) -> Vec<String> {
    // Each cell is a character with the colour codes written just before it.
    let mut rows: Vec<Vec<String>> = vec![Vec::new()];
    let (mut row, mut col) = (0usize, 0usize);
    let mut sgr = String::new();
    let mut chars = screen.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' if chars.peek() == Some(&'[') => {
                chars.next();
                let mut params = String::new();
                let mut end = ' ';
                for d in chars.by_ref() {
                    if d.is_ascii_alphabetic() || d == '~' {
                        end = d;
                        break;
                    }
                    params.push(d);
                }
                let n = params.parse::<usize>().unwrap_or(1);
                match end {
                    'A' => row = row.saturating_sub(n),
                    'C' => col += n,
                    'K' => rows[row].truncate(col),
                    'J' => {
                        rows[row].truncate(col);
                        rows.truncate(row + 1);
                    }
                    'm' if keep_sgr => sgr.push_str(&format!("\u{1b}[{params}m")),
                    _ => {}
                }
            }
            '\u{1b}' => {}
            '\r' => col = 0,
            '\n' => {
                if !sgr.is_empty() {
                    if let Some(last) = rows[row].last_mut() {
                        last.push_str(&std::mem::take(&mut sgr));
                    }
                }
                row += 1;
                col = 0;
                if rows.len() <= row {
                    rows.push(Vec::new());
                }
            }
            c => {
                let line = &mut rows[row];
                while line.len() < col {
                    line.push(" ".into());
                }
                let cell = format!("{}{c}", std::mem::take(&mut sgr));
                if col < line.len() {
                    line[col] = cell;
                } else {
                    line.push(cell);
                }
                col += 1;
            }
        }
    }
    rows.into_iter().map(|r| r.concat()).collect()
}
