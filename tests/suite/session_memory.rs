//! Resuming keeps what the next request needs, not the file: a session whose tool results
//! carry large `details` (a script tool's data, never sent to a model) and one very long line
//! resumes in memory near the longest line plus the messages kept, measured as the peak
//! resident memory of the real binary (`VmHWM`, read while it waits for the next line).

use std::io::Write;
use std::path::Path;

use crate::common::TestDir;

use super::session_safety::peak_after_answer;

const MB: u64 = 1 << 20;

/// What a written session holds: its size, its longest line, and the bytes of the messages
/// a resume keeps (each message's JSON without its details).
struct Written {
    size: u64,
    longest: u64,
    kept: u64,
}

impl Written {
    /// Writes one message line (`details` and the message's closing brace after it).
    fn line(&mut self, out: &mut impl Write, message: &str, details: &str) {
        let text = format!("{{\"type\":\"message\",\"ts\":1,\"message\":{message}{details}}}\n");
        out.write_all(text.as_bytes()).unwrap();
        self.size += text.len() as u64;
        self.longest = self.longest.max(text.len() as u64);
        self.kept += message.len() as u64 + 1;
    }
}

/// Writes a session of about `bytes`: rounds of a question, a call and its result (2 kB of
/// text and 30 kB of `details`, an array of numbers), and one result of 16 MB of text with
/// escapes in the middle.
fn write_session(path: &Path, bytes: u64) -> Written {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut w = Written {
        size: 0,
        longest: 0,
        kept: 0,
    };
    let header =
        "{\"type\":\"session\",\"version\":2,\"id\":\"big\",\"cwd\":\"/x\",\"created_ms\":0}\n";
    out.write_all(header.as_bytes()).unwrap();
    let numbers: Vec<String> = (0..6000).map(|i| (i * 7919 % 10007).to_string()).collect();
    let details = format!(",\"details\":[{}]", numbers.join(","));
    let text = "lorem ipsum \\\"quoted\\\" dolor\\n".repeat(70);
    let mut n = 0;
    while w.size < bytes {
        w.line(
            &mut out,
            &format!("{{\"role\":\"user\",\"content\":\"q{n}\"}}"),
            "",
        );
        let call = format!(
            "{{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{{\"id\":\"c{n}\",\
             \"name\":\"t\",\"arguments\":{{\"n\":{n}}}}}]}}"
        );
        w.line(&mut out, &call, "");
        let big = if n == 100 {
            text.repeat(8000)
        } else {
            text.clone()
        };
        let result = format!(
            "{{\"role\":\"tool\",\"content\":\"{big}\",\"tool_call_id\":\"c{n}\",\"name\":\"t\""
        );
        // The message's closing brace comes after its details.
        w.line(&mut out, &result, &format!("{details}}}"));
        n += 1;
    }
    out.flush().unwrap();
    w
}

/// The peak memory of `mypi ARGS` in the REPL once it answered `/session`.
fn peak_at_session(dir: &TestDir, args: &[&str]) -> u64 {
    peak_after_answer(dir, args, "/session", "Messages: ")
}

#[test]
fn resuming_keeps_what_the_next_request_needs_not_the_file() {
    let dir = TestDir::new();
    let idle = ["--provider", "faux", "--no-extensions", "--no-session"];
    let base = peak_at_session(&dir, &idle);
    let path = super::wire::sessions_dir(&dir).join("20250101-000000-0b1g.jsonl");
    let w = write_session(&path, 100 * MB);
    let peak = peak_at_session(&dir, &["--provider", "faux", "--no-extensions", "-c"]);
    let bound = base + w.longest * 5 / 2 + w.kept;
    eprintln!(
        "session {} MB (longest line {} MB, messages kept {} MB): peak {} MB, {} MB without a \
         session, bound {} MB",
        w.size / MB,
        w.longest / MB,
        w.kept / MB,
        peak / MB,
        base / MB,
        bound / MB
    );
    assert!(
        peak < bound && peak < 400 * MB,
        "resuming a {} MB session peaked at {} MB (bound {} MB)",
        w.size / MB,
        peak / MB,
        bound / MB
    );
}
