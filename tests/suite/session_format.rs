//! Where sessions live and what their lines carry (issue 12, point 3): out of the project, in
//! `~/.agents/sessions/<project-folder-slug>/` (or back in the project with `sessions.dir =
//! "project"`); a header with the format version, id, created time, cwd, provider and model;
//! a `ts` on every line; files of the previous format, in the previous place, still resume.

use serde_json::Value;

use super::wire::{only_session, sessions_dir, user_texts};
use crate::common::{FakeOpenAi, Mypi, Reply, TestDir};

fn lines(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn sessions_are_kept_out_of_the_project_with_a_header_and_times() {
    let dir = TestDir::new();
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let out = Mypi::new(&dir)
        .args(["--provider", "faux", "-p", "hello"])
        .run();
    out.ok();
    assert!(!dir.exists(".agents/sessions"), "nothing in the project");
    let file = only_session(&dir);
    assert!(file.starts_with(sessions_dir(&dir)), "{}", file.display());
    let slug = file
        .parent()
        .unwrap()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(
        slug.starts_with("--") && slug.ends_with("--") && !slug.contains('/'),
        "{slug}"
    );
    let l = lines(&file);
    let h = &l[0];
    assert_eq!(h["type"], "session");
    assert_eq!(h["version"], 2);
    assert_eq!(
        h["id"],
        file.file_stem().unwrap().to_string_lossy().as_ref()
    );
    assert_eq!(
        h["cwd"],
        dir.path().canonicalize().unwrap().display().to_string()
    );
    assert_eq!(
        (h["provider"].as_str(), h["model"].as_str()),
        (Some("faux"), Some("faux"))
    );
    assert!(h["created_ms"].as_u64().unwrap() >= before);
    for line in &l {
        let ts = line["ts"]
            .as_u64()
            .unwrap_or_else(|| panic!("no ts: {line}"));
        assert!(
            ts >= before && ts >= h["created_ms"].as_u64().unwrap(),
            "{line}"
        );
    }
    assert_eq!(l[1]["message"]["content"], "hello");
}

#[test]
fn sessions_dir_project_keeps_them_in_the_project_folder() {
    let dir = TestDir::new();
    dir.write(
        "home/.agents/config.toml",
        "[sessions]\ndir = \"project\"\n",
    );
    let out = Mypi::new(&dir)
        .args(["--provider", "faux", "-p", "hello"])
        .run();
    out.ok();
    let files: Vec<_> = std::fs::read_dir(dir.path().join(".agents/sessions"))
        .unwrap()
        .collect();
    assert_eq!(files.len(), 1);
    assert!(!sessions_dir(&dir).exists());
}

#[test]
fn a_session_of_the_previous_format_in_the_previous_place_resumes() {
    let dir = TestDir::new();
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/sessions/format-1.jsonl"
    );
    dir.write(
        ".agents/sessions/20251130-120000-a1b2.jsonl",
        &std::fs::read_to_string(fixture).unwrap(),
    );
    let fake = FakeOpenAi::with_replies(vec![Reply::text("and eggs")]);
    let out = Mypi::new(&dir)
        .openai(&fake)
        .args(["--continue", "-p", "anything else?"])
        .run();
    out.ok();
    assert_eq!(out.stdout.trim(), "and eggs");
    let req = &fake.requests()[0];
    assert_eq!(user_texts(req), ["what is in notes.txt?", "anything else?"]);
    let sent = req.body["messages"].to_string();
    assert!(
        sent.contains("buy milk") && sent.contains("It says to buy milk."),
        "{sent}"
    );
    // It goes on in its own file, which keeps its old lines as they were.
    let text = dir.read(".agents/sessions/20251130-120000-a1b2.jsonl");
    assert!(text.starts_with(&std::fs::read_to_string(fixture).unwrap()));
    assert!(text.contains("anything else?"));
}
