//! Rhai's `regex_match`, `regex_find`, `regex_replace` and `env` through the engine: what a
//! script gets back, and errors at the script's line that name the pattern.

use super::*;

#[test]
fn regex_functions_match_find_and_replace() {
    on_worker(|| {
        let mut f = loaded(
            r#"
            api.command("re", |args| [
                regex_match("^\\d{4}-\\d{2}$", "2024-05"),
                regex_match("(?i)todo", "nothing to do"),
                regex_find("(\\w+)@(\\w+)(x)?", "mail bob@example now"),
                regex_find("z+", "abc"),
                regex_replace("(\\w+)@(\\w+)", "bob@home, amy@work", "$2:$1"),
                regex_replace("(?<word>o+)", "foo boo", "[${word}]"),
                regex_replace("a", "banana", "$$"),
                regex_match("ü+", "grüüße"),
                regex_match(`^\d+$`, "42"),
                regex_replace(`(\w+)=(\w+)`, "a=b", "$2=$1"),
            ]);
            "#,
        );
        let r = f.call("command", 0, vec![json!("")]).unwrap();
        assert_eq!(
            r,
            json!([
                true,
                false,
                ["bob@example", "bob", "example", null],
                null,
                "home:bob, work:amy",
                "f[oo] b[oo]",
                "b$n$n$",
                true,
                true,
                "b=a",
            ])
        );
    });
}

/// A handler calls the same pattern on every event (the cache in `patterns.rs` keeps it
/// compiled; its own test checks the cache).
#[test]
fn a_handler_uses_a_pattern_on_every_event() {
    on_worker(|| {
        let mut f =
            loaded(r#"api.on("input", |e| regex_replace("sk-[A-Za-z0-9]+", e.text, "sk-***"));"#);
        for i in 0..500 {
            let r = f.call(
                "on",
                0,
                vec![json!({"text": format!("key sk-abc{i} here")})],
            );
            assert_eq!(r.unwrap(), "key sk-*** here");
        }
    });
}

#[test]
fn bad_patterns_fail_at_the_line_naming_the_pattern() {
    on_worker(|| {
        let mut f = loaded(
            "api.command(\"bad\", |args| {\n  let ok = 1;\n  regex_match(args, \"text\")\n});",
        );
        let e = f.call("command", 0, vec![json!("a(b")]).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Runtime);
        assert!(
            e.message.starts_with(&format!(
                "{}:3: regex_match: invalid pattern `a(b`: unclosed group",
                f.path()
            )),
            "{e:?}"
        );
        let e = f
            .call("command", 0, vec![json!("\\w{1000}{1000}")])
            .unwrap_err();
        assert!(
            e.message
                .contains("regex_match: the pattern `\\w{1000}{1000}` is too big"),
            "{e:?}"
        );
        // A pattern with a backreference is not in the syntax (no backtracking).
        let e = f.call("command", 0, vec![json!("(a)\\1")]).unwrap_err();
        assert!(e.message.contains("invalid pattern `(a)\\1`"), "{e:?}");
        // The engine goes on.
        assert_eq!(
            f.call("command", 0, vec![json!("^te")]).unwrap(),
            json!(true)
        );
    });
}

#[test]
fn env_reads_a_variable_or_gives_unit() {
    on_worker(|| {
        let mut f = loaded(
            r#"
            api.command("env", |name| env(name));
            api.command("unset", |name| env(name) == ());
            "#,
        );
        let path = std::env::var("PATH").unwrap();
        assert_eq!(f.call("command", 0, vec![json!("PATH")]).unwrap(), path);
        let unset = json!("MYPI_TEST_NO_SUCH_VARIABLE");
        assert_eq!(
            f.call("command", 0, vec![unset.clone()]).unwrap(),
            json!(null)
        );
        assert_eq!(f.call("command", 1, vec![unset]).unwrap(), json!(true));
        let e = f.call("command", 0, vec![json!("A=B")]).unwrap_err();
        assert!(
            e.message.starts_with(&format!(
                "{}:2: env: \"A=B\" is not an environment variable name",
                f.path()
            )),
            "{e:?}"
        );
    });
}
