//! Every recorded body, in every operation that reads it, split at every byte: the same
//! requests, progress, outcome and state as when it comes whole.

use super::*;

/// An operation and the recorded answers to its requests.
struct Scenario {
    name: &'static str,
    op: fn() -> Operation,
    /// The recorded answers, by name, to be renumbered where the path differs.
    responses: &'static [&'static str],
    /// `(answer, from, to)`: JSON-RPC ids to renumber in an answer (see `Response::renumbered`).
    renumber: &'static [(usize, &'static str, &'static str)],
}

fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario {
            name: "current era listing",
            op: || Operation::list_tools(&server(), ServerState::default(), Limits::default()),
            responses: &["modern-discover", "modern-list"],
            renumber: &[],
        },
        Scenario {
            name: "2025 era listing",
            op: || Operation::list_tools(&server(), ServerState::default(), Limits::default()),
            responses: &[
                "legacy-discover",
                "legacy-initialize",
                "legacy-initialized",
                "legacy-list",
            ],
            renumber: &[],
        },
        Scenario {
            name: "current era calls",
            op: || {
                call(
                    Era::Modern,
                    known(Era::Modern),
                    "slow",
                    "call-4",
                    json!({"steps": 3}),
                )
            },
            responses: &["modern-call-slow"],
            renumber: &[],
        },
        Scenario {
            name: "current era text",
            op: || {
                call(
                    Era::Modern,
                    known(Era::Modern),
                    "echo",
                    "call-1",
                    json!({"message": "hi"}),
                )
            },
            responses: &["modern-call-echo"],
            renumber: &[],
        },
        Scenario {
            name: "current era tool error",
            op: || call(Era::Modern, known(Era::Modern), "fail", "call-2", json!({})),
            responses: &["modern-call-fail"],
            renumber: &[],
        },
        Scenario {
            name: "current era structured",
            op: || {
                call(
                    Era::Modern,
                    known(Era::Modern),
                    "math.add",
                    "call-3",
                    json!({"a": 2, "b": 3}),
                )
            },
            responses: &["modern-call-add"],
            renumber: &[],
        },
        Scenario {
            name: "current era header param",
            op: || {
                call(
                    Era::Modern,
                    known(Era::Modern),
                    "regional",
                    "call-5",
                    json!({"region": "us-west1", "query": "q"}),
                )
            },
            responses: &["modern-call-regional"],
            renumber: &[],
        },
        Scenario {
            name: "current era errors",
            op: || Operation::list_tools(&server(), ServerState::default(), Limits::default()),
            responses: &["modern-unsupported-version"],
            renumber: &[],
        },
        Scenario {
            name: "header mismatch",
            op: || {
                call(
                    Era::Modern,
                    known(Era::Modern),
                    "echo",
                    "call-6",
                    json!({"message": "hi"}),
                )
            },
            responses: &[
                "modern-header-mismatch",
                "modern-list",
                "modern-header-mismatch",
            ],
            renumber: &[(1, "weft-list#2", "call-6#2"), (2, "call-6#1", "call-6#3")],
        },
        Scenario {
            name: "2025 progress",
            op: || {
                call(
                    Era::Legacy,
                    known(Era::Legacy),
                    "trigger-long-running-operation",
                    "call-2",
                    json!({"duration": 0.3, "steps": 3}),
                )
            },
            responses: &["legacy-call-progress"],
            renumber: &[],
        },
        Scenario {
            name: "2025 validation error",
            op: || {
                call(
                    Era::Legacy,
                    known(Era::Legacy),
                    "get-sum",
                    "call-3",
                    json!({"a": "one"}),
                )
            },
            responses: &["legacy-call-bad-arguments"],
            renumber: &[],
        },
        Scenario {
            name: "2025 image",
            op: || {
                call(
                    Era::Legacy,
                    known(Era::Legacy),
                    "get-tiny-image",
                    "call-4",
                    json!({}),
                )
            },
            responses: &["legacy-call-image"],
            renumber: &[],
        },
        Scenario {
            name: "2025 structured",
            op: || {
                call(
                    Era::Legacy,
                    known(Era::Legacy),
                    "get-structured-content",
                    "call-5",
                    json!({"location": "New York"}),
                )
            },
            responses: &["legacy-call-structured"],
            renumber: &[],
        },
        Scenario {
            name: "2025 ping",
            op: || {
                call(
                    Era::Legacy,
                    known(Era::Legacy),
                    "echo",
                    "call-1",
                    json!({"message": "hi"}),
                )
            },
            responses: &["legacy-call-ping"],
            renumber: &[],
        },
        Scenario {
            name: "2025 server request",
            op: || {
                let mut tool = tool(Era::Legacy, "echo");
                tool.name = "trigger-sampling-request".into();
                Operation::call_tool(
                    &server(),
                    known(Era::Legacy),
                    Limits::default(),
                    &tool,
                    "call-7",
                    json!({"prompt": "hi", "maxTokens": 5}),
                )
            },
            responses: &["legacy-call-sampling"],
            renumber: &[],
        },
        Scenario {
            name: "2025 forgotten session",
            op: || {
                call(
                    Era::Legacy,
                    known(Era::Legacy),
                    "echo",
                    "call-6",
                    json!({"message": "again"}),
                )
            },
            responses: &[
                "legacy-call-stale-session",
                "legacy-reinitialize",
                "legacy-reinitialized",
                "legacy-call-retried",
            ],
            renumber: &[],
        },
    ]
}

#[test]
fn every_body_gives_the_same_run_however_it_is_split() {
    for scenario in scenarios() {
        let mut responses = recorded(scenario.responses);
        for (index, from, to) in scenario.renumber {
            responses[*index] = responses[*index].clone().renumbered(from, to);
        }
        let whole = run_whole((scenario.op)(), &responses);
        assert!(whole.outcome.is_some(), "{}: finished", scenario.name);
        for (index, response) in responses.iter().enumerate() {
            let name = scenario.responses[index];
            let bytewise = drive((scenario.op)(), &responses, (index, Split::Bytewise));
            assert_eq!(bytewise, whole, "{}: {name} byte by byte", scenario.name);
            // Building the operation again costs a listing; the cuts reuse one built state.
            for cut in 0..=response.body.len() {
                let split = drive((scenario.op)(), &responses, (index, Split::At(cut)));
                assert_eq!(split, whole, "{}: {name} cut at {cut}", scenario.name);
            }
        }
    }
}
