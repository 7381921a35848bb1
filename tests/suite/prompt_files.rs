//! Prompt files as slash commands (issue 35, point 2), from the binary: `.agents/prompts` and
//! `.claude/commands` in the project and under HOME, subfolders as `a:b` names, `$ARGUMENTS`
//! and `$1`…`$9` as Claude Code puts them in, the text sent through the `input` hook like a
//! typed line, `description` / `argument-hint` in `/help` and at the REPL's prompt, and a
//! built-in or script command winning a name.

use std::time::Duration;

use crate::common::pty::Pty;
use crate::common::{FakeOpenAi, Mypi, Reply, TestDir};

use super::ext_util::install;
use super::wire::{no_panic, user_texts};

/// The user text each line sent, one print-mode run a line.
fn sent(dir: &TestDir, lines: &[&str]) -> Vec<String> {
    let replies = lines.iter().map(|_| Reply::text("ok")).collect();
    let fake = FakeOpenAi::with_replies(replies);
    for line in lines {
        let out = Mypi::new(dir)
            .openai(&fake)
            .args(["--no-session", "-p", line])
            .run();
        out.ok();
        no_panic(&out.stderr);
    }
    let reqs = fake.requests();
    assert_eq!(reqs.len(), lines.len());
    reqs.iter().map(|r| user_texts(r).join("\n")).collect()
}

fn files(dir: &TestDir) {
    dir.write(
        ".claude/commands/frontend/component.md",
        "---\ndescription: Make a component\nargument-hint: <name> [style]\n---\nMake $1 in $2 style (all: $ARGUMENTS).\n",
    );
    dir.write(
        ".agents/prompts/review.md",
        "# Review the diff\n\nReview it carefully.\n",
    );
    dir.write(
        "home/.claude/commands/fix.md",
        "---\ndescription: Fix an issue\n---\nFix issue #$ARGUMENTS now.",
    );
    dir.write(
        "home/.agents/prompts/ops/deploy/staging.md",
        "Deploy $1 to staging, then $3.",
    );
}

#[test]
fn prompt_files_send_their_text_with_the_arguments_put_in() {
    let dir = TestDir::new();
    files(&dir);
    let texts = sent(
        &dir,
        &[
            "/frontend:component Button \"dark mode\"",
            "/frontend:component Card",
            "/review src/main.rs",
            "/review",
            "/fix 123 high",
            "/ops:deploy:staging api",
        ],
    );
    assert_eq!(
        texts,
        vec![
            "Make Button in dark mode style (all: Button \"dark mode\").",
            "Make Card in  style (all: Card).",
            "# Review the diff\n\nReview it carefully.\n\nARGUMENTS: src/main.rs",
            "# Review the diff\n\nReview it carefully.",
            "Fix issue #123 high now.",
            "Deploy api to staging, then .",
        ]
    );
    // The file is read when the command runs: an edit counts at once; `@path` attaches the
    // file as in a typed line.
    dir.write(".agents/prompts/review.md", "Look again at @$1.");
    dir.write("lib.rs", "fn lib() {}");
    assert_eq!(
        sent(&dir, &["/review lib.rs"]),
        vec!["Look again at @lib.rs.\n\n<file path=\"lib.rs\">\nfn lib() {}\n</file>"]
    );
}

#[test]
fn a_prompt_file_goes_through_the_input_hook_like_a_typed_line() {
    let dir = TestDir::new();
    dir.write("home/.claude/commands/greet.md", "Greet $1");
    install(
        &dir,
        "hook.lua",
        r#"api.on("input", function(e) return { updated_input = "[" .. e.source .. "] " .. e.text } end)"#,
    );
    assert_eq!(
        sent(&dir, &["/greet Ada", "typed"]),
        vec!["[user] Greet Ada", "[user] typed"]
    );
}

#[test]
fn help_shows_each_prompt_files_description_and_argument_hint() {
    let dir = TestDir::new();
    files(&dir);
    let out = Mypi::new(&dir)
        .args(["--provider", "faux", "--no-session", "-p", "/help"])
        .run();
    out.ok();
    let help = out.stdout;
    for line in [
        "/frontend:component <name> [style]  Make a component [project prompt]",
        "/review ",
        "Review the diff [project prompt]",
        "Fix an issue [user prompt]",
        "/ops:deploy:staging ",
    ] {
        assert!(help.contains(line), "{line:?} not in\n{help}");
    }
}

#[test]
fn a_builtin_or_script_command_wins_over_a_prompt_file() {
    let dir = TestDir::new();
    let help = dir.write(".agents/prompts/help.md", "not the help");
    let mine = dir.write("home/.claude/commands/mine.md", "not mine");
    install(
        &dir,
        "mine.lua",
        r#"api.command("mine", function() return "the script's" end)"#,
    );
    let out = Mypi::new(&dir)
        .args(["--provider", "faux", "--no-session", "-p", "/mine"])
        .run();
    out.ok();
    assert_eq!(out.stdout, "the script's\n", "{}", out.describe());
    for (path, owner) in [(&help, "core"), (&mine, "mine")] {
        let notice = format!(
            "is taken by {owner}, which wins; the prompt file {} is not a command",
            path.display()
        );
        assert_eq!(
            out.stderr.matches(&notice).count(),
            1,
            "{notice}\n{}",
            out.describe()
        );
    }
}

#[test]
fn the_repl_shows_a_prompts_hint_after_tab_completes_its_name() {
    let dir = TestDir::new();
    files(&dir);
    dir.write(
        "home/.claude/skills/pdf/SKILL.md",
        "---\nname: pdf\ndescription: Read PDFs\n---\nUSE-PDFTOTEXT",
    );
    let m = Mypi::new(&dir).args(["--provider", "faux", "--no-session", "--no-watch"]);
    let mut pty = Pty::spawn_sized(m.command(), 120);
    let t = Duration::from_secs(20);
    let at = pty.wait_for("> ", 0, t);
    pty.type_keys("/frontend:comp\t");
    let at = pty.wait_for(
        "/frontend:component <name> [style] — Make a component",
        at,
        t,
    );
    pty.type_keys("Box\r");
    let at = pty.wait_for("(all: Box).", at, t);
    let at = pty.wait_for("> ", at, t);
    // After `/skill:`, Tab completes the skills' names.
    pty.type_keys("/skill:pd\t");
    let at = pty.wait_for("/skill:pdf", at, t);
    pty.type_keys("now\r");
    let at = pty.wait_for("USE-PDFTOTEXT", at, t);
    pty.wait_for("> ", at, t);
    pty.type_keys("/quit\r");
    assert_eq!(pty.wait(t), 0, "{}", pty.screen());
}
