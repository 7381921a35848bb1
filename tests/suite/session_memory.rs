//! Resuming keeps what the next request needs, not the file, measured as the peak resident
//! memory of the real binary (`VmHWM`, read while it waits for the next line) on 100 MB
//! sessions: one whose tool results carry large `details` (a script tool's data, never sent
//! to a model) around one very long line, and one compacted (with a summary) at its end.
//! Either resumes within 2.5 times its longest line plus the messages kept (and the
//! bookkeeping of a few bytes per line), over mypi without a session.

use std::io::Write;
use std::path::Path;

use crate::common::TestDir;

use super::session_safety::peak_after_answer;

const MB: u64 = 1 << 20;

/// What a written session holds: its size, its longest line, and the bytes of the messages
/// a resume keeps (each message's JSON without its details).
#[derive(Default)]
struct Written {
    size: u64,
    longest: u64,
    kept: u64,
    /// The sizes of the last four messages (what the compaction keeps).
    recent: Vec<u64>,
}

impl Written {
    /// Writes one line.
    fn write(&mut self, out: &mut impl Write, text: &str) {
        out.write_all(text.as_bytes()).unwrap();
        self.size += text.len() as u64;
        self.longest = self.longest.max(text.len() as u64);
    }

    /// Writes one message line (`details` and the message's closing brace after it).
    fn message(&mut self, out: &mut impl Write, message: &str, details: &str) {
        let text = format!("{{\"type\":\"message\",\"ts\":1,\"message\":{message}{details}}}\n");
        self.write(out, &text);
        self.kept += message.len() as u64 + 1;
        self.recent.push(message.len() as u64 + 1);
        if self.recent.len() > 4 {
            self.recent.remove(0);
        }
    }

    /// Writes a compaction that keeps the last four messages and a summary of the rest.
    fn compaction(&mut self, out: &mut impl Write) {
        let summary = "the story so far";
        let line = format!(
            "{{\"type\":\"compaction\",\"compaction\":{{\"keep_last\":4,\"summary\":\"{summary}\"}}}}\n"
        );
        self.write(out, &line);
        self.kept = self.recent.iter().sum::<u64>() + 200 + summary.len() as u64;
    }
}

/// Writes a session of about `bytes`: rounds of a question, a call and its result. With
/// `details`, each result has 2 kB of text and 30 kB of details (an array of numbers), and
/// one has 16 MB of text with escapes; without, each result has 20 kB of text, and the
/// session ends with a compaction and one more round.
fn write_session(path: &Path, bytes: u64, details: bool) -> Written {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut w = Written::default();
    let header =
        "{\"type\":\"session\",\"version\":2,\"id\":\"big\",\"cwd\":\"/x\",\"created_ms\":0}\n";
    w.write(&mut out, header);
    let numbers: Vec<String> = (0..6000).map(|i| (i * 7919 % 10007).to_string()).collect();
    let extra = match details {
        true => format!(",\"details\":[{}]}}", numbers.join(",")),
        false => "}".to_string(),
    };
    let text = "lorem ipsum \\\"quoted\\\" dolor\\n".repeat(if details { 70 } else { 700 });
    let mut n = 0;
    let round = |w: &mut Written, out: &mut std::io::BufWriter<std::fs::File>, n: usize| {
        let question = format!("{{\"role\":\"user\",\"content\":\"q{n}\"}}");
        w.message(out, &question, "");
        let call = format!(
            "{{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{{\"id\":\"c{n}\",\
             \"name\":\"t\",\"arguments\":{{\"n\":{n}}}}}]}}"
        );
        w.message(out, &call, "");
        let big = match details && n == 100 {
            true => text.repeat(8000),
            false => text.clone(),
        };
        let result = format!(
            "{{\"role\":\"tool\",\"content\":\"{big}\",\"tool_call_id\":\"c{n}\",\"name\":\"t\""
        );
        // The message's closing brace comes after its details.
        w.message(out, &result, &extra);
    };
    while w.size < bytes {
        round(&mut w, &mut out, n);
        n += 1;
    }
    if !details {
        w.compaction(&mut out);
        round(&mut w, &mut out, n);
    }
    out.flush().unwrap();
    w
}

#[test]
fn resuming_keeps_what_the_next_request_needs_not_the_file() {
    let dir = TestDir::new();
    let idle = ["--provider", "faux", "--no-extensions", "--no-session"];
    let base = peak_after_answer(&dir, &idle, "/session", "Messages: ");
    for details in [true, false] {
        let path = super::wire::sessions_dir(&dir).join("20250101-000000-0b1g.jsonl");
        let w = write_session(&path, 100 * MB, details);
        let args = ["--provider", "faux", "--no-extensions", "-c"];
        let peak = peak_after_answer(&dir, &args, "/session", "Messages: ");
        // A few bytes a line of bookkeeping: under 16 MB for 100 MB of lines.
        let bound = base + w.longest * 5 / 2 + w.kept + 16 * MB;
        eprintln!(
            "session {} MB (longest line {} kB, messages kept {} kB, details {details}): peak \
             {} MB, {} MB without a session, bound {} MB",
            w.size / MB,
            w.longest >> 10,
            w.kept >> 10,
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
        std::fs::remove_file(&path).unwrap();
    }
}
