//! Command-line options from extensions (issue 13, point 9), through the binary in Lua and
//! Rhai: `api.flag{...}` makes `mypi --NAME[=VALUE]` valid and readable as `api.flags.NAME`,
//! `mypi --help` lists it under the extension's name, and an option nobody declares (or one
//! given the wrong way) is still exit 2.

use super::ext_util::install;
use crate::common::{Mypi, TestDir};

const LUA: &str = r#"
api.flag{ name = "plan", type = "bool", description = "plan before acting" }
api.flag{ name = "mode", type = "string", default = "careful", description = "how to work" }
api.command("flags", function()
  return "plan=" .. tostring(api.flags.plan) .. " mode=" .. tostring(api.flags.mode)
    .. " other=" .. tostring(api.flags.other)
end)
api.command("own", function() api.flag{ name = "model", type = "string" } end)
api.command("poke", function() api.flags.plan = false end)
"#;

const RHAI: &str = r#"
api.flag(#{ name: "plan", type: "bool", description: "plan before acting" });
api.flag(#{ name: "mode", type: "string", "default": "careful", description: "how to work" });
api.command("flags", |args, ctx| `plan=${api.flags.plan} mode=${api.flags["mode"]} other=${api.flags.other}`);
api.command("own", |args, ctx| { api.flag(#{ name: "model", type: "string" }); });
"#;

fn scenario(file: &str, source: &str, nil: &str) {
    let dir = TestDir::new();
    install(&dir, file, source);
    let run = |args: &[&str]| {
        Mypi::new(&dir)
            .args(["--provider", "faux"])
            .args(args)
            .run()
    };
    let out = run(&["--plan", "--mode=fast", "-p", "/flags"]);
    assert_eq!(
        out.ok().stdout.trim(),
        format!("plan=true mode=fast other={nil}"),
        "{}",
        out.describe()
    );
    let out = run(&["-p", "/flags"]);
    assert_eq!(
        out.ok().stdout.trim(),
        format!("plan=false mode=careful other={nil}")
    );
    let out = run(&["--plan=false", "-p", "/flags"]);
    assert!(out.ok().stdout.starts_with("plan=false"));
    for (args, message) in [
        (
            &["--nope", "-p", "/flags"][..],
            "unknown option --nope: neither mypi nor a loaded extension declares it",
        ),
        (&["--pla", "-p", "/flags"][..], "did you mean --plan?"),
        (
            &["--mode", "-p", "/flags"][..],
            "--mode takes a value (declared by flags): --mode=VALUE",
        ),
        (&["--plan=maybe", "-p", "/flags"][..], "--plan is a switch"),
    ] {
        let out = run(args);
        assert_eq!(out.code, 2, "{args:?}: {}", out.describe());
        assert!(out.stderr.contains(message), "{args:?}: {}", out.describe());
    }
    let out = run(&["-p", "/own"]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .contains("api.flag: --model is one of mypi's own options"),
        "{}",
        out.describe()
    );
    // In the REPL too: the option is checked once the extensions have loaded.
    let out = Mypi::new(&dir)
        .args(["--provider", "faux", "--nope"])
        .stdin("")
        .run();
    assert_eq!(out.code, 2, "{}", out.describe());
    let out = Mypi::new(&dir).arg("--help").run();
    let help = &out.ok().stdout;
    assert!(help.contains("Extension options:\n  flags:\n"), "{help}");
    assert!(
        help.contains("--plan ") && help.contains("plan before acting"),
        "{help}"
    );
    assert!(
        help.contains("--mode=VALUE") && help.contains("how to work [default: careful]"),
        "{help}"
    );
    assert!(
        help.contains("--provider"),
        "mypi's own options are listed too: {help}"
    );
}

#[test]
fn lua_flags_from_the_command_line() {
    scenario("flags.lua", LUA, "nil");
    let dir = TestDir::new();
    install(&dir, "flags.lua", LUA);
    let out = Mypi::new(&dir)
        .args(["--provider", "faux", "-p", "/poke"])
        .run();
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("api.flags is read-only"),
        "{}",
        out.describe()
    );
}

#[test]
fn rhai_flags_from_the_command_line() {
    scenario("flags.rhai", RHAI, "");
}

#[test]
fn without_extensions_an_unknown_option_is_an_error_as_before() {
    let dir = TestDir::new();
    let out = Mypi::new(&dir)
        .args(["--no-extensions", "--plan", "-p", "hi"])
        .run();
    assert_eq!(out.code, 2, "{}", out.describe());
    assert!(
        out.stderr.contains("unknown option --plan"),
        "{}",
        out.describe()
    );
    let out = Mypi::new(&dir).args(["ext", "check", "--plan"]).run();
    assert_eq!(
        out.code,
        2,
        "subcommands take no extension options: {}",
        out.describe()
    );
}

#[test]
fn a_string_option_takes_the_next_word_and_help_sees_other_extension_folders() {
    let dir = TestDir::new();
    install(&dir, "flags.lua", LUA);
    let out = Mypi::new(&dir)
        .args(["--provider", "faux", "--mode", "fast", "-p", "/flags"])
        .run();
    assert!(out.ok().stdout.contains("mode=fast"), "{}", out.describe());
    let out = Mypi::new(&dir)
        .args(["--provider", "faux", "--plan", "now", "-p", "/flags"])
        .run();
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .contains("--plan is a switch (declared by flags): \"now\" after it is not an option"),
        "{}",
        out.describe()
    );
    let other = dir.write(
        "elsewhere/opts.lua",
        r#"api.flag{ name = "far", type = "bool", description = "from elsewhere" }"#,
    );
    let folder = other.parent().unwrap().to_path_buf();
    let out = Mypi::new(&dir)
        .arg("--extensions-dir")
        .arg(&folder)
        .arg("--help")
        .run();
    let help = &out.ok().stdout;
    assert!(help.contains("opts:") && help.contains("--far"), "{help}");
    assert!(
        !help.contains("--plan"),
        "--extensions-dir replaces the project's folder: {help}"
    );
}
