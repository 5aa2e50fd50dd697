//! agent-loop's integration tests: one binary, one module per area, all through the public
//! API on real files in temporary folders.
mod agent;
mod compaction;
mod conversation;
mod governed;
mod prompt;
mod session;
mod storage;
mod tools;
mod window;

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use agent_loop::tools::control::control_tools;
use agent_loop::{
    Agent, AgentConfig, ConversationStore, Governance, ToolConfig, ToolRegistry, Workspace,
};
use llm_core::{Clock, ContentBlock, LlmClient, ManualClock, Message, Role, ToolCall};
use llm_sim::{SimulatedClient, Step};
use serde_json::Value;

/// A clock fixed at 2026-02-05T14:30:00Z.
pub fn clock() -> Arc<dyn Clock> {
    Arc::new(ManualClock::new(
        UNIX_EPOCH + Duration::from_secs(1_770_301_800),
    ))
}

/// What an agent is made of before it starts: a workspace `<tmp>/ws` holding `README.md`, a
/// new conversation in it, the built-in and control tools, and a config whose home folder
/// (`<tmp>/home`) has no identity files.
pub struct Setup {
    pub dir: tempfile::TempDir,
    pub ws: PathBuf,
    pub conversation: ConversationStore,
    pub tools: ToolRegistry,
    pub config: AgentConfig,
}

/// A started agent, the simulated model it talks to, and the folder they live in.
pub struct Running {
    pub dir: tempfile::TempDir,
    pub ws: PathBuf,
    pub agent: Agent,
    pub client: Arc<SimulatedClient>,
}

pub fn setup() -> Setup {
    let dir = tempfile::tempdir().expect("tempdir");
    let ws = dir.path().join("ws");
    fs::create_dir_all(&ws).expect("mkdir");
    fs::write(ws.join("README.md"), "# Demo\n").expect("write");
    let tools = tools(&ws);
    let conversation = ConversationStore::create(&ws, clock()).expect("conversation");
    let config = config(dir.path());
    Setup {
        dir,
        ws,
        conversation,
        tools,
        config,
    }
}

/// The default config, with the (empty) home folder `<dir>/home`.
pub fn config(dir: &Path) -> AgentConfig {
    AgentConfig {
        home: dir.join("home"),
        workspace_label: "ws".to_owned(),
        ..AgentConfig::default()
    }
}

/// The built-in tools acting on `ws`, and the control tools.
pub fn tools(ws: &Path) -> ToolRegistry {
    let workspace = Arc::new(Workspace::open(ws).expect("workspace"));
    let mut tools = ToolRegistry::with_builtins(&workspace, &ToolConfig::default());
    for tool in control_tools() {
        tools.register(tool).expect("register");
    }
    tools
}

impl Setup {
    /// The agent, answered by a model that follows `steps`.
    pub fn start(self, steps: impl IntoIterator<Item = Step>) -> Running {
        self.start_governed(steps, None)
    }

    pub fn start_governed(
        self,
        steps: impl IntoIterator<Item = Step>,
        governance: Option<Governance>,
    ) -> Running {
        let client = Arc::new(llm_sim::factory::for_testing(steps));
        let dyn_client: Arc<dyn LlmClient> = client.clone();
        let mut agent = Agent::new(
            dyn_client,
            self.conversation,
            self.tools,
            self.config,
            clock(),
        );
        if let Some(governance) = governance {
            agent = agent.with_governance(governance);
        }
        Running {
            dir: self.dir,
            ws: self.ws,
            agent,
            client,
        }
    }
}

impl Running {
    /// The transcript as it is on disk, not as the agent holds it.
    pub fn on_disk(&self) -> Vec<Message> {
        read_jsonl(&self.agent.conversation().dir().join("transcript.jsonl"))
    }

    /// The messages of the model request number `n` (from 1).
    pub fn sent(&self, n: usize) -> Vec<Message> {
        self.client.history()[n - 1].request.messages.clone()
    }
}

pub fn read_jsonl<T: serde::de::DeserializeOwned>(path: &Path) -> Vec<T> {
    fs::read_to_string(path)
        .expect("read")
        .lines()
        .map(|line| serde_json::from_str(line).expect("json line"))
        .collect()
}

pub fn message(role: Role, content: Vec<ContentBlock>) -> Message {
    Message { role, content }
}

pub fn tool_use(id: &str, name: &str, input: Value) -> ContentBlock {
    ContentBlock::ToolUse(ToolCall {
        id: id.to_owned(),
        name: name.to_owned(),
        input,
    })
}

pub fn ok(id: &str, content: &str) -> ContentBlock {
    ContentBlock::ToolResult {
        tool_use_id: id.to_owned(),
        content: content.to_owned(),
        is_error: false,
    }
}

pub fn failed(id: &str, content: &str) -> ContentBlock {
    ContentBlock::ToolResult {
        tool_use_id: id.to_owned(),
        content: content.to_owned(),
        is_error: true,
    }
}
