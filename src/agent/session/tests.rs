//! Unit tests of the session file: round trips, the last line, locking, and what
//! `--continue` passes over.

use std::io::Write;

use super::*;
use crate::platform::testutil::TempDir;
use crate::vocab::protocol::{ToolCall, ToolOutput};

fn new_session(dir: &Path) -> SessionWriter {
    SessionWriter::create(dir, Path::new("/x"), &new_id(), None).unwrap()
}

fn append_raw(path: &Path, bytes: &[u8]) {
    let mut f = OpenOptions::new().append(true).open(path).unwrap();
    f.write_all(bytes).unwrap();
}

#[test]
fn append_then_resume_round_trips() {
    let tmp = TempDir::new("rt");
    let dir = tmp.0.join("sessions");
    let mut w = new_session(&dir);
    w.append(&Message::user("hi")).unwrap();
    w.append(&Message::assistant("hello", vec![])).unwrap();
    let id = w.id().to_string();
    drop(w);
    let r = SessionWriter::resume_latest(&dir, None).unwrap();
    assert_eq!(r.messages.len(), 2);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert_eq!(r.writer.id(), id);
}

#[test]
fn a_resumed_message_keeps_every_field_but_its_details() {
    let tmp = TempDir::new("fields");
    let mut w = new_session(&tmp.0);
    let full = Message {
        role: crate::vocab::protocol::Role::Tool,
        content: "out".into(),
        tool_calls: vec![ToolCall {
            id: "c1".into(),
            name: "read".into(),
            arguments: serde_json::json!({"path": "a"}),
            invalid_arguments: Some("{".into()),
        }],
        tool_call_id: Some("c1".into()),
        name: Some("read".into()),
        is_error: true,
        images: vec![crate::vocab::protocol::Image {
            mime_type: "image/png".into(),
            data: "AAAA".into(),
        }],
        usage: Some(crate::vocab::protocol::Usage {
            input_tokens: 3,
            output_tokens: 4,
            cached_tokens: 1,
            cache_write_tokens: 0,
            cost_usd: Some(0.5),
        }),
        details: Some(serde_json::json!({"rows": [1, 2, 3]})),
        thinking: vec![crate::vocab::protocol::ThinkingBlock::Thinking {
            thinking: "hm".into(),
            signature: "sig".into(),
        }],
    };
    w.append(&full).unwrap();
    let path = w.path().to_path_buf();
    drop(w);
    let r = SessionWriter::resume(&path).unwrap();
    let expected = Message {
        details: None,
        ..full
    };
    assert_eq!(r.messages, vec![expected]);
    assert!(fs::read_to_string(&path).unwrap().contains("\"rows\""));
}

#[test]
fn torn_last_line_is_skipped_and_cut() {
    let tmp = TempDir::new("torn");
    let mut w = new_session(&tmp.0);
    w.append(&Message::user("kept")).unwrap();
    let path = w.path().to_path_buf();
    drop(w);
    append_raw(&path, br#"{"type":"message","message":{"role":"us"#);
    let mut r = SessionWriter::resume(&path).unwrap();
    assert_eq!(r.messages, vec![Message::user("kept")]);
    assert!(r.warnings[0].contains("incomplete"), "{:?}", r.warnings);
    r.writer.append(&Message::user("next")).unwrap();
    drop(r);
    let again = SessionWriter::resume(&path).unwrap();
    assert_eq!(again.messages.len(), 2);
    assert!(again.warnings.is_empty());
}

#[test]
fn a_complete_last_line_without_newline_is_kept_and_the_next_line_starts_fresh() {
    let tmp = TempDir::new("nonl");
    let mut w = new_session(&tmp.0);
    w.append(&Message::user("one")).unwrap();
    w.append(&Message::assistant("two", vec![])).unwrap();
    let path = w.path().to_path_buf();
    drop(w);
    let text = fs::read_to_string(&path).unwrap();
    fs::write(&path, text.trim_end_matches('\n')).unwrap();
    let mut r = SessionWriter::resume(&path).unwrap();
    assert_eq!(r.messages.len(), 2);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    r.writer.append(&Message::user("three")).unwrap();
    drop(r);
    let text = fs::read_to_string(&path).unwrap();
    assert!(text.ends_with('\n'));
    for line in text.lines() {
        serde_json::from_str::<Entry>(line).unwrap_or_else(|e| panic!("{e}: {line}"));
    }
    let contents: Vec<String> = read_messages(&path)
        .unwrap()
        .into_iter()
        .map(|m| m.content)
        .collect();
    assert_eq!(contents, vec!["one", "two", "three"]);
}

#[test]
fn a_complete_last_line_that_is_not_an_entry_is_kept_with_a_warning() {
    let tmp = TempDir::new("foreign");
    let mut w = new_session(&tmp.0);
    w.append(&Message::user("one")).unwrap();
    let path = w.path().to_path_buf();
    drop(w);
    append_raw(&path, br#"{"type":"from_the_future","x":1}"#);
    let len = fs::metadata(&path).unwrap().len();
    let r = SessionWriter::resume(&path).unwrap();
    assert_eq!(r.messages.len(), 1);
    assert!(
        r.warnings[0].contains(":3: skipped a line"),
        "{:?}",
        r.warnings
    );
    assert_eq!(fs::metadata(&path).unwrap().len(), len, "nothing was cut");
}

#[test]
fn many_bad_lines_are_summed_up() {
    let tmp = TempDir::new("bad");
    let w = new_session(&tmp.0);
    let path = w.path().to_path_buf();
    drop(w);
    append_raw(&path, "not json\n".repeat(20).as_bytes());
    let r = SessionWriter::resume(&path).unwrap();
    assert_eq!(r.warnings.len(), 6, "{:?}", r.warnings);
    assert!(r.warnings[5].contains("skipped 15 more lines"));
}

#[test]
fn a_file_without_a_header_is_not_a_session() {
    let tmp = TempDir::new("nohdr");
    let path = tmp.0.join("notes.jsonl");
    fs::write(&path, "{\"role\":\"user\"}\n").unwrap();
    let err = SessionWriter::resume(&path).unwrap_err();
    assert!(matches!(err, SessionError::NotASession { .. }), "{err}");
    assert!(err.to_string().contains("not a mypi session file"), "{err}");
    fs::write(&path, "").unwrap();
    let err = SessionWriter::resume(&path).unwrap_err();
    assert!(err.to_string().contains("it is empty"), "{err}");
    assert!(
        !lock::lock_path(&path).exists(),
        "the lock went with the error"
    );
}

#[test]
fn an_open_session_is_locked_until_its_writer_is_dropped() {
    let tmp = TempDir::new("locked");
    let w = new_session(&tmp.0);
    let path = w.path().to_path_buf();
    let err = SessionWriter::resume(&path).unwrap_err();
    match &err {
        SessionError::Locked { id, pid, .. } => {
            assert_eq!(id, w.id());
            assert_eq!(*pid, Some(std::process::id()));
        }
        other => panic!("expected Locked, got {other}"),
    }
    let shown = err.to_string();
    assert!(
        shown.contains(&format!("is in use by mypi (pid {})", std::process::id())),
        "{shown}"
    );
    assert!(
        matches!(
            SessionWriter::resume_latest(&tmp.0, None),
            Err(SessionError::Locked { .. })
        ),
        "--continue does not fall back to an older session"
    );
    assert!(
        read_messages(&path).unwrap().is_empty(),
        "reading needs no lock"
    );
    drop(w);
    SessionWriter::resume(&path).unwrap();
}

#[test]
fn continue_passes_over_folders_fifos_and_foreign_files() {
    let tmp = TempDir::new("skip");
    let mut w = new_session(&tmp.0);
    w.append(&Message::user("the real one")).unwrap();
    let path = w.path().to_path_buf();
    drop(w);
    File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(SystemTime::now() - std::time::Duration::from_secs(3600))
        .unwrap();
    fs::create_dir(tmp.0.join("zz-folder.jsonl")).unwrap();
    let fifo = tmp.0.join("zz-fifo.jsonl");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o644)).unwrap();
    fs::write(tmp.0.join("zz-notes.jsonl"), "garbage\n").unwrap();
    let r = SessionWriter::resume_latest(&tmp.0, None).unwrap();
    assert_eq!(r.writer.path(), path);
    assert_eq!(r.messages, vec![Message::user("the real one")]);
    let all = r.warnings.join("\n");
    assert!(all.contains("zz-folder.jsonl: it is a folder"), "{all}");
    assert!(all.contains("zz-fifo.jsonl: it is a FIFO"), "{all}");
    assert!(all.contains("zz-notes.jsonl: its first line"), "{all}");
}

#[test]
fn nothing_to_continue_names_what_was_passed_over() {
    let tmp = TempDir::new("none");
    fs::create_dir(tmp.0.join("a.jsonl")).unwrap();
    let err = SessionWriter::resume_latest(&tmp.0, None).unwrap_err();
    let shown = err.to_string();
    assert!(shown.contains("no session to continue"), "{shown}");
    assert!(shown.contains("a.jsonl: it is a folder"), "{shown}");
}

#[test]
fn unfinished_tool_calls_are_answered_on_resume() {
    let tmp = TempDir::new("interrupted");
    let mut w = new_session(&tmp.0);
    let write = ToolCall::from_raw("w".into(), "write".into(), r#"{"path":"a"}"#);
    let bash = ToolCall::from_raw("b".into(), "bash".into(), r#"{"command":"sleep 30"}"#);
    w.append(&Message::user("go")).unwrap();
    w.append(&Message::assistant("", vec![write.clone(), bash]))
        .unwrap();
    w.append(&Message::tool_result(&write, &ToolOutput::ok("wrote a")))
        .unwrap();
    let path = w.path().to_path_buf();
    drop(w);
    let r = SessionWriter::resume(&path).unwrap();
    assert_eq!(r.messages.len(), 4);
    assert_eq!(r.messages[2].content, "wrote a");
    assert_eq!(r.messages[3].tool_call_id.as_deref(), Some("b"));
    assert_eq!(r.messages[3].content, repair::INTERRUPTED);
    assert!(r.warnings[0].contains("1 tool call(s) had not finished"));
    assert_eq!(
        read_messages(&path).unwrap().len(),
        3,
        "the file is unchanged"
    );
}
