//! Skills in the REPL (issue 35, point 1): skills a script adds and removes during one
//! session, the budget's notice said once, `/skills` marking what is left out; and the trust
//! question on a terminal naming a project's skills and prompt files.

use std::time::Duration;

use crate::common::{FakeOpenAi, Mypi, Reply, TestDir};

use super::ext_util::install;
use super::wire::system_prompt;

fn skill(dir: &TestDir, rel: &str, name: &str, description: &str) {
    let text = format!("---\nname: {name}\ndescription: {description}\n---\n");
    dir.write(&format!("{rel}/SKILL.md"), &text);
}

#[test]
fn in_one_repl_session_skills_come_and_go_and_overflow_is_said_once() {
    let dir = TestDir::new();
    dir.write(".agents/config.toml", "[skills]\nbudget = 120\n");
    skill(
        &dir,
        "home/.agents/skills/first",
        "first",
        "The first skill, listed",
    );
    dir.write("extras/late.md", "LATE");
    install(
        &dir,
        "late.lua",
        r#"
local h
api.command("add-late", function()
  h = api.skill{ name = "late", description = "Added later, over the budget", path = "../../extras/late.md" }
  return "added"
end)
api.command("drop-late", function() return "dropped " .. tostring(h:remove()) end)
"#,
    );
    let fake = FakeOpenAi::with_replies((0..4).map(|_| Reply::text("ok")).collect());
    let mut m = Mypi::new(&dir).openai(&fake).args(["--no-watch"]).spawn();
    let wait = Duration::from_secs(15);
    m.wait_for_line("mypi ", wait);
    m.send_line("/add-late");
    m.wait_for_line("added", wait);
    m.send_line("one");
    m.wait_for_line("ok", wait);
    m.send_line("two");
    m.wait_for_line("ok", wait);
    m.send_line("/skills");
    m.wait_for_line("(left out: over the [skills] budget)", wait);
    m.send_line("/drop-late");
    m.wait_for_line("dropped true", wait);
    m.send_line("three");
    m.wait_for_line("ok", wait);
    m.send_line("/skills");
    m.wait_for_line("runs one.", wait);
    m.send_line("/quit");
    let out = m.wait();
    out.ok();
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 3);
    for req in &reqs {
        let sys = system_prompt(req);
        assert!(sys.contains("- first: The first skill, listed"), "{sys}");
        assert!(!sys.contains("- late:"), "{sys}");
    }
    let listings: Vec<&str> = out.stdout.split("Skills (the model").collect();
    assert_eq!(listings.len(), 3, "{}", out.stdout);
    assert!(listings[1].contains("Added later"), "{}", listings[1]);
    assert!(!listings[2].contains("Added later"), "{}", listings[2]);
    let notice = "! 1 skill is left out of the model's list (over the budget of 120 characters, [skills] budget): late";
    assert_eq!(out.stdout.matches(notice).count(), 1, "{}", out.describe());
}

#[test]
fn the_repl_asks_about_a_projects_skills_and_prompt_files_and_obeys() {
    let wait = Duration::from_secs(20);
    for (answer, acts) in [("y", true), ("n", false)] {
        let dir = TestDir::new();
        dir.untrust();
        skill(&dir, ".agents/skills/house", "house", "House style skills");
        dir.write(".claude/commands/hi.md", "PROJECT-PROMPT $1");
        let m = Mypi::new(&dir).args(["--provider", "faux", "--no-session", "--no-watch"]);
        let mut pty = crate::common::pty::Pty::spawn_sized(m.command(), 160);
        let at = pty.wait_for("skills or prompt files", 0, wait);
        let at = pty.wait_for(".agents/skills/house/SKILL.md", at, wait);
        let at = pty.wait_for(".claude/commands/hi.md", at, wait);
        let at = pty.wait_for("[y/N]", at, wait);
        pty.type_keys(&format!("{answer}\r"));
        let at = pty.wait_for("> ", at, wait);
        pty.type_keys("/skills\r");
        let at = pty.wait_for("> ", at + 1, wait);
        pty.type_keys("/hi there\r");
        // What /hi leads to, before the next prompt (the hint's redraw while typing shows
        // "> " too, so that alone proves nothing).
        let after = if acts {
            "PROJECT-PROMPT there"
        } else {
            "unknown command /hi"
        };
        let at = pty.wait_for(after, at + 1, wait);
        pty.wait_for("> ", at, wait);
        pty.type_keys("/quit\r");
        assert_eq!(pty.wait(wait), 0, "{}", pty.screen());
        let screen = pty.screen();
        assert_eq!(
            screen.contains("House style skills [project]"),
            acts,
            "{answer}: {screen}"
        );
        assert_eq!(
            screen.contains("PROJECT-PROMPT there"),
            acts,
            "{answer}: {screen}"
        );
        assert_eq!(
            screen.contains("unknown command /hi"),
            !acts,
            "{answer}: {screen}"
        );
    }
}

#[test]
fn reload_finds_new_skills_and_prompt_files_and_a_scripts_command_takes_its_name() {
    let dir = TestDir::new();
    dir.write("home/.claude/commands/mine.md", "PROMPT-MINE");
    let mut m = Mypi::new(&dir)
        .args(["--provider", "faux", "--no-session", "--no-watch"])
        .spawn();
    let wait = Duration::from_secs(15);
    m.wait_for_line("mypi ", wait);
    m.send_line("/mine");
    m.wait_for_line("PROMPT-MINE", wait);
    skill(
        &dir,
        "home/.agents/skills/fresh",
        "fresh",
        "Written after start",
    );
    dir.write(".agents/prompts/later.md", "PROMPT-LATER $1");
    install(
        &dir,
        "mine.lua",
        r#"api.command("mine", function() return "SCRIPT-MINE" end)"#,
    );
    m.send_line("/reload");
    m.wait_for_line("mine", wait);
    m.send_line("/skills");
    m.wait_for_line("fresh  Written after start [user]", wait);
    m.send_line("/later now");
    m.wait_for_line("PROMPT-LATER now", wait);
    m.send_line("/mine");
    m.wait_for_line("SCRIPT-MINE", wait);
    m.send_line("/quit");
    let out = m.wait();
    out.ok();
    assert!(!out.stdout.contains("/mine:2"), "{}", out.describe());
}
