//! Stamping a run's canonical events with the loom envelope.

use alloc::format;
use alloc::string::String;
use serde::{Deserialize, Serialize};

use crate::event::{Envelope, Event, Sequenced};

/// Assigns `session_id`, `node_id` and `event_id` to the events of one run, in order.
///
/// specs/README (loom): `event_id` starts at 1 and grows by 1 per event, `run_end` included;
/// `node_id` is `run-<node>-<n>` with `n` counting node spans from 0 within the run, and
/// `run-0` before the first span. After a `node_exit` the span's id stays on the events that
/// follow (its `values`/`updates`, the run's reply) until the next `node_enter`.
///
/// Plain data: the server checkpoints it with the run and restores it field by field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sequencer {
    /// The session the run belongs to.
    pub session_id: Option<String>,
    pub run_id: String,
    /// The `event_id` of the last event stamped (0 before the first).
    pub last_event_id: u64,
    /// Node spans started so far.
    pub spans: u64,
    pub node_id: String,
}

impl Sequencer {
    /// A sequencer for a new run.
    pub fn new(session_id: Option<String>, run_id: impl Into<String>) -> Self {
        Sequencer {
            session_id,
            run_id: run_id.into(),
            last_event_id: 0,
            spans: 0,
            node_id: String::from("run-0"),
        }
    }

    /// Stamps the next event of the run.
    pub fn stamp(&mut self, event: Event) -> Sequenced {
        if let Event::NodeEnter { id } = &event {
            self.node_id = format!("run-{id}-{}", self.spans);
            self.spans += 1;
        }
        self.last_event_id += 1;
        Sequenced {
            envelope: Envelope {
                session_id: self.session_id.clone(),
                node_id: Some(self.node_id.clone()),
                event_id: Some(self.last_event_id),
                run_id: Some(self.run_id.clone()),
            },
            event,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::NodeResult;

    #[test]
    fn node_ids_count_spans_and_persist_after_exit() {
        let mut s = Sequencer::new(Some("sess".into()), "run-1");
        let ids: alloc::vec::Vec<_> = [
            Event::RunStart {
                run_id: Some("run-1".into()),
                message: None,
                agent: None,
            },
            Event::NodeEnter { id: "think".into() },
            Event::NodeExit {
                id: "think".into(),
                result: NodeResult::Ok,
            },
            Event::NodeEnter { id: "act".into() },
            Event::NodeEnter { id: "think".into() },
        ]
        .into_iter()
        .map(|e| {
            let s = s.stamp(e);
            (s.envelope.node_id.unwrap(), s.envelope.event_id.unwrap())
        })
        .collect();
        assert_eq!(
            ids,
            [
                ("run-0".into(), 1),
                ("run-think-0".into(), 2),
                ("run-think-0".into(), 3),
                ("run-act-1".into(), 4),
                ("run-think-2".into(), 5),
            ]
        );
    }
}
