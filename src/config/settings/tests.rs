use super::*;

struct Tmp(PathBuf);

impl Tmp {
    fn new(name: &str) -> Tmp {
        let dir = std::env::temp_dir().join(format!("mypi-settings-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Tmp(dir)
    }

    fn file(&self, name: &str, text: &str) -> PathBuf {
        let p = self.0.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }
}

impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The user's file and, when `trusted`, the project's, read as at start.
fn load(
    user: Option<&Path>,
    project: Option<&Path>,
    trusted: bool,
) -> Result<Files, SettingsError> {
    let mut files = Files::load_user(user)?;
    files.load_project(project, trusted)?;
    Ok(files)
}

#[test]
fn the_users_trust_lists_are_read_with_the_rest_of_the_file() {
    use crate::config::trust::Decision;
    let t = Tmp::new("trust-lists");
    let here = std::env::current_dir().unwrap().canonicalize().unwrap();
    let text = format!(
        "model = \"a\"\n[trust]\nfolders = [{:?}]\n",
        here.display().to_string()
    );
    let user = t.file("listed.toml", &text);
    let f = Files::load_user(Some(&user)).unwrap();
    let listing = f.user_trust.as_ref().expect("the lists");
    assert_eq!(listing.folders, vec![here.clone()]);
    assert_eq!(listing.decision(&here).unwrap(), Decision::Trusted);
    assert_eq!(
        listing.decision(&std::env::temp_dir()).unwrap(),
        Decision::Unknown
    );
    // Lists that are not lists of folders are the file's error; no file, no lists.
    let user = t.file("odd.toml", "[trust]\nfolders = \"/\"\n");
    let e = Files::load_user(Some(&user)).unwrap_err().to_string();
    assert!(e.contains("must be a list of folder paths"), "{e}");
    assert!(Files::load_user(None).unwrap().user_trust.is_none());
}

#[test]
fn the_project_file_is_a_higher_layer_than_the_users() {
    let t = Tmp::new("layers");
    let user = t.file(
        "user.toml",
        "model = \"a\"\nmax_turns = 5\n[extensions]\nwatch = false\n",
    );
    let project = t.file("project.toml", "model = \"b\"\n");
    let f = load(Some(&user), Some(&project), true).unwrap();
    assert_eq!(f.lookup("MYPI_MODEL").as_deref(), Some("b"));
    assert_eq!(f.lookup("MYPI_MAX_TURNS").as_deref(), Some("5"));
    assert_eq!(f.lookup("MYPI_WATCH").as_deref(), Some("0"));
    assert!(f.entry("model").unwrap().source.ends_with("project.toml:1"));
    // Untrusted: not read, and said so.
    let f = load(Some(&user), Some(&project), false).unwrap();
    assert_eq!(f.lookup("MYPI_MODEL").as_deref(), Some("a"));
    assert!(f.notices[0].contains("not trusted"), "{:?}", f.notices);
}

#[test]
fn an_unknown_key_names_the_file_line_and_the_nearest_key() {
    let t = Tmp::new("unknown");
    let p = t.file("c.toml", "model = \"m\"\n\n[extensions]\nbudgt_ms = 5\n");
    let e = load(Some(&p), None, true).unwrap_err().to_string();
    assert!(
        e.ends_with(
            "c.toml:4: unknown key `extensions.budgt_ms`; did you mean `extensions.budget_ms`?"
        ),
        "{e}"
    );
    let p = t.file(
        "d.toml",
        "[providers.local]\napi = \"openai\"\nbase_ur = \"x\"\n",
    );
    let e = load(Some(&p), None, true).unwrap_err().to_string();
    assert!(e.ends_with("d.toml:3: unknown key `providers.local.base_ur`; did you mean `providers.local.base_url`?"), "{e}");
}

#[test]
fn a_wrong_type_says_what_was_expected() {
    let t = Tmp::new("types");
    for (text, want) in [
        (
            "max_turns = \"ten\"",
            "`max_turns` must be a whole number above 0, not \"ten\"",
        ),
        (
            "max_turns = 0",
            "`max_turns` must be a whole number above 0, not 0",
        ),
        (
            "[mcp]\nenabled = \"no\"",
            "`mcp.enabled` must be true or false, not \"no\"",
        ),
        ("model = [1]", "`model` must be a string, not [1]"),
        (
            "[providers.x]\napi = \"gemini\"",
            "`providers.x.api` must be \"openai\" or \"anthropic\", not \"gemini\"",
        ),
        ("model = ", "not valid TOML"),
    ] {
        let p = t.file("c.toml", text);
        let e = load(Some(&p), None, true).unwrap_err().to_string();
        assert!(e.contains(want), "{text}: {e}");
    }
}

#[test]
fn providers_and_their_models() {
    let t = Tmp::new("providers");
    let p = t.file(
        "c.toml",
        "[providers.local]\napi = \"openai\"\nbase_url = \"http://localhost:11434/v1\"\n\
         models = [\"qwen\", { name = \"big\", context_window = 131072, input_price = 1.5 }]\n",
    );
    let f = load(Some(&p), None, true).unwrap();
    let local = f.provider("local").unwrap();
    assert_eq!(local.api, ProviderKind::OpenAi);
    assert_eq!(local.models[0].name, "qwen");
    assert_eq!(local.models[1].context_window, Some(131072));
    assert_eq!(local.models[1].input_price, Some(1.5));
    assert!(local.source.ends_with("c.toml:1"), "{}", local.source);
}

#[test]
fn trust_lists_belong_to_the_user() {
    let t = Tmp::new("trust");
    let p = t.file("c.toml", "[trust]\nfolders = [\"/x\"]\n");
    assert!(load(Some(&p), None, true).is_ok());
    let e = load(None, Some(&p), true).unwrap_err().to_string();
    assert!(e.contains("a project cannot trust itself"), "{e}");
}

#[test]
fn an_oversized_file_is_refused_with_its_size() {
    let t = Tmp::new("big");
    let p = t.file("c.toml", &format!("# {}\n", "x".repeat(2 << 20)));
    let e = load(Some(&p), None, true).unwrap_err().to_string();
    assert!(
        e.contains("a configuration file may have at most 1048576"),
        "{e}"
    );
}

#[test]
fn a_fifo_or_a_huge_file_is_refused_without_waiting_or_reading_it_all() {
    let t = Tmp::new("bounded");
    let fifo = t.0.join("config.toml");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let started = std::time::Instant::now();
    let e = load(Some(&fifo), None, true).unwrap_err().to_string();
    assert!(started.elapsed() < std::time::Duration::from_secs(2));
    assert_eq!(
        e,
        format!("cannot read {}: it is not a regular file", fifo.display())
    );
    let big = t.0.join("big.toml");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(2 << 30).unwrap();
    let e = load(Some(&big), None, true).unwrap_err().to_string();
    assert!(
        e.ends_with("it is 2147483648 bytes; a configuration file may have at most 1048576"),
        "{e}"
    );
}
