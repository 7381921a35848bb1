//! Command-line flags that extensions declare (`api.flag{...}`): `mypi --NAME` or
//! `mypi --NAME=VALUE` for a long option mypi itself does not have. Before clap parses the
//! command line, such options are taken out ([`split_for`]); once the extensions have loaded,
//! each must be one an extension declared, with a value of its type ([`check`]), or mypi
//! stops with exit 2 as for any unknown option. Subcommands (`mypi ext check`, ...) take
//! none: there every unknown option is clap's error.

use std::ffi::OsString;

/// A `--NAME[=VALUE]` the command line gave for an extension.
#[derive(Debug, Clone, PartialEq)]
pub struct Given {
    pub name: String,
    pub value: Option<String>,
    /// The value was the next word (`--NAME VALUE`), not `--NAME=VALUE`: right for a string
    /// option, an error for a switch.
    pub spaced: bool,
}

/// What an extension declared.
#[derive(Debug, Clone, PartialEq)]
pub struct Declared {
    pub name: String,
    /// `bool` or `string`.
    pub kind: Kind,
    pub default: Option<serde_json::Value>,
    pub description: String,
    /// The extension's name.
    pub extension: String,
}

/// A flag's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Bool,
    String,
}

impl Kind {
    pub fn parse(s: &str) -> Option<Kind> {
        match s {
            "bool" | "boolean" => Some(Kind::Bool),
            "string" => Some(Kind::String),
            _ => None,
        }
    }
}

/// mypi's own long options (the command line's, `help` and `version`): the options an
/// extension may not declare. The command line itself is the front end's (`repl::cli`),
/// whose test holds this list to it.
pub const OWN_OPTIONS: &[&str] = &[
    "print",
    "json",
    "provider",
    "model",
    "base-url",
    "faux-script",
    "continue",
    "resume",
    "no-session",
    "extensions-dir",
    "no-extensions",
    "no-builtin-extensions",
    "no-watch",
    "trust",
    "mcp-config",
    "no-mcp",
    "max-turns",
    "thinking",
    "help",
    "version",
];

/// mypi's own long options ([`OWN_OPTIONS`]).
pub fn own_names() -> Vec<String> {
    OWN_OPTIONS.iter().map(|s| s.to_string()).collect()
}

/// The long options of `cmd` (and `help`, `version`).
pub fn names_of(cmd: &clap::Command) -> Vec<String> {
    let mut names: Vec<String> = cmd
        .get_arguments()
        .filter_map(|a| a.get_long().map(str::to_string))
        .collect();
    names.extend(["help".to_string(), "version".to_string()]);
    names
}

/// Takes the long options of `args` that the command `cmd` does not know out of it (not
/// after `--`, and not when a subcommand is given); start-up builds `cmd` once.
pub fn split_for(cmd: &clap::Command, args: Vec<OsString>) -> (Vec<OsString>, Vec<Given>) {
    let subcommands: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    let own = names_of(cmd);
    let mut kept = Vec::with_capacity(args.len());
    let mut given = Vec::new();
    let mut rest = false;
    let mut args = args.into_iter().enumerate().peekable();
    while let Some((i, arg)) = args.next() {
        let text = arg.to_str().map(str::to_string);
        match text {
            _ if i == 0 || rest => kept.push(arg),
            Some(t) if t == "--" => {
                rest = true;
                kept.push(arg);
            }
            Some(t) if subcommands.contains(&t) && given.is_empty() => {
                // From here on the subcommand's own options.
                rest = true;
                kept.push(arg);
            }
            Some(t) if t.starts_with("--") && t.len() > 2 => {
                let body = &t[2..];
                let (name, value) = match body.split_once('=') {
                    Some((n, v)) => (n, Some(v.to_string())),
                    None => (body, None),
                };
                if own.iter().any(|o| o == name) {
                    kept.push(arg);
                    continue;
                }
                // `--NAME VALUE`: mypi takes no bare words, so the next one can only be
                // this option's value.
                let next_word = args
                    .peek()
                    .and_then(|(_, a)| a.to_str())
                    .is_some_and(|w| !w.starts_with('-') && !subcommands.iter().any(|s| s == w));
                let (value, spaced) = match (value, next_word) {
                    (None, true) => (
                        args.next().map(|(_, a)| a.to_string_lossy().into_owned()),
                        true,
                    ),
                    (value, _) => (value, false),
                };
                given.push(Given {
                    name: name.to_string(),
                    value,
                    spaced,
                });
            }
            _ => kept.push(arg),
        }
    }
    (kept, given)
}

/// The value of a declared flag: what the command line gave, else its default.
pub fn value(declared: &Declared, given: &[Given]) -> serde_json::Value {
    let on_line = given.iter().rev().find(|g| g.name == declared.name);
    match (declared.kind, on_line) {
        (Kind::Bool, Some(g)) => serde_json::Value::Bool(!matches!(
            g.value.as_deref().map(str::trim),
            Some("false" | "0" | "no" | "off")
        )),
        (Kind::String, Some(Given { value: Some(v), .. })) => serde_json::Value::String(v.clone()),
        (_, _) => declared.default.clone().unwrap_or(match declared.kind {
            Kind::Bool => serde_json::Value::Bool(false),
            Kind::String => serde_json::Value::Null,
        }),
    }
}

/// Checks the options given for extensions against the declared flags.
pub fn check(given: &[Given], declared: &[Declared]) -> Result<(), String> {
    for g in given {
        let Some(d) = declared.iter().find(|d| d.name == g.name) else {
            let mut near: Vec<String> = own_names()
                .into_iter()
                .chain(declared.iter().map(|d| d.name.clone()))
                .filter(|n| crate::vocab::text::edit_distance(n, &g.name) <= 2)
                .map(|n| format!("--{n}"))
                .collect();
            near.sort();
            let hint = match near.is_empty() {
                true => "`mypi --help` lists the options".to_string(),
                false => format!("did you mean {}?", near.join(", ")),
            };
            return Err(format!(
                "unknown option --{}: neither mypi nor a loaded extension declares it; {hint}",
                g.name
            ));
        };
        if d.kind == Kind::Bool && g.spaced {
            return Err(format!(
                "--{} is a switch (declared by {}): {:?} after it is not an option of mypi",
                g.name,
                d.extension,
                g.value.as_deref().unwrap_or("")
            ));
        }
        match (d.kind, g.value.as_deref()) {
            (Kind::String, None) => {
                return Err(format!(
                    "--{} takes a value (declared by {}): --{}=VALUE",
                    g.name, d.extension, g.name
                ))
            }
            (Kind::Bool, Some(v))
                if !matches!(v.trim(), "true" | "false" | "1" | "0" | "yes" | "no" | "on" | "off") =>
            {
                return Err(format!(
                    "--{} is a switch (declared by {}): give it alone, or =true / =false, not {v:?}",
                    g.name, d.extension
                ))
            }
            _ => {}
        }
    }
    Ok(())
}

/// The help section of the declared flags, grouped by extension.
pub fn help(declared: &[Declared]) -> String {
    if declared.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nExtension options:\n");
    let mut extensions: Vec<&str> = declared.iter().map(|d| d.extension.as_str()).collect();
    extensions.dedup();
    for ext in extensions {
        out.push_str(&format!("  {ext}:\n"));
        for d in declared.iter().filter(|d| d.extension == ext) {
            let usage = match d.kind {
                Kind::Bool => format!("--{}", d.name),
                Kind::String => format!("--{}=VALUE", d.name),
            };
            let default = match &d.default {
                Some(serde_json::Value::String(s)) => format!(" [default: {s}]"),
                Some(v) if !v.is_null() => format!(" [default: {v}]"),
                _ => String::new(),
            };
            out.push_str(&format!("      {usage:<24} {}{default}\n", d.description));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The split against mypi's own command line.
    fn split(args: Vec<OsString>) -> (Vec<OsString>, Vec<Given>) {
        use clap::CommandFactory;
        split_for(&crate::repl::cli::Cli::command(), args)
    }

    fn os(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    fn decl(name: &str, kind: Kind) -> Declared {
        Declared {
            name: name.into(),
            kind,
            default: None,
            description: "d".into(),
            extension: "ext".into(),
        }
    }

    #[test]
    fn unknown_long_options_are_taken_out_and_the_rest_left_to_clap() {
        let (kept, given) = split(os(&[
            "mypi",
            "--plan",
            "-p",
            "hi",
            "--model",
            "m",
            "--mode=fast",
        ]));
        assert_eq!(kept, os(&["mypi", "-p", "hi", "--model", "m"]));
        assert_eq!(
            given,
            vec![
                Given {
                    name: "plan".into(),
                    value: None,
                    spaced: false,
                },
                Given {
                    name: "mode".into(),
                    value: Some("fast".into()),
                    spaced: false,
                }
            ]
        );
        let (kept, given) = split(os(&["mypi", "--preset", "plan", "-p", "x"]));
        assert_eq!(kept, os(&["mypi", "-p", "x"]));
        assert_eq!(given[0].value.as_deref(), Some("plan"));
        assert!(given[0].spaced);
        let (kept, given) = split(os(&["mypi", "ext", "check", "--plan"]));
        assert_eq!(kept, os(&["mypi", "ext", "check", "--plan"]));
        assert!(given.is_empty());
        let (kept, given) = split(os(&["mypi", "-p", "x", "--", "--plan"]));
        assert_eq!(kept.len(), 5);
        assert!(given.is_empty());
    }

    #[test]
    fn values_and_checks_follow_the_declared_type() {
        let plan = decl("plan", Kind::Bool);
        let mode = decl("mode", Kind::String);
        let g = |n: &str, v: Option<&str>| Given {
            name: n.into(),
            value: v.map(String::from),
            spaced: false,
        };
        assert_eq!(value(&plan, &[g("plan", None)]), serde_json::json!(true));
        assert_eq!(
            value(&plan, &[g("plan", Some("false"))]),
            serde_json::json!(false)
        );
        assert_eq!(value(&plan, &[]), serde_json::json!(false));
        assert_eq!(
            value(&mode, &[g("mode", Some("fast"))]),
            serde_json::json!("fast")
        );
        assert_eq!(value(&mode, &[]), serde_json::Value::Null);
        let both = [plan.clone(), mode.clone()];
        assert!(check(&[g("plan", None), g("mode", Some("x"))], &both).is_ok());
        let e = check(&[g("mode", None)], &both).unwrap_err();
        assert!(e.contains("--mode takes a value"), "{e}");
        let e = check(&[g("plan", Some("maybe"))], &both).unwrap_err();
        assert!(e.contains("--plan is a switch"), "{e}");
        let e = check(&[g("plan2", None)], &both).unwrap_err();
        assert!(
            e.contains("unknown option --plan2") && e.contains("did you mean --plan?"),
            "{e}"
        );
    }
}
