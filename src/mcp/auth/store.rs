//! The token file of one server: `~/.agents/mcp-auth/<server key>.json`, mode 0600 in a
//! folder of mode 0700, replaced atomically (a temporary file renamed over it). It holds what
//! rmcp stores (client ID, token response, granted scopes, issuer) and the client secret of a
//! registered client, which rmcp does not keep but a refresh needs. Never in the project,
//! never printed: [`TokenStore`]'s `Debug` names the file only.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rmcp::transport::auth::{
    AuthError, CredentialRefreshGuard, CredentialStore, StoredCredentials,
};
use serde::{Deserialize, Serialize};

/// What one token file holds.
#[derive(Default, Serialize, Deserialize)]
pub struct TokenFile {
    /// rmcp's stored credentials (absent after a failed refresh cleared them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<StoredCredentials>,
    /// The secret of the client mypi registered (dynamic registration), for refreshes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// Scopes a server asked for in a 403 `insufficient_scope` that no login has asked for
    /// yet: the next login asks for them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wanted_scopes: Vec<String>,
}

/// The token file of one server, and the lock its refreshes share.
#[derive(Clone)]
pub struct TokenStore {
    path: PathBuf,
    refresh: Arc<tokio::sync::Mutex<()>>,
}

impl std::fmt::Debug for TokenStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenStore")
            .field("path", &self.path)
            .finish()
    }
}

/// The file name of a server's tokens: its key (see `config::key`), with anything but
/// letters, digits, `_` and `.` made `_` (no path can be named).
fn file_name(server: &str) -> String {
    let key: String = crate::mcp::config::key(server)
        .chars()
        .map(|c| match c {
            'a'..='z' | '0'..='9' | '_' => c,
            _ => '_',
        })
        .collect();
    format!("{key}.json")
}

impl TokenStore {
    /// The store of `server` in `dir`.
    pub fn new(dir: &Path, server: &str) -> TokenStore {
        TokenStore {
            path: dir.join(file_name(server)),
            refresh: Arc::new(tokio::sync::Mutex::new(())),
        }
    }

    /// Where the tokens are kept.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether a token is stored (a login was done and not undone).
    pub fn has_token(&self) -> bool {
        self.read()
            .ok()
            .and_then(|f| f.credentials)
            .is_some_and(|c| c.token_response.is_some())
    }

    /// The file's content (an empty one when there is no file).
    pub fn read(&self) -> std::io::Result<TokenFile> {
        match std::fs::read(&self.path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("{} is not a token file: {e}", self.path.display()),
                )
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(TokenFile::default()),
            Err(e) => Err(e),
        }
    }

    /// Replaces the file with `content`, atomically, mode 0600.
    pub fn write(&self, content: &TokenFile) -> std::io::Result<()> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        create_private_dir(dir)?;
        let bytes = serde_json::to_vec_pretty(content).map_err(std::io::Error::other)?;
        let tmp = dir.join(format!(
            ".{}.{}.tmp",
            self.path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("token"),
            std::process::id()
        ));
        let _ = std::fs::remove_file(&tmp);
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let written = (|| {
            let mut f = options.open(&tmp)?;
            f.write_all(&bytes)?;
            f.sync_all()?;
            std::fs::rename(&tmp, &self.path)
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        written
    }

    /// Deletes the file (`mypi mcp logout`): whether there was one.
    pub fn delete(&self) -> std::io::Result<bool> {
        match std::fs::remove_file(&self.path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Keeps the secret of the client registered for these tokens.
    pub fn set_client_secret(&self, secret: Option<String>) -> std::io::Result<()> {
        let mut file = self.read().unwrap_or_default();
        file.client_secret = secret;
        self.write(&file)
    }

    /// Notes scopes a server asked for (a 403 `insufficient_scope`) for the next login.
    pub fn want_scopes(&self, scopes: &str) -> std::io::Result<()> {
        let mut file = self.read().unwrap_or_default();
        for s in scopes.split_whitespace() {
            if !file.wanted_scopes.iter().any(|w| w == s) {
                file.wanted_scopes.push(s.to_string());
            }
        }
        self.write(&file)
    }

    fn update(&self, f: impl FnOnce(&mut TokenFile)) -> Result<(), AuthError> {
        let mut file = self.read().unwrap_or_default();
        f(&mut file);
        self.write(&file).map_err(|e| store_error(&self.path, e))
    }
}

/// Creates `dir` (mode 0700) when it is not there.
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}

fn store_error(path: &Path, e: std::io::Error) -> AuthError {
    AuthError::CredentialStoreError(format!("cannot write {}: {e}", path.display()))
}

#[async_trait::async_trait]
impl CredentialStore for TokenStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        // An unreadable file is no token: the server then needs a login, which rewrites it.
        Ok(self.read().ok().and_then(|f| f.credentials))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.update(|f| f.credentials = Some(credentials))
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.update(|f| f.credentials = None)
    }

    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        let guard = self.refresh.clone().lock_owned().await;
        Ok(Some(CredentialRefreshGuard::new(guard)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_is_private_and_replaced_whole() {
        let dir = crate::platform::testutil::TempDir::new("tokens");
        let store = TokenStore::new(&dir.0.join("auth"), "My-Server/../x");
        assert_eq!(
            store.path().file_name().unwrap().to_str().unwrap(),
            "my_server____x.json"
        );
        assert!(!store.has_token());
        store.set_client_secret(Some("s".into())).unwrap();
        store.set_client_secret(None).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(store.path())
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
            let mode = std::fs::metadata(dir.0.join("auth"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o700);
        }
        let names: Vec<_> = std::fs::read_dir(dir.0.join("auth"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
        assert!(store.delete().unwrap());
        assert!(!store.delete().unwrap());
    }
}
