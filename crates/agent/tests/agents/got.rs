//! got: the plan, the sub-tasks side by side, adaptive expansion, failures, restarts and
//! cancels.

use super::*;

const PLAN: &str = r#"{"nodes": [
    {"id": "sf", "task": "Weather in SF", "deps": []},
    {"id": "ny", "task": "Weather in NYC", "deps": []},
    {"id": "cmp", "task": "Compare them", "deps": ["sf", "ny"]}]}"#;

/// The got script: the plan above; each city node looks its weather up, then says it; `cmp`
/// compares what it was given.
pub(super) fn got_model(req: &ChatRequest) -> Reply {
    let i = instruction(req);
    if i.starts_with("Graph of thoughts: plan sub-tasks.") {
        return say(PLAN);
    }
    if i.starts_with("Graph of thoughts: judge a sub-task.") {
        return say(r#"{"complex": false}"#);
    }
    assert!(
        i.starts_with("Graph of thoughts: you are doing one sub-task"),
        "{i}"
    );
    let brief = match req.messages.first() {
        Some(ChatMessage::User { content }) => content.clone(),
        _ => String::new(),
    };
    let city = if brief.starts_with("Sub-task sf:") {
        "SF"
    } else if brief.starts_with("Sub-task ny:") {
        "NYC"
    } else {
        return say("SF is sunnier than NYC.");
    };
    if has_results(req) {
        say(&format!("{city} is sunny."))
    } else {
        call("get_weather", json!({ "city": city }))
    }
}

pub(super) fn got_run(tools: Vec<ToolInfo>, adaptive: bool) -> Run {
    let start = Start {
        got_adaptive: adaptive,
        ..start(Agent::Got, "Compare the weather in SF and NYC")
    };
    let mut run = Run::new(Config::default(), tools, Session::default(), &start);
    run.start();
    run
}

#[test]
fn got_runs_independent_nodes_together_and_answers_from_the_sink() {
    let mut run = got_run(weather(false), false);
    let mut h = host(got_model);
    h.interleave = true;
    h.drive(&mut run);
    assert_eq!(
        h.trace(),
        lines(&[
            "run_start",
            "enter plan_graph",
            "chunk plan_graph",
            "usage",
            "llm_complete stop",
            "context_info",
            "got_plan",
            "exit plan_graph",
            "got_node_start sf",
            "got_node_start ny",
            // sf and ny stream at once; ny's response waits for sf's to end, and what came
            // after sf's response (its tool starting) waits for ny's: what belongs to no
            // response goes out in the order it happened, after what was held before it.
            "enter execute_graph",
            "tool_call_chunk",
            "tool_call get_weather",
            "usage",
            "llm_complete tool_calls",
            "exit execute_graph",
            "enter execute_graph",
            "tool_call_chunk",
            "tool_call get_weather",
            "usage",
            "llm_complete tool_calls",
            "exit execute_graph",
            "tool_start call_0_get_weather",
            "tool_start call_0_get_weather_2",
            "tool_end call_0_get_weather",
            "tool_end call_0_get_weather_2",
            "enter execute_graph",
            "chunk sf",
            "usage",
            "llm_complete stop",
            "exit execute_graph",
            "enter execute_graph",
            "chunk ny",
            "usage",
            "llm_complete stop",
            "exit execute_graph",
            "got_node_complete sf",
            "got_node_complete ny",
            "got_node_start cmp",
            "enter execute_graph",
            "chunk cmp",
            "usage",
            "llm_complete stop",
            "exit execute_graph",
            "got_node_complete cmp",
            "run_end",
        ])
    );
    h.assert_dense();
    h.assert_responses_contiguous();
    h.assert_one_span_per_response();
    assert_eq!(h.most_at_once, 2, "sf and ny were asked at the same time");
    assert_eq!(
        h.find("got_plan"),
        [&Event::GotPlan {
            node_count: 3,
            edge_count: 2,
            node_ids: vec!["sf".into(), "ny".into(), "cmp".into()]
        }]
    );
    // Both nodes' calls got the provider's id `call_0_get_weather`: the second was renamed,
    // and each result went to its own node.
    let ends: Vec<(String, String)> = h
        .find("tool_end")
        .iter()
        .map(|e| match e {
            Event::ToolEnd {
                call_id, result, ..
            } => (call_id.clone().unwrap(), result.clone()),
            _ => unreachable!(),
        })
        .collect();
    assert_eq!(ends[0].0, "call_0_get_weather");
    assert!(ends[0].1.contains("SF"));
    assert_eq!(ends[1].0, "call_0_get_weather_2");
    assert!(ends[1].1.contains("NYC"));
    // The sub-task chunks carry the graph node's id; cmp's brief has both results.
    let cmp = h
        .requests
        .iter()
        .find_map(|r| match r.messages.first() {
            Some(ChatMessage::User { content }) if content.starts_with("Sub-task cmp:") => {
                Some(content.clone())
            }
            _ => None,
        })
        .unwrap();
    assert_eq!(
        cmp,
        "Sub-task cmp: Compare them\n\nThe whole request: Compare the weather in SF and NYC\n\n\
         Results it builds on:\n- sf (Weather in SF): SF is sunny.\n- ny (Weather in NYC): NYC is sunny."
    );
    assert_eq!(
        h.find("got_node_complete")[0],
        &Event::GotNodeComplete {
            id: "sf".into(),
            result_summary: "SF is sunny.".into()
        }
    );
    assert_eq!(h.reply(), "SF is sunnier than NYC.");
    // The history keeps the request and the reply, not the plan or the sub-tasks.
    assert_eq!(
        run.session().history,
        vec![
            ChatMessage::user("Compare the weather in SF and NYC"),
            ChatMessage::assistant("SF is sunnier than NYC.")
        ]
    );
    let Event::RunEnd {
        iteration_count, ..
    } = &h.events.last().unwrap().event
    else {
        panic!()
    };
    assert_eq!(*iteration_count, Some(6), "plan + 2 per city + cmp");
}

/// A node is not reported started before the nodes it depends on are reported complete, even
/// when a dependency finished while another node's response held the stream.
#[test]
fn got_a_node_finished_behind_a_streaming_response_is_not_overtaken() {
    // sf's answer is long and ny's short: fed a delta each in turn, ny ends while sf streams
    // (its events wait), then sf's end completes the last dependency of cmp.
    let model = |req: &ChatRequest| {
        let brief = match req.messages.first() {
            Some(ChatMessage::User { content }) => content.clone(),
            _ => String::new(),
        };
        if brief.starts_with("Sub-task sf:") && has_results(req) {
            say("SF is sunny, warm and clear from morning to night with a light breeze.")
        } else {
            got_model(req)
        }
    };
    let mut run = got_run(weather(false), false);
    let mut h = host(model);
    h.interleave = true;
    h.drive(&mut run);
    assert!(h.finished);
    let trace = h.trace();
    let at = |line: &str| trace.iter().position(|l| l == line).unwrap();
    assert!(
        at("llm_complete stop") < at("got_node_complete ny"),
        "{trace:?}"
    );
    assert!(
        at("got_node_complete ny") < at("got_node_complete sf"),
        "ny ended first: {trace:?}"
    );
    assert!(
        at("got_node_complete sf") < at("got_node_start cmp"),
        "{trace:?}"
    );
    h.assert_dense();
    h.assert_responses_contiguous();
    h.assert_one_span_per_response();
    assert_eq!(h.reply(), "SF is sunnier than NYC.");
}

#[test]
fn got_a_failed_node_and_an_approval_inside_a_node() {
    // sf needs an approval for its tool; ny's model call fails; cmp still runs, told so.
    let model = |req: &ChatRequest| match req.messages.first() {
        Some(ChatMessage::User { content }) if content.starts_with("Sub-task ny:") => Reply::Fail,
        _ => got_model(req),
    };
    let mut run = got_run(weather(true), false);
    let mut h = host(model);
    h.interleave = true;
    h.approvals.push_back(yes());
    h.drive(&mut run);
    assert_eq!(
        h.trace(),
        lines(&[
            "run_start",
            "enter plan_graph",
            "chunk plan_graph",
            "usage",
            "llm_complete stop",
            "context_info",
            "got_plan",
            "exit plan_graph",
            "got_node_start sf",
            "got_node_start ny",
            "enter execute_graph",
            "tool_call_chunk",
            "tool_call get_weather",
            "usage",
            "llm_complete tool_calls",
            "exit execute_graph",
            // ny failed while sf's response streamed, before sf asked for its approval.
            "got_node_failed ny",
            "tool_approval call_0_get_weather",
            "approval_resolved",
            "tool_start call_0_get_weather",
            "tool_end call_0_get_weather",
            "enter execute_graph",
            "chunk sf",
            "usage",
            "llm_complete stop",
            "exit execute_graph",
            "got_node_complete sf",
            "got_node_start cmp",
            "enter execute_graph",
            "chunk cmp",
            "usage",
            "llm_complete stop",
            "exit execute_graph",
            "got_node_complete cmp",
            "run_end",
        ])
    );
    h.assert_one_span_per_response();
    h.assert_dense();
    h.assert_responses_contiguous();
    let Event::GotNodeFailed { error, .. } = h.find("got_node_failed")[0] else {
        panic!()
    };
    assert!(error.contains("500"), "{error}");
    let cmp = h.requests.last().unwrap();
    assert!(
        last_user(cmp).contains("- ny (Weather in NYC): FAILED: "),
        "{}",
        last_user(cmp)
    );
    assert_eq!(h.reply(), "SF is sunnier than NYC.");
    assert_eq!(h.tools_run.len(), 1);
}

#[test]
fn got_fails_the_run_when_every_answer_node_failed() {
    let model = |req: &ChatRequest| {
        if instruction(req).starts_with("Graph of thoughts: plan") {
            say(r#"{"nodes": [{"id": "only", "task": "Do it"}]}"#)
        } else {
            Reply::Fail
        }
    };
    let mut run = got_run(weather(false), false);
    let mut h = host(model);
    h.drive(&mut run);
    let trace = h.trace();
    assert_eq!(
        trace[trace.len() - 3..],
        lines(&["got_node_start only", "got_node_failed only", "error"])
    );
    let Event::Error { code, message, .. } = &h.events.last().unwrap().event else {
        panic!()
    };
    assert_eq!(code.as_deref(), Some("graph_failed"));
    assert!(message.starts_with("every sub-task that gives the answer failed (only: "));
    assert!(run.is_finished() && h.finished);
}

#[test]
fn got_adaptive_expands_a_complex_node_into_a_sub_graph() {
    let model = |req: &ChatRequest| {
        let i = instruction(req);
        let brief = last_user(req).to_string();
        if i.starts_with("Graph of thoughts: plan") {
            return say(
                r#"{"nodes": [{"id": "both", "task": "Weather in SF and NYC"},
                              {"id": "cmp", "task": "Compare them", "deps": ["both"]}]}"#,
            );
        }
        if i.starts_with("Graph of thoughts: judge") {
            return if brief.starts_with("Sub-task both:") {
                say(
                    r#"{"complex": true, "nodes": [{"id": "sf", "task": "Weather in SF"}, {"id": "ny", "task": "Weather in NYC"}]}"#,
                )
            } else {
                say(r#"{"complex": false}"#)
            };
        }
        if brief.starts_with("Sub-task both.sf:") {
            say("SF is sunny.")
        } else if brief.starts_with("Sub-task both.ny:") {
            say("NYC is sunny.")
        } else {
            say("Both are sunny.")
        }
    };
    let mut run = got_run(weather(false), true);
    let mut h = host(model);
    h.drive(&mut run);
    assert_eq!(
        h.trace(),
        lines(&[
            "run_start",
            "enter plan_graph",
            "chunk plan_graph",
            "usage",
            "llm_complete stop",
            "context_info",
            "got_plan",
            "exit plan_graph",
            "got_node_start both",
            "enter execute_graph",
            "chunk both",
            "usage",
            "llm_complete stop",
            "exit execute_graph",
            "got_expand both",
            "got_node_start both.sf",
            "got_node_start both.ny",
            "enter execute_graph",
            "chunk both.sf",
            "usage",
            "llm_complete stop",
            "exit execute_graph",
            "got_node_complete both.sf",
            "enter execute_graph",
            "chunk both.ny",
            "usage",
            "llm_complete stop",
            "exit execute_graph",
            "got_node_complete both.ny",
            "got_node_start cmp",
            "enter execute_graph",
            "chunk cmp",
            "usage",
            "llm_complete stop",
            "exit execute_graph",
            "enter execute_graph",
            "chunk cmp",
            "usage",
            "llm_complete stop",
            "exit execute_graph",
            "got_node_complete cmp",
            "run_end",
        ])
    );
    h.assert_one_span_per_response();
    assert_eq!(
        h.find("got_expand"),
        [&Event::GotExpand {
            node_id: "both".into(),
            nodes_added: 2,
            edges_added: 2
        }]
    );
    // Sub-nodes are not judged again; cmp (an original node) is, and builds on both halves.
    let judged: Vec<String> = h
        .requests
        .iter()
        .filter(|r| instruction(r).starts_with("Graph of thoughts: judge"))
        .map(|r| last_user(r).lines().next().unwrap_or_default().to_string())
        .collect();
    assert_eq!(
        judged,
        [
            "Sub-task both: Weather in SF and NYC",
            "Sub-task cmp: Compare them"
        ]
    );
    let cmp = last_user(h.requests.last().unwrap());
    assert!(
        cmp.contains(
            "- both.sf (Weather in SF): SF is sunny.\n- both.ny (Weather in NYC): NYC is sunny."
        ),
        "{cmp}"
    );
    assert_eq!(h.reply(), "Both are sunny.");
    h.assert_dense();
}

#[test]
fn got_asks_again_once_for_a_bad_plan_then_fails_clearly() {
    let cyclic = r#"{"nodes": [{"id": "a", "task": "A", "deps": ["b"]}, {"id": "b", "task": "B", "deps": ["a"]}]}"#;
    // Bad, then good.
    let model = move |req: &ChatRequest| {
        let i = instruction(req);
        if i.starts_with("Graph of thoughts: plan") {
            if i.contains("previous plan was rejected") {
                say(r#"{"nodes": [{"id": "a", "task": "A"}]}"#)
            } else {
                say(cyclic)
            }
        } else {
            say("A done.")
        }
    };
    let mut run = got_run(weather(false), false);
    let mut h = host(model);
    h.drive(&mut run);
    assert_eq!(
        h.trace()[..15],
        lines(&[
            "run_start",
            "enter plan_graph",
            "chunk plan_graph",
            "usage",
            "llm_complete stop",
            "context_info",
            "exit plan_graph err",
            "enter plan_graph",
            "chunk plan_graph",
            "usage",
            "llm_complete stop",
            "context_info",
            "got_plan",
            "exit plan_graph",
            "got_node_start a",
        ])
    );
    assert!(instruction(&h.requests[1])
        .contains("Your previous plan was rejected: the graph has a cycle through `a`, `b`."));
    assert_eq!(h.reply(), "A done.");

    // Bad twice: a clear error.
    let mut run = got_run(weather(false), false);
    let mut h = host(move |_| say(cyclic));
    h.drive(&mut run);
    let Event::Error { code, message, .. } = &h.events.last().unwrap().event else {
        panic!()
    };
    assert_eq!(code.as_deref(), Some("invalid_plan"));
    assert_eq!(
        message,
        "the model's plan is not a valid graph of sub-tasks: the graph has a cycle through `a`, `b`"
    );
    assert_eq!(h.requests.len(), 2);
}

#[test]
fn got_survives_a_restart_while_two_nodes_stream() {
    let mut reference = host(got_model);
    reference.interleave = true;
    reference.drive(&mut got_run(weather(false), false));

    // Stop once sf and ny have both streamed part of their first responses (sf's went out,
    // ny's is held), as if the host died there.
    let mut run = got_run(weather(false), false);
    let mut h = host(got_model);
    h.interleave = true;
    h.stop = Some(Box::new(|events, streams| {
        streams.len() == 2 && events.iter().any(|e| e.event.kind() == "tool_call_chunk")
    }));
    h.drive(&mut run);
    let seen = h.events.len();
    assert_eq!(h.events.last().unwrap().event.kind(), "tool_call_chunk");
    drop(run);
    let mut run = h.restart();
    h.drive(&mut run);
    assert!(h.finished);
    h.assert_dense();
    assert_eq!(h.reply(), reference.reply());
    // sf's cut response is closed right after its chunks (ny's had sent nothing), then both
    // nodes are asked again and the run goes on as the uninterrupted one did.
    assert_eq!(
        h.events[seen].event,
        Event::LlmComplete {
            content: String::new(),
            tool_calls: Vec::new(),
            finish_reason: "interrupted".into()
        }
    );
    assert_eq!(
        h.events[seen + 1].event,
        Event::NodeExit {
            id: "execute_graph".into(),
            result: NodeResult::Err("interrupted by a restart".into())
        }
    );
    let trace = h.trace();
    let reference_trace = reference.trace();
    let from = |t: &[String]| t.iter().position(|l| l == "enter execute_graph").unwrap();
    let (a, b) = (from(&trace), from(&reference_trace));
    assert_eq!(trace[..a], reference_trace[..b]);
    assert_eq!(
        trace[a..a + 4],
        lines(&[
            "enter execute_graph",
            "tool_call_chunk",
            "llm_complete interrupted",
            "exit execute_graph err"
        ])
    );
    assert_eq!(trace[a + 4..], reference_trace[b..]);
    h.assert_one_span_per_response();
    assert_eq!(run.session().history, reference_history_got(&reference));
}

fn reference_history_got(h: &Host) -> Vec<ChatMessage> {
    vec![
        ChatMessage::user("Compare the weather in SF and NYC"),
        ChatMessage::assistant(h.reply()),
    ]
}

#[test]
fn got_cancel_while_nodes_stream_ends_cleanly() {
    let mut run = got_run(weather(false), false);
    let mut h = host(got_model);
    h.interleave = true;
    h.stop = Some(Box::new(|events, streams| {
        streams.len() == 2 && events.iter().any(|e| e.event.kind() == "tool_call_chunk")
    }));
    h.drive(&mut run);
    let pending = run.pending_llm_calls();
    assert_eq!(pending.len(), 2);
    run.handle(Input::Cancel).unwrap();
    h.stop = None;
    h.drive(&mut run);
    let trace = h.trace();
    assert_eq!(
        trace[trace.len() - 3..],
        lines(&["llm_complete cancelled", "exit execute_graph err", "error"])
    );
    h.assert_responses_contiguous();
    // Only sf's chunk went out; what ny had streamed was held and is dropped with it.
    assert_eq!(h.find("tool_call_chunk").len(), 1);
    assert!(run.is_finished());
    assert_eq!(
        run.handle(Input::LlmEnd { call: pending[1] }),
        Err(EngineError::Finished)
    );
}

#[test]
fn inputs_for_unknown_model_calls_are_refused() {
    let mut run = got_run(weather(false), false);
    let pending = run.pending_llm_calls();
    assert_eq!(pending, [1]);
    assert_eq!(
        run.handle(Input::LlmEnd { call: 7 }),
        Err(EngineError::NoSuchLlmCall(7))
    );
    assert_eq!(
        run.handle(Input::Llm {
            call: 0,
            delta: Delta::Text("x".into())
        }),
        Err(EngineError::NoSuchLlmCall(0))
    );
}
