//! Tests of resolving the configuration: flags, environment, files and their layers.

use super::*;

/// The overrides of a command line (`--provider NAME`, `--base-url URL`, `-p [PROMPT]`,
/// `--json`), parsed by hand so the configuration's tests do not need the CLI.
#[test]
fn a_base_url_without_a_scheme_is_refused_with_a_suggestion() {
    let e = resolve(
        &["--provider", "openai", "--base-url", "localhost:11434/v1"],
        &[],
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "--base-url \"localhost:11434/v1\" is not an http:// or https:// address; did you \
         mean \"http://localhost:11434/v1\"?"
    );
    let e = resolve(&[], &[("OPENAI_BASE_URL", "api.example.com/v1")]).unwrap_err();
    assert!(
        e.to_string().contains("\"https://api.example.com/v1\""),
        "{e}"
    );
    assert!(resolve(
        &["--provider", "openai", "--base-url", "http://x:1/v1"],
        &[]
    )
    .is_ok());
}

fn overrides(args: &[&str]) -> Overrides {
    let mut o = Overrides::default();
    let mut it = args.iter().peekable();
    while let Some(a) = it.next() {
        match *a {
            "--provider" => {
                o.provider = it.next().map(|s| s.to_string());
            }
            "--base-url" => o.base_url = it.next().map(|s| s.to_string()),
            "--json" => o.json = true,
            "--thinking" => {
                o.thinking = it
                    .next()
                    .and_then(|s| crate::vocab::thinking::Thinking::parse(s))
            }
            "-p" => {
                let prompt = it.next_if(|n| !n.starts_with('-'));
                o.print = Some(prompt.map(|s| s.to_string()).unwrap_or_default());
            }
            other => panic!("not handled here: {other}"),
        }
    }
    o
}

fn resolve(args: &[&str], vars: &[(&str, &str)]) -> Result<Config, ConfigError> {
    let cli = overrides(args);
    let vars: Vec<(String, String)> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let env = move |k: &str| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    Config::resolve(&cli, &env, PathBuf::from("/w"))
}

#[test]
fn provider_comes_from_flags_then_environment_then_faux() {
    let c = resolve(&[], &[]).unwrap();
    assert_eq!(
        (c.provider, c.fell_back_to_faux),
        (ProviderKind::Faux, true)
    );
    let c = resolve(&[], &[("ANTHROPIC_API_KEY", "k")]).unwrap();
    assert_eq!(c.provider, ProviderKind::Anthropic);
    let c = resolve(&[], &[("OPENAI_API_KEY", "k"), ("ANTHROPIC_API_KEY", "k")]).unwrap();
    assert_eq!(c.provider, ProviderKind::OpenAi);
    let c = resolve(
        &[
            "--provider",
            "openai",
            "--base-url",
            "http://localhost:11434/v1",
        ],
        &[],
    )
    .unwrap();
    assert_eq!(c.api_key, None);
    assert_eq!(
        resolve(&["--provider", "openai"], &[]).unwrap_err(),
        ConfigError::MissingOpenAiKey
    );
}

#[test]
fn print_mode_reads_stdin_when_prompt_is_omitted() {
    let c = resolve(&["-p"], &[]).unwrap();
    assert_eq!(
        c.mode,
        Mode::Print {
            prompt: None,
            json: false
        }
    );
    let c = resolve(&["-p", "hi", "--json"], &[]).unwrap();
    assert_eq!(
        c.mode,
        Mode::Print {
            prompt: Some("hi".into()),
            json: true
        }
    );
}

#[test]
fn the_thinking_level_comes_from_the_flag_then_the_environment_else_off() {
    use crate::vocab::thinking::Thinking;
    assert_eq!(resolve(&[], &[]).unwrap().thinking, Thinking::Off);
    let env = [("MYPI_THINKING", "Medium")];
    assert_eq!(resolve(&[], &env).unwrap().thinking, Thinking::Medium);
    let flag = resolve(&["--thinking", "minimal"], &env).unwrap();
    assert_eq!(flag.thinking, Thinking::Minimal);
    let e = resolve(&[], &[("MYPI_THINKING", "max")]).unwrap_err();
    assert_eq!(e, ConfigError::BadThinking("max".into()));
    assert!(
        e.to_string().contains("off, minimal, low, medium and high"),
        "{e}"
    );
}
