//! Which agent a run is, with the state only that agent keeps: one value, so a react run
//! cannot carry a tree and a tot run cannot lack one.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use weft_protocol::Agent;

use super::got::Graph;
use super::tot::Tree;

#[derive(Debug, Clone, PartialEq)]
pub(super) enum AgentState {
    /// react, and every agent this engine does not know (they run as react).
    React,
    Dup {
        /// The understanding is in the history: a compaction's restart of the step plans.
        understood: bool,
    },
    Tot(Tree),
    Got(Graph),
}

impl AgentState {
    pub(super) fn new(agent: &Agent, got_adaptive: bool) -> Self {
        match agent {
            Agent::Dup => AgentState::Dup { understood: false },
            Agent::Tot => AgentState::Tot(Tree::default()),
            Agent::Got => AgentState::Got(Graph::new(got_adaptive)),
            _ => AgentState::React,
        }
    }

    pub(super) fn kind(&self) -> Agent {
        match self {
            AgentState::React => Agent::React,
            AgentState::Dup { .. } => Agent::Dup,
            AgentState::Tot(_) => Agent::Tot,
            AgentState::Got(_) => Agent::Got,
        }
    }

    pub(super) fn tree(&self) -> Option<&Tree> {
        match self {
            AgentState::Tot(tree) => Some(tree),
            _ => None,
        }
    }

    pub(super) fn tree_mut(&mut self) -> Option<&mut Tree> {
        match self {
            AgentState::Tot(tree) => Some(tree),
            _ => None,
        }
    }

    pub(super) fn graph(&self) -> Option<&Graph> {
        match self {
            AgentState::Got(graph) => Some(graph),
            _ => None,
        }
    }

    pub(super) fn graph_mut(&mut self) -> Option<&mut Graph> {
        match self {
            AgentState::Got(graph) => Some(graph),
            _ => None,
        }
    }
}

/// The checkpoint's fields for the agent, as runs have always written them (flattened into the
/// run): `agent` by name, dup's `understood` for every run, the tree or graph only for its own.
#[derive(Serialize)]
struct AgentFields<'a> {
    agent: &'a str,
    understood: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    tot: Option<&'a Tree>,
    #[serde(skip_serializing_if = "Option::is_none")]
    got: Option<&'a Graph>,
}

/// [`AgentFields`] read back. A tree or graph missing for its agent starts empty.
#[derive(Deserialize)]
struct AgentFieldsOwned {
    agent: String,
    #[serde(default)]
    understood: bool,
    #[serde(default)]
    tot: Option<Tree>,
    #[serde(default)]
    got: Option<Graph>,
}

impl Serialize for AgentState {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        AgentFields {
            agent: self.kind().as_str(),
            understood: matches!(self, AgentState::Dup { understood: true }),
            tot: self.tree(),
            got: self.graph(),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for AgentState {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let f = AgentFieldsOwned::deserialize(d)?;
        Ok(match Agent::from(f.agent.as_str()) {
            Agent::Dup => AgentState::Dup {
                understood: f.understood,
            },
            Agent::Tot => AgentState::Tot(f.tot.unwrap_or_default()),
            Agent::Got => AgentState::Got(f.got.unwrap_or_default()),
            _ => AgentState::React,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_checkpoint_fields_keep_their_old_shape() {
        let dup = AgentState::Dup { understood: true };
        assert_eq!(
            serde_json::to_value(&dup).unwrap(),
            json!({"agent": "dup", "understood": true})
        );
        assert_eq!(
            serde_json::to_value(AgentState::React).unwrap(),
            json!({"agent": "react", "understood": false})
        );
        let got = AgentState::Got(Graph::new(true));
        let v = serde_json::to_value(&got).unwrap();
        assert_eq!(v["agent"], "got");
        assert!(v.get("tot").is_none());
        for state in [
            dup,
            AgentState::React,
            got,
            AgentState::Tot(Tree::default()),
        ] {
            let back: AgentState =
                serde_json::from_value(serde_json::to_value(&state).unwrap()).unwrap();
            assert_eq!(back, state);
        }
    }

    #[test]
    fn old_checkpoints_read_back() {
        let read = |v| serde_json::from_value::<AgentState>(v).unwrap();
        // A compaction's run had no agent name; an unknown agent runs as react.
        assert_eq!(
            read(json!({"agent": "", "understood": false})),
            AgentState::React
        );
        assert_eq!(read(json!({"agent": "plan-and-solve"})), AgentState::React);
        assert_eq!(
            read(json!({"agent": "dup"})),
            AgentState::Dup { understood: false }
        );
        assert_eq!(
            read(json!({"agent": "tot"})),
            AgentState::Tot(Tree::default())
        );
    }
}
