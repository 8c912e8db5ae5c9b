//! The table of agents: which agent a run is, with the state only that agent keeps (one value,
//! so a react run cannot carry a tree and a tot run cannot lack one), and where its answers to
//! the shared loop are ([`AgentState::steps`]). Adding an agent is its module and its row in
//! each `match` here, which the compiler asks for.

use weft_protocol::Agent;

use super::dup::{self, Dup};
use super::got::{self, Got, Graph};
use super::react::ReactSteps;
use super::remote::{self, Remote, RemoteSteps, REMOTE};
use super::steps::{OwnStep, Steps};
use super::tot::{self, Tot, Tree};

#[derive(Debug, Clone, PartialEq)]
pub(super) enum AgentState {
    /// react, and every agent this engine does not know (they run as react).
    React,
    Dup(Dup),
    Tot(Tot),
    Got(Got),
    /// An agent that runs elsewhere, called by the host.
    Remote(Remote),
}

impl AgentState {
    pub(super) fn new(agent: &Agent, got_adaptive: bool) -> Self {
        match agent {
            Agent::Dup => AgentState::Dup(Dup::default()),
            Agent::Tot => AgentState::Tot(Tot::default()),
            Agent::Got => AgentState::Got(Got::new(got_adaptive)),
            Agent::Unknown(name) if name == REMOTE => AgentState::Remote(Remote::default()),
            _ => AgentState::React,
        }
    }

    /// The agent's answers to the shared loop.
    pub(super) fn steps(&self) -> &'static dyn Steps {
        match self {
            AgentState::React => &ReactSteps,
            AgentState::Dup(_) => &dup::DupSteps,
            AgentState::Tot(_) => &tot::TotSteps,
            AgentState::Got(_) => &got::GotSteps,
            AgentState::Remote(_) => &RemoteSteps,
        }
    }

    pub(super) fn kind(&self) -> Agent {
        match self {
            AgentState::React => Agent::React,
            AgentState::Dup(_) => Agent::Dup,
            AgentState::Tot(_) => Agent::Tot,
            AgentState::Got(_) => Agent::Got,
            AgentState::Remote(_) => Agent::Unknown(REMOTE.into()),
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
            Agent::Dup => AgentState::Dup(Dup { understood }),
            Agent::Tot => AgentState::Tot(Tot::restored(tot.unwrap_or_default())),
            Agent::Got => AgentState::Got(Got::restored(got.unwrap_or_default())),
            Agent::Unknown(name) if name == REMOTE => AgentState::Remote(Remote::default()),
            _ => AgentState::React,
        }
    }

    /// The agent's own step the run is at, as a checkpoint names it in `phase` (the names
    /// the one flat phase of earlier builds gave them); `None` for an agent without steps of
    /// its own.
    pub(super) fn own_step(&self) -> Option<&'static str> {
        match self {
            AgentState::React => None,
            AgentState::Dup(_) => Some(dup::STEP),
            AgentState::Tot(t) => Some(t.step.as_str()),
            AgentState::Got(g) => Some(g.step.as_str()),
            AgentState::Remote(_) => Some(remote::RemoteStep::Calling.as_str()),
        }
    }

    /// Sets the agent's own step from a checkpoint's `phase`; false when the agent has no
    /// step of that name.
    pub(super) fn restore_step(&mut self, name: &str) -> bool {
        match self {
            AgentState::React => false,
            AgentState::Dup(_) => name == dup::STEP,
            AgentState::Tot(t) => OwnStep::restore(&mut t.step, name),
            AgentState::Got(g) => OwnStep::restore(&mut g.step, name),
            AgentState::Remote(_) => OwnStep::restore(&mut remote::RemoteStep::Calling, name),
        }
    }

    /// dup's `understood`; every checkpoint writes it (false for the other agents).
    pub(super) fn understood(&self) -> bool {
        matches!(self, AgentState::Dup(Dup { understood: true }))
    }

    pub(super) fn dup_mut(&mut self) -> Option<&mut Dup> {
        match self {
            AgentState::Dup(dup) => Some(dup),
            _ => None,
        }
    }

    pub(super) fn tot(&self) -> Option<&Tot> {
        match self {
            AgentState::Tot(tot) => Some(tot),
            _ => None,
        }
    }

    pub(super) fn tot_mut(&mut self) -> Option<&mut Tot> {
        match self {
            AgentState::Tot(tot) => Some(tot),
            _ => None,
        }
    }

    pub(super) fn got(&self) -> Option<&Got> {
        match self {
            AgentState::Got(got) => Some(got),
            _ => None,
        }
    }

    pub(super) fn got_mut(&mut self) -> Option<&mut Got> {
        match self {
            AgentState::Got(got) => Some(got),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checkpoint_restores_each_agent() {
        let got = AgentState::Got(Got::new(true));
        for state in [
            AgentState::Dup(Dup { understood: true }),
            AgentState::Dup(Dup { understood: false }),
            AgentState::React,
            got,
            AgentState::Tot(Tot::default()),
            AgentState::Remote(Remote::default()),
        ] {
            let mut back = AgentState::restored(
                state.kind().as_str(),
                state.understood(),
                state.tot().map(|t| t.tree.clone()),
                state.got().map(|g| g.graph.clone()),
            );
            if let Some(step) = state.own_step() {
                assert!(back.restore_step(step), "{step}");
            }
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
            AgentState::Dup(Dup { understood: false })
        );
        assert_eq!(
            AgentState::restored("tot", false, None, None),
            AgentState::Tot(Tot::default())
        );
        assert_eq!(
            AgentState::restored("got", false, None, None),
            AgentState::Got(Got::restored(Graph::default()))
        );
    }

    #[test]
    fn each_agent_takes_only_its_own_steps() {
        let mut tot = AgentState::new(&Agent::Tot, false);
        assert!(tot.restore_step("Evaluating"));
        assert_eq!(tot.own_step(), Some("Evaluating"));
        assert!(!tot.restore_step("Planning"));
        let mut got = AgentState::new(&Agent::Got, false);
        assert!(got.restore_step("Executing"));
        assert_eq!(got.own_step(), Some("Executing"));
        assert!(!got.restore_step("Understanding"));
        assert!(AgentState::new(&Agent::Dup, false).restore_step("Understanding"));
        assert!(!AgentState::React.restore_step("Understanding"));
    }
}
