//! Which agent a run is, with the state only that agent keeps: one value, so a react run
//! cannot carry a tree and a tot run cannot lack one.

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

    /// The state a checkpoint wrote as `agent` (its name), `understood`, `tot` and `got`. A
    /// tree or graph missing for its agent starts empty; an unknown agent (or a compaction's
    /// run, which had no name) runs as react.
    pub(super) fn restored(
        agent: &str,
        understood: bool,
        tot: Option<Tree>,
        got: Option<Graph>,
    ) -> Self {
        match Agent::from(agent) {
            Agent::Dup => AgentState::Dup { understood },
            Agent::Tot => AgentState::Tot(tot.unwrap_or_default()),
            Agent::Got => AgentState::Got(got.unwrap_or_default()),
            _ => AgentState::React,
        }
    }

    /// dup's `understood`; every checkpoint writes it (false for the other agents).
    pub(super) fn understood(&self) -> bool {
        matches!(self, AgentState::Dup { understood: true })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checkpoint_restores_each_agent() {
        let got = AgentState::Got(Graph::new(true));
        for state in [
            AgentState::Dup { understood: true },
            AgentState::Dup { understood: false },
            AgentState::React,
            got,
            AgentState::Tot(Tree::default()),
        ] {
            let back = AgentState::restored(
                state.kind().as_str(),
                state.understood(),
                state.tree().cloned(),
                state.graph().cloned(),
            );
            assert_eq!(back, state);
        }
    }

    #[test]
    fn old_checkpoints_read_back() {
        // A compaction's run had no agent name; an unknown agent runs as react.
        assert_eq!(
            AgentState::restored("", false, None, None),
            AgentState::React
        );
        assert_eq!(
            AgentState::restored("plan-and-solve", true, None, None),
            AgentState::React
        );
        assert_eq!(
            AgentState::restored("dup", false, None, None),
            AgentState::Dup { understood: false }
        );
        assert_eq!(
            AgentState::restored("tot", false, None, None),
            AgentState::Tot(Tree::default())
        );
        assert_eq!(
            AgentState::restored("got", false, None, None),
            AgentState::Got(Graph::default())
        );
    }
}
