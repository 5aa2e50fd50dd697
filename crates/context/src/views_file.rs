//! Named views, saved in a YAML file (by convention `.merkle/views.yaml`) and used as
//! `merkle get-node PATH --view NAME`.
//!
//! ```yaml
//! views:
//!   brief:
//!     max_frames: 5
//!     sources: [node, parent, siblings, related] # related: imports and importers
//!     related: [docs/design.md]                # ... unless nodes are listed here
//!     types: [summary]
//!     agents: [alice]
//!     heads_only: true
//!     ordering: relevance        # recency | relevance | type_priority | agent_priority
//!     priority: [summary, notes] # the list for type_priority / agent_priority
//! ```
//!
//! Unknown fields are rejected, not ignored. Parsing is pure: the caller reads the file.
use std::collections::BTreeMap;

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::view::{ContextView, Filters, Ordering, Source};

/// A parsed views file.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ViewsFile {
    /// Views by name.
    #[serde(default)]
    pub views: BTreeMap<String, ViewSpec>,
}

/// One named view as written in the file; paths are resolved when it is used.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ViewSpec {
    /// The hard bound on frames [default: 20].
    pub max_frames: Option<usize>,
    /// `node`, `parent`, `siblings` [default: node].
    #[serde(default)]
    pub sources: Vec<String>,
    /// Related nodes, by workspace path or NodeID.
    #[serde(default)]
    pub related: Vec<String>,
    /// Keep only these frame types.
    #[serde(default)]
    pub types: Vec<String>,
    /// Keep only frames by these agents.
    #[serde(default)]
    pub agents: Vec<String>,
    /// Keep only frames created at or after (ms since the epoch).
    pub created_from_ms: Option<u64>,
    /// Keep only frames created before (ms since the epoch).
    pub created_until_ms: Option<u64>,
    /// Keep only head frames.
    #[serde(default)]
    pub heads_only: bool,
    /// `recency`, `relevance`, `type_priority`, `agent_priority` [default: recency].
    pub ordering: Option<String>,
    /// The priority list of `type_priority` / `agent_priority`.
    #[serde(default)]
    pub priority: Vec<String>,
}

/// Where a workspace keeps its named views: `.merkle/views.yaml`.
pub fn views_path(workspace: &std::path::Path) -> std::path::PathBuf {
    workspace.join(".merkle").join("views.yaml")
}

impl ViewsFile {
    /// The named views of the workspace at `workspace` ([`views_path`]), or none when it has
    /// no views file.
    pub fn load(workspace: &std::path::Path) -> Result<ViewsFile> {
        let path = views_path(workspace);
        match std::fs::read_to_string(&path) {
            Ok(text) => ViewsFile::parse(&path.display().to_string(), &text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(ViewsFile::default()),
            Err(e) => Err(Error::ViewsFile {
                file: path.display().to_string(),
                message: format!("cannot read it: {e}"),
            }),
        }
    }

    /// Parses a views file; `file` names it in errors.
    pub fn parse(file: &str, text: &str) -> Result<ViewsFile> {
        let parsed: ViewsFile = serde_yaml::from_str(text).map_err(|e| Error::ViewsFile {
            file: file.to_owned(),
            message: e.to_string(),
        })?;
        for (name, spec) in &parsed.views {
            // Resolving with no related nodes checks every other field now, not at first use.
            spec.to_view(name, &mut |_| Ok(merkle_store::Hash([0; 32])))?;
        }
        Ok(parsed)
    }

    /// A view by name.
    pub fn get(&self, name: &str) -> Result<&ViewSpec> {
        self.views.get(name).ok_or_else(|| Error::NoSuchView {
            name: name.to_owned(),
            known: if self.views.is_empty() {
                "none".to_owned()
            } else {
                self.views.keys().cloned().collect::<Vec<_>>().join(", ")
            },
        })
    }
}

/// A view as a request names it, the same from the CLI, MCP and the agent: a named view of the
/// views file (else the one named `default` when there is one, else the node's head frames),
/// then fields over it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ViewRequest {
    pub view: Option<String>,
    pub max_frames: Option<usize>,
    pub types: Vec<String>,
    pub agents: Vec<String>,
    /// node, parent, siblings, related.
    pub sources: Vec<String>,
    /// Nodes whose frames to add (paths or NodeIDs).
    pub related: Vec<String>,
    pub ordering: Option<String>,
    pub priority: Vec<String>,
    /// Superseded frames too.
    pub all: bool,
}

impl ViewRequest {
    /// How far the view this names reads for the node at workspace path `path`
    /// ([`ContextView::reach`]); `None`, the whole tree, where it names related nodes or does
    /// not compose (the read that composes it says why).
    pub fn reach(&self, workspace: &std::path::Path, path: &str) -> Option<String> {
        if !self.related.is_empty() {
            return None;
        }
        let mut none = |s: &str| -> Result<merkle_store::NodeId> {
            Err(Error::InvalidView {
                view: self.view.clone().unwrap_or_default(),
                message: format!("related node {s:?} not resolved here"),
            })
        };
        self.compose(workspace, &mut none).ok()?.reach(path)
    }

    /// The view this names in the workspace at `workspace`, related nodes resolved by
    /// `resolve`; a source, ordering or view name that is no such thing is an error naming it.
    pub fn compose(
        &self,
        workspace: &std::path::Path,
        resolve: &mut dyn FnMut(&str) -> Result<merkle_store::NodeId>,
    ) -> Result<ContextView> {
        let views = ViewsFile::load(workspace)?;
        let (name, mut spec) = match &self.view {
            Some(name) => (name.clone(), views.get(name)?.clone()),
            None => match views.views.get("default") {
                Some(v) => ("default".to_owned(), v.clone()),
                None => (
                    "(built-in)".to_owned(),
                    ViewSpec {
                        heads_only: true,
                        ..ViewSpec::default()
                    },
                ),
            },
        };
        if let Some(n) = self.max_frames {
            spec.max_frames = Some(n);
        }
        for (field, given) in [
            (&mut spec.types, &self.types),
            (&mut spec.agents, &self.agents),
            (&mut spec.sources, &self.sources),
            (&mut spec.related, &self.related),
            (&mut spec.priority, &self.priority),
        ] {
            if !given.is_empty() {
                field.clone_from(given);
            }
        }
        if let Some(o) = &self.ordering {
            spec.ordering = Some(o.clone());
        }
        if self.all {
            spec.heads_only = false;
        }
        spec.to_view(&name, resolve)
    }
}

impl ViewSpec {
    /// The view, with related paths resolved to NodeIDs by `resolve`.
    pub fn to_view(
        &self,
        name: &str,
        resolve: &mut dyn FnMut(&str) -> Result<merkle_store::NodeId>,
    ) -> Result<ContextView> {
        let bad = |message: String| Error::InvalidView {
            view: name.to_owned(),
            message,
        };
        let mut sources = Vec::new();
        for s in &self.sources {
            let source = parse_source(s).ok_or_else(|| {
                bad(format!(
                    "unknown source {s:?} (expected node, parent, siblings or related)"
                ))
            })?;
            // Listed related nodes replace the related files of the graph.
            if source == Source::Imports && !self.related.is_empty() {
                continue;
            }
            sources.push(source);
        }
        if self.sources.is_empty() {
            sources.push(Source::Node);
        }
        if !self.related.is_empty() {
            let ids = self
                .related
                .iter()
                .map(|r| resolve(r))
                .collect::<Result<Vec<_>>>()?;
            sources.push(Source::Related(ids));
        }
        let ordering = parse_ordering(self.ordering.as_deref().unwrap_or("recency"), &self.priority)
            .ok_or_else(|| {
                bad(format!(
                    "unknown ordering {:?} (expected recency, relevance, type_priority or agent_priority)",
                    self.ordering.as_deref().unwrap_or_default()
                ))
            })?;
        Ok(ContextView {
            max_frames: self.max_frames.unwrap_or(ContextView::default().max_frames),
            sources,
            filters: Filters {
                frame_types: self.types.clone(),
                agents: self.agents.clone(),
                created_from_ms: self.created_from_ms,
                created_until_ms: self.created_until_ms,
                heads_only: self.heads_only,
            },
            ordering,
        })
    }
}

/// Parses a source name.
pub fn parse_source(s: &str) -> Option<Source> {
    match s {
        "node" => Some(Source::Node),
        "parent" => Some(Source::Parent),
        "siblings" => Some(Source::Siblings),
        "related" => Some(Source::Imports),
        _ => None,
    }
}

/// Parses an ordering name with its priority list.
pub fn parse_ordering(s: &str, priority: &[String]) -> Option<Ordering> {
    match s {
        "recency" => Some(Ordering::Recency),
        "relevance" => Some(Ordering::Relevance),
        "type_priority" => Some(Ordering::TypePriority(priority.to_vec())),
        "agent_priority" => Some(Ordering::AgentPriority(priority.to_vec())),
        _ => None,
    }
}
