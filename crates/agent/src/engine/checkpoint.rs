//! A [`Run`] as checkpointed: every field at the top level of one JSON object, as runs have
//! always been written, though the run keeps its outbox and its agent's state in values of
//! their own. Written out by hand rather than with serde's `flatten`, whose deserializer buffers
//! the whole object and cost the Worker 7 KB of compressed code (measured 2026-11-26).

use std::collections::VecDeque;

use serde::de::Error as _;
use serde::ser::{Error as _, SerializeStruct};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use weft_protocol::{Sequencer, Usage};

use super::acting::Call;
use super::agent_state::AgentState;
use super::got::Graph;
use super::outbox::{Held, Outbox};
use super::responses::Response;
use super::tot::Tree;
use super::{Config, LlmCall, Phase, Run, Session, ToolInfo};

impl Serialize for Run {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (live, held) = self.outbox.checkpointed();
        let tree = self.agent.tot().map(|t| &t.tree);
        let graph = self.agent.got().map(|g| &g.graph);
        let fields = 28 - usize::from(tree.is_none()) - usize::from(graph.is_none());
        let mut st = s.serialize_struct("Run", fields)?;
        st.serialize_field("config", &self.config)?;
        st.serialize_field("tools", &self.tools)?;
        st.serialize_field("seq", &self.outbox.seq)?;
        st.serialize_field("live", &live)?;
        st.serialize_field("held", held)?;
        st.serialize_field("agent", self.agent.kind().as_str())?;
        st.serialize_field("understood", &self.agent.understood())?;
        if let Some(tree) = tree {
            st.serialize_field("tot", tree)?;
        }
        if let Some(graph) = graph {
            st.serialize_field("got", graph)?;
        }
        st.serialize_field("session", &self.session)?;
        match &self.phase {
            // The agent's own step, by the name it had in the one flat phase of earlier builds.
            Phase::Own => {
                let step = self.agent.own_step().ok_or_else(|| {
                    S::Error::custom("the run is at a step of its own, but its agent has none")
                })?;
                st.serialize_field("phase", step)?;
            }
            phase => st.serialize_field("phase", phase)?,
        }
        st.serialize_field("iteration", &self.iteration)?;
        st.serialize_field("response", &self.response)?;
        st.serialize_field("calls", &self.calls)?;
        st.serialize_field("last_usage", &self.last_usage)?;
        st.serialize_field("total", &self.total)?;
        st.serialize_field("last_content", &self.last_content)?;
        st.serialize_field("last_tools", &self.last_tools)?;
        st.serialize_field("paused", &self.paused)?;
        st.serialize_field("exit", &self.exit)?;
        st.serialize_field("compacted_this_step", &self.compacted_this_step)?;
        st.serialize_field("thread_id", &self.thread_id)?;
        st.serialize_field("verbose", &self.verbose)?;
        st.serialize_field("working_folder", &self.working_folder)?;
        st.serialize_field("now_ms", &self.now_ms)?;
        st.serialize_field("message", &self.message)?;
        st.serialize_field("llm", &self.llm)?;
        st.serialize_field("next_call", &self.next_call)?;
        st.end()
    }
}

/// What [`Run`]'s `Serialize` writes, read back; fields a run of an older build did not write
/// take their defaults.
#[derive(Deserialize)]
struct Checkpoint {
    config: Config,
    tools: Vec<ToolInfo>,
    seq: Sequencer,
    #[serde(default)]
    live: Option<u64>,
    #[serde(default)]
    held: VecDeque<Held>,
    agent: String,
    #[serde(default)]
    understood: bool,
    #[serde(default)]
    tot: Option<Tree>,
    #[serde(default)]
    got: Option<Graph>,
    session: Session,
    /// A [`Phase`], or the name of one of the agent's own steps.
    phase: Value,
    iteration: u32,
    response: Response,
    calls: Vec<Call>,
    last_usage: Option<Usage>,
    total: Usage,
    last_content: String,
    last_tools: Vec<String>,
    paused: bool,
    exit: bool,
    compacted_this_step: bool,
    #[serde(default)]
    thread_id: Option<String>,
    #[serde(default)]
    verbose: bool,
    #[serde(default)]
    working_folder: Option<String>,
    #[serde(default)]
    now_ms: i64,
    #[serde(default)]
    message: String,
    #[serde(default)]
    llm: Vec<LlmCall>,
    #[serde(default)]
    next_call: u64,
}

impl<'de> Deserialize<'de> for Run {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let c = Checkpoint::deserialize(d)?;
        let mut agent = AgentState::restored(&c.agent, c.understood, c.tot, c.got);
        let phase = match c.phase.as_str() {
            Some(step) if agent.restore_step(step) => Phase::Own,
            _ => Phase::deserialize(c.phase).map_err(D::Error::custom)?,
        };
        Ok(Run {
            config: c.config,
            tools: c.tools,
            outbox: Outbox::restored(c.seq, c.live, c.held),
            agent,
            session: c.session,
            phase,
            iteration: c.iteration,
            response: c.response,
            calls: c.calls,
            last_usage: c.last_usage,
            total: c.total,
            last_content: c.last_content,
            last_tools: c.last_tools,
            paused: c.paused,
            exit: c.exit,
            compacted_this_step: c.compacted_this_step,
            thread_id: c.thread_id,
            verbose: c.verbose,
            working_folder: c.working_folder,
            now_ms: c.now_ms,
            message: c.message,
            llm: c.llm,
            next_call: c.next_call,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Start;
    use weft_protocol::Agent;

    fn run(agent: Agent) -> Run {
        let start = Start {
            run_id: "run-1".into(),
            session_id: "s".into(),
            message: "hi".into(),
            agent,
            thread_id: None,
            verbose: false,
            working_folder: None,
            got_adaptive: false,
        };
        Run::new(Config::default(), Vec::new(), Session::default(), &start)
    }

    #[test]
    fn every_field_is_at_the_top_level_and_reads_back() {
        for (agent, own) in [
            (Agent::Got, Some("got")),
            (Agent::Tot, Some("tot")),
            (Agent::React, None),
        ] {
            let json = serde_json::to_value(run(agent.clone())).expect("a run serializes");
            let keys: Vec<&str> = json
                .as_object()
                .expect("an object")
                .keys()
                .map(String::as_str)
                .collect();
            for key in [
                "seq",
                "live",
                "held",
                "agent",
                "understood",
                "session",
                "next_call",
            ] {
                assert!(keys.contains(&key), "{key} missing from {keys:?}");
            }
            for key in ["outbox", "tot", "got"] {
                assert_eq!(keys.contains(&key), own == Some(key), "{key} in {keys:?}");
            }
            assert_eq!(json["agent"], agent.as_str());
            let back: Run = serde_json::from_value(json.clone()).expect("and reads back");
            assert_eq!(serde_json::to_value(back).expect("again"), json);
        }
    }
}
