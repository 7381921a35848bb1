//! Wiring of what users wrote for other agents ([`crate::config::sources`]): skills
//! discovered off the start-up path once the trust gate has decided, prompt files registered
//! as slash commands once the extensions have loaded (a built-in or script command of the
//! same name wins, with a notice), `/skills`, and `/skill:NAME [text]`, which sends the
//! skill's instructions with the text as the user's prompt (pi's convention).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures_util::future::BoxFuture;

use super::{App, AppError, LineOutcome};
use crate::agent::EventSink;
use crate::commands::{CommandError, CommandHandler};
use crate::config::sources::{frontmatter, prompts, skills, Origin};
use crate::hooks::InputSource;
use crate::vocab::owner::Owner;
use crate::vocab::run::RunContext;

/// The largest skill body `/skill:NAME` puts in the prompt; a longer one is named for the
/// model to read instead.
const MAX_INLINE_BYTES: u64 = 256 * 1024;

/// A prompt file as a command: its body, read when it runs, with the arguments put in and
/// the files it mentions (`@path`) attached.
struct PromptFileCommand {
    path: PathBuf,
}

impl CommandHandler for PromptFileCommand {
    fn call(
        &self,
        args: &str,
        ctx: &Arc<RunContext>,
    ) -> BoxFuture<'static, Result<String, CommandError>> {
        let body = prompts::body(&self.path);
        let (args, cwd) = (args.to_string(), ctx.cwd.clone());
        Box::pin(async move {
            let body = body.map_err(|e| CommandError(e.to_string()))?;
            // `@path` mentions attach files, as in a typed line (and in Claude Code).
            super::mentions::expand(&prompts::expand(&body, &args), &cwd).map_err(CommandError)
        })
    }
}

impl App {
    /// The project folder whose own skills and prompt files act: none unless the trust gate
    /// let the project's code load.
    fn trusted_project(&self) -> Option<&Path> {
        let control = &self.extensions.context().control;
        control
            .project_trusted()
            .then_some(self.config.cwd.as_path())
    }

    /// Starts discovering the skills on a thread of their own (after the trust gate).
    pub(super) fn start_skills(&self) {
        let host = self.extensions.context();
        let roots = skills::skill_roots(self.config.home.as_deref(), self.trusted_project());
        host.skills
            .discover_in_background(roots, host.notice.clone());
    }

    /// Registers the prompt files as commands (after the extensions: theirs win).
    pub(super) fn add_prompt_commands(&self) {
        let host = self.extensions.context();
        let roots = prompts::prompt_roots(self.config.home.as_deref(), self.trusted_project());
        let found = prompts::discover(&roots);
        for problem in found.problems {
            (host.notice)(problem);
        }
        for p in found.items {
            let owner = prompt_owner(p.origin);
            let hint = p.argument_hint.clone().unwrap_or_default();
            let handler = Arc::new(PromptFileCommand {
                path: p.path.clone(),
            });
            let entry = (p.name.as_str(), p.description.as_str(), hint.as_str());
            if let Err(taken) = self.commands.register_prompt(owner, entry, handler) {
                (host.notice)(format!(
                    "{taken}, which wins; the prompt file {} is not a command",
                    p.path.display()
                ));
            }
        }
    }

    /// Before `/reload` reloads the extensions: the skills are discovered again and the
    /// prompt files' commands are dropped, so that a reloaded script's command gets its name;
    /// [`App::add_prompt_commands`] registers the files found then.
    pub(super) fn forget_sources(&self) {
        self.start_skills();
        for origin in [Origin::Project, Origin::User] {
            self.commands.remove_owner(&prompt_owner(origin));
        }
    }

    /// `/skills`: every skill, where it is from, and whether the model is told of it.
    pub(super) fn skills_text(&self) -> String {
        let listing = self.extensions.context().skills.listing();
        if listing.skills.is_empty() {
            let mut places = vec!["~/.agents/skills", "~/.claude/skills"];
            if self.trusted_project().is_some() {
                places.splice(0..0, [".agents/skills", ".claude/skills"]);
            }
            return format!("No skills (looked in {}).", places.join(", "));
        }
        let width = listing.skills.iter().map(|(s, _)| s.name.len()).max();
        let width = width.unwrap_or(0);
        let mut out =
            String::from("Skills (the model reads a skill's file when a task needs it):\n");
        let mut left = 0;
        for (s, listed) in &listing.skills {
            out.push_str(&format!(
                "  {:<width$}  {} [{}]",
                s.name, s.description, s.source
            ));
            out.push_str(&format!("\n  {:<width$}  {}", "", s.path.display()));
            if s.manual {
                out.push_str(" (not offered to the model: disable-model-invocation)");
            } else if !listed {
                left += 1;
                out.push_str(" (left out: over the [skills] budget)");
            }
            out.push('\n');
        }
        if left > 0 {
            out.push_str(&format!(
                "{left} left out of the model's list; raise [skills] budget in the config file to list them\n"
            ));
        }
        out.push_str("/skill:NAME [text] runs one.");
        out
    }

    /// `/skill:NAME [text]`: `None` when `name` is not `skill:…`; else the prompt that loads
    /// the skill, or why there is none.
    pub(super) fn skill_command(&self, name: &str, args: &str) -> Option<Result<String, AppError>> {
        let wanted = name.strip_prefix("skill:")?;
        let skills = self.extensions.context().skills.skills();
        let Some(skill) = skills.into_iter().find(|s| s.name == wanted) else {
            return Some(Err(AppError::Command(format!(
                "no skill called {wanted}; /skills lists them"
            ))));
        };
        Some(skill_prompt(&skill.name, &skill.path, args).map_err(AppError::Command))
    }

    /// Sends `text` as the user's prompt (through the `input` hook, like a typed line), with
    /// what `!cmd` kept before it.
    pub(super) async fn send_prompt(
        &mut self,
        text: &str,
        sink: &dyn EventSink,
        ctx: &Arc<RunContext>,
    ) -> Result<LineOutcome, AppError> {
        let text = self.shell_context.take_into(text);
        self.agent.images = std::mem::take(&mut self.attached_images);
        let outcome = self
            .agent
            .prompt(&text, InputSource::User, sink, ctx)
            .await?;
        Ok(LineOutcome::Ran(outcome))
    }
}

/// Whose a prompt file's command is: `project prompt` or `user prompt`.
fn prompt_owner(origin: Origin) -> Owner {
    Owner::new(format!("{} prompt", origin.name()), 0)
}

/// The prompt `/skill:NAME` sends, as pi writes it: the skill's body (front matter left
/// out) in a `<skill>` block naming its file, then the user's text. A body too long to
/// send is named for the model to read with the `read` tool instead.
fn skill_prompt(name: &str, path: &Path, args: &str) -> Result<String, String> {
    let read = |e: std::io::Error| format!("skill {name}: cannot read {}: {e}", path.display());
    let folder = path.parent().unwrap_or(path);
    let tail = match args.trim() {
        "" => String::new(),
        text => format!("\n\n{text}"),
    };
    if std::fs::metadata(path).map_err(read)?.len() > MAX_INLINE_BYTES {
        return Ok(format!(
            "Use the skill {name}: its instructions are in {} (too long to include here); read them with the read tool and follow them. Paths in it are relative to {}.{tail}",
            path.display(),
            folder.display()
        ));
    }
    let bytes = std::fs::read(path).map_err(read)?;
    let head = frontmatter::split(&bytes, true)
        .map_err(|(line, why)| format!("skill {name}: {}:{line}: {why}", path.display()))?;
    Ok(format!(
        "<skill name=\"{name}\" location=\"{}\">\nReferences are relative to {}.\n\n{}\n</skill>{tail}",
        path.display(),
        folder.display(),
        head.body.trim()
    ))
}

/// The project's skill and prompt files the trust gate names (listed, not read).
pub(super) fn project_files(cwd: &Path) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let only = |roots: Vec<(PathBuf, Origin)>| {
        roots
            .into_iter()
            .filter(|(_, o)| *o == Origin::Project)
            .collect::<Vec<_>>()
    };
    (
        skills::paths(&only(skills::skill_roots(None, Some(cwd)))),
        prompts::paths(&only(prompts::prompt_roots(None, Some(cwd)))),
    )
}
