//! A small ACP client for the tests: speaks JSON-RPC lines to a running `mypi acp`, keeps the
//! `session/update` notifications it sees on the way to a response, and checks that every
//! line mypi writes to stdout is a JSON-RPC 2.0 message.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::{Mypi, Output, Running};

const WAIT: Duration = Duration::from_secs(20);

pub struct AcpClient {
    pub run: Running,
    next_id: u64,
    /// Complete stdout lines already read.
    read: usize,
    /// Notifications seen and not yet taken.
    pub notes: Vec<Value>,
}

impl AcpClient {
    /// Starts `mypi acp` (the builder's other options kept) and initializes the connection.
    pub fn start(mypi: Mypi) -> (AcpClient, Value) {
        let mut client = AcpClient {
            run: mypi.arg("acp").spawn(),
            next_id: 0,
            read: 0,
            notes: Vec::new(),
        };
        let init = client.call(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {}, "clientInfo": {"name": "tests", "version": "1"}}),
        );
        (client, init)
    }

    /// Starts `mypi acp` and initializes it with the client capabilities `capabilities`.
    pub fn start_offering(mypi: Mypi, capabilities: Value) -> AcpClient {
        let mut client = AcpClient {
            run: mypi.arg("acp").spawn(),
            next_id: 0,
            read: 0,
            notes: Vec::new(),
        };
        client.call(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": capabilities}),
        );
        client
    }

    /// The response to `id`; mypi's own requests on the way are given to `answer`, whose
    /// result is sent back (`None`: left unanswered), and kept in `asked`.
    pub fn response_answering(
        &mut self,
        id: &Value,
        asked: &mut Vec<Value>,
        answer: &mut dyn FnMut(&Value) -> Option<Value>,
    ) -> Value {
        let deadline = Instant::now() + WAIT;
        loop {
            let message = self.next_message(deadline);
            if message.get("id") == Some(id) && message.get("method").is_none() {
                return message;
            }
            if message.get("id").is_some() && message.get("method").is_some() {
                if let Some(result) = answer(&message) {
                    let line = json!({"jsonrpc": "2.0", "id": message["id"], "result": result});
                    self.send_raw(&line.to_string());
                }
                asked.push(message);
                continue;
            }
            self.notes.push(message);
        }
    }

    /// `mypi acp --no-extensions` on a fake OpenAI server with `replies`, in `dir`, with a
    /// session open there: the client, the server and the session's id.
    pub fn with_session(
        dir: &crate::common::TestDir,
        replies: Vec<crate::common::Reply>,
    ) -> (AcpClient, crate::common::FakeOpenAi, String) {
        let fake = crate::common::FakeOpenAi::with_replies(replies);
        let (mut client, _) = AcpClient::start(Mypi::new(dir).openai(&fake).arg("--no-extensions"));
        let session = client.new_session(dir.path());
        (client, fake, session)
    }

    /// Runs a text prompt to its answer: the stop reason and the updates on the way.
    pub fn run_prompt(&mut self, session: &str, text: &str) -> (String, Vec<Value>) {
        let id = self.prompt(session, text);
        let answer = self.response(&json!(id));
        let reason = answer["result"]["stopReason"]
            .as_str()
            .unwrap_or_else(|| panic!("the prompt failed: {answer}"))
            .to_string();
        (reason, self.take_updates())
    }

    /// Sends a raw line.
    pub fn send_raw(&mut self, line: &str) {
        self.run.send_line(line);
    }

    /// Sends a request; its id.
    pub fn request(&mut self, method: &str, params: Value) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_raw(&line.to_string());
        id
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        let line = json!({"jsonrpc": "2.0", "method": method, "params": params});
        self.send_raw(&line.to_string());
    }

    /// A request's whole response (`result` or `error`).
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.request(method, params);
        self.response(&json!(id))
    }

    /// The next message mypi writes.
    pub fn next_message(&mut self, deadline: Instant) -> Value {
        loop {
            let out = self.run.stdout_so_far();
            let lines: Vec<&str> = out.split_inclusive('\n').collect();
            if let Some(line) = lines.get(self.read).filter(|l| l.ends_with('\n')) {
                self.read += 1;
                let message: Value = serde_json::from_str(line)
                    .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line:?}"));
                assert_eq!(message["jsonrpc"], "2.0", "{line}");
                return message;
            }
            if Instant::now() > deadline {
                panic!(
                    "no message from mypi in time\n--- stdout ---\n{out}\n--- stderr ---\n{}",
                    self.run.stderr_so_far()
                );
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// The response to `id`; the notifications before it are kept in `notes`.
    pub fn response(&mut self, id: &Value) -> Value {
        let deadline = Instant::now() + WAIT;
        loop {
            let message = self.next_message(deadline);
            if message.get("id") == Some(id) && message.get("method").is_none() {
                return message;
            }
            self.notes.push(message);
        }
    }

    /// Opens a new session in `cwd`; its id.
    pub fn new_session(&mut self, cwd: &std::path::Path) -> String {
        let answer = self.call(
            "session/new",
            json!({"cwd": cwd.display().to_string(), "mcpServers": []}),
        );
        answer["result"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("session/new failed: {answer}"))
            .to_string()
    }

    /// Sends a text prompt; the request id.
    pub fn prompt(&mut self, session: &str, text: &str) -> u64 {
        self.request(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}),
        )
    }

    /// The updates kept so far (their `update` objects), taken.
    pub fn take_updates(&mut self) -> Vec<Value> {
        std::mem::take(&mut self.notes)
            .into_iter()
            .filter(|n| n["method"] == "session/update")
            .map(|n| n["params"]["update"].clone())
            .collect()
    }

    /// Closes stdin and waits for mypi to exit.
    pub fn finish(self) -> Output {
        self.run.wait()
    }
}

/// The text of the `agent_message_chunk`s among `updates`, in order.
pub fn agent_text(updates: &[Value]) -> String {
    updates
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|u| u["content"]["text"].as_str())
        .collect()
}
