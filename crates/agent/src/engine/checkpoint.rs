//! A [`Run`] as checkpointed: every field at the top level of one JSON object, as runs have
//! always been written, though the run keeps its outbox and its agent's state in values of
//! their own. Written out by hand rather than with serde's `flatten`, whose deserializer buffers
//! the whole object and cost the Worker 7 KB of compressed code (measured 2026-11-26).

use std::collections::VecDeque;

use serde::de::Error as _;
use serde::ser::{Error as _, SerializeStruct};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use weft_protocol::Sequencer;

use super::agent_state::AgentState;
use super::got::Graph;
use super::outbox::{Held, Outbox};
use super::tot::Tree;
use super::{Phase, Run};
use crate::read::{Fields, FromValue, Read};

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

/// What [`Run`]'s `Serialize` writes, read back by hand (crate::read: serde's derives read
/// through a `Value` cost the Worker far more code); fields a run of an older build did not
/// write take their defaults.
impl FromValue for Run {
    fn from_value(v: &Value) -> Read<Self> {
        let f = Fields::of("run", v)?;
        let agent_name: String = f.req("agent")?;
        let tree: Option<Tree> = f.or_default("tot")?;
        let graph: Option<Graph> = f.or_default("got")?;
        let mut agent = AgentState::restored(&agent_name, f.or_default("understood")?, tree, graph);
        let phase_value = f
            .get("phase")
            .ok_or_else(|| "run: missing field `phase`".to_owned())?;
        // A [`Phase`], or the name of one of the agent's own steps (the agent must be known
        // to read a step's name).
        let phase = match phase_value.as_str() {
            Some(step) if agent.restore_step(step) => Phase::Own,
            _ => Phase::from_value(phase_value).map_err(|e| f.err("phase", &e))?,
        };
        let seq: Sequencer = f.req("seq")?;
        let held: VecDeque<Held> = f.or_default("held")?;
        Ok(Run {
            config: f.req("config")?,
            tools: f.req("tools")?,
            outbox: Outbox::restored(seq, f.or_default("live")?, held),
            agent,
            session: f.req("session")?,
            phase,
            iteration: f.req("iteration")?,
            response: f.req("response")?,
            calls: f.req("calls")?,
            last_usage: f.req("last_usage")?,
            total: f.req("total")?,
            last_content: f.req("last_content")?,
            last_tools: f.req("last_tools")?,
            paused: f.req("paused")?,
            exit: f.req("exit")?,
            compacted_this_step: f.req("compacted_this_step")?,
            thread_id: f.or_default("thread_id")?,
            verbose: f.or_default("verbose")?,
            working_folder: f.or_default("working_folder")?,
            now_ms: f.or_default("now_ms")?,
            message: f.or_default("message")?,
            llm: f.or_default("llm")?,
            next_call: f.or_default("next_call")?,
        })
    }
}

impl Run {
    /// A run from its checkpoint's JSON (what its `Serialize` writes).
    pub fn from_checkpoint(v: &Value) -> Result<Run, String> {
        Run::from_value(v)
    }
}

impl<'de> Deserialize<'de> for Run {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Run::from_value(&Value::deserialize(d)?).map_err(D::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::acting::Call;
    use crate::engine::responses::Response;
    use crate::engine::{Config, LlmCall, Session, Start, ToolInfo};
    use crate::provider::ChatMessage;
    use serde::de::DeserializeOwned;
    use serde_json::json;
    use std::fmt::Debug;
    use weft_protocol::{Agent, Usage};

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
    fn every_phase_reads_back_and_a_step_of_another_agent_is_refused() {
        let mut tot = run(Agent::Tot);
        for phase in [
            Phase::Thinking,
            Phase::Explaining {
                call_id: "c1".into(),
            },
            Phase::Compacting {
                cut: 3,
                manual: false,
            },
            Phase::Acting,
            Phase::Done,
            Phase::Own,
        ] {
            tot.phase = phase.clone();
            let back = Run::restore(&tot.checkpoint().expect("a run serializes")).expect("reads");
            assert_eq!(back.phase, phase);
        }
        if let Some(t) = tot.agent.tot_mut() {
            t.step = crate::engine::tot::Step::Evaluating;
        }
        let json = tot.checkpoint().expect("a run serializes");
        assert!(json.contains(r#""phase":"Evaluating""#), "{json}");
        let back = Run::restore(&json).expect("reads");
        assert_eq!(back.agent, tot.agent);

        let mut value: Value = serde_json::from_str(&json).expect("JSON");
        value["agent"] = "react".into();
        let err = Run::restore(&value.to_string()).expect_err("react has no step of its own");
        assert!(err.to_string().contains("Evaluating"), "{err}");
        value["phase"] = "Pondering".into();
        assert!(Run::restore(&value.to_string()).is_err());
        value["phase"] = serde_json::json!({"Compacting": {"cut": "three"}});
        assert!(Run::restore(&value.to_string()).is_err());
        // React has no steps of its own to write.
        let mut react = run(Agent::React);
        react.phase = Phase::Own;
        assert!(react.checkpoint().is_err());
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

    /// The hand reader and serde's derive agree: the same value, or both refuse.
    fn same<T: FromValue + DeserializeOwned + PartialEq + Debug>(v: &Value) {
        let by_hand = T::from_value(v);
        let by_serde = serde_json::from_value::<T>(v.clone());
        match (&by_hand, &by_serde) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{v}"),
            (Err(_), Err(_)) => {}
            _ => panic!("{v}: by hand {by_hand:?}, by serde {by_serde:?}"),
        }
    }

    /// Each of `v`'s variants with one field left out, then with it null, then with it of a
    /// type no field has: what a checkpoint of another build, or a damaged one, can hold.
    fn same_with_each_field_changed<T: FromValue + DeserializeOwned + PartialEq + Debug>(
        v: &Value,
    ) {
        same::<T>(v);
        let Some(map) = v.as_object() else { return };
        for key in map.keys() {
            for change in [None, Some(Value::Null), Some(json!({"?": []}))] {
                let mut changed = map.clone();
                match change {
                    None => changed.remove(key),
                    Some(c) => changed.insert(key.clone(), c),
                };
                same::<T>(&Value::Object(changed));
            }
        }
    }

    /// A checkpoint of weft 904df78 (tests/e2e/fixtures/legacy-log, run `mid`), cut short,
    /// with its history inline as checkpoints before 2026-11-24 held it: no `understood`, no
    /// config `agent` or `temperature`.
    fn legacy() -> Value {
        json!({
            "agent": "react", "calls": [], "compacted_this_step": false,
            "config": {"compact_at": 0.8, "context_window": 128000, "got_max_nodes": 8,
                "got_max_parallel": 3, "max_iterations": 10, "max_tokens": null,
                "model": "scripted", "pause_after": [], "system_prompt": "Be brief.",
                "tot_candidates": 3, "tot_max_depth": 3, "tot_threshold": 0.5},
            "exit": false,
            "held": [{"call": 1, "event": {"type": "message_chunk", "id": "m1", "content": "al"}},
                {"call": 1, "event": null}, {"call": null, "event": null}],
            "iteration": 1, "last_content": "", "last_tools": [],
            "last_usage": {"completion_tokens": 120, "prompt_tokens": 939, "total_tokens": 1059},
            "live": 1, "llm": [{"id": 1, "lane": null}], "message": "long reply", "next_call": 1,
            "now_ms": 1_795_857_590_636_i64, "paused": false, "phase": "Thinking",
            "response": {"calls": [{"id": "c1", "name": "calculator", "arguments": "{}"}],
                "finish": null, "reasoning": "", "text": "alpha",
                "usage": {"completion_tokens": 1, "prompt_tokens": 2, "total_tokens": 3}},
            "seq": {"last_event_id": 121, "node_id": "run-think-0", "run_id": "mid",
                "session_id": "legacy-log", "spans": 1},
            "session": {"always_allowed": ["calculator"], "history": [
                {"role": "user", "content": "long reply"},
                {"role": "assistant", "content": "", "tool_calls": [
                    {"id": "c0", "name": "calculator", "arguments": "{\"e\":\"1+1\"}",
                     "signature": "sig"}]},
                {"role": "tool", "call_id": "c0", "name": "calculator", "content": "2", "is_error": false},
                {"role": "assistant", "content": "2"}], "iterations": 1},
            "thread_id": null,
            "total": {"completion_tokens": 121, "prompt_tokens": 941, "total_tokens": 1062},
            "tools": [{"client": false, "def": {"description": "Evaluate.",
                "input_schema": {"type": "object"}, "name": "calculator"},
                "needs_approval": false}],
            "verbose": false, "working_folder": null
        })
    }

    #[test]
    fn a_checkpoint_of_an_older_build_reads_back() {
        let old = legacy();
        let run = Run::from_checkpoint(&old).expect("an old checkpoint reads");
        assert_eq!(run.phase, Phase::Thinking);
        assert_eq!(run.outbox.seq.last_event_id, 121);
        assert_eq!(run.session.history.len(), 4);
        assert_eq!(run.config.agent, "", "a field the old build did not write");
        assert_eq!(run.config.model, "scripted");
        // Written again, every field it had is as it was (its config's too; the fields it
        // lacked are written with their defaults).
        let again = serde_json::to_value(&run).expect("a run serializes");
        for (key, value) in old.as_object().expect("an object") {
            if key == "config" {
                for (key, value) in value.as_object().expect("an object") {
                    assert_eq!(&again["config"][key], value, "config.{key}");
                }
            } else {
                assert_eq!(&again[key], value, "{key}");
            }
        }
        let back = Run::from_checkpoint(&again).expect("reads");
        assert_eq!(serde_json::to_value(back).expect("again"), again);
    }

    #[test]
    fn the_hand_reader_reads_what_serde_reads() {
        let old = legacy();
        same_with_each_field_changed::<Config>(&old["config"]);
        same_with_each_field_changed::<Config>(&json!({"temperature": 0.7, "max_tokens": 9}));
        same::<Config>(&json!({"max_iterations": 5_000_000_000_u64}));
        same::<Config>(&json!({"max_iterations": -1}));
        same::<Config>(&json!({"max_iterations": 1.5}));
        // (serde's derive reads a struct from an array of its fields in order too, which no
        // build ever wrote: the hand reader refuses one.)
        assert!(Config::from_value(&json!([])).is_err());
        same_with_each_field_changed::<ToolInfo>(&old["tools"][0]);
        same_with_each_field_changed::<ToolInfo>(&json!({"client": true,
            "def": {"name": "n", "description": "d"}, "needs_approval": false}));
        same_with_each_field_changed::<Session>(&old["session"]);
        for message in old["session"]["history"].as_array().expect("messages") {
            same_with_each_field_changed::<ChatMessage>(message);
        }
        same::<ChatMessage>(&json!({"role": "system", "content": "x"}));
        same::<ChatMessage>(&json!({"content": "x"}));
        same::<ChatMessage>(&json!({"role": "tool", "call_id": "c", "name": "n",
            "content": "x", "is_error": true}));
        same_with_each_field_changed::<Response>(&old["response"]);
        same_with_each_field_changed::<Usage>(&old["last_usage"]);
        same_with_each_field_changed::<Sequencer>(&old["seq"]);
        same_with_each_field_changed::<LlmCall>(&json!({"id": 2, "lane": "n1"}));
        for held in old["held"].as_array().expect("held") {
            same_with_each_field_changed::<Held>(held);
        }
        for state in [
            json!("NeedsApproval"),
            json!("AwaitingApproval"),
            json!("Running"),
            json!({"Done": {"result": "2", "is_error": false}}),
            json!({"Done": {"result": "2"}}),
            json!({"Running": null}),
            json!({"Running": {}}),
            json!("Done"),
            json!("Sleeping"),
            json!({"Done": {"result": "2", "is_error": false}, "Running": null}),
        ] {
            let call = json!({"call": {"id": "c", "name": "n", "arguments": "{}"},
                "arguments": {"a": 1}, "state": state, "lane": "n2", "asked_at_ms": 5});
            same_with_each_field_changed::<Call>(&call);
        }
        for phase in [
            json!("Thinking"),
            json!("Acting"),
            json!("Done"),
            json!({"Explaining": {"call_id": "c1"}}),
            json!({"Compacting": {"cut": 3, "manual": true}}),
            json!({"Compacting": {"cut": "three", "manual": true}}),
            json!({"Thinking": null}),
            json!("Own"),
            json!("Explaining"),
            json!(3),
        ] {
            same::<Phase>(&phase);
        }
    }

    #[test]
    fn the_agents_own_state_reads_as_serde_reads_it() {
        for agent in [Agent::Tot, Agent::Got] {
            let mut r = run(agent);
            r.now_ms = 7;
            let json = serde_json::to_value(&r).expect("a run serializes");
            if let Some(tree) = json.get("tot") {
                same_with_each_field_changed::<Tree>(tree);
                same::<Tree>(
                    &json!({"levels": [{"history_len": 2, "candidates": ["a", "b"],
                    "scores": [0.5, 1], "explored": [true, false]}], "abandoned": ["x"],
                    "current": [0, 1], "final_step": false}),
                );
                same::<Tree>(&json!({"levels": [], "abandoned": [], "current": [0],
                    "final_step": false}));
            }
            if let Some(graph) = json.get("got") {
                same_with_each_field_changed::<Graph>(graph);
                let node = json!({"id": "n1", "task": "t", "deps": ["n0"],
                    "state": {"explaining": {"call_id": "c"}},
                    "messages": [{"role": "user", "content": "t"}],
                    "response": {"calls": [], "finish": "stop", "reasoning": "", "text": "",
                        "usage": null},
                    "iteration": 1, "span": true, "result": "", "sub": false});
                same_with_each_field_changed::<Graph>(&json!({"nodes": [node],
                    "adaptive": true, "rejections": 1, "rejected": "why"}));
                for state in [
                    "waiting",
                    "judging",
                    "thinking",
                    "acting",
                    "done",
                    "failed",
                    "expanded",
                    "Waiting",
                    "explaining",
                ] {
                    let mut n = node.clone();
                    n["state"] = state.into();
                    same::<Graph>(&json!({"nodes": [n], "adaptive": false, "rejections": 0,
                        "rejected": null}));
                }
            }
            let back = Run::from_checkpoint(&json).expect("reads");
            assert_eq!(serde_json::to_value(back).expect("again"), json);
        }
    }
}
