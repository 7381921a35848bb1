//! Print mode end to end: a plain answer against both fake APIs (what the user sees and what
//! the server received), AGENTS.md in the system prompt, and the basics that need no server
//! (the faux model, commands, usage errors).

use std::process::Stdio;

use crate::common::{FakeAnthropic, FakeOpenAi, Mypi, Reply, TestDir};

use super::wire::{no_panic, session_files, system_prompt, tool_names, user_texts};

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

#[test]
fn openai_plain_answer_prints_the_streamed_text() {
    let dir = TestDir::new();
    let fake = FakeOpenAi::with_replies(vec![Reply::text("Hello from the fake model!")]);
    let out = Mypi::new(&dir).openai(&fake).args(["-p", "hi"]).run();
    out.ok();
    assert_eq!(
        out.stdout,
        "Hello from the fake model!\n",
        "{}",
        out.describe()
    );
    no_panic(&out.stderr);

    let reqs = fake.requests();
    assert_eq!(reqs.len(), 1);
    let req = &reqs[0];
    assert_eq!(req.method, "POST");
    assert_eq!(req.path, "/v1/chat/completions");
    assert_eq!(req.header("authorization"), Some("Bearer test-key"));
    assert_eq!(req.body["model"], "test-model");
    assert_eq!(req.body["stream"], true);
    let sys = system_prompt(req);
    assert!(sys.starts_with("You are mypi"), "{sys}");
    assert!(
        sys.contains(&format!("Working folder: {}", dir.path().display())),
        "{sys}"
    );
    assert_eq!(req.body["messages"][0]["role"], "system");
    assert_eq!(user_texts(req), vec!["hi"]);
    assert_eq!(
        sorted(tool_names(req)),
        vec!["bash", "edit", "read", "write"]
    );
    for t in req.body["tools"].as_array().unwrap() {
        assert_eq!(t["type"], "function");
        assert_eq!(t["function"]["parameters"]["type"], "object");
        assert!(t["function"]["description"].as_str().unwrap().len() > 10);
    }
}

#[test]
fn anthropic_plain_answer_prints_the_streamed_text() {
    let dir = TestDir::new();
    let fake = FakeAnthropic::with_replies(vec![Reply::text("Hello from fake Claude.")]);
    let out = Mypi::new(&dir).anthropic(&fake).args(["-p", "hi"]).run();
    out.ok();
    assert_eq!(
        out.stdout,
        "Hello from fake Claude.\n",
        "{}",
        out.describe()
    );

    let reqs = fake.requests();
    assert_eq!(reqs.len(), 1);
    let req = &reqs[0];
    assert_eq!(req.path, "/v1/messages");
    assert_eq!(req.header("x-api-key"), Some("test-key"));
    assert!(req.header("anthropic-version").is_some());
    assert_eq!(req.header("authorization"), None);
    assert_eq!(req.body["model"], "test-model");
    assert_eq!(req.body["stream"], true);
    assert!(req.body["max_tokens"].as_u64().unwrap() > 0);
    assert!(system_prompt(req).starts_with("You are mypi"));
    assert!(
        req.body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["role"] != "system"),
        "Anthropic has no system role: {}",
        req.raw_body
    );
    assert_eq!(user_texts(req), vec!["hi"]);
    assert_eq!(
        sorted(tool_names(req)),
        vec!["bash", "edit", "read", "write"]
    );
    for t in req.body["tools"].as_array().unwrap() {
        assert_eq!(t["input_schema"]["type"], "object");
    }
}

#[test]
fn agents_md_reaches_the_system_prompt() {
    let dir = TestDir::new();
    dir.write(
        "AGENTS.md",
        "Always answer in haiku.\nRun `make check` first.\n",
    );
    let fake = FakeOpenAi::with_replies(vec![Reply::text("ok")]);
    Mypi::new(&dir).openai(&fake).args(["-p", "hi"]).run().ok();
    let sys = system_prompt(&fake.requests()[0]);
    assert!(sys.contains("Always answer in haiku."), "{sys}");
    assert!(sys.contains("Run `make check` first."), "{sys}");
    assert!(sys.contains(&dir.join("AGENTS.md").display().to_string()));

    let fake = FakeAnthropic::with_replies(vec![Reply::text("ok")]);
    Mypi::new(&dir)
        .anthropic(&fake)
        .args(["-p", "hi"])
        .run()
        .ok();
    let sys = system_prompt(&fake.requests()[0]);
    assert!(sys.contains("Always answer in haiku."), "{sys}");
}

#[test]
fn agents_md_from_the_repository_root_down_to_a_subfolder() {
    let dir = TestDir::new();
    std::fs::create_dir_all(dir.join(".git")).unwrap();
    dir.write("AGENTS.md", "ROOT RULES");
    dir.write("pkg/AGENTS.md", "PKG RULES");
    let fake = FakeOpenAi::with_replies(vec![Reply::text("ok")]);
    Mypi::new(&dir)
        .openai(&fake)
        .cwd(dir.join("pkg"))
        .args(["-p", "hi", "--no-session"])
        .run()
        .ok();
    let sys = system_prompt(&fake.requests()[0]);
    let (root, pkg) = (sys.find("ROOT RULES"), sys.find("PKG RULES"));
    assert!(root.is_some() && pkg.is_some(), "{sys}");
    assert!(root < pkg, "outermost first: {sys}");
}

// ---------------------------------------------------------------------------------------------
// No server: the faux model and usage errors.

#[test]
fn no_provider_configured_uses_faux_and_echoes() {
    let dir = TestDir::new();
    let out = Mypi::new(&dir).args(["-p", "say this back"]).run();
    out.ok();
    assert_eq!(out.stdout, "say this back\n", "{}", out.describe());
    no_panic(&out.stderr);
}

#[test]
fn help_command_prints_the_command_list() {
    let dir = TestDir::new();
    let out = Mypi::new(&dir).args(["-p", "/help"]).run();
    out.ok();
    for cmd in ["/help", "/tools", "/model", "/new", "/session", "/quit"] {
        assert!(
            out.stdout.contains(cmd),
            "{cmd} missing; {}",
            out.describe()
        );
    }
    assert!(
        session_files(&dir).is_empty(),
        "a command writes no session"
    );
}

#[test]
fn tools_command_lists_the_builtin_tools() {
    let dir = TestDir::new();
    let out = Mypi::new(&dir).args(["-p", "/tools"]).run();
    out.ok();
    for tool in ["read", "write", "edit", "bash"] {
        assert!(out.stdout.contains(tool), "{}", out.describe());
    }
}

#[test]
fn prompt_is_read_from_stdin_when_p_has_no_argument() {
    let dir = TestDir::new();
    let out = Mypi::new(&dir).arg("-p").stdin("piped prompt text\n").run();
    out.ok();
    assert_eq!(out.stdout, "piped prompt text\n", "{}", out.describe());

    let fake = FakeOpenAi::with_replies(vec![Reply::text("seen")]);
    let out = Mypi::new(&dir)
        .openai(&fake)
        .arg("-p")
        .stdin("diff --git a/x b/x\n+added line\n")
        .run();
    out.ok();
    assert_eq!(
        user_texts(&fake.requests()[0]),
        vec!["diff --git a/x b/x\n+added line"]
    );
}

#[test]
fn empty_stdin_prompt_is_a_usage_error() {
    let dir = TestDir::new();
    let out = Mypi::new(&dir).arg("-p").stdin("  \n").run();
    out.expect_code(2);
    assert!(out.stderr.contains("empty"), "{}", out.describe());
}

#[test]
fn unknown_flag_exits_2() {
    let dir = TestDir::new();
    let out = Mypi::new(&dir).args(["--bogus-flag", "-p", "hi"]).run();
    out.expect_code(2);
    assert!(out.stderr.contains("--bogus-flag"), "{}", out.describe());
    assert!(out.stdout.is_empty());
}

#[test]
fn json_without_print_exits_2() {
    let dir = TestDir::new();
    let out = Mypi::new(&dir).arg("--json").run();
    out.expect_code(2);
    assert!(out.stderr.contains("--print"), "{}", out.describe());
}

#[test]
fn missing_api_key_is_a_configuration_error() {
    let dir = TestDir::new();
    let out = Mypi::new(&dir)
        .args(["--provider", "anthropic", "-p", "hi"])
        .run();
    out.expect_code(2);
    assert!(
        out.stderr.contains("ANTHROPIC_API_KEY"),
        "{}",
        out.describe()
    );
}

#[test]
fn unknown_command_suggests_the_near_one() {
    let dir = TestDir::new();
    let out = Mypi::new(&dir).args(["-p", "/hlep"]).run();
    out.expect_code(1);
    assert!(
        out.stderr.contains("unknown command /hlep"),
        "{}",
        out.describe()
    );
    assert!(out.stderr.contains("/help"), "{}", out.describe());
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.describe());
    assert!(out.stdout.is_empty());
}

#[test]
fn faux_script_drives_a_tool_call_offline() {
    let dir = TestDir::new();
    dir.write("notes.txt", "offline content\n");
    dir.write(
        "replies.jsonl",
        "{\"tool_calls\": [{\"name\": \"read\", \"arguments\": {\"path\": \"notes.txt\"}}]}\n\
         {\"text\": \"read it\"}\n",
    );
    let out = Mypi::new(&dir)
        .args(["--provider", "faux", "--faux-script", "replies.jsonl"])
        .args(["-p", "go", "--json"])
        .run();
    out.ok();
    assert!(out.stdout.contains("offline content"), "{}", out.describe());
    assert!(out.stdout.contains("\"text\":\"read it\""));
}

#[test]
fn bad_faux_script_is_a_configuration_error() {
    let dir = TestDir::new();
    dir.write("replies.jsonl", "{not json\n");
    let out = Mypi::new(&dir)
        .args(["--provider", "faux", "--faux-script", "replies.jsonl"])
        .args(["-p", "go"])
        .run();
    out.expect_code(2);
    assert!(out.stderr.contains("replies.jsonl"), "{}", out.describe());
    no_panic(&out.stderr);
}

#[test]
fn closed_stdout_is_not_a_panic() {
    let dir = TestDir::new();
    let cases: [&[&str]; 3] = [
        &["-p", "hello there"],
        &["-p", "/help"],
        &["-p", "hello there", "--json"],
    ];
    for args in cases {
        let mut cmd = Mypi::new(&dir).args(args.iter().copied()).command();
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn mypi");
        // The reader goes away before mypi prints (`mypi -p ... | head -c0`).
        drop(child.stdout.take());
        let out = child.wait_with_output().expect("wait for mypi");
        let stderr = String::from_utf8_lossy(&out.stderr);
        no_panic(&stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
    }
}

#[test]
fn closed_stderr_is_not_a_panic() {
    let dir = TestDir::new();
    let cases: [(&[&str], i32); 2] = [
        (&["-p", "/hlep"], 1),
        (&["--provider", "openai", "-p", "x"], 2),
    ];
    for (args, code) in cases {
        let mut cmd = Mypi::new(&dir).args(args.iter().copied()).command();
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn mypi");
        // The error reader goes away before mypi reports (`mypi ... 2>&-` in effect).
        drop(child.stderr.take());
        let out = child.wait_with_output().expect("wait for mypi");
        assert_eq!(out.status.code(), Some(code), "{args:?}: a panic exits 101");
    }
}
