//! Skills, prompt files and `CLAUDE.md` as users of other agents meet them (issue 35, points
//! 1, 2, 4, 5): the binary on real files in temp folders (HOME among them), the fake model
//! server checking what each request carries. Skills from both folder kinds, the user's and
//! the project's (and their clash), broken front matter, a huge file, the budget, an
//! untrusted project; prompt files with their arguments, namespaces, `/help` and completion;
//! `api.skills` / `api.skill` from Lua and Rhai.

use std::time::{Duration, Instant};

use crate::common::{FakeOpenAi, Mypi, Reply, TestDir};

use super::ext_util::install;
use super::wire::{no_panic, system_prompt, tool_results, user_texts};

fn skill(dir: &TestDir, rel: &str, name: &str, description: &str, body: &str) -> String {
    let text = format!("---\nname: {name}\ndescription: {description}\n---\n{body}\n");
    dir.write(&format!("{rel}/SKILL.md"), &text)
        .display()
        .to_string()
}

/// A print-mode run against `fake`.
fn print(dir: &TestDir, fake: &FakeOpenAi, prompt: &str) -> crate::common::Output {
    Mypi::new(dir)
        .openai(fake)
        .args(["--no-session", "-p", prompt])
        .run()
}

/// `/COMMAND` in print mode on the faux model (commands answer without a request).
fn command(dir: &TestDir, line: &str) -> crate::common::Output {
    Mypi::new(dir)
        .args(["--provider", "faux", "--no-session", "-p", line])
        .run()
}

#[test]
fn skills_from_both_folder_kinds_are_listed_and_read_only_on_demand() {
    let dir = TestDir::new();
    let a = skill(
        &dir,
        ".agents/skills/alpha",
        "alpha",
        "Project alpha work",
        "ALPHA-BODY",
    );
    let b = skill(
        &dir,
        ".claude/skills/beta",
        "beta",
        "Project beta work",
        "BETA-BODY",
    );
    let c = skill(
        &dir,
        "home/.agents/skills/gamma",
        "gamma",
        "User gamma work",
        "GAMMA-BODY",
    );
    let d = skill(
        &dir,
        "home/.claude/skills/delta",
        "delta",
        "User delta work",
        "DELTA-BODY",
    );
    // A skill folder's other files are the model's to read, never mypi's to list.
    dir.write(".agents/skills/alpha/reference.md", "ALPHA-REFERENCE");
    let fake = FakeOpenAi::with_replies(vec![
        Reply::tool_calls([("c1", "read", serde_json::json!({ "path": a }))]),
        Reply::text("done"),
    ]);
    let out = print(&dir, &fake, "do the alpha thing");
    out.ok();
    no_panic(&out.stderr);
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 2);
    for req in &reqs {
        let sys = system_prompt(req);
        for (name, desc, path) in [
            ("alpha", "Project alpha work", &a),
            ("beta", "Project beta work", &b),
            ("gamma", "User gamma work", &c),
            ("delta", "User delta work", &d),
        ] {
            let line = format!("- {name}: {desc} (file: {path})");
            assert!(sys.contains(&line), "{line} not in\n{sys}");
        }
        for body in [
            "ALPHA-BODY",
            "BETA-BODY",
            "GAMMA-BODY",
            "DELTA-BODY",
            "ALPHA-REFERENCE",
        ] {
            assert!(!sys.contains(body), "{body} in the system prompt");
        }
        // The project's come first.
        assert!(sys.find("- alpha:").unwrap() < sys.find("- gamma:").unwrap());
    }
    // The body reaches the model when it reads the file.
    let results = tool_results(&reqs[1]);
    assert!(results[0].content.contains("ALPHA-BODY"), "{:?}", results);
}

#[test]
fn the_project_wins_a_name_clash_and_says_so() {
    let dir = TestDir::new();
    let mine = skill(
        &dir,
        ".claude/skills/pdf",
        "pdf",
        "The project's PDF way",
        "x",
    );
    let theirs = skill(
        &dir,
        "home/.agents/skills/pdf",
        "pdf",
        "The user's PDF way",
        "y",
    );
    let fake = FakeOpenAi::with_replies(vec![Reply::text("ok")]);
    let out = print(&dir, &fake, "hi");
    out.ok();
    let sys = system_prompt(&fake.requests()[0]);
    assert!(sys.contains("- pdf: The project's PDF way"), "{sys}");
    assert!(!sys.contains("The user's PDF way"), "{sys}");
    let notice =
        format!("skill pdf: the project one ({mine}) is used; the user one ({theirs}) is not");
    assert_eq!(out.stderr.matches(&notice).count(), 1, "{}", out.describe());
}

#[test]
fn broken_skill_files_are_reported_once_with_path_and_line_and_skipped() {
    let dir = TestDir::new();
    let ok = skill(&dir, "home/.agents/skills/ok", "ok", "Fine", "body");
    let no_name = dir.write(
        ".agents/skills/a/SKILL.md",
        "---\ndescription: nameless\n---\n",
    );
    let no_desc = dir.write(".claude/skills/b/SKILL.md", "---\nname: b\n---\n");
    let open = dir.write(
        ".agents/skills/c/SKILL.md",
        "---\nname: c\ndescription: never closed\n",
    );
    let bad_line = dir.write(
        "home/.claude/skills/d/SKILL.md",
        "---\nname: d\ndescription: has\nthis is not yaml\n---\n",
    );
    let not_utf8 = dir.join("home/.agents/skills/e/SKILL.md");
    std::fs::create_dir_all(not_utf8.parent().unwrap()).unwrap();
    std::fs::write(&not_utf8, b"---\nname: e\ndescription: caf\xe9\n---\n").unwrap();
    let no_front = dir.write(".agents/skills/f/SKILL.md", "# Just a title\n");
    // Front matter never closed within the first 64 KiB of a large file.
    let long = format!("---\nname: g\ndescription: {}\n", "x".repeat(100_000));
    let huge_head = dir.write(".agents/skills/g/SKILL.md", &long);
    let fake = FakeOpenAi::with_replies(vec![Reply::text("ok")]);
    let out = print(&dir, &fake, "hi");
    out.ok();
    let sys = system_prompt(&fake.requests()[0]);
    assert!(sys.contains(&format!("- ok: Fine (file: {ok})")), "{sys}");
    for (path, at) in [
        (&no_name, ":1: no `name`"),
        (&no_desc, ":1: no `description`"),
        (
            &open,
            ":1: the front matter opened by `---` on line 1 is never closed",
        ),
        (&bad_line, ":4: expected `key: value`"),
        (&not_utf8, ":3: the front matter is not UTF-8 text"),
        (&no_front, ":1: no front matter"),
        (
            &huge_head,
            ":1: the front matter opened by `---` on line 1 is not closed within its first 64 KiB",
        ),
    ] {
        let line = format!("{}{at}", path.display());
        assert_eq!(
            out.stderr.matches(&line).count(),
            1,
            "{line}\n{}",
            out.describe()
        );
    }
    assert_eq!(
        out.stderr.matches("the skill is skipped").count(),
        7,
        "{}",
        out.describe()
    );
    for name in ["- b:", "- c:", "- d:", "- e:", "- g:"] {
        assert!(!sys.contains(name), "{name} listed:\n{sys}");
    }
}

#[test]
fn a_huge_skill_and_a_crowded_skill_folder_cost_start_up_nothing() {
    let dir = TestDir::new();
    let path = skill(&dir, ".agents/skills/huge", "huge", "A very long skill", "");
    let mut text = std::fs::read(&path).unwrap();
    text.extend(std::iter::repeat_n(b'z', 50 * 1024 * 1024));
    std::fs::write(&path, text).unwrap();
    let crowd = dir.join(".agents/skills/crowd");
    skill(
        &dir,
        ".agents/skills/crowd",
        "crowd",
        "Many files beside it",
        "CROWD-BODY",
    );
    for i in 0..10_000 {
        std::fs::write(crowd.join(format!("f{i}.txt")), "x").unwrap();
    }
    let started = Instant::now();
    let out = command(&dir, "/skills");
    out.ok();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert!(
        out.stdout.contains("  huge   A very long skill [project]"),
        "{}",
        out.describe()
    );
    assert!(
        out.stdout
            .contains("  crowd  Many files beside it [project]"),
        "{}",
        out.describe()
    );
    // `/skill:huge` names the file for the model to read instead of sending 50 MB.
    let fake = FakeOpenAi::with_replies(vec![Reply::text("ok")]);
    print(&dir, &fake, "/skill:huge go").ok();
    let sent = user_texts(&fake.requests()[0]).join("\n");
    assert!(sent.len() < 4096, "{} bytes sent", sent.len());
    assert!(
        sent.contains(&format!(
            "its instructions are in {path} (too long to include here)"
        )),
        "{sent}"
    );
    assert!(sent.ends_with("\n\ngo"), "{sent}");
}

#[test]
fn skill_command_sends_the_skill_with_the_text() {
    let dir = TestDir::new();
    let path = skill(
        &dir,
        "home/.claude/skills/pdf",
        "pdf",
        "Read PDFs",
        "Use pdftotext on {file}.",
    );
    let fake = FakeOpenAi::with_replies(vec![Reply::text("ok")]);
    let out = print(&dir, &fake, "/skill:pdf extract the tables");
    out.ok();
    let sent = user_texts(&fake.requests()[0]);
    let folder = path.trim_end_matches("/SKILL.md");
    assert_eq!(
        sent,
        vec![format!(
            "<skill name=\"pdf\" location=\"{path}\">\nReferences are relative to {folder}.\n\nUse pdftotext on {{file}}.\n</skill>\n\nextract the tables"
        )]
    );
    // `disable-model-invocation: true`: never in the model's list, run by `/skill:NAME`.
    dir.write(
        ".agents/skills/deploy/SKILL.md",
        "---\nname: deploy\ndescription: Deploy it\ndisable-model-invocation: true\n---\nDEPLOY-STEPS",
    );
    let fake = FakeOpenAi::with_replies(vec![Reply::text("ok")]);
    print(&dir, &fake, "/skill:deploy").ok();
    let req = &fake.requests()[0];
    assert!(
        !system_prompt(req).contains("- deploy:"),
        "{}",
        system_prompt(req)
    );
    assert!(system_prompt(req).contains("- pdf: Read PDFs"));
    assert!(
        user_texts(req)[0].contains("DEPLOY-STEPS"),
        "{:?}",
        user_texts(req)
    );
    let list = command(&dir, "/skills");
    assert!(
        list.stdout
            .contains("(not offered to the model: disable-model-invocation)"),
        "{}",
        list.stdout
    );
    let out = command(&dir, "/skill:nope");
    assert!(
        out.stderr
            .contains("no skill called nope; /skills lists them"),
        "{}",
        out.describe()
    );
    assert!(!out.success());
}

#[test]
fn the_budget_leaves_skills_out_and_names_them() {
    let dir = TestDir::new();
    dir.write(".agents/config.toml", "[skills]\nbudget = 200\n");
    for name in ["aaa", "bbb", "ccc"] {
        let desc = format!("Work on {name} {}", "w".repeat(40));
        skill(&dir, &format!(".agents/skills/{name}"), name, &desc, "");
    }
    let fake = FakeOpenAi::with_replies(vec![Reply::text("ok")]);
    let out = print(&dir, &fake, "hi");
    out.ok();
    let sys = system_prompt(&fake.requests()[0]);
    assert!(sys.contains("- aaa: Work on aaa"), "{sys}");
    assert!(!sys.contains("- bbb:") && !sys.contains("- ccc:"), "{sys}");
    let notice = "2 skills are left out of the model's list (over the budget of 200 characters, [skills] budget): bbb, ccc; /skills lists them";
    assert_eq!(out.stderr.matches(notice).count(), 1, "{}", out.describe());
    let list = command(&dir, "/skills");
    list.ok();
    assert_eq!(
        list.stdout
            .matches("(left out: over the [skills] budget)")
            .count(),
        2,
        "{}",
        list.stdout
    );
    assert!(
        list.stdout.contains("2 left out of the model's list"),
        "{}",
        list.stdout
    );
    // The environment variable wins over the file.
    let fake = FakeOpenAi::with_replies(vec![Reply::text("ok")]);
    Mypi::new(&dir)
        .openai(&fake)
        .env("MYPI_SKILLS_BUDGET", "100000")
        .args(["--no-session", "-p", "hi"])
        .run()
        .ok();
    assert!(system_prompt(&fake.requests()[0]).contains("- ccc:"));
}

#[test]
fn an_untrusted_project_skips_its_skills_and_prompt_files_in_one_line() {
    let dir = TestDir::new();
    dir.untrust();
    skill(&dir, ".agents/skills/theirs", "theirs", "Project skill", "");
    skill(
        &dir,
        ".claude/skills/theirs2",
        "theirs2",
        "Project skill 2",
        "",
    );
    dir.write(".claude/commands/deploy.md", "Deploy everything");
    let mine = skill(&dir, "home/.agents/skills/mine", "mine", "My skill", "");
    dir.write("home/.claude/commands/hello.md", "Say hello to $1");
    dir.write("CLAUDE.md", "Claude rules apply.");
    let fake = FakeOpenAi::with_replies(vec![Reply::text("ok"), Reply::text("ok")]);
    let out = print(&dir, &fake, "hi");
    out.ok();
    let sys = system_prompt(&fake.requests()[0]);
    assert!(
        sys.contains(&format!("- mine: My skill (file: {mine})")),
        "{sys}"
    );
    assert!(!sys.contains("theirs"), "{sys}");
    // CLAUDE.md follows AGENTS.md's rule: instructions, read in any project.
    assert!(sys.contains("Claude rules apply."), "{sys}");
    let line = format!(
        "mypi: 2 skills (.agents/skills, .claude/skills) and 1 prompt file (.agents/prompts, .claude/commands) in {} not loaded: the folder is not trusted",
        dir.path().display()
    );
    assert_eq!(out.stderr.matches(&line).count(), 1, "{}", out.describe());
    assert_eq!(
        out.stderr.matches("not loaded").count(),
        1,
        "{}",
        out.describe()
    );
    let deploy = command(&dir, "/deploy");
    assert!(
        deploy.stderr.contains("unknown command /deploy"),
        "{}",
        deploy.describe()
    );
    print(&dir, &fake, "/hello world").ok();
    assert_eq!(user_texts(&fake.requests()[1]), vec!["Say hello to world"]);
    // Trusted, the project's act.
    let trusted = Mypi::new(&dir)
        .args([
            "--provider",
            "faux",
            "--no-session",
            "--trust",
            "-p",
            "/skills",
        ])
        .run();
    trusted.ok();
    assert!(
        trusted
            .stdout
            .contains("  theirs   Project skill [project]"),
        "{}",
        trusted.stdout
    );
}

#[test]
fn claude_md_is_read_where_agents_md_is_one_file_a_folder() {
    let dir = TestDir::new();
    dir.write(".git/HEAD", "ref: refs/heads/main\n");
    dir.write("CLAUDE.md", "ROOT-CLAUDE");
    dir.write("sub/AGENTS.md", "SUB-AGENTS");
    dir.write("sub/CLAUDE.md", "SUB-CLAUDE");
    let fake = FakeOpenAi::with_replies(vec![Reply::text("ok")]);
    Mypi::new(&dir)
        .openai(&fake)
        .cwd(dir.join("sub"))
        .args(["--no-session", "-p", "hi"])
        .run()
        .ok();
    let sys = system_prompt(&fake.requests()[0]);
    assert!(sys.contains("ROOT-CLAUDE"), "{sys}");
    assert!(sys.contains("SUB-AGENTS"), "{sys}");
    assert!(
        !sys.contains("SUB-CLAUDE"),
        "both files of one folder read:\n{sys}"
    );
    assert!(sys.find("ROOT-CLAUDE").unwrap() < sys.find("SUB-AGENTS").unwrap());
}

#[test]
fn scripts_see_and_add_skills_in_lua_and_rhai() {
    let dir = TestDir::new();
    skill(
        &dir,
        "home/.agents/skills/found",
        "found",
        "Found in a folder",
        "",
    );
    dir.write("extras/lua.md", "LUA-SKILL-BODY");
    dir.write("extras/rhai.md", "RHAI-SKILL-BODY");
    install(
        &dir,
        "a.lua",
        r#"
local h = api.skill{ name = "from-lua", description = "Added by Lua", path = "../../extras/lua.md" }
api.command("lua-skills", function()
  local out = {}
  for _, s in ipairs(api.skills()) do
    out[#out + 1] = s.name .. "|" .. s.source .. "|" .. tostring(s.listed) .. "|" .. s.path
  end
  return table.concat(out, "\n")
end)
api.command("lua-drop", function() return tostring(h:remove()) end)
local ok, err = pcall(api.skill, { name = "two words", description = "x", path = "../../extras/lua.md" })
api.command("lua-err", function() return err end)
"#,
    );
    install(
        &dir,
        "b.rhai",
        r#"
api.skill(#{ name: "from-rhai", description: "Added by Rhai", path: "../../extras/rhai.md" });
api.command("rhai-skills", |args, ctx| {
  let out = [];
  for s in api.skills() { out.push(s.name + "|" + s.source); }
  out.reduce(|sum, v| if sum == () { v } else { sum + "\n" + v })
});
"#,
    );
    let lua_path = dir.join("extras/lua.md").display().to_string();
    let rhai_path = dir.join("extras/rhai.md").display().to_string();
    let fake = FakeOpenAi::with_replies(vec![Reply::text("ok")]);
    let out = print(&dir, &fake, "hi");
    out.ok();
    let sys = system_prompt(&fake.requests()[0]);
    assert!(
        sys.contains(&format!("- from-lua: Added by Lua (file: {lua_path})")),
        "{sys}"
    );
    assert!(
        sys.contains(&format!("- from-rhai: Added by Rhai (file: {rhai_path})")),
        "{sys}"
    );
    assert!(sys.contains("- found: Found in a folder"), "{sys}");
    assert!(!sys.contains("SKILL-BODY"), "{sys}");
    let lua = command(&dir, "/lua-skills");
    lua.ok();
    assert!(
        lua.stdout.contains("found|user|true|"),
        "{}",
        lua.describe()
    );
    assert!(
        lua.stdout
            .contains(&format!("from-lua|extension a|true|{lua_path}")),
        "{}",
        lua.stdout
    );
    assert!(
        lua.stdout.contains("from-rhai|extension b|true|"),
        "{}",
        lua.stdout
    );
    let rhai = command(&dir, "/rhai-skills");
    rhai.ok();
    assert_eq!(
        rhai.stdout,
        "found|user\nfrom-lua|extension a\nfrom-rhai|extension b\n",
        "{}",
        rhai.describe()
    );
    let err = command(&dir, "/lua-err");
    assert!(
        err.stdout
            .contains("api.skill: the name \"two words\" must be one word"),
        "{}",
        err.describe()
    );
}

#[test]
fn a_child_that_can_read_is_told_the_skills_and_one_that_cannot_is_not() {
    let dir = TestDir::new();
    skill(
        &dir,
        ".agents/skills/alpha",
        "alpha",
        "Project alpha work",
        "BODY",
    );
    install(
        &dir,
        "kids.lua",
        r#"api.command("kids", function()
  local a = api.run_agent{ task = "with read", tools = { "read" } }
  local b = api.run_agent{ task = "with bash", tools = { "bash" } }
  return a.text .. "+" .. b.text
end)"#,
    );
    let fake = FakeOpenAi::with_replies(vec![Reply::text("one"), Reply::text("two")]);
    let out = Mypi::new(&dir)
        .openai(&fake)
        .args(["--no-session", "-p", "/kids"])
        .run();
    out.ok();
    assert_eq!(out.stdout.trim(), "one+two");
    let reqs = fake.requests();
    let reader = reqs
        .iter()
        .find(|r| user_texts(r) == ["with read"])
        .unwrap();
    let runner = reqs
        .iter()
        .find(|r| user_texts(r) == ["with bash"])
        .unwrap();
    assert!(
        system_prompt(reader).contains("- alpha: Project alpha work"),
        "{}",
        system_prompt(reader)
    );
    assert!(!system_prompt(runner).contains("alpha"));
}
